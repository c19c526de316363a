// Advanced DaemonSet benchmark (figures printed, never asserted), on a dedicated local cluster of
// N KWOK nodes (default 200) with a Kruise TS manager child process:
//   - creation: one pod on every node until all are Ready and the status says so;
//   - standard rollout (delete + create per node, maxUnavailable 10%);
//   - in-place image rollout (InPlaceIfPossible, maxUnavailable 10%);
// for each: wall time, manager CPU seconds (/proc/<pid>/stat utime+stime) and API writes per pod
// (apiserver_request_total deltas), attributed as bench/cloneset.ts does: pods POST/PATCH,
// apps.kruise.io daemonsets (+status) and controllerrevisions are the manager's alone; pods/status
// PATCH and pods DELETE are shared with KWOK; events with the scheduler.
// Usage: node --import tsx bench/daemonset.ts [--nodes 200]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, kubectl } from '../src/cluster/local-cluster.ts';
import { cpuSeconds, rssMiB, writes, type Writes } from './measure.ts';
import { startProcess, stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { repoRoot } from '../src/cluster/binaries.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { AdvancedDaemonSets, fromKubeconfigFile, Pods, type KubeObject } from '../src/runtime/client.ts';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '200' },
  },
});
const replicas = Number(values.nodes);
const name = `bench-ads-${process.pid}`;
const ns = 'default';

const { state } = await up({ name, nodes: Number(values.nodes), log: () => undefined });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 1000, burst: 1000 });
let manager: Started | undefined;

const MANAGER_ONLY = /^(POST|PATCH) pods$|^(PUT|PATCH|POST) apps\.kruise\.io\/daemonsets|^POST apps\/controllerrevisions$/;
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
  desiredNumberScheduled?: number;
  numberReady?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
}

async function settled(image: string): Promise<void> {
  for (;;) {
    const ds = await client.get<KubeObject & { status?: Status }>(AdvancedDaemonSets, 'bench', { namespace: ns });
    const s = ds.status ?? {};
    if (
      s.observedGeneration === ds.metadata.generation &&
      s.desiredNumberScheduled === replicas &&
      s.numberReady === replicas &&
      s.numberAvailable === replicas &&
      s.updatedNumberScheduled === replicas
    ) {
      const pods = await client.list<KubeObject & { spec: { containers: Array<{ image: string }> } }>(Pods, {
        namespace: ns,
        labelSelector: 'app=bench',
      });
      if (pods.items.length === replicas && pods.items.every((p) => !p.metadata.deletionTimestamp && p.spec.containers[0].image === image))
        return;
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
  const manifest = (image: string) =>
    JSON.stringify({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'DaemonSet',
      metadata: { name: 'bench', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'bench' } },
        template: { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'main', image }] } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'Standard', maxUnavailable: '10%' } },
      },
    });
  // Only once the API server runs the defaulting webhook (burstReplicas defaulted).
  for (;;) {
    try {
      const out = await kubectl(state, ['apply', '--dry-run=server', '-o', 'json', '-f', '-'], manifest('nginx:1.0'));
      if (JSON.parse(out).spec.burstReplicas === 250) break;
    } catch {
      if (manager.exited) throw new Error(`manager exited: ${tail(logFile, 20)}`);
    }
    await sleep(250);
  }
  const patch = (spec: object) =>
    client.patch(AdvancedDaemonSets, 'bench', { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });
  await phase(`creation on ${replicas} nodes`, 'nginx:1.0', () => kubectl(state, ['apply', '-f', '-'], manifest('nginx:1.0')));
  await phase('standard rollout (maxUnavailable 10%)', 'nginx:2.0', () =>
    patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } }),
  );
  // Pods created under Standard lack the InPlaceUpdateReady gate and would be recreated: switch
  // first, recreate once (nginx:3.0), then measure the in-place rollout (nginx:4.0).
  await phase('(switch to InPlaceIfPossible: recreate with the gate)', 'nginx:3.0', () =>
    patch({
      template: { spec: { containers: [{ name: 'main', image: 'nginx:3.0' }] } },
      updateStrategy: { rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible' } },
    }),
  );
  await phase('in-place rollout (maxUnavailable 10%)', 'nginx:4.0', () =>
    patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:4.0' }] } } }),
  );
  const rss = rssMiB(manager.pid);

  console.log(
    `\nAdvanced DaemonSet benchmark: ${replicas} KWOK nodes (${process.version}, load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})\n`,
  );
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
