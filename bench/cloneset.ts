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
// Usage: ./run.sh bench cloneset [--replicas 1000] [--nodes 11]
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, kubectl } from '../src/cluster/local-cluster.ts';
import { stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { Pods, CloneSets } from '../src/runtime/resources.ts';
import { cpuSeconds, rssMiB } from './measure.ts';
import { Phases, startBenchManager, waitForDefaulting } from './workload.ts';

const { values } = benchArgs(import.meta.url, {
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
const phases = new Phases(state, /^(POST|PATCH) pods$|^(PUT|PATCH|POST) apps\.kruise\.io\/clonesets|^POST apps\/controllerrevisions$/, () =>
  cpuSeconds(manager!.pid),
);

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

try {
  await installCRDs(client);
  manager = startBenchManager(state);
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
  await waitForDefaulting(
    state,
    manifest('nginx:1.0', 'InPlaceIfPossible', 0),
    (obj) => obj.spec.template.spec.containers[0].imagePullPolicy === 'Always',
    () => manager,
  );
  await kubectl(state, ['apply', '-f', '-'], manifest('nginx:1.0', 'InPlaceIfPossible', 0));
  await sleep(1000);
  const patch = (spec: object) => client.patch(CloneSets, 'bench', { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });
  await phases.run(
    `scale-up 0 → ${replicas}`,
    () => patch({ replicas }),
    () => settled('nginx:1.0'),
  );
  await phases.run(
    'in-place rollout (maxUnavailable 10%)',
    () => patch({ template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } }),
    () => settled('nginx:2.0'),
  );
  await phases.run(
    'recreate rollout (maxUnavailable 10%)',
    () =>
      patch({
        template: { spec: { containers: [{ name: 'main', image: 'nginx:3.0' }] } },
        updateStrategy: { rollingUpdate: { podUpdatePolicy: 'ReCreate' } },
      }),
    () => settled('nginx:3.0'),
  );
  phases.print(`CloneSet benchmark: ${replicas} replicas on ${values.nodes} KWOK nodes`, replicas, rssMiB(manager.pid));
} finally {
  if (manager) await stopProcesses([manager.pid], 5000);
  await client.close();
  await down(name, { quiet: true });
}
