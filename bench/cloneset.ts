// CloneSet benchmark (figures printed, never asserted), on a dedicated local cluster with a Kruise TS
// manager child process:
//   - scale-up 0 → N (default 1000) until every pod is Ready and the status says so;
//   - in-place image rollout (InPlaceIfPossible, maxUnavailable 10%);
//   - recreate rollout (ReCreate, maxUnavailable 10%);
// for each: wall time, manager CPU seconds (/proc/<pid>/stat utime+stime) and API writes per pod
// (apiserver_request_total deltas from the API server's /metrics). The metric has no client label,
// so writes are attributed by what they touch: pods (main resource) POST/PATCH, clonesets and
// their status and controllerrevisions are the manager's alone; pods/status PATCH and pods DELETE
// are shared with KWOK (pod status, final removal after termination), events with the scheduler —
// both are printed separately, with the per-resource detail. Manager RSS at the end
// (/proc/<pid>/status VmRSS).
// Usage: node --import tsx bench/cloneset.ts [--replicas 1000] [--nodes 11]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, kubectl } from '../src/cluster/local-cluster.ts';
import { startProcess, stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { repoRoot } from '../src/cluster/binaries.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile, Pods, type KubeObject, CloneSets } from '../src/runtime/client.ts';
import { cpuSeconds, rssMiB, writes, type Writes } from './measure.ts';

const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '1000' },
    nodes: { type: 'string', default: '11' },
  },
});
const replicas = Number(values.replicas);
const name = `bench-cs-${process.pid}`;
const ns = 'default';

const { state } = await up({ name, nodes: Number(values.nodes), log: () => undefined });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 1000, burst: 1000 });
let manager: Started | undefined;

const MANAGER_ONLY = /^(POST|PATCH) pods$|^(PUT|PATCH|POST) apps\.kruise\.io\/clonesets|^POST apps\/controllerrevisions$/;
// events.k8s.io events come from the manager (aggregated) and the scheduler (one "Scheduled" per pod).
const EVENTS = /^(POST|PATCH) events\.k8s\.io\/events$/;
const SHARED = /^PATCH pods\/status$|^DELETE pods$/;

function delta(before: Writes, after: Writes) {
  const d = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) d.set(k, v - (before.get(k) ?? 0));
  const sum = (re: RegExp) => [...d].filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0);
  return { manager: sum(MANAGER_ONLY), shared: sum(SHARED), events: sum(EVENTS), detail: d };
}

interface Status {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  updatedReadyReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
}

async function settled(image: string): Promise<void> {
  for (;;) {
    const cs = await client.get<KubeObject & { status?: Status }>(CloneSets, 'bench', { namespace: ns });
    const s = cs.status ?? {};
    if (
      s.observedGeneration === cs.metadata.generation &&
      s.replicas === replicas &&
      s.readyReplicas === replicas &&
      s.updatedReadyReplicas === replicas &&
      s.currentRevision === s.updateRevision
    ) {
      const pods = await client.list<KubeObject & { spec: { containers: Array<{ image: string }> } }>(Pods, {
        namespace: ns,
        labelSelector: 'app=bench',
      });
      const active = pods.items.filter((p) => !p.metadata.deletionTimestamp);
      if (active.length === replicas && active.every((p) => p.spec.containers[0].image === image)) return;
    }
    if (manager?.exited) throw new Error(`manager exited: ${tail(manager.logFile, 20)}`);
    await sleep(250);
  }
}

const rows: Array<{
  phase: string;
  seconds: number;
  cpu: number;
  manager: number;
  shared: number;
  events: number;
  detail: Map<string, number>;
}> = [];

async function phase(label: string, image: string, change: () => Promise<unknown>): Promise<void> {
  const before = await writes(state);
  const cpu0 = cpuSeconds(manager!.pid);
  const t0 = performance.now();
  await change();
  await settled(image);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(manager!.pid) - cpu0;
  const d = delta(before, await writes(state));
  rows.push({ phase: label, seconds, cpu, ...d });
  process.stderr.write(`${label}: ${seconds.toFixed(1)} s\n`);
}

try {
  await installCRDs(client);
  const logFile = path.join(state.runDir, 'logs', 'kruise-manager.log');
  manager = startProcess(
    'kruise-manager',
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(repoRoot, 'src/cli/kruise.ts'),
      'start',
      '--kubeconfig',
      state.kubeconfig,
      '--webhook-port',
      '0',
      '--enable-leader-election=false',
      '--metrics-addr',
      '0',
      '--health-probe-addr',
      '0',
    ],
    logFile,
    { ...process.env, KRUISE_LOG_LEVEL: 'warn' },
  );
  const manifest = (image: string, policy: string, n: number) =>
    JSON.stringify({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'bench', namespace: ns },
      spec: {
        replicas: n,
        selector: { matchLabels: { app: 'bench' } },
        template: { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'main', image }] } },
        updateStrategy: { rollingUpdate: { podUpdatePolicy: policy, maxUnavailable: '10%' } },
      },
    });
  // Only once the API server runs the defaulting webhook: an undefaulted first revision would make
  // the in-place rollout differ in more than the image, i.e. recreate every pod.
  for (;;) {
    try {
      const out = await kubectl(
        state,
        ['apply', '--dry-run=server', '-o', 'json', '-f', '-'],
        manifest('nginx:1.0', 'InPlaceIfPossible', 0),
      );
      if (JSON.parse(out).spec.template.spec.containers[0].imagePullPolicy === 'Always') break;
    } catch {
      if (manager.exited) throw new Error(`manager exited: ${tail(logFile, 20)}`);
    }
    await sleep(250);
  }
  await kubectl(state, ['apply', '-f', '-'], manifest('nginx:1.0', 'InPlaceIfPossible', 0));
  await sleep(1000);
  const patch = (spec: object) => client.patch(CloneSets, 'bench', { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });
  await phase(`scale-up 0 → ${replicas}`, 'nginx:1.0', () => patch({ replicas }));
  await phase('in-place rollout (maxUnavailable 10%)', 'nginx:2.0', () =>
    patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } }),
  );
  await phase('recreate rollout (maxUnavailable 10%)', 'nginx:3.0', () =>
    patch({
      template: { spec: { containers: [{ name: 'main', image: 'nginx:3.0' }] } },
      updateStrategy: { rollingUpdate: { podUpdatePolicy: 'ReCreate' } },
    }),
  );
  const rss = rssMiB(manager.pid);

  console.log(`\nCloneSet benchmark: ${replicas} replicas on ${values.nodes} KWOK nodes (${process.version})\n`);
  console.log(
    '| phase | wall s | manager CPU s | manager writes/pod | pods/status PATCH + pods DELETE /pod (manager + KWOK) | events/pod (manager + scheduler) |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.phase} | ${r.seconds.toFixed(1)} | ${r.cpu.toFixed(1)} | ${(r.manager / replicas).toFixed(2)} | ${(r.shared / replicas).toFixed(2)} | ${(r.events / replicas).toFixed(2)} |`,
    );
  }
  console.log(`\nmanager RSS at the end: ${rss.toFixed(0)} MiB`);
  for (const r of rows)
    console.log(
      `\n${r.phase} writes: ${[...r.detail]
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}`,
    );
} finally {
  if (manager) await stopProcesses([manager.pid], 5000);
  await client.close();
  await down(name, { quiet: true });
}
