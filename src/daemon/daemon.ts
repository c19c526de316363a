// kruise-daemon (spec §21): one process per node on real clusters, talking CRI to the node's
// runtime; or, with --simulated, one process for every simulated node of the local cluster. Either
// way it runs the same sub-controllers — containerrecreate (CRRs), imagepuller (NodeImage),
// containermeta (env from metadata) and podprobe (NodePodProbe) — against a ContainerRuntime (simulated: plus the
// kubelet's launch barrier), and serves /healthz and /metrics
// on --addr (upstream :10221).
import { resolveFeatureGates, type FeatureGates } from '../apis/features.ts';
import { fromDefault, fromKubeconfigFile, type KubeClient } from '../runtime/client.ts';
import { Pods } from '../runtime/resources.ts';
import { KubeEventRecorder } from '../runtime/events.ts';
import { kubeEventSink } from '../runtime/event-sink.ts';
import { SharedInformerFactory } from '../runtime/informer-factory.ts';
import { logger as rootLogger, type Logger } from '../runtime/log.ts';
import { registry } from '../runtime/metrics.ts';
import { ProbeServer } from '../runtime/probes.ts';
import { parseAddr } from '../util/addr.ts';
import { delegatedAuthorizer, servingCertificate } from '../runtime/secure-serving.ts';
import { realClock } from '../util/clock.ts';
import type { Pod } from '../apis/core-objects.ts';
import type { DaemonContext, NodeScope, SubController } from './context.ts';
import { containerMetaController } from './containermeta/controller.ts';
import { containerRecreateController } from './containerrecreate/controller.ts';
import { imagePullerController } from './imagepuller/controller.ts';
import { CredentialProviders } from './imagepuller/credential-provider.ts';
import { podProbeController } from './podprobe/controller.ts';
import type { DaemonConfig } from './options.ts';
import { RuntimeUnavailableError, type ContainerRuntime, type PodRef } from './runtime/types.ts';
import { selectedNodesScope, singleNodeScope } from './scope.ts';
import { barrierController } from './simulated/barrier.ts';
import { SimulatedNodes } from './simulated/runtime.ts';

export interface RunningDaemon {
  /** Absent when the daemon idles (KruiseDaemon=false). */
  client?: KubeClient;
  features: FeatureGates;
  /** Port of /healthz and /metrics; undefined with --addr 0. */
  port?: number;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  logger?: Logger;
  /** The node's runtime in real mode; default CRI at cfg.runtimeEndpoint. */
  connectRuntime?: (endpoint: string | undefined) => Promise<ContainerRuntime>;
}

const CONTAINER_ID_INDEX = 'containerID';

/** Upstream's documented way out for nodes whose runtime the daemon cannot use. */
const NO_RUNTIME_HINT = ' (on nodes without a usable runtime, turn the daemon off with the feature gate KruiseDaemon=false)';

/**
 * KruiseDaemon=false on a real node: the features that need the daemon are off in the manager
 * too, so it touches neither the runtime nor the API and only answers /healthz, saying so once.
 * (Upstream's chart then deploys no daemon at all; a daemon started anyway idles rather than
 * restart over and over on a runtime it was told not to need.)
 */
async function idle(cfg: DaemonConfig, addr: ReturnType<typeof parseAddr>, log: Logger, features: FeatureGates): Promise<RunningDaemon> {
  log.info({ node: cfg.nodeName }, 'feature gate KruiseDaemon is off: kruise-daemon idles (no container runtime, no controllers)');
  const server = addr ? new ProbeServer({ port: addr.port, host: addr.host, logger: log, metrics: registry }) : undefined;
  await server?.start();
  return { features, port: server?.port(), stop: async () => void (await server?.close()) };
}

export async function startDaemon(cfg: DaemonConfig, opts: DaemonOptions = {}): Promise<RunningDaemon> {
  const log = (opts.logger ?? rootLogger).child({ component: 'kruise-daemon' });
  const features = resolveFeatureGates(cfg.featureGates, process.env);
  const addr = parseAddr(cfg.addr);
  if (!cfg.simulated && !features.KruiseDaemon) return idle(cfg, addr, log, features);
  // A plugin config that cannot be used fails the start before anything else is touched.
  const credentialProviders =
    !cfg.simulated && cfg.pluginConfigFile
      ? CredentialProviders.load(cfg.pluginConfigFile, cfg.pluginBinDir ?? '', { clock: realClock, logger: log })
      : undefined;
  let runtime: ContainerRuntime | undefined;
  if (!cfg.simulated) {
    // Fail before touching the API: a daemon without its runtime can do nothing for the node.
    try {
      // Loaded here, not at start-up: the gRPC stack and the CRI proto are ≈25 MiB the simulated daemon never needs.
      const connect =
        opts.connectRuntime ?? (async (endpoint?: string) => (await import('./runtime/cri-runtime.ts')).CriRuntime.connect({ endpoint }));
      runtime = await connect(cfg.runtimeEndpoint);
      const v = await runtime.version();
      log.info({ runtime: v }, 'connected to the container runtime');
    } catch (err) {
      if (err instanceof RuntimeUnavailableError) throw new RuntimeUnavailableError(`${err.message}${NO_RUNTIME_HINT}`);
      throw new RuntimeUnavailableError(
        `container runtime ${cfg.runtimeEndpoint ?? '(default sockets)'} is not usable: ${(err as Error).message}${NO_RUNTIME_HINT}`,
      );
    }
  }
  const client = cfg.kubeconfig
    ? fromKubeconfigFile(cfg.kubeconfig, { userAgent: 'kruise-daemon' })
    : fromDefault({ userAgent: 'kruise-daemon' });
  const clock = realClock;
  const stopAll = new AbortController();
  const informers = new SharedInformerFactory(client, { logger: log });
  const recorder = new KubeEventRecorder({
    sink: kubeEventSink(client, log),
    reportingController: 'kruise-daemon',
    reportingInstance: `kruise-daemon-${cfg.simulated ? 'simulated' : cfg.nodeName}`.slice(0, 128),
    logger: log,
  });

  let simulated: SimulatedNodes | undefined;
  let scope: NodeScope;
  if (cfg.simulated) {
    // Filled in once the pod informer exists, which needs the scope, which needs the runtimes.
    let podOfContainer: (id: string) => PodRef | undefined = () => undefined;
    simulated = new SimulatedNodes({
      client,
      recorder,
      clock,
      logger: log.child({ runtime: 'simulated' }),
      podOfContainer: (id) => podOfContainer(id),
    });
    scope = selectedNodesScope(
      informers,
      cfg.simulatedNodeSelector,
      (n) => simulated!.runtimeFor(n),
      (n) => simulated!.forget(n),
    );
    // Which pod a container id belongs to: the runtime is asked by container id only.
    const pods = informers.informerFor<Pod>(Pods, scope.podSelector);
    pods.addIndexers({ [CONTAINER_ID_INDEX]: (p) => (p.status?.containerStatuses ?? []).map((s) => s?.containerID ?? '').filter(Boolean) });
    podOfContainer = (id) => {
      const p = pods.lister.byIndex(CONTAINER_ID_INDEX, id)[0];
      return p ? { uid: p.metadata.uid!, namespace: p.metadata.namespace!, name: p.metadata.name! } : undefined;
    };
  } else {
    scope = singleNodeScope(cfg.nodeName!, runtime!);
  }

  const ctx: DaemonContext = { client, informers, scope, recorder, clock, logger: log, features };
  const controllers: SubController[] = [];
  if (features.KruiseDaemon) {
    // The CRR executor needs pods (upstream gate DaemonWatchingPod) for podIP and grace periods.
    if (features.DaemonWatchingPod) controllers.push(containerRecreateController(ctx));
    controllers.push(imagePullerController(ctx, { maxWorkers: cfg.maxWorkersForPullImage, credentialProviders }));
    if (features.InPlaceUpdateEnvFromMetadata) controllers.push(containerMetaController(ctx));
    if (features.PodProbeMarkerGate) controllers.push(podProbeController(ctx));
  }
  // On simulated nodes the daemon also plays the kubelet holding containers at their launch barrier.
  if (cfg.simulated) controllers.push(barrierController(ctx));

  // /healthz (caches synced, runtime answering) and /metrics on one port, as upstream's --addr.
  let synced = false;
  const secureMetrics = cfg.metricsSecure
    ? {
        tls: await servingCertificate({ certDir: cfg.metricsCertPath, certName: cfg.metricsCertName, keyName: cfg.metricsCertKey }),
        authorize: delegatedAuthorizer(client),
      }
    : undefined;
  const server = addr ? new ProbeServer({ port: addr.port, host: addr.host, logger: log, metrics: registry, secureMetrics }) : undefined;
  server?.addHealthzCheck('informers', () => {
    if (!synced) throw new Error('caches not synced yet');
  });
  if (runtime) server?.addHealthzCheck('runtime', async () => void (await runtime.version()));
  await server?.start();

  informers.start(stopAll.signal);
  if (!(await informers.waitForCacheSync(stopAll.signal))) throw new Error('informer caches did not sync');
  synced = true;
  for (const c of controllers) c.start();
  log.info(
    {
      mode: cfg.simulated ? `simulated (${cfg.simulatedNodeSelector})` : `node ${cfg.nodeName}`,
      controllers: controllers.map((c) => c.name),
    },
    'kruise-daemon started',
  );

  let stopped: Promise<void> | undefined;
  return {
    client,
    features,
    port: server?.port(),
    stop: () =>
      (stopped ??= (async () => {
        await Promise.all(controllers.map((c) => c.stop()));
        stopAll.abort();
        await informers.whenStopped();
        await recorder.close();
        await server?.close();
        await runtime?.close();
        await client.close();
      })()),
  };
}
