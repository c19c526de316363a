// kruise-manager: metrics, health probes and admission/conversion webhooks on every replica;
// controllers only on the elected leader, whose caches are warmed before it leads. One informer per
// resource type and selector for the whole process, shared by the webhooks and every leadership
// term. Losing the lease stops the controllers, removes their handlers and relists the caches before
// the next term may act, so a stale leader never keeps writing and the process never needs a restart.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveFeatureGates, type FeatureGates } from '../apis/features.ts';
import { handleConversionReview } from '../apis/conversion/index.ts';
import { APPS_GROUP, KRUISE_DAEMON_CONFIG_NAMESPACE } from '../apis/constants.ts';
import { fromDefault, fromKubeconfigFile, type KubeClient } from '../runtime/client.ts';
import { ignoreNotFound, isAlreadyExists, isConflict, isForbidden, isNotFound } from '../runtime/errors.ts';
import { PodUnavailableBudgets, Namespaces } from '../runtime/resources.ts';
import { SharedInformerFactory, type InformerScope } from '../runtime/informer-factory.ts';
import { LeaderElector } from '../runtime/leaderelection.ts';
import { KubeLeaseStore } from '../runtime/lease-store.ts';
import { leaseFence } from '../runtime/lease-fence.ts';
import {
  FilteringInformers,
  isShardSelected,
  labellingCreates,
  ShardDrainer,
  ShardInformers,
  type ShardScope,
} from '../runtime/sharding.ts';
import { shardIdFor, shardLabels, shardLeaseName } from '../util/shard-ring.ts';
import { logger as rootLogger, type Logger } from '../runtime/log.ts';
import { leadershipLost, registry } from '../runtime/metrics.ts';
import { apiServerReachable, MetricsServer, ProbeServer, ping } from '../runtime/probes.ts';
import { delegatedAuthorizer, servingCertificate } from '../runtime/secure-serving.ts';
import { WebhookServer } from '../runtime/webhook/server.ts';
import { webhookReadinessCheck } from '../runtime/webhook/health.ts';
import { WebhookCertController } from '../runtime/webhook/cert-controller.ts';
import { KRUISE_CRD_GROUPS } from '../runtime/webhook/crd-conversion.ts';
import {
  ensureSecretCerts,
  readExternalSecretCerts,
  writeCertsToDir,
  DEFAULT_SECRET_NAME,
  type CertArtifacts,
} from '../runtime/webhook/certs.ts';
import { DEFAULT_SERVICE_NAME, servingNameFor, type ClientMode } from '../runtime/webhook/configuration.ts';
import { findWebhookProxy, registerWebhookBackend } from '../runtime/webhook/endpoint.ts';
import { allRegistrations } from '../webhooks/index.ts';
import { clientAdmissionReader, clientAdmissionWriter, informerAdmissionCache } from '../runtime/webhook/reader.ts';
import type { AdmissionCache, AdmissionReader } from '../runtime/webhook/types.ts';
import { POD_WEBHOOK_CACHED_KINDS, POD_WEBHOOK_CACHE_SYNC_TIMEOUT_MS, PUB_API_VERSION } from '../webhooks/pod/index.ts';
import { PubBudgetGuard } from '../runtime/pub-budget.ts';
import type { StoredPub } from '../util/pub.ts';
import type { Pod } from '../apis/core-objects.ts';
import { parseApiVersion } from '../apis/registry.ts';
import type { ControllerDeps, ControllerRunner, ControllerSetup } from '../controllers/types.ts';
import { KubeEventRecorder } from '../runtime/events.ts';
import { kubeEventSink } from '../runtime/event-sink.ts';
import { RestMapper } from '../runtime/restmapper.ts';
import { attachWorkloadMetrics } from '../controllers/workload-metrics.ts';
import { selectControllers, servedKruiseKinds } from './controllers.ts';
import type { ManagerConfig } from './options.ts';
import { parseAddr } from '../util/addr.ts';
import { errMessage } from '../util/errors.ts';

/** Upstream's user agent; controllers' clients add `/<controller>-controller`. */
export const MANAGER_USER_AGENT = 'kruise-manager';

/**
 * How long a stopping replica in service mode keeps answering reviews (WebhookServer.drain): long
 * enough for the endpoints to drop it and for the API server to send one more review on each of its
 * pooled connections; well inside the chart's termination grace period.
 */
export const SERVICE_MODE_WEBHOOK_DRAIN_MS = 5_000;

export interface RunningManager {
  client: KubeClient;
  features: FeatureGates;
  identity: string;
  webhookPort: number;
  metricsPort?: number;
  healthPort?: number;
  isLeader(): boolean;
  /** Graceful stop: releases the lease, closes servers. */
  stop(): Promise<void>;
  /** Resolves when the manager has stopped (after stop()). */
  done: Promise<void>;
}

/**
 * kruise-manager's start-up in phases, like controller-runtime's runnable groups: what every replica
 * runs (metrics and probes, then the webhook and conversion server with the caches it reads), the
 * webhook configurations brought in line before the election, then the controllers, which only the
 * leader runs (built, and their caches warmed, before the election). A phase that fails closes what
 * the earlier ones opened.
 */
export async function startManager(cfg: ManagerConfig, opts: { logger?: Logger } = {}): Promise<RunningManager> {
  const up = connect(cfg, opts.logger ?? rootLogger);
  const { client, closeOnFailure } = up;

  // The namespaces are asked for first; metrics and probes open while the requests are in flight.
  const namespaces = ensureNamespaces(up);
  const { metricsPort, probes } = await startMetricsAndProbes(up);
  const webhooks = await startWebhooks(up, namespaces.own, probes);
  // The webhook server answers. From here on four things overlap: the pod webhook's first lists
  // (decoded on this thread), the read of which Kruise kinds are served, the webhook configurations
  // and CRD conversion brought in line (round trips), and the import of the controllers' code (its
  // own chunk in dist/, a quarter of the manager's: compiled before the server listened, it held
  // the server back). The controllers' caches list once the CRDs' conversion is in line.
  const controllersModule = import('../controllers/index.ts');
  const aligning = alignWebhooks(up, webhooks);
  aligning.catch(() => {});
  const [served] = await closeOnFailure(Promise.all([webhooks.served, namespaces.all]));
  const alignment = await closeOnFailure(aligning);
  webhooks.warmPodWebhookCaches(true);
  const controllerCatalogue = await closeOnFailure(controllersModule);
  const controllers = await buildControllers(up, webhooks, served, controllerCatalogue);
  await alignment.inLine;
  const leadership = lead(up, alignment, controllers);
  // Per-workload series over the caches the controllers read, exported by the leader only.
  up.closers.push(
    attachWorkloadMetrics({
      informers: controllers.informers,
      controllers: controllers.running,
      namespace: cfg.namespace,
      isLeader: () => leadership.leading,
    }),
  );

  const stop = async () => {
    if (leadership.stopping) return leadership.done;
    leadership.stopping = true;
    // In service mode the API server reaches every replica through one Service and reuses its
    // connections across a rolling update: this replica keeps answering for a while (handing each
    // connection back) while its controllers stop, so no review fails as it goes.
    const drained = cfg.webhookClientMode === 'service' ? webhooks.server.drain(SERVICE_MODE_WEBHOOK_DRAIN_MS) : undefined;
    up.stopController.abort();
    await leadership.done;
    await drained;
    for (const close of up.closers.reverse()) await close();
    await client.close();
  };

  return {
    client,
    features: up.features,
    identity: up.identity,
    webhookPort: webhooks.server.port(),
    metricsPort,
    healthPort: probes?.port(),
    isLeader: () => leadership.leading,
    stop,
    done: leadership.done,
  };
}

/** What every phase of start-up shares: the configuration, the clients, and what closes on a failure. */
interface StartUp {
  cfg: ManagerConfig;
  log: Logger;
  features: FeatureGates;
  /** The manager's own client (user agent kruise-manager): informer lists, start-up, the webhooks. */
  client: KubeClient;
  /** Each client's rate limit (--rest-config-qps, --rest-config-burst). */
  limits: { qps: number; burst: number };
  /**
   * A client with its own rate limit, for one controller or component. A shard's clients name the
   * shard in their user agent (`kruise-manager/<name> shard/<id>`): the API server's audit log then
   * says which replica made each write (the field manager, the agent's first token, stays the same).
   */
  clientFor(name: string, writeFence?: () => void, shard?: string): KubeClient;
  /** Set by lead(): leader-only writes check its lease first. */
  elector: LeaderElector | undefined;
  /** Refuses a write once this replica no longer holds the lease; undefined without leader election. */
  leaderFence: (() => void) | undefined;
  /** With --sharding, set by lead(): this replica's shard Lease, which its sharded controllers' writes check first. */
  shardElector: LeaderElector | undefined;
  identity: string;
  namespace: string;
  stopController: AbortController;
  closers: Array<() => Promise<void> | void>;
  /** Awaits p; when it fails, closes what start-up has opened so far (last first) and rethrows. */
  closeOnFailure<T>(p: Promise<T>): Promise<T>;
}

function connect(cfg: ManagerConfig, log: Logger): StartUp {
  // As upstream: --rest-config-qps/--rest-config-burst is the budget of each client, and every
  // controller, the event recorder and leader election have their own (so equal flags mean equal
  // budgets, and a controller's burst of writes cannot delay a lease renewal). This one (user agent
  // kruise-manager) lists for the informers and serves start-up and the webhooks.
  const limits = { qps: cfg.apiQps, burst: cfg.apiBurst };
  const client = cfg.kubeconfig
    ? fromKubeconfigFile(cfg.kubeconfig, { ...limits, userAgent: MANAGER_USER_AGENT })
    : fromDefault({ ...limits, userAgent: MANAGER_USER_AGENT });
  const closers: StartUp['closers'] = [];
  const up: StartUp = {
    cfg,
    log,
    features: resolveFeatureGates(cfg.featureGates, process.env),
    client,
    limits,
    clientFor: (name, writeFence, shard) =>
      client.withOwnLimit({ ...limits, userAgent: `${MANAGER_USER_AGENT}/${name}${shard ? ` shard/${shard}` : ''}`, writeFence }),
    elector: undefined,
    // Leader-only writes check the lease first: a controller's client refuses to write once this
    // replica's own clock says its lease may have passed on (e.g. woken from a freeze longer than the
    // renew deadline), before its elector has even tried to renew.
    leaderFence: cfg.enableLeaderElection
      ? () => {
          if (!up.elector?.holdsLease()) throw new Error('write refused: this replica no longer holds the leader lease');
        }
      : undefined,
    shardElector: undefined,
    identity: cfg.identity ?? `${os.hostname()}_${randomBytes(4).toString('hex')}`,
    namespace: cfg.leaderElectionNamespace,
    stopController: new AbortController(),
    closers,
    closeOnFailure: async (p) => {
      try {
        return await p;
      } catch (err) {
        for (const close of [...closers].reverse()) await close();
        await client.close();
        throw err;
      }
    },
  };
  return up;
}

/**
 * The namespaces upstream's installation creates: the manager's own (Lease, webhook Secret), which
 * `own` resolves once it exists, and the one the ImagePullJob controller copies pull secrets into
 * for kruise-daemon. Sent together, and awaited only where needed: every round trip before the
 * webhook server listens is start-up time.
 */
function ensureNamespaces({ client, log, namespace }: StartUp): { own: Promise<void>; all: Promise<unknown> } {
  const own = ensureNamespace(client, namespace, log, { required: true });
  const all = Promise.all([own, ensureNamespace(client, KRUISE_DAEMON_CONFIG_NAMESPACE, log, { required: false })]);
  // Awaited later, after other awaits: handled now, so that a failure meanwhile is not an unhandled
  // rejection (it is thrown where awaited).
  for (const p of [own, all]) p.catch(() => {});
  return { own, all };
}

/** Metrics and probes, on every replica. */
async function startMetricsAndProbes({
  cfg,
  client,
  log,
  closers,
  namespace,
}: StartUp): Promise<{ metricsPort?: number; probes?: ProbeServer }> {
  const metricsAddr = parseAddr(cfg.metricsAddr);
  let metricsPort: number | undefined;
  if (metricsAddr) {
    const secure = cfg.metricsSecure
      ? {
          tls: await servingCertificate({
            certDir: cfg.metricsCertPath || undefined,
            certName: cfg.metricsCertName,
            keyName: cfg.metricsCertKey,
          }),
          authorize: delegatedAuthorizer(client),
        }
      : undefined;
    const metrics = new MetricsServer({ port: metricsAddr.port, host: metricsAddr.host, registry, logger: log, secure });
    await metrics.start();
    metricsPort = metrics.port();
    closers.push(() => metrics.close());
  }
  const healthAddr = parseAddr(cfg.healthProbeAddr);
  const probes = healthAddr ? new ProbeServer({ port: healthAddr.port, host: healthAddr.host, logger: log }) : undefined;
  probes?.addHealthzCheck('ping', ping);
  // Its own budget: a probe never waits behind the controllers' rate limiter.
  const probeClient = client.withOwnLimit({ userAgent: `${MANAGER_USER_AGENT}/readyz`, qps: 0, burst: 1 });
  probes?.addReadyzCheck(
    'apiserver',
    apiServerReachable((signal) => probeClient.get(Namespaces, namespace, { signal })),
  );
  await probes?.start();
  if (probes) closers.push(() => probes.close());
  return { metricsPort, probes };
}

/** The webhook and conversion server and the caches it reads: every replica serves admission. */
interface Webhooks {
  server: WebhookServer;
  informers: SharedInformerFactory;
  restMapper: RestMapper;
  certDir: string;
  secret: { namespace: string; name: string };
  clientMode: ClientMode;
  pubBudget: PubBudgetGuard | undefined;
  /** Where the PUB guard's denials become Events, once the recorder exists. */
  pubDenials: { record?: (pod: Pod) => void };
  /** Opens the pod webhook's caches of built-in kinds (false) or of Kruise kinds (true). */
  warmPodWebhookCaches(kruiseKinds: boolean): void;
  /** Which of our kinds the API server serves (CRD established, a version we know served). */
  served: Promise<ReadonlySet<string>>;
  /** The certificates start-up read (or wrote) from the Secret. */
  certs: CertArtifacts;
}

async function startWebhooks(up: StartUp, ownNamespace: Promise<void>, probes: ProbeServer | undefined): Promise<Webhooks> {
  const { cfg, client, log, features, namespace, closers, closeOnFailure } = up;
  // Webhook serving certificates: every replica reads (or first creates) them from the Secret.
  const serviceMode: ClientMode = { mode: 'service', namespace, name: DEFAULT_SERVICE_NAME };
  const servingName = cfg.webhookClientMode === 'url' ? cfg.webhookHost : servingNameFor(serviceMode);
  // A --webhook-cert-dir given belongs to whoever gave it; the default is this process's own.
  const certDir = cfg.webhookCertDir || privateCertDir(closers);
  log.info({ dir: certDir }, 'webhook certificate directory');
  const secret = { namespace, name: DEFAULT_SECRET_NAME };
  // EnableExternalCerts: the Secret is someone else's (e.g. cert-manager's Certificate), only read.
  // Read while the namespace is still being asked for (one round trip less before the server
  // listens); only a write of the Secret waits for the namespace to exist.
  const certsRead = features.EnableExternalCerts
    ? readExternalSecretCerts(client, secret)
    : ensureSecretCerts(client, secret, servingName, { logger: log, beforeWrite: () => ownNamespace }).then((ensured) => ensured.certs);
  const [, certs] = await closeOnFailure(Promise.all([ownNamespace, certsRead]));
  writeCertsToDir(certDir, certs);
  // Which of our kinds the API server serves: asked once the server answers (below), with the
  // webhook configurations. Sent with the namespaces, the CRDs' answers (20 CRDs, 0.7 MB of JSON)
  // came in ahead of the Secret's and held the server back by tens of milliseconds on a restart
  // (eighteenth pass); sent after the Secret, they still came in as it began to listen
  // (twenty-first pass). The pod webhook's reads of a Kruise kind wait for them.
  let askServed!: () => void;
  const served = new Promise<ReadonlySet<string>>((resolve, reject) => {
    askServed = () => servedKruiseKinds(client, { expected: cfg.apiVersions, warn: (message) => log.warn(message) }).then(resolve, reject);
  });
  // In url mode the API server calls the cluster's webhook proxy when it runs one (every replica
  // registers behind it, so the configuration survives any replica), else this replica's own port.
  // Asked now (a small answer, while the server starts); awaited once it listens.
  const proxyFound = cfg.webhookClientMode === 'url' ? findWebhookProxy(client) : Promise.resolve(undefined);
  proxyFound.catch(() => {});
  let servedKinds: ReadonlySet<string> | undefined;
  served.then((kinds) => (servedKinds = kinds)).catch(() => {});

  // One informer per resource type and selector for the whole process: the pod webhook reads them
  // on its hot path on every replica (admission never depends on leadership), and each leadership
  // term's controllers register their handlers on the same caches (buildControllers), so no object
  // is held or watched twice.
  // They start once the webhook server answers (below): their lists share this client's rate
  // limit with the start-up requests before it, and with 20k pods to list they held the webhook
  // back by a quarter of a second.
  const informers = new SharedInformerFactory(client, { logger: log, resyncPeriodMs: cfg.syncPeriodMs });
  // One discovery cache for the process (webhooks and every leadership term's controllers).
  const restMapper = new RestMapper(client);
  const informerCache = informerAdmissionCache(informers, {
    syncTimeoutMs: POD_WEBHOOK_CACHE_SYNC_TIMEOUT_MS,
    mapper: restMapper,
    serves: (apiVersion, kind) =>
      parseApiVersion(apiVersion).group !== APPS_GROUP || (servedKinds?.has(kind) ?? served.then((kinds) => kinds.has(kind))),
  });
  // Sharded, no replica but the leader holds every pod (docs/sharding.md): the pod webhook reads the
  // one pod a deletion or eviction names from the API server instead of a cache of all of them.
  const admissionCache = cfg.sharding ? podsFromApiServer(informerCache, clientAdmissionReader(client)) : informerCache;
  // The pod webhook's caches fill from the start, its Kruise kinds' once the CRDs' conversion points
  // here (alignWebhooks): a list before that would fail on a takeover, and on a first start its
  // watch would be cut by the storage the API server rebuilds for each CRD written (1 s to come back).
  const warmPodWebhookCaches = (kruiseKinds: boolean) => {
    if (!features.PodWebhook) return;
    for (const { apiVersion, kind } of POD_WEBHOOK_CACHED_KINDS)
      if (KRUISE_CRD_GROUPS.includes(parseApiVersion(apiVersion).group) === kruiseKinds && !(cfg.sharding && isPod(apiVersion, kind)))
        void admissionCache.list(apiVersion, kind).catch(() => {});
  };
  warmPodWebhookCaches(false);

  // PodUnavailableBudget: one guard per process, shared by the pod webhook (every replica) and the
  // controllers (leader), so budget taken here is serialised and starts from the newest version.
  // Events need the recorder, made by buildControllers.
  const pubDenials: Webhooks['pubDenials'] = {};
  const pubClient = up.clientFor('podunavailablebudget-webhook');
  const pubBudget =
    features.PodUnavailableBudgetDeleteGate || features.PodUnavailableBudgetUpdateGate
      ? new PubBudgetGuard({
          store: {
            cached: (ns, name) => admissionCache.get<StoredPub>(PUB_API_VERSION, 'PodUnavailableBudget', name, ns),
            fetch: (ns, name) => ignoreNotFound(pubClient.get<StoredPub>(PodUnavailableBudgets, name, { namespace: ns })),
            writeStatus: (pub) => pubClient.updateStatus<StoredPub>(PodUnavailableBudgets, pub),
          },
          inPlacePodVerticalScaling: features.InPlacePodVerticalScaling,
          onDenied: (pod) => pubDenials.record?.(pod),
        })
      : undefined;

  const server = new WebhookServer({
    registrations: allRegistrations,
    convert: (review) => handleConversionReview(review).response!,
    features,
    tls: { certDir },
    reader: clientAdmissionReader(client),
    cache: admissionCache,
    pubBudget,
    writer: clientAdmissionWriter(client),
    host: cfg.webhookHost || undefined,
    port: cfg.webhookPort,
    logger: log,
  });
  await server.start();
  closers.push(() => server.close());
  const proxy = await closeOnFailure(proxyFound);
  const ownAddress = { host: cfg.webhookHost, port: server.port() };
  const clientMode: ClientMode = cfg.webhookClientMode === 'url' ? { mode: 'url', ...(proxy ?? ownAddress) } : serviceMode;
  const webhookReady = webhookReadinessCheck({
    port: server.port(),
    host: cfg.webhookHost || '127.0.0.1',
    // In service mode the certificate names the Service, not the address dialled here.
    servername: cfg.webhookClientMode === 'service' ? servingName : undefined,
    ca: () => certs.caCert,
  });
  // A stopping replica is not ready, though it keeps answering while it drains (stop()).
  probes?.addReadyzCheck('webhook', () => {
    if (server.isDraining()) throw new Error('stopping: draining webhook connections');
    return webhookReady();
  });
  // Checked before anything else is put on this thread: the caches' first list (the pods'), the
  // controllers' code and the webhook configurations' answers, all read here, held the server's
  // first answers back (docs/benchmarks.md, twenty-first pass).
  await closeOnFailure(waitWebhookReady(webhookReady, cfg.webhookInitializeTimeoutMs));
  askServed();
  const stopInformers = new AbortController();
  informers.start(stopInformers.signal);
  closers.push(async () => {
    stopInformers.abort();
    await informers.whenStopped();
  });
  if (proxy) {
    // Closed before the server (closers run last first): the proxy stops sending reviews first.
    const backend = registerWebhookBackend({ client, namespace, identity: up.identity, address: ownAddress, logger: log });
    closers.push(() => backend.stop());
  }
  return { server, informers, restMapper, certDir, secret, clientMode, pubBudget, pubDenials, warmPodWebhookCaches, served, certs };
}

const isPod = (apiVersion: string, kind: string) => apiVersion === 'v1' && kind === 'Pod';

/** An admission cache that reads pods from the API server and everything else from `cache`. */
function podsFromApiServer(cache: AdmissionCache, reader: AdmissionReader): AdmissionCache {
  return {
    list: (apiVersion, kind, opts) =>
      isPod(apiVersion, kind) ? reader.list(apiVersion, kind, opts ?? {}) : cache.list(apiVersion, kind, opts),
    get: async (apiVersion, kind, name, namespace) =>
      isPod(apiVersion, kind)
        ? ((await reader.get(apiVersion, kind, name, namespace)) ?? undefined)
        : cache.get(apiVersion, kind, name, namespace),
  };
}

/** The webhook controller of each leadership term, and the first one's pass before the election. */
interface WebhookAlignment {
  /** A new webhook controller, for the next leadership term. */
  controllerFor(): WebhookCertController;
  /** Resolves once this replica has seen the configurations in line (its controllers wait for it). */
  inLine: Promise<unknown>;
  first: WebhookCertController;
}

/**
 * The webhook controller keeps certificates, webhook configurations and CRD conversion in line:
 * one pass before the election, then one controller for each leadership term. The leader's writes
 * check the lease first. In url mode only one replica may write, or replicas on different ports
 * would fight over the URL.
 */
async function alignWebhooks(up: StartUp, webhooks: Webhooks): Promise<WebhookAlignment> {
  const { cfg, client, log, namespace } = up;
  const controllerFor = () =>
    new WebhookCertController({
      client,
      registrations: allRegistrations,
      features: up.features,
      clientMode: webhooks.clientMode,
      // In a pod (service mode) the installation owns the configurations, as upstream's chart does.
      createConfigurations: cfg.webhookClientMode === 'url',
      timeoutSeconds: cfg.webhookTimeoutSeconds,
      managerNamespace: namespace,
      certDir: webhooks.certDir,
      secret: webhooks.secret,
      external: up.features.EnableExternalCerts ? { secret: webhooks.secret } : undefined,
      onCertsChanged: () => webhooks.server.reloadCertificate(),
      logger: log,
      watch: true,
      beforeWrite: cfg.enableLeaderElection ? leaseFence(client, { namespace, name: cfg.leaderElectionId }, up.identity) : undefined,
    });
  const first = controllerFor();
  // Before the election, as upstream's every replica does at start-up, when no other replica holds
  // the Lease (a leader-only write otherwise): objects stored at another version can only be listed
  // through the CRD's conversion webhook, which after a takeover from OpenKruise still names the
  // stopped manager (or no webhook at all before our CRDs were applied), so no cache could sync
  // and the leader would never be elected (docs/migrate-from-openkruise.md); and admission
  // registered now lets the objects created meanwhile through instead of refusing them at a
  // previous manager's address. With another replica leading, this one only reads, alongside its
  // caches' lists: already in line (a restart), its controllers need not wait for a pass of
  // their own once it leads.
  // The Secret as start-up read it, a moment ago: not read again.
  const { certs } = webhooks;
  if (!(await mayWriteBeforeElection(cfg, client, namespace, up.identity))) return { controllerFor, first, inLine: first.verify(certs) };
  // Replicas starting together (a Helm install) race on these writes: a conflict means another
  // wrote first, so go again on what it wrote rather than fail start-up.
  const syncUnfenced = async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        // A conflict: another replica wrote meanwhile, so the next attempt reads the Secret again.
        return await first.sync({ beforeWrite: undefined, certs: attempt === 1 ? certs : undefined });
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  };
  // A failure leaves it to the leader, which goes on trying; its controllers wait for that.
  await syncUnfenced().catch((err: unknown) =>
    log.error({ err }, 'webhook configurations and CRD conversion not brought in line before the election'),
  );
  return { controllerFor, first, inLine: Promise.resolve() };
}

/** The leader-only controllers: the current leadership term's, and how to build the next term's. */
interface Controllers {
  /**
   * The current term's; with --sharding, built only once this replica leads: warming the leader's
   * caches (every pod, for the sharder and the cross-workload controllers) on every replica would
   * undo what sharding divides.
   */
  current: ControllerTerm | undefined;
  newTerm(): ControllerTerm;
  /** The process's informers, which every term's controllers share. */
  informers: SharedInformerFactory;
  /** Names of the controllers that run (feature gates on, CRDs served). */
  running: ReadonlySet<string>;
  /** With --sharding: this replica's shard and its sharded controllers' current term. */
  shard?: ShardTerms;
}

/** One shard Lease term's controllers; halting it stops its controllers while the Lease is kept. */
interface ShardTerm extends ControllerTerm {
  halt: AbortController;
  /** Set while its controllers run (serveShard): resolves once they have stopped. */
  running?: Promise<unknown>;
}

interface ShardTerms {
  id: string;
  current: ShardTerm;
  newTerm(): ShardTerm;
  /**
   * Once, when this replica first leads: halts the current term, whose caches are the shard's own
   * selected watches, and replaces it with one on the leader's unselected caches, filtered to the
   * shard (FilteringInformers), so the leader holds its shard's objects once; the selected informers
   * are stopped. Every later term is built on the leader's caches, which stay for the process.
   */
  moveOntoLeaderCaches(): Promise<void>;
  /** Resolves once a halted term has been replaced (serveShard runs the new one). */
  replaced: Promise<void>;
}

/**
 * The controllers, their event handlers, workqueues and expectations live for one leadership
 * term: they are built (and the caches they ask for start filling) before the election, so a new
 * leader acts on warm caches, and are thrown away when leadership is lost. The caches themselves
 * live for the process; they are relisted when a term ends, and the next term's controllers wait
 * for that list, so a leader elected again acts on what the API server said after the loss, not
 * on a cache whose watch may still be reconnecting from the outage.
 *
 * With --sharding (docs/sharding.md) the sharded controllers (CloneSet) are not the leader's: every
 * replica runs them for its own shard, on caches selected by its shard label (on the replica that
 * leads, the leader's caches filtered to the shard), for terms of its shard Lease; the leader runs the
 * sharder in their place.
 */
async function buildControllers(
  up: StartUp,
  webhooks: Webhooks,
  served: ReadonlySet<string>,
  catalogue: typeof import('../controllers/index.ts'),
): Promise<Controllers> {
  const { cfg, log, features, closers } = up;
  const recorder = new KubeEventRecorder({
    sink: kubeEventSink(up.client.withOwnLimit({ ...up.limits, userAgent: MANAGER_USER_AGENT }), log),
    reportingInstance: `kruise-manager-${up.identity}`.slice(0, 128),
    logger: log,
  });
  closers.push(() => recorder.close());
  webhooks.pubDenials.record = (pod) =>
    recorder.event(pod, 'Warning', 'PubPreventPodDeletion', 'Admit', 'openkruise pub prevents pod deletion');

  const selection = selectControllers(catalogue.allControllers, features, served);
  for (const { name, reason } of selection.skipped) log.info({ controller: name, reason }, 'controller not started');
  const depsFor = (c: ControllerSetup, informers: ControllerDeps['informers'], client: KubeClient): ControllerDeps => ({
    client,
    informers,
    recorder,
    features,
    logger: log.child({ controller: c.name }),
    workers: cfg.workers[c.workersFlag ?? c.name] ?? 1,
    expectationTimeoutMs: cfg.expectationTimeoutMs,
    cacheSyncTimeoutMs: cfg.controllerCacheSyncTimeoutMs,
    namespace: cfg.namespace,
    managerNamespace: up.namespace,
    flags: cfg,
    served: (kind) => served.has(kind),
    restMapper: webhooks.restMapper,
    pubBudget: webhooks.pubBudget,
  });
  const sharded = cfg.sharding ? selection.run.filter((c) => catalogue.SHARDED_CONTROLLERS.includes(c.name)) : [];
  const leaderOnly = selection.run.filter((c) => !sharded.includes(c));
  if (sharded.length) {
    leaderOnly.push(
      catalogue.sharderController({
        ring: cfg.leaderElectionId,
        identity: `sharder-${shardIdFor(up.identity)}`,
        namespace: up.namespace,
        leaseDurationMs: cfg.leaderElectionLeaseDurationMs,
      }),
    );
  }
  const newTerm = (): ControllerTerm => {
    const scope = webhooks.informers.scope();
    const runners = leaderOnly.map((c) => ({
      name: c.name,
      runner: c.setup(depsFor(c, scope, up.clientFor(c.clientName ?? `${c.name}-controller`, up.leaderFence))),
    }));
    return { informers: scope, runners, end: () => scope.close() };
  };
  const controllers: Controllers = {
    current: cfg.sharding ? undefined : newTerm(),
    newTerm,
    informers: webhooks.informers,
    running: new Set(selection.run.map((c) => c.name)),
  };
  closers.push(() => controllers.current?.end());
  if (sharded.length) {
    const shard = shardTerms(up, webhooks, sharded, depsFor, catalogue);
    controllers.shard = shard;
    closers.push(() => shard.current.end());
  }
  // Every cache a controller declared fills before start-up goes on (controller-runtime's
  // CacheSyncTimeout): one that cannot (a missing resource, no RBAC) fails start-up, naming it.
  if (controllers.current) {
    await up.closeOnFailure(controllers.current.informers.waitForCacheSync(up.stopController.signal, cfg.controllerCacheSyncTimeoutMs));
  }
  if (controllers.shard) {
    await up.closeOnFailure(
      controllers.shard.current.informers.waitForCacheSync(up.stopController.signal, cfg.controllerCacheSyncTimeoutMs),
    );
  }
  return controllers;
}

/**
 * One shard's terms: the sharded controllers on informers selected by this shard's label
 * (ShardInformers: watches of their own, or once this replica has led, the leader's caches filtered),
 * with clients that label what they create with the shard and refuse to write once
 * the shard Lease may have passed on, plus the drain handshake (ShardDrainer).
 */
function shardTerms(
  up: StartUp,
  webhooks: Webhooks,
  sharded: readonly ControllerSetup[],
  depsFor: (c: ControllerSetup, informers: ControllerDeps['informers'], client: KubeClient) => ControllerDeps,
  catalogue: typeof import('../controllers/index.ts'),
): ShardTerms {
  const { cfg } = up;
  const id = shardIdFor(up.identity);
  const labels = shardLabels(cfg.leaderElectionId);
  const scope: ShardScope = { labels, shardId: id, workloads: catalogue.SHARDED_WORKLOADS, children: catalogue.SHARDED_CHILDREN };
  const shardFence = () => {
    if (!up.shardElector?.holdsLease()) throw new Error('write refused: this replica no longer holds its shard lease');
  };
  const nsScope = cfg.namespace ? { namespace: cfg.namespace } : {};
  let onLeaderCaches = false;
  const newTerm = (): ShardTerm => {
    const termScope = webhooks.informers.scope();
    const source = onLeaderCaches ? new FilteringInformers(termScope, [...scope.workloads, ...scope.children]) : termScope;
    const informers = new ShardInformers(source, scope);
    const runners = sharded.map((c) => {
      const client = labellingCreates(up.clientFor(c.clientName ?? `${c.name}-controller`, shardFence, id), { [labels.shard]: id });
      return { name: c.name, runner: c.setup(depsFor(c, informers, client)) };
    });
    const drainer = new ShardDrainer({
      client: up.clientFor('shard-drain', shardFence, id),
      informers: source,
      scope,
      workloads: catalogue.SHARDED_WORKLOADS.map((type) => ({
        type,
        informer: informers.informerFor(type, nsScope),
        busy: (key) => runners.some(({ runner }) => runner.busy?.(key)),
      })),
      logger: up.log.child({ controller: 'shard-drain' }),
    });
    return {
      informers: termScope,
      runners: [...runners, { name: 'shard-drain', runner: drainer }],
      end: () => termScope.close(),
      halt: new AbortController(),
    };
  };
  const terms: ShardTerms = {
    id,
    current: newTerm(),
    newTerm,
    replaced: Promise.resolve(),
    async moveOntoLeaderCaches() {
      if (onLeaderCaches) return;
      onLeaderCaches = true;
      const old = terms.current;
      let replaced!: () => void;
      terms.replaced = new Promise((resolve) => (replaced = resolve));
      old.halt.abort();
      await old.running;
      old.end();
      // Unless the shard Lease was lost meanwhile and serveShard built the next term (on these caches too).
      if (terms.current === old) terms.current = newTerm();
      const stopped = webhooks.informers.stopInformers((_, selector) => isShardSelected(scope, selector));
      up.log.info({ shard: id, stopped }, "leading: the shard's controllers read the leader's caches; its own watches stopped");
      replaced();
    },
  };
  return terms;
}

/** The leader-only phase: the election (when enabled) and each term's controllers. */
interface Leadership {
  leading: boolean;
  stopping: boolean;
  /** Resolves when the controllers have stopped for good (after stop()). */
  done: Promise<void>;
}

function lead(up: StartUp, alignment: WebhookAlignment, controllers: Controllers): Leadership {
  const { cfg, log, identity, namespace, stopController } = up;
  let webhookController = alignment.first;
  const leadership: Leadership = { leading: false, stopping: false, done: Promise.resolve() };

  const runControllers = async (signal: AbortSignal) => {
    leadership.leading = true;
    log.info({ identity }, 'became leader; starting controllers');
    const certRun = webhookController.run(signal);
    // As upstream (main.go waits for webhook.WaitReady before setting up controllers): admission is
    // registered before any controller writes, so the first pods a controller creates go through
    // the pod webhook (sidecars, readiness gate) instead of racing its registration.
    const aborted = new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    await Promise.race([webhookController.ready, aborted]);
    // Each controller waits for its own caches (a term built only now, with --sharding, fills them now).
    // The shard's controllers move onto the leader's caches first: stopped before those caches list,
    // so the list holds every write they made, and the next term's empty expectations miss none.
    if (!controllers.current) {
      await controllers.shard?.moveOntoLeaderCaches();
      controllers.current = controllers.newTerm();
    }
    const term = controllers.current;
    const runs = term.runners.map(({ name, runner }) =>
      runner.run(signal).catch((err) => log.error({ err, controller: name }, 'controller stopped with an error')),
    );
    try {
      await Promise.all([certRun, ...runs]);
    } finally {
      leadership.leading = false;
    }
  };

  if (!cfg.enableLeaderElection) {
    leadership.done = runControllers(stopController.signal);
    return leadership;
  }
  const sharding = controllers.shard ? serveShard(up, alignment, controllers, leadership) : Promise.resolve();
  const campaign = () =>
    (up.elector = new LeaderElector({
      store: new KubeLeaseStore({ client: up.clientFor('leader-election'), namespace, name: cfg.leaderElectionId }),
      identity,
      name: cfg.leaderElectionId,
      leaseDuration: cfg.leaderElectionLeaseDurationMs,
      renewDeadline: cfg.leaderElectionRenewDeadlineMs,
      retryPeriod: cfg.leaderElectionRetryPeriodMs,
      releaseOnCancel: true,
      logger: log,
      callbacks: {
        onStartedLeading: runControllers,
        onStoppedLeading: () => {},
        onNewLeader: (leader) => log.info({ leader }, 'new leader elected'),
      },
    }));
  // Upstream exits on a lost lease and relies on the kubelet to restart it; outside Kubernetes
  // nothing would. Instead: the term's controllers have stopped (the elector awaits them before
  // returning), its handlers, workqueues and expectations are dropped, every cache relists, and a
  // new term campaigns again (its controllers wait for the relist before they act).
  leadershipLost.inc({ name: cfg.leaderElectionId }, 0);
  leadership.done = (async () => {
    for (;;) {
      await campaign().run(stopController.signal);
      if (leadership.stopping || stopController.signal.aborted) return;
      leadershipLost.inc({ name: cfg.leaderElectionId });
      log.error({ identity }, 'leader election lost; controllers stopped, caches relisting, re-entering the election');
      controllers.current?.end();
      void controllers.informers.relist();
      controllers.current = cfg.sharding ? undefined : controllers.newTerm();
      webhookController = alignment.controllerFor();
    }
  })().then(() => sharding);
  return leadership;
}

/**
 * With --sharding: this replica's shard. It holds its shard Lease (labelled with the ring, so the
 * sharder finds it) and, for each term of it, runs its sharded controllers; losing the Lease (not
 * renewed in time, or taken over by the sharder) ends the term as losing the leader Lease does —
 * controllers stopped, handlers dropped, caches relisted — and the shard campaigns again.
 */
async function serveShard(up: StartUp, alignment: WebhookAlignment, controllers: Controllers, leadership: Leadership): Promise<void> {
  const { cfg, log, stopController } = up;
  const shard = controllers.shard!;
  const name = shardLeaseName(cfg.leaderElectionId, shard.id);
  const runShard = async (signal: AbortSignal) => {
    log.info({ shard: shard.id }, 'shard lease held; starting sharded controllers');
    await alignment.inLine;
    // A term halted while the Lease is held (moveOntoLeaderCaches) is followed by its replacement.
    while (!signal.aborted) {
      const term = shard.current;
      const termSignal = AbortSignal.any([signal, term.halt.signal]);
      term.running = Promise.all(
        term.runners.map(({ name: controller, runner }) =>
          runner.run(termSignal).catch((err) => log.error({ err, controller }, 'controller stopped with an error')),
        ),
      );
      await term.running;
      if (!term.halt.signal.aborted) return;
      await shard.replaced;
    }
  };
  for (;;) {
    up.shardElector = new LeaderElector({
      store: new KubeLeaseStore({
        client: up.clientFor('shard-lease', undefined, shard.id),
        namespace: up.namespace,
        name,
        labels: { [shardLabels(cfg.leaderElectionId).ring]: cfg.leaderElectionId },
      }),
      identity: shard.id,
      name,
      leaseDuration: cfg.leaderElectionLeaseDurationMs,
      renewDeadline: cfg.leaderElectionRenewDeadlineMs,
      retryPeriod: cfg.leaderElectionRetryPeriodMs,
      releaseOnCancel: true,
      logger: log,
      callbacks: { onStartedLeading: runShard, onStoppedLeading: () => {} },
    });
    await up.shardElector.run(stopController.signal);
    if (leadership.stopping || stopController.signal.aborted) return;
    log.error({ shard: shard.id }, 'shard lease lost; sharded controllers stopped, caches relisting, campaigning again');
    shard.current.end();
    void controllers.informers.relist();
    shard.current = shard.newTerm();
  }
}

/** Leader election off, or its Lease absent, expired or already ours. */
async function mayWriteBeforeElection(cfg: ManagerConfig, client: KubeClient, namespace: string, identity: string): Promise<boolean> {
  if (!cfg.enableLeaderElection) return true;
  const lease = await new KubeLeaseStore({ client, namespace, name: cfg.leaderElectionId }).get();
  if (!lease || !lease.holderIdentity || lease.holderIdentity === identity) return true;
  const renewed = Date.parse(lease.renewTime);
  return !Number.isFinite(renewed) || renewed + lease.leaseDurationSeconds * 1000 < Date.now();
}

/** One leadership term's controllers and its view of the process's informers. */
interface ControllerTerm {
  informers: InformerScope;
  runners: Array<{ name: string; runner: ControllerRunner }>;
  /** Removes the term's event handlers; the controllers stop with the leadership signal. */
  end(): void;
}

/** Polls the webhook server's readiness until it answers, failing start-up after timeoutMs. */
async function waitWebhookReady(check: () => Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() >= deadline) {
        throw new Error(`webhook server not ready within ${timeoutMs}ms (--webhook-initialize-timeout): ${errMessage(err)}`, {
          cause: err,
        });
      }
    }
    await sleep(200);
  }
}

/**
 * A new directory only this user can read (mkdtemp: mode 0700, unpredictable name) for the serving
 * certificates; removed when the manager stops, or at process exit if it never gets to stop.
 */
export function privateCertDir(closers: Array<() => Promise<void> | void>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kruise-webhook-certs-'));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  process.once('exit', remove);
  closers.push(() => {
    process.off('exit', remove);
    remove();
  });
  return dir;
}

/**
 * Creates the namespace unless it exists. It is looked up first, so a least-privilege role that
 * may read but not create namespaces (upstream's installation creates them) is never refused: a
 * missing one fails start-up when `required`, and is logged as what the installation lacks
 * otherwise.
 */
export async function ensureNamespace(client: KubeClient, name: string, log: Logger, opts: { required: boolean }): Promise<void> {
  let failure: unknown;
  try {
    await client.get(Namespaces, name);
    return;
  } catch (err) {
    // Forbidden to read: creating may still be allowed, and answers AlreadyExists if it exists.
    if (!isNotFound(err) && !isForbidden(err)) failure = err;
  }
  if (!failure) {
    try {
      await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      log.info({ namespace: name }, 'created namespace');
      return;
    } catch (err) {
      if (isAlreadyExists(err)) return;
      failure = err;
    }
  }
  const message = `namespace ${name} does not exist and could not be created: ${errMessage(failure)}`;
  if (opts.required) throw new Error(message);
  log.warn({ namespace: name }, `${message}; create it as the upstream installation does`);
}
