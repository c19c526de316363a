// One SidecarSet round on the main thread (figures printed, never asserted; docs/benchmarks.md):
// the controller's reconcile over N pods the SidecarSet injected — list, expectations, plan, and
// writes answered at once — as it runs on each pod event.
// The round is synchronous, so while it runs the manager answers no admission review: its length
// is what a pod webhook request can wait behind (bench/pod-webhook.ts, issue 20).
// Pods are injected by the pod webhook's own code; three cases: pods not yet running (the pod
// webhook benchmark's), running and ready, and running with a sidecar image change pending (the
// round then also picks the pods to upgrade).
// Usage: ./run.sh bench sidecarset-round [--pods 2000] [--rounds 50]
import { performance } from 'node:perf_hooks';
import { benchArgs } from './args.ts';
import type { ControllerRevision, Pod } from '../src/apis/core-objects.ts';
import { resolveFeatureGates } from '../src/apis/features.ts';
import { SidecarSetReconciler } from '../src/controllers/sidecarset/controller.ts';
import { WorkloadExpectations } from '../src/controllers/workload.ts';
import { keyOf } from '../src/controllers/workload-writes.ts';
import { logger } from '../src/runtime/log.ts';
import { labelSelectorAsSelector } from '../src/util/labelselector.ts';
import type { StoredSidecarSet } from '../src/util/sidecarset.ts';
import { injectSidecarSets } from '../src/webhooks/pod/sidecarset.ts';
import { mutateSidecarSet } from '../src/webhooks/sidecarset/mutating.ts';

const { values } = benchArgs(import.meta.url, {
  options: { pods: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '50' } },
});
const podCount = Number(values.pods);
const rounds = Number(values.rounds);
const features = resolveFeatureGates('');

function sidecarSet(image: string): StoredSidecarSet {
  const s = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name: 'bench', resourceVersion: '10', generation: 1, uid: 'u-bench' },
    spec: {
      selector: { matchLabels: { 'bench-sidecar': 'on' } },
      containers: [{ name: 'sidecar', image }],
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
    },
  };
  mutateSidecarSet(s as never, { operation: 'CREATE', apiVersion: 'apps.kruise.io/v1beta1', userInfo: {}, dryRun: false, features });
  return s as unknown as StoredSidecarSet;
}

function injectedPods(running: boolean): Pod[] {
  const pods: Pod[] = [];
  for (let i = 0; i < podCount; i++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `p-${i}`,
        namespace: 'default',
        uid: `u-${i}`,
        resourceVersion: String(100 + i),
        labels: { app: 'bench', 'bench-sidecar': 'on' },
      },
      spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
    };
    // Pods created over a minute: their hash records carry 60 different timestamps.
    injectSidecarSets(pod, [injectedWith], { now: new Date(Date.UTC(2026, 10, 25, 6, 0, i % 60)), sortByName: false });
    if (running) {
      pod.status = {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: pod.spec!.containers.map((c) => ({
          name: c.name,
          image: c.image!,
          imageID: `docker.io/library/${c.image}@sha256:${'0'.repeat(64)}`,
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: '2026-11-25T06:00:00Z' } },
        })),
      } as Pod['status'];
    }
    pods.push(pod);
  }
  return pods;
}

/** Times `rounds` reconciles of `s` over `pods`; every write is answered at once (the created revision is then listed and observed). */
async function time(s: StoredSidecarSet, pods: Pod[]): Promise<number[]> {
  const revisions: ControllerRevision[] = [];
  const expectations = new WorkloadExpectations();
  const selector = labelSelectorAsSelector(s.spec?.selector);
  const reconciler = new SidecarSetReconciler({
    cache: {
      getSidecarSet: () => s,
      listSidecarSets: () => [s],
      // What the pod informer's lister does: every cached pod against the selector.
      selectedPods: () => pods.filter((p) => selector.matches(p.metadata.labels)),
      namespace: () => undefined,
      revisions: () => revisions,
    },
    client: {
      create: async (_r: unknown, obj: ControllerRevision) => {
        revisions.push(obj);
        expectations.revisions.observeScale(keyOf(s), 'create', obj.metadata.name ?? '');
        return obj;
      },
      update: async (_r: unknown, obj: unknown) => obj,
      updateStatus: async (_r: unknown, obj: unknown) => obj,
      patch: async () => ({}),
      delete: async () => undefined,
    } as never,
    recorder: { event: () => undefined } as never,
    log: logger,
    revisionNamespace: 'kruise-system',
    expectations,
  });
  const times: number[] = [];
  for (let r = 0; r < rounds + 5; r++) {
    const t0 = performance.now();
    await reconciler.reconcile(s.metadata.name);
    if (r >= 5) times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

const injectedWith = sidecarSet('busybox:1.36');
for (const [label, s, pods] of [
  ['not running yet', injectedWith, injectedPods(false)],
  ['running, in line', injectedWith, injectedPods(true)],
  ['running, image changed', sidecarSet('busybox:1.37'), injectedPods(true)],
] as const) {
  const times = await time(s, pods);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(2);
  process.stdout.write(`${label}: one round over ${podCount} pods p50 ${q(50)} ms, p99 ${q(99)} ms (${rounds} rounds)\n`);
}
