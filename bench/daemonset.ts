// Advanced DaemonSet benchmark (figures printed, never asserted), on a dedicated local cluster of
// N KWOK nodes (default 200) with a Kruise TS manager child process:
//   - creation: one pod on every node until all are Ready and the status says so;
//   - standard rollout (delete + create per node, maxUnavailable 10%);
//   - in-place image rollout (InPlaceIfPossible, maxUnavailable 10%);
// for each: wall time, manager CPU seconds (/proc/<pid>/stat utime+stime) and API writes per pod
// (apiserver_request_total deltas), attributed as bench/cloneset.ts does: pods POST/PATCH,
// apps.kruise.io daemonsets (+status) and controllerrevisions are the manager's alone; pods/status
// PATCH and pods DELETE are shared with KWOK; events with the scheduler.
// Usage: ./run.sh bench daemonset [--nodes 200]
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, kubectl } from '../src/cluster/local-cluster.ts';
import { cpuSeconds, rssMiB } from './measure.ts';
import { stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { AdvancedDaemonSets, Pods } from '../src/runtime/resources.ts';
import { Phases, startBenchManager, waitForDefaulting } from './workload.ts';

const { values } = benchArgs(import.meta.url, {
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
const phases = new Phases(
  state,
  /^(POST|PATCH) pods$|^(PUT|PATCH|POST) apps\.kruise\.io\/daemonsets|^POST apps\/controllerrevisions$/,
  () => cpuSeconds(manager!.pid),
);

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

try {
  await installCRDs(client);
  manager = startBenchManager(state);
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
  await waitForDefaulting(
    state,
    manifest('nginx:1.0'),
    (obj) => obj.spec.burstReplicas === 250,
    () => manager,
  );
  const patch = (spec: object) =>
    client.patch(AdvancedDaemonSets, 'bench', { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });
  await phases.run(
    `creation on ${replicas} nodes`,
    () => kubectl(state, ['apply', '-f', '-'], manifest('nginx:1.0')),
    () => settled('nginx:1.0'),
  );
  await phases.run(
    'standard rollout (maxUnavailable 10%)',
    () => patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } }),
    () => settled('nginx:2.0'),
  );
  // Pods created under Standard lack the InPlaceUpdateReady gate and would be recreated: switch
  // first, recreate once (nginx:3.0), then measure the in-place rollout (nginx:4.0).
  await phases.run(
    '(switch to InPlaceIfPossible: recreate with the gate)',
    () =>
      patch({
        template: { spec: { containers: [{ name: 'main', image: 'nginx:3.0' }] } },
        updateStrategy: { rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible' } },
      }),
    () => settled('nginx:3.0'),
  );
  await phases.run(
    'in-place rollout (maxUnavailable 10%)',
    () => patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:4.0' }] } } }),
    () => settled('nginx:4.0'),
  );
  phases.print(`Advanced DaemonSet benchmark: ${replicas} KWOK nodes`, replicas, rssMiB(manager.pid));
} finally {
  if (manager) await stopProcesses([manager.pid], 5000);
  await client.close();
  await down(name, { quiet: true });
}
