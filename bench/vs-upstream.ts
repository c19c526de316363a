// Kruise TS side by side with OpenKruise v1.8.2's kruise-manager (figures printed, never asserted).
// One local cluster (KWOK nodes); the two managers take turns on it, interleaved (ts, go, ts, go…
// for --rounds), with the same flags (QPS/burst, leader election off, webhooks by URL on 127.0.0.1).
// Each turn installs that manager's CRDs and webhook configurations (the CRD names are the same, so
// the other's are removed first), starts the manager and measures:
//   - start-up with the pods already in the cluster: process start → webhook answers TLS, → the
//     CloneSet controller's caches synced ("Starting workers" controller=cloneset in its log), →
//     first reconcile (a CloneSet created once the webhook answers has status.observedGeneration);
//   - RSS once synced (before any CloneSet pod), and at the end of the 1000-pod run; the watches
//     the manager holds once synced (apiserver_longrunning_requests WATCH, less those before it);
//   - scale-up 0 → N, in-place rollout, recreate rollout (maxUnavailable 10%), scale-down N → 0:
//     wall, manager CPU-seconds (/proc utime+stime), API writes per pod by verb and resource
//     (apiserver_request_total deltas; no client label, so KWOK's pod status writes and the
//     scheduler's events are counted too — the same for both).
// --background-pods N first creates N bare pods that no scheduler takes (Pending for good: no KWOK
// work), which both managers cache: start-up and RSS at N + replicas pods.
// --start install (default): each turn's manager starts on CRDs and webhook configurations installed
// just before it, so start-up includes the first start's writes (the CA bundle and conversion
// webhook on the CRDs: the API server rebuilds each one's storage and OpenAPI). --start restart:
// the manager is started once, stopped once its caches have synced, and measured on its second
// start, on the same ports and certificates: an upgrade or a rescheduled pod, where nothing is left
// to write.
// Usage: ./run.sh bench vs-upstream [--replicas 1000] [--nodes 20] [--rounds 1]
//        [--background-pods 0] [--qps 30 --burst 50] [--phases scale-up,in-place,recreate,scale-down]
//        [--start install|restart] [--managers ts,go]  (an entry `ts+<node flag>+<NAME=value>` is a Kruise TS turn with extra
//        Node/V8 flags, each replacing the production flag of its name, or environment, e.g.
//        ts+--max-semi-space-size=4+MALLOC_ARENA_MAX=2, to weigh one against the same build)
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdirSync, existsSync } from 'node:fs';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { anonRssMiB, connectionsTo, cpuSeconds, rssMiB } from './measure.ts';
import { nodeFlagsWith, withoutWebhookProxy } from './workload.ts';
import { up, down, kubectl } from '../src/cluster/local-cluster.ts';
import { freePorts, startProcess, stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { ensureUpstreamPeer, repoRoot } from '../src/cluster/binaries.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import type { CloneSetStatus } from '../src/apis/apps/cloneset.ts';
import { isAlreadyExists, isNotFound, StatusError } from '../src/runtime/errors.ts';
import { Pods, CloneSets as CloneSetsStorage } from '../src/runtime/resources.ts';

// v1alpha1: the version both managers serve (v1.8.2 has no v1beta1 CloneSet).
const CloneSets = { ...CloneSetsStorage, version: 'v1alpha1' };

const { values } = benchArgs(import.meta.url, {
  options: {
    replicas: { type: 'string', default: '1000' },
    nodes: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    'background-pods': { type: 'string', default: '0' },
    qps: { type: 'string', default: '30' },
    burst: { type: 'string', default: '50' },
    phases: { type: 'string', default: 'scale-up,in-place,recreate,scale-down' },
    managers: { type: 'string', default: 'ts,go' },
    start: { type: 'string', default: 'install' },
    cluster: { type: 'string' },
  },
});
const replicas = Number(values.replicas);
if (!['install', 'restart'].includes(values.start)) throw new Error(`--start: install or restart, not ${values.start}`);
const phasesWanted = values.phases.split(',');
/** A turn's manager: `go`, or `ts` with any extra Node flags after `+`. */
const managers = values.managers.split(',');
const kindOf = (m: string): 'ts' | 'go' => (m === 'go' ? 'go' : 'ts');
/** A Kruise TS turn's extras: Node/V8 flags (`--…`) and environment variables (`NAME=value`, e.g. MALLOC_ARENA_MAX=2). */
const nodeFlagsOf = (m: string): string[] =>
  m
    .split('+')
    .slice(1)
    .filter((x) => x.startsWith('-'));
/** The production Node flags with a turn's own in place of those of the same name. */
const nodeFlagsFor = (m: string): string[] => nodeFlagsWith(nodeFlagsOf(m));
const envOf = (m: string): Record<string, string> =>
  Object.fromEntries(
    m
      .split('+')
      .slice(1)
      .filter((x) => !x.startsWith('-'))
      .map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]),
  );
const name = values.cluster ?? `bench-vs-${process.pid}`;
const ns = 'default';
const UPSTREAM_NS = 'kruise-system';

const { state, reused } = await up({ name, nodes: Number(values.nodes), log: () => undefined });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 2000, burst: 2000 });
const run = (args: string[], input?: string) => kubectl(state, args, input);
const peer = await ensureUpstreamPeer();
// dist/ as bin/kruise would build it (the turns run it directly, to swap Node flags).
execFileSync(path.join(repoRoot, 'hack/build.sh'), ['--if-stale'], { stdio: 'inherit' });
const load = () => os.loadavg()[0].toFixed(1);

/** Watch requests the API server is serving now, from every client (apiserver_longrunning_requests). */
async function openWatches(): Promise<number> {
  const text = await run(['get', '--raw', '/metrics']);
  let open = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('apiserver_longrunning_requests{') && line.includes('verb="WATCH"'))
      open += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return open;
}

type Writes = Map<string, number>;
async function writes(): Promise<Writes> {
  const text = await run(['get', '--raw', '/metrics']);
  const out: Writes = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY'].includes(labels.verb)) continue;
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? '/' + labels.subresource : ''}${labels.code === '409' ? ' (409)' : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}
function delta(before: Writes, after: Writes): Writes {
  const d: Writes = new Map();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) d.set(k, v - (before.get(k) ?? 0));
  return d;
}

// --- switching the cluster between the two managers' installations --------------------------------

const CONFIGURATIONS = [
  'mutatingwebhookconfiguration/kruise-mutating-webhook-configuration',
  'validatingwebhookconfiguration/kruise-validating-webhook-configuration',
];

async function uninstall(): Promise<void> {
  for (const c of CONFIGURATIONS) await run(['delete', c, '--ignore-not-found']);
  const crds = (await run(['get', 'crd', '-o', 'name'])).split('\n').filter((l) => l.includes('kruise.io'));
  // Conversion off first: with the manager gone its conversion webhook cannot answer, and the API
  // server could not delete the objects stored at another version (the CRD would never go).
  for (const crd of crds) await run(['patch', crd, '--type=merge', '-p', '{"spec":{"conversion":{"strategy":"None","webhook":null}}}']);
  if (crds.length) await run(['delete', '--wait=true', ...crds]);
  await run(['delete', 'secrets,leases', '--all', '-n', UPSTREAM_NS, '--ignore-not-found']).catch(() => '');
}

/** `kubectl create` of every document, the ones that exist already (e.g. the webhook Service) left as they are. */
async function createMissing(docs: string): Promise<void> {
  await run(['create', '-f', '-'], docs).catch((e: Error & { stderr?: string }) => {
    const problems = (e.stderr ?? e.message)
      .split('\n')
      .filter((l) => l.trim() && !/AlreadyExists|already exists/.test(l) && !l.startsWith('Command failed'));
    if (problems.length) throw e;
  });
}

async function installUpstream(): Promise<void> {
  await run(['create', 'namespace', UPSTREAM_NS]).catch((e: Error) => {
    if (!/AlreadyExists/.test(e.message)) throw e;
  });
  await createMissing(await run(['kustomize', path.join(peer.moduleDir, 'config/crd')]));
  const webhooks = (await run(['kustomize', path.join(peer.moduleDir, 'config/webhook')])).replace(
    /^ {2}name: (mutating|validating)-webhook-configuration$/gm,
    '  name: kruise-$1-webhook-configuration',
  );
  await createMissing(webhooks);
  await run(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
}

// --- one manager's turn ------------------------------------------------------------------------------

interface Turn {
  manager: string;
  load: string[];
  webhookReady: number;
  synced: number;
  firstReconcile: number;
  rssSynced: number;
  anonSynced: number;
  /** Watches open once synced, less those open before the manager started (other clients' churn included). */
  watchesSynced: number;
  /** The manager's own TCP connections to the API server once synced (its watches + pooled requests). */
  connectionsSynced: number;
  rssEnd?: number;
  anonEnd?: number;
  podsAtStart: number;
  phases: Array<{ phase: string; seconds: number; cpu: number; writes: Writes }>;
}

type Ports = [webhook: number, metrics: number, probes: number, pprof: number];

/**
 * The environment without NODE_EXTRA_CA_CERTS, which this machine sets for npm (its registry
 * proxy): Node parses every certificate of the file it names at its first TLS context, 10 ms of a
 * start-up of 0.2 s, where Go's manager ignores it. A manager's pod has no such variable.
 */
function withoutExtraCACerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _extra, ...rest } = env;
  return rest;
}

async function startManager(manager: string, logFile: string, ports: Ports): Promise<{ proc: Started; webhookPort: number; t0: number }> {
  const [webhookPort, metrics, probes, pprof] = ports;
  const t0 = performance.now();
  if (kindOf(manager) === 'ts') {
    // The production entry point as bin/kruise runs it (the compiled dist/ with config/node/flags),
    // with a turn's extra Node flags in place of the production flags of the same name.
    const proc = startProcess(
      'kruise-ts-manager',
      path.join(repoRoot, 'node_modules/.bin/node'),
      [
        ...nodeFlagsFor(manager),
        path.join(repoRoot, 'dist/cli/kruise.js'),
        'start',
        '--kubeconfig',
        state.kubeconfig,
        `--webhook-port=${webhookPort}`,
        '--enable-leader-election=false',
        `--metrics-addr=127.0.0.1:${metrics}`,
        `--health-probe-addr=127.0.0.1:${probes}`,
        `--rest-config-qps=${values.qps}`,
        `--rest-config-burst=${values.burst}`,
      ],
      logFile,
      {
        ...withoutExtraCACerts(process.env),
        KRUISE_LOG_LEVEL: 'info',
        ...envOf(manager),
      },
    );
    return { proc, webhookPort, t0 };
  }
  const certDir = path.join(state.runDir, `kruise-peer-certs-${webhookPort}`);
  mkdirSync(certDir, { recursive: true });
  const proc = startProcess(
    'kruise-peer',
    peer.kruiseManager,
    [
      `--kubeconfig=${state.kubeconfig}`,
      `--metrics-addr=127.0.0.1:${metrics}`,
      `--health-probe-addr=127.0.0.1:${probes}`,
      `--pprof-addr=127.0.0.1:${pprof}`,
      '--enable-leader-election=false',
      `--rest-config-qps=${values.qps}`,
      `--rest-config-burst=${values.burst}`,
    ],
    logFile,
    {
      ...process.env,
      KUBECONFIG: state.kubeconfig,
      POD_NAMESPACE: UPSTREAM_NS,
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_PORT: String(webhookPort),
      WEBHOOK_CERT_DIR: certDir,
    },
  );
  return { proc, webhookPort, t0 };
}

/** The CloneSet controller's caches have synced: its "Starting workers" line (both managers log it). */
const isSynced = (log: string) => /Starting workers.*cloneset|cloneset.*Starting workers/.test(log);

/**
 * When the manager logged that line (epoch ms), from the line's own timestamp: pino's ISO time, or
 * klog's `I1124 22:35:13.836989` (UTC here, the year assumed current). The polling loop below
 * notices it only between its other steps (a `kubectl apply` can take a second), so this is the figure.
 */
function syncedAt(log: string): number | undefined {
  const line = log.split('\n').find((l) => isSynced(l));
  const iso = line?.match(/"time":"([^"]+)"/)?.[1];
  if (iso) return Date.parse(iso);
  const klog = line?.match(/^I(\d\d)(\d\d) (\d\d:\d\d:\d\d\.\d+)/);
  if (!klog) return undefined;
  return Date.parse(`${new Date().getUTCFullYear()}-${klog[1]}-${klog[2]}T${klog[3]!.slice(0, 12)}Z`);
}

async function answersTLS(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

const manifest = (image: string, policy: string, n: number) =>
  JSON.stringify({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'bench', namespace: ns },
    spec: {
      replicas: n,
      selector: { matchLabels: { app: 'bench' } },
      template: { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'main', image }] } },
      updateStrategy: { type: policy, maxUnavailable: '10%' },
    },
  });

/** What the benchmark reads of the CloneSet's status (any field may be missing before the first reconcile). */
type Status = Partial<
  Pick<CloneSetStatus, 'observedGeneration' | 'replicas' | 'readyReplicas' | 'updatedReadyReplicas' | 'currentRevision' | 'updateRevision'>
>;

async function settled(image: string, n: number, proc: Started): Promise<void> {
  for (;;) {
    // On the oversubscribed machine the API server may answer 5xx for a moment (a conversion
    // webhook call that timed out): poll again rather than lose the run.
    const cs = await client.get<KubeObject & { status?: Status }>(CloneSets, 'bench', { namespace: ns }).catch((e: unknown) => {
      if (e instanceof StatusError && e.code >= 500) return undefined;
      throw e;
    });
    if (!cs) {
      await sleep(1000);
      continue;
    }
    const s = cs.status ?? {};
    if (
      s.observedGeneration === cs.metadata.generation &&
      s.replicas === n &&
      (s.readyReplicas ?? 0) === n &&
      (s.updatedReadyReplicas ?? 0) === n &&
      s.currentRevision === s.updateRevision
    ) {
      const pods = await client.list<KubeObject & { spec: { containers: Array<{ image: string }> } }>(Pods, {
        namespace: ns,
        labelSelector: 'app=bench',
      });
      if (pods.items.length === n && pods.items.every((p) => !p.metadata.deletionTimestamp && p.spec.containers[0].image === image)) return;
    }
    if (proc.exited) throw new Error(`manager exited: ${tail(proc.logFile, 20)}`);
    await sleep(250);
  }
}

/** `slot`: the turn's place in --managers (the same manager may be named twice). */
async function turn(manager: string, round: number, slot: number): Promise<Turn> {
  const kind = kindOf(manager);
  const loads = [load()];
  await uninstall();
  if (kind === 'ts') await installCRDs(client);
  else await installUpstream();
  // One log per turn: a second Kruise TS turn in the round must not read the first one's lines.
  const logFile = path.join(state.runDir, 'logs', `bench-${kind}-${round}-${slot}-${process.pid}.log`);
  const ports = (await freePorts(4)) as Ports;
  if (values.start === 'restart') {
    const first = await startManager(manager, `${logFile}.first`, ports);
    const firstStarted = performance.now();
    while (!(existsSync(`${logFile}.first`) && isSynced(readFileSync(`${logFile}.first`, 'utf8')))) {
      if (first.proc.exited) throw new Error(`${kind} manager exited on its first start: ${tail(`${logFile}.first`, 30)}`);
      if (performance.now() - firstStarted > 300_000)
        throw new Error(`${kind} manager not synced within 300 s: ${tail(`${logFile}.first`, 30)}`);
      await sleep(100);
    }
    // Its last writes (webhook configurations, CRDs) done before it goes.
    await sleep(3000);
    await stopProcesses([first.proc.pid], 10_000);
  }
  const podsAtStart = await podCount();
  const watchesBefore = await openWatches();
  const wallT0 = Date.now();
  const { proc, webhookPort, t0 } = await startManager(manager, logFile, ports);
  const since = () => (performance.now() - t0) / 1000;
  let webhookReady = NaN;
  let synced = NaN;
  let firstReconcile = NaN;
  let created = false;
  let lastError = '';
  const started = performance.now();
  try {
    while (Number.isNaN(webhookReady) || Number.isNaN(synced) || Number.isNaN(firstReconcile)) {
      if (proc.exited) throw new Error(`${kind} manager exited: ${tail(logFile, 30)}`);
      if (performance.now() - started > 300_000)
        throw new Error(`${kind} manager not up within 300 s (${lastError}): ${tail(logFile, 30)}`);
      if (Number.isNaN(webhookReady) && (await answersTLS(webhookPort))) webhookReady = since();
      if (Number.isNaN(synced) && existsSync(logFile) && isSynced(readFileSync(logFile, 'utf8'))) synced = since();
      if (!Number.isNaN(webhookReady) && !created) {
        // Accepted once the API server calls this manager's webhooks (their configuration points here).
        created = await run(['apply', '-f', '-'], manifest('nginx:1.0', 'InPlaceIfPossible', 0)).then(
          () => true,
          (e: Error) => {
            lastError = e.message;
            return false;
          },
        );
      }
      if (created && Number.isNaN(firstReconcile)) {
        const cs = await client.get<KubeObject & { status?: Status }>(CloneSets, 'bench', { namespace: ns }).catch((e) => {
          if (isNotFound(e)) return undefined;
          throw e;
        });
        if (cs?.status?.observedGeneration) firstReconcile = since();
      }
      // Until the webhook answers, every 5 ms: polled every 50, a figure of ≈0.2 s was read up to a quarter late.
      await sleep(Number.isNaN(webhookReady) ? 5 : 50);
    }
    await sleep(2000);
    const loggedSync = syncedAt(readFileSync(logFile, 'utf8'));
    if (loggedSync !== undefined) synced = (loggedSync - wallT0) / 1000;
    const rssSynced = rssMiB(proc.pid);
    const anonSynced = anonRssMiB(proc.pid);
    const watchesSynced = (await openWatches()) - watchesBefore;
    const connectionsSynced = connectionsTo(proc.pid, state.ports.apiserver);
    loads.push(load());
    const t: Turn = {
      manager,
      load: loads,
      webhookReady,
      synced,
      firstReconcile,
      rssSynced,
      anonSynced,
      watchesSynced,
      connectionsSynced,
      podsAtStart,
      phases: [],
    };
    const patch = (spec: object) =>
      client.patch(CloneSets, 'bench', { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });
    const phase = async (label: string, image: string, n: number, change: () => Promise<unknown>) => {
      if (!phasesWanted.includes(label)) return;
      const before = await writes();
      const cpu0 = cpuSeconds(proc.pid);
      const t1 = performance.now();
      await change();
      await settled(image, n, proc);
      t.phases.push({
        phase: label,
        seconds: (performance.now() - t1) / 1000,
        cpu: cpuSeconds(proc.pid) - cpu0,
        writes: delta(before, await writes()),
      });
      loads.push(load());
      process.stderr.write(`${manager} round ${round}: ${label} ${t.phases.at(-1)!.seconds.toFixed(1)} s (load ${load()})\n`);
    };
    await phase('scale-up', 'nginx:1.0', replicas, () => patch({ replicas }));
    await phase('in-place', 'nginx:2.0', replicas, () =>
      patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } }),
    );
    await phase('recreate', 'nginx:3.0', replicas, () =>
      patch({
        template: { spec: { containers: [{ name: 'main', image: 'nginx:3.0' }] } },
        updateStrategy: { type: 'ReCreate' },
      }),
    );
    t.rssEnd = rssMiB(proc.pid);
    t.anonEnd = anonRssMiB(proc.pid);
    await phase('scale-down', 'nginx:3.0', 0, () => patch({ replicas: 0 }));
    return t;
  } finally {
    // Upstream's pod webhook fails closed: its configurations go before the manager does — and again
    // after it, since a Kruise TS leader in url mode writes back configurations deleted under it
    // (left behind, they would refuse the deletion of the benchmark's pods below).
    for (const c of CONFIGURATIONS) await run(['delete', c, '--ignore-not-found']).catch(() => '');
    await stopProcesses([proc.pid], 10_000);
    for (const c of CONFIGURATIONS) await run(['delete', c, '--ignore-not-found']).catch(() => '');
    await run(['delete', 'clonesets.apps.kruise.io', 'bench', '-n', ns, '--ignore-not-found', '--wait=false']).catch(() => '');
    // Waited for by count: `kubectl delete --wait` on 1000 pods went on for its whole timeout (3 min)
    // after the last of them was gone.
    await run(['delete', 'pods', '-n', ns, '-l', 'app=bench', '--grace-period=0', '--force', '--wait=false']).catch(() => '');
    for (const deadline = Date.now() + 180_000; Date.now() < deadline && (await podCount(ns)) > 0;) await sleep(1000);
  }
}

/** Pods in the cluster (remainingItemCount of a one-item page, so not a 50k-pod list). */
async function podCount(namespace?: string): Promise<number> {
  const page = await client.list(Pods, { namespace, limit: 1 });
  return page.items.length + ((page.metadata as { remainingItemCount?: number }).remainingItemCount ?? 0);
}

async function backgroundPods(n: number): Promise<void> {
  await run(['create', 'namespace', 'bench-background']).catch(() => '');
  let existing = await podCount('bench-background');
  const queue: Array<Promise<unknown>> = [];
  for (let i = existing; i < n; i++) {
    queue.push(
      client
        .create(Pods, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `bg-${i}`, namespace: 'bench-background', labels: { app: 'background' } },
          // Left Pending for good: no scheduler has this name. (A pod bound to a node that does not
          // exist is deleted by the pod GC within a minute, which emptied the background of earlier runs.)
          spec: { schedulerName: 'bench-background', containers: [{ name: 'main', image: 'nginx:1.0' }] },
        })
        // The count above comes from remainingItemCount, an estimate: a pod may already be there.
        .catch((err: unknown) => {
          if (!isAlreadyExists(err)) throw err;
        }),
    );
    if (queue.length >= 64) await Promise.all(queue.splice(0));
    existing++;
  }
  await Promise.all(queue);
}

// The API server calls the Kruise TS manager directly, as it calls upstream's (WEBHOOK_HOST) and as
// a Service reaches a pod in a real cluster: not through the local cluster's webhook proxy, one more
// TLS hop and Node process on the same cores, which also spoke HTTP/1.1 to the manager where the API
// server speaks HTTP/2.
const proxyAnnouncement = await withoutWebhookProxy(client);
try {
  await backgroundPods(Number(values['background-pods']));
  const turns: Turn[] = [];
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const [slot, m] of managers.entries()) {
      const t = await turn(m, round, slot);
      turns.push(t);
      // Each turn as it ends: a failure later keeps what was measured.
      process.stderr.write(`${JSON.stringify({ ...t, phases: t.phases.map((p) => ({ ...p, writes: Object.fromEntries(p.writes) })) })}\n`);
    }
  }
  const f = (n: number | undefined, d = 1) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(d));
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? (a / b).toFixed(2) : '–');
  console.log(
    `\nKruise TS vs OpenKruise ${peer.version}: ${replicas} replicas, ${values.nodes} KWOK nodes, QPS ${values.qps} / burst ${values.burst}, ${values['background-pods']} background pods, start-up on ${values.start === 'restart' ? 'a restart' : 'a fresh install'} (${process.version}, ${os.cpus().length} CPUs)\n`,
  );
  for (let round = 1; round <= Number(values.rounds); round++) {
    const inRound = turns.slice((round - 1) * managers.length, round * managers.length);
    const go = inRound.find((t) => t.manager === 'go');
    const others = inRound.filter((t) => t !== go);
    const label = (t: Turn) =>
      t.manager === 'ts' ? 'Kruise TS' : t.manager === 'go' ? 'OpenKruise' : `Kruise TS ${t.manager.split('+').slice(1).join(' ')}`;
    console.log(`round ${round} (load average 1 min, ${inRound.map((t) => `${t.manager}: ${t.load.join(' → ')}`).join('; ')})\n`);
    const columns = [...others, ...(go ? [go] : [])];
    const ratioColumns = go ? others : [];
    console.log(`| figure | ${columns.map(label).join(' | ')} |${ratioColumns.map((t) => ` ratio ${label(t)} / OpenKruise |`).join('')}`);
    console.log(`|---|${columns.map(() => '---|').join('')}${ratioColumns.map(() => '---|').join('')}`);
    const row = (name: string, value: (t: Turn) => number | undefined, digits: number) =>
      console.log(
        `| ${name} | ${columns.map((t) => f(value(t), digits)).join(' | ')} |${ratioColumns.map((t) => ` ${ratio(value(t), value(go!))} |`).join('')}`,
      );
    row('pods in the cluster at start', (t) => t.podsAtStart, 0);
    for (const [name, key] of [
      ['start → webhook ready (s)', 'webhookReady'],
      ['start → caches synced (s)', 'synced'],
      ['start → first reconcile (s)', 'firstReconcile'],
      ['RSS once synced (MiB)', 'rssSynced'],
      ['  of it anonymous: RSS less mapped executable and libraries (MiB)', 'anonSynced'],
      ['watches open once synced (API server gauge, less those before the manager)', 'watchesSynced'],
      ["the manager's TCP connections to the API server once synced", 'connectionsSynced'],
      [`RSS after the rollouts, ${replicas} pods (MiB)`, 'rssEnd'],
      ['  of it anonymous (MiB)', 'anonEnd'],
    ] as const)
      row(name, (t) => t[key], 2);
    const total = (w?: Writes) => (w ? [...w.values()].reduce((x, y) => x + y, 0) / replicas : undefined);
    for (const p of phasesWanted) {
      const ph = (t: Turn) => t.phases.find((x) => x.phase === p);
      row(`${p}: wall (s)`, (t) => ph(t)?.seconds, 1);
      row(`${p}: manager CPU (s)`, (t) => ph(t)?.cpu, 1);
      row(`${p}: writes / pod (all clients)`, (t) => total(ph(t)?.writes), 2);
    }
    for (const p of phasesWanted) {
      const w = (t: Turn) => t.phases.find((x) => x.phase === p)?.writes ?? new Map<string, number>();
      const keys = [...new Set(columns.flatMap((t) => [...w(t).keys()]))].sort();
      console.log(`\n${p}, writes per pod by verb and resource: | write | ${columns.map(label).join(' | ')} |`);
      for (const k of keys) console.log(`| ${k} | ${columns.map((t) => ((w(t).get(k) ?? 0) / replicas).toFixed(3)).join(' | ')} |`);
    }
    console.log('');
  }
} finally {
  await proxyAnnouncement.restore();
  await client.close();
  if (!reused && !values.cluster) await down(name, { quiet: true });
}
