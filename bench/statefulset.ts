// Advanced StatefulSet benchmark (figures printed, never asserted), on a dedicated local cluster
// with a Kruise TS manager child process, Parallel pod management:
//   - scale-up 0 → N (default 500) until every pod is Ready and the status says so;
//   - in-place image rollout (InPlaceIfPossible, maxUnavailable 10%);
//   - with --chaos K: a ReCreate rollout (maxUnavailable 10%) during which the manager is SIGKILLed
//     K times at random moments and restarted; polled every 100 ms for the budget (ready pods
//     never below N − 10%) and, at the end, for exactly ordinals 0..N−1.
// For each phase: wall time, manager CPU seconds (summed over restarts) and API writes per pod
// (apiserver_request_total deltas; pods POST/PATCH, statefulsets, controllerrevisions are the
// manager's alone; pods/status PATCH and pods DELETE are shared with KWOK, events with the scheduler).
// Usage: ./run.sh bench statefulset [--replicas 500] [--nodes 6] [--chaos 0]
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, kubectl } from '../src/cluster/local-cluster.ts';
import { stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import type { StatefulSetStatus } from '../src/apis/apps/statefulset.ts';
import { AdvancedStatefulSets, Pods } from '../src/runtime/resources.ts';
import { cpuSeconds, rssMiB } from './measure.ts';
import { Phases, startBenchManager, waitForDefaulting } from './workload.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    replicas: { type: 'string', default: '500' },
    nodes: { type: 'string', default: '6' },
    chaos: { type: 'string', default: '0' },
  },
});
const replicas = Number(values.replicas);
const kills = Number(values.chaos);
const name = `bench-asts-${process.pid}`;
const ns = 'default';

const { state } = await up({ name, nodes: Number(values.nodes), log: () => undefined });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 1000, burst: 1000 });
let manager: Started | undefined;
let cpuOfDeadManagers = 0;

const managerCpu = () => cpuOfDeadManagers + (manager ? cpuSeconds(manager.pid) : 0);
const phases = new Phases(
  state,
  /^(POST|PATCH) pods$|^(PUT|PATCH|POST) apps\.kruise\.io\/statefulsets|^POST apps\/controllerrevisions$|^(POST|PATCH) persistentvolumeclaims$/,
  managerCpu,
);

/** What the benchmark reads of the StatefulSet's status (any field may be missing before the first reconcile). */
type Status = Partial<
  Pick<
    StatefulSetStatus,
    'observedGeneration' | 'replicas' | 'readyReplicas' | 'updatedReadyReplicas' | 'currentRevision' | 'updateRevision'
  >
>;
type PodLike = KubeObject & {
  spec: { containers: Array<{ image: string }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
};
const isReady = (p: PodLike) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function listPods(): Promise<PodLike[]> {
  return (await client.list<PodLike>(Pods, { namespace: ns, labelSelector: 'app=bench' })).items;
}

async function settled(image: string): Promise<void> {
  for (;;) {
    const set = await client.get<KubeObject & { status?: Status }>(AdvancedStatefulSets, 'bench', { namespace: ns });
    const s = set.status ?? {};
    if (
      s.observedGeneration === set.metadata.generation &&
      s.replicas === replicas &&
      s.readyReplicas === replicas &&
      s.updatedReadyReplicas === replicas &&
      s.currentRevision === s.updateRevision
    ) {
      const pods = await listPods();
      const names = new Set(pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name));
      const expected = Array.from({ length: replicas }, (_, i) => `bench-${i}`);
      if (pods.length === replicas && expected.every((n) => names.has(n)) && pods.every((p) => p.spec.containers[0].image === image))
        return;
    }
    if (manager?.exited) throw new Error(`manager exited: ${tail(manager.logFile, 20)}`);
    await sleep(250);
  }
}

try {
  await installCRDs(client);
  manager = startBenchManager(state);
  const budget = Math.max(1, Math.floor(replicas / 10));
  const manifest = (image: string, policy: string, n: number) =>
    JSON.stringify({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'StatefulSet',
      metadata: { name: 'bench', namespace: ns },
      spec: {
        replicas: n,
        serviceName: 'bench',
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: { app: 'bench' } },
        template: {
          metadata: { labels: { app: 'bench' } },
          spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [{ name: 'main', image }] },
        },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: policy, maxUnavailable: '10%' } },
      },
    });
  await waitForDefaulting(
    state,
    manifest('nginx:1.0', 'InPlaceIfPossible', 0),
    (obj) => obj.spec.template.spec.containers[0].imagePullPolicy === 'Always',
    () => manager,
  );
  await kubectl(state, ['apply', '-f', '-'], manifest('nginx:1.0', 'InPlaceIfPossible', 0));
  await sleep(1000);
  const patch = (spec: object) =>
    client.patch(AdvancedStatefulSets, 'bench', { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });
  await phases.run(
    `scale-up 0 → ${replicas} (Parallel)`,
    () => patch({ replicas }),
    () => settled('nginx:1.0'),
  );
  await phases.run(
    'in-place rollout (maxUnavailable 10%)',
    () => patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } }),
    () => settled('nginx:2.0'),
  );
  if (kills > 0) {
    await phases.run(
      `recreate rollout (maxUnavailable 10%), ${kills} SIGKILLs`,
      () =>
        patch({
          template: { spec: { containers: [{ name: 'main', image: 'nginx:3.0' }] } },
          updateStrategy: { rollingUpdate: { podUpdatePolicy: 'ReCreate' } },
        }),
      () => settled('nginx:3.0'),
      async () => {
        let minReady = replicas;
        let maxActive = 0;
        let polling = true;
        const poller = (async () => {
          while (polling) {
            const active = (await listPods()).filter((p) => !p.metadata.deletionTimestamp);
            minReady = Math.min(minReady, active.filter(isReady).length);
            maxActive = Math.max(maxActive, active.length);
            await sleep(100);
          }
        })();
        for (let i = 0; i < kills; i++) {
          await sleep(1000 + Math.floor(Math.random() * 4000));
          const m = manager!;
          cpuOfDeadManagers += cpuSeconds(m.pid);
          process.kill(-m.pid, 'SIGKILL');
          manager = undefined;
          await sleep(500);
          manager = startBenchManager(state);
        }
        await settled('nginx:3.0');
        polling = false;
        await poller;
        return `min ready ${minReady} (budget floor ${replicas - budget}), max active ${maxActive}`;
      },
    );
  }
  phases.print(`Advanced StatefulSet benchmark: ${replicas} replicas on ${values.nodes} KWOK nodes`, replicas, rssMiB(manager!.pid));
} finally {
  if (manager) await stopProcesses([manager.pid], 5000);
  await client.close();
  await down(name, { quiet: true });
}
