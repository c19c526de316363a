// Advanced StatefulSet arithmetic, term for term from behaviour spec §4 (and upstream's
// stateful_set_control / stateful_set_utils tests): ordinal ranges, isCurrentRevisionNeeded,
// sortPodsToUpdate, OrderedReady vs Parallel, scaleStrategy.maxUnavailable, condemned pods,
// rolling update budgets, in-place policies, specified-delete, lifecycle hooks, PVC retention.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StatefulSet } from '../../../src/apis/apps/statefulset.ts';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import type { PersistentVolumeClaim } from '../../../src/apis/core.ts';
import { ordinalOf, replicasRange, reservedOrdinals } from '../../../src/controllers/statefulset/ordinals.ts';
import { chooseRevisions, planStatefulSet } from '../../../src/controllers/statefulset/plan.ts';
import { scaledMaxUnavailable } from '../../../src/controllers/statefulset/replicas.ts';
import { newPod, type Pod } from '../../../src/controllers/statefulset/pods.ts';
import { isCurrentRevisionNeeded, sortPodsToUpdate } from '../../../src/controllers/statefulset/update.ts';
import { templateFromRevision, type ControllerRevision } from '../../../src/util/revision-data.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const EARLIER = '2026-01-01T00:00:00Z';
const gates = (over: Partial<FeatureGates> = {}): FeatureGates => ({ ...FEATURE_GATE_DEFAULTS, ...over });

type Spec = NonNullable<StatefulSet['spec']>;
function sts(spec: Partial<Spec> = {}, image = 'nginx:1.0'): StatefulSet {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'set-uid', generation: 1 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      serviceName: 'web-svc',
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [{ name: 'main', image }] },
      },
      ...spec,
    } as Spec,
  };
}

const revisionFor = (set: StatefulSet, n = 1): ControllerRevision =>
  chooseRevisions(set, []).update && { ...chooseRevisions(set, []).update, revision: n };

interface PodOpts {
  ready?: boolean;
  phase?: string;
  terminating?: boolean;
  readySince?: string;
  labels?: Record<string, string>;
}

/** A created pod of ordinal `ord` at revision `rev`, Running and Ready unless told otherwise. */
function pod(set: StatefulSet, rev: ControllerRevision, ord: number, o: PodOpts = {}): Pod {
  const p = newPod(set, templateFromRevision(rev), rev.metadata.name ?? '', ord, { now: EARLIER, features: gates() });
  p.metadata.uid = `uid-${ord}`;
  p.metadata.resourceVersion = '1';
  p.metadata.labels = { ...p.metadata.labels, ...o.labels };
  if (o.terminating) p.metadata.deletionTimestamp = EARLIER;
  const ready = o.ready ?? true;
  p.spec = { ...p.spec!, nodeName: 'node-1' };
  p.status = {
    phase: o.phase ?? 'Running',
    conditions: [
      { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: o.readySince ?? EARLIER },
      { type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: EARLIER },
    ],
    containerStatuses: [{ name: 'main', image: p.spec.containers[0].image, imageID: 'id-1', ready, restartCount: 0 } as never],
  };
  return p;
}

const plan = (
  set: StatefulSet,
  revisions: ControllerRevision[],
  pods: Pod[],
  o: { pvcs?: PersistentVolumeClaim[]; features?: Partial<FeatureGates> } = {},
) => planStatefulSet({ set, revisions, pods, pvcs: o.pvcs ?? [], now: NOW, features: gates(o.features) });

const names = (l: Array<{ pod: Pod } | string | { pod: string }>) =>
  l.map((x) => (typeof x === 'string' ? x : typeof x.pod === 'string' ? x.pod : x.pod.metadata.name));

describe('ordinals (§4.2)', () => {
  it('reserveOrdinals: ints and "a-b" ranges', () => {
    assert.deepEqual([...reservedOrdinals(sts({ reserveOrdinals: [1, '3-4', '7'] }))].sort(), [1, 3, 4, 7]);
  });
  for (const [start, range] of [
    [0, [0, 6]],
    [2, [2, 7]],
    [3, [3, 8]],
    [4, [4, 8]],
  ] as const) {
    it(`replicas 4, reserve {1,3}, start ${start} → [${range[0]},${range[1]})`, () => {
      const r = replicasRange(sts({ replicas: 4, reserveOrdinals: [1, 3], ordinals: { start } }), { StatefulSetStartOrdinal: true });
      assert.deepEqual([r.start, r.end], range);
    });
  }
  it('ordinals.start is ignored without gate StatefulSetStartOrdinal', () => {
    const r = replicasRange(sts({ replicas: 2, ordinals: { start: 5 } }), { StatefulSetStartOrdinal: false });
    assert.deepEqual([r.start, r.end], [0, 2]);
  });
  it('ordinalOf parses only <set>-<n>', () => {
    assert.equal(ordinalOf('web', 'web-12'), 12);
    assert.equal(ordinalOf('web', 'web-012'), -1);
    assert.equal(ordinalOf('web', 'web-a'), -1);
    assert.equal(ordinalOf('web', 'webx-1'), -1);
  });
});

describe('scale (§4.3 step 5, 7)', () => {
  it('Parallel replicas 5 with reserveOrdinals [1,"3-4"] creates pods 0,2,5,6,7 with stable identity', () => {
    const set = sts({ replicas: 5, podManagementPolicy: 'Parallel', reserveOrdinals: [1, '3-4'] });
    const p = plan(set, [], []);
    assert.deepEqual(names(p.createPods), ['web-0', 'web-2', 'web-5', 'web-6', 'web-7']);
    const web5 = p.createPods[2].pod;
    assert.equal(web5.spec?.hostname, 'web-5');
    assert.equal((web5.spec as { subdomain?: string }).subdomain, 'web-svc');
    assert.equal(web5.metadata.labels?.['statefulset.kubernetes.io/pod-name'], 'web-5');
    assert.equal(web5.metadata.labels?.['apps.kubernetes.io/pod-index'], '5');
    assert.equal(web5.metadata.labels?.['controller-revision-hash'], p.updateRevision);
    assert.equal(web5.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Normal');
    assert.equal(web5.metadata.ownerReferences?.[0].kind, 'StatefulSet');
    assert.ok(p.newRevision);
  });
  it('OrderedReady creates one pod per round and waits for the previous to be Running and Ready', () => {
    const set = sts({ replicas: 3 });
    const rev = revisionFor(set);
    assert.deepEqual(names(plan(set, [rev], []).createPods), ['web-0']);
    assert.deepEqual(names(plan(set, [rev], [pod(set, rev, 0, { ready: false })]).createPods), []);
    assert.deepEqual(names(plan(set, [rev], [pod(set, rev, 0)]).createPods), ['web-1']);
  });
  it('OrderedReady waits minReadySeconds (and requeues for the rest)', () => {
    const set = sts({ replicas: 2, updateStrategy: { rollingUpdate: { minReadySeconds: 30 } } });
    const rev = revisionFor(set);
    const p = plan(set, [rev], [pod(set, rev, 0, { readySince: new Date(NOW - 10_000).toISOString() })]);
    assert.deepEqual(p.createPods, []);
    assert.equal(p.requeueAfterMs, 20_000);
  });
  it('Parallel scaleStrategy.maxUnavailable 2 creates at most 2, and none while 2 are unavailable', () => {
    const set = sts({ replicas: 6, podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 2 } });
    const rev = revisionFor(set);
    assert.deepEqual(names(plan(set, [rev], []).createPods), ['web-0', 'web-1']);
    const twoPending = [pod(set, rev, 0, { ready: false }), pod(set, rev, 1, { ready: false })];
    assert.deepEqual(names(plan(set, [rev], twoPending).createPods), []);
    const oneReady = [pod(set, rev, 0), pod(set, rev, 1, { ready: false })];
    assert.deepEqual(names(plan(set, [rev], oneReady).createPods), ['web-2']);
  });
  it('scaledMaxUnavailable: roundDown against replicas, at least 1', () => {
    assert.equal(scaledMaxUnavailable('10%', 5), 1);
    assert.equal(scaledMaxUnavailable('50%', 5), 2);
    assert.equal(scaledMaxUnavailable(3, 5), 3);
    assert.equal(scaledMaxUnavailable(undefined, 5), undefined);
  });
  it('scale down: OrderedReady deletes the highest ordinal, one per round; Parallel all condemned', () => {
    const set = sts({ replicas: 3 });
    const rev = revisionFor(set);
    const pods = [0, 1, 2, 3, 4].map((o) => pod(set, rev, o));
    assert.deepEqual(plan(set, [rev], pods).deletePods, ['web-4']);
    const terminating = [0, 1, 2, 3].map((o) => pod(set, rev, o)).concat(pod(set, rev, 4, { terminating: true }));
    assert.deepEqual(plan(set, [rev], terminating).deletePods, []);
    const par = sts({ replicas: 3, podManagementPolicy: 'Parallel' });
    const prev = revisionFor(par);
    assert.deepEqual(
      plan(
        par,
        [prev],
        [0, 1, 2, 3, 4].map((o) => pod(par, prev, o)),
      ).deletePods,
      ['web-4', 'web-3'],
    );
  });
  it('OrderedReady: an unready condemned pod waits unless it is the first unhealthy pod', () => {
    const set = sts({ replicas: 2 });
    const rev = revisionFor(set);
    const pods = [pod(set, rev, 0), pod(set, rev, 1), pod(set, rev, 2, { ready: false }), pod(set, rev, 3)];
    // web-3 is healthy and is deleted first (descending); the round stops after one deletion
    assert.deepEqual(plan(set, [rev], pods).deletePods, ['web-3']);
    // web-2 alone: it is the first unhealthy pod, so it may go
    assert.deepEqual(plan(set, [rev], pods.slice(0, 3)).deletePods, ['web-2']);
    // web-0 unhealthy makes web-0 first: processReplica stops before condemned
    const blocked = [pod(set, rev, 0, { ready: false }), pod(set, rev, 1), pod(set, rev, 2, { ready: false })];
    assert.deepEqual(plan(set, [rev], blocked).deletePods, []);
  });
  it('reserving an existing ordinal condemns its pod', () => {
    const set = sts({ replicas: 3, podManagementPolicy: 'Parallel', reserveOrdinals: [1] });
    const rev = revisionFor(set);
    const p = plan(
      set,
      [rev],
      [0, 1, 2].map((o) => pod(set, rev, o)),
    );
    assert.deepEqual(p.deletePods, ['web-1']);
    assert.deepEqual(names(p.createPods), ['web-3']);
  });
  it('a failed pod is deleted (recreated next round)', () => {
    const set = sts({ replicas: 2, podManagementPolicy: 'Parallel' });
    const rev = revisionFor(set);
    const p = plan(set, [rev], [pod(set, rev, 0, { phase: 'Failed', ready: false }), pod(set, rev, 1)]);
    assert.deepEqual(p.deletePods, ['web-0']);
  });
  it('preDelete hook: a hooked condemned pod goes to PreparingDelete instead of being deleted', () => {
    const set = sts({ replicas: 1, lifecycle: { preDelete: { labelsHandler: { hold: 'true' } } } });
    const rev = revisionFor(set);
    const p = plan(set, [rev], [pod(set, rev, 0), pod(set, rev, 1, { labels: { hold: 'true' } })]);
    assert.deepEqual(p.deletePods, []);
    assert.deepEqual(
      p.lifecycleTransitions.map((t) => [t.pod, t.to]),
      [['web-1', 'PreparingDelete']],
    );
  });
  it('identity labels are restored', () => {
    const set = sts({ replicas: 1 });
    const rev = revisionFor(set);
    const p0 = pod(set, rev, 0);
    delete p0.metadata.labels!['apps.kubernetes.io/pod-index'];
    assert.deepEqual(plan(set, [rev], [p0]).labelPatches, [{ pod: 'web-0', labels: { 'apps.kubernetes.io/pod-index': '0' } }]);
  });
});

describe('PVCs', () => {
  const vct = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  it('new pods get claims <vct>-<sts>-<ordinal> and a volume bound to them', () => {
    const set = sts({ replicas: 1, volumeClaimTemplates: [vct] });
    const [c] = plan(set, [], []).createPods;
    assert.deepEqual(names(c.pvcs.map((x) => x.metadata!.name!)), ['data-web-0']);
    assert.deepEqual((c.pod.spec as { volumes?: unknown[] }).volumes, [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } },
    ]);
  });
  it('a Pending pod whose claim was deleted gets it again', () => {
    const set = sts({ replicas: 1, volumeClaimTemplates: [vct] });
    const rev = revisionFor(set);
    const p = plan(set, [rev], [pod(set, rev, 0, { phase: 'Pending', ready: false })]);
    assert.deepEqual(
      p.createPVCs.map((c) => c.metadata?.name),
      ['data-web-0'],
    );
  });
  it('whenScaled=Delete: claims of condemned ordinals get their pod as owner; live ones do not', () => {
    const set = sts({
      replicas: 1,
      podManagementPolicy: 'Parallel',
      volumeClaimTemplates: [vct],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
    });
    const rev = revisionFor(set);
    const pvcs = [0, 1].map((o) => ({ metadata: { name: `data-web-${o}`, namespace: 'ns', resourceVersion: '5' } }));
    const p = plan(set, [rev], [pod(set, rev, 0), pod(set, rev, 1)], { pvcs });
    assert.deepEqual(p.pvcOwnerUpdates, [
      { pvc: 'data-web-1', resourceVersion: '5', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-1', uid: 'uid-1' }] },
    ]);
    assert.deepEqual(p.deletePods, ['web-1']);
    const off = plan(set, [rev], [pod(set, rev, 0), pod(set, rev, 1)], { pvcs, features: { StatefulSetAutoDeletePVC: false } });
    assert.deepEqual(off.pvcOwnerUpdates, []);
  });
  it('whenDeleted=Delete: claims reference the set', () => {
    const set = sts({ replicas: 1, volumeClaimTemplates: [vct], persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } });
    const [c] = plan(set, [], []).createPods;
    assert.deepEqual(c.pvcs[0].metadata?.ownerReferences, [
      { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'web', uid: 'set-uid' },
    ]);
  });
  it('a claim still owned by a former pod of the ordinal holds the creation', () => {
    const set = sts({ replicas: 1, volumeClaimTemplates: [vct] });
    const stale = { metadata: { name: 'data-web-0', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'gone' }] } };
    const p = plan(set, [], [], { pvcs: [stale] });
    assert.deepEqual(p.createPods, []);
    assert.equal(p.requeueAfterMs, 1_000);
  });
});

describe('isCurrentRevisionNeeded (§4.3)', () => {
  const set = (ru: object | undefined, type = 'RollingUpdate', currentReplicas = 0) => ({
    ...sts({ updateStrategy: { type: type as 'RollingUpdate', ...(ru ? { rollingUpdate: ru } : {}) } }),
    status: { currentReplicas } as never,
  });
  const slots = (n: number) => Array.from({ length: n }, () => ({ metadata: { labels: { 'controller-revision-hash': 'old' } } }) as Pod);
  it('OnDelete ⇒ update revision', () =>
    assert.equal(isCurrentRevisionNeeded(set({ partition: 5 }, 'OnDelete'), 'new', 0, 0, slots(3)), false));
  it('no rollingUpdate ⇒ ordinal < start + currentReplicas', () => {
    assert.equal(isCurrentRevisionNeeded(set(undefined, 'RollingUpdate', 2), 'new', 1, 0, slots(3)), true);
    assert.equal(isCurrentRevisionNeeded(set(undefined, 'RollingUpdate', 2), 'new', 2, 0, slots(3)), false);
  });
  it('ordered: count of pods before + 1 <= partition', () => {
    const s = [undefined, ...slots(3)];
    assert.equal(isCurrentRevisionNeeded(set({ partition: 2 }), 'new', 2, 0, s), true); // 1 before
    assert.equal(isCurrentRevisionNeeded(set({ partition: 2 }), 'new', 3, 0, s), false); // 2 before
  });
  it('unordered: other pods not at update revision < partition', () => {
    const s = slots(3);
    assert.equal(isCurrentRevisionNeeded(set({ partition: 3, unorderedUpdate: {} }), 'new', 0, 0, s), true);
    assert.equal(isCurrentRevisionNeeded(set({ partition: 2, unorderedUpdate: {} }), 'new', 0, 0, s), false);
  });
});

describe('sortPodsToUpdate (§4.3)', () => {
  const mk = (rev: string, lbl: Record<string, string> = {}) =>
    ({ metadata: { labels: { 'controller-revision-hash': rev, ...lbl } } }) as Pod;
  const f = { PreparingUpdateAsUpdate: false };
  it('ordered: highest ordinals first down to the partition, skipping reserved slots', () => {
    const s = [mk('a'), undefined, mk('a'), mk('a'), mk('a')];
    // 4 pods (0,2,3,4); partition 2 keeps two of them
    assert.deepEqual(sortPodsToUpdate({ partition: 2 }, 'b', 4, s, f), [4, 3]);
    assert.deepEqual(sortPodsToUpdate({ partition: 1 }, 'b', 4, s, f), [4, 3, 2]);
    assert.deepEqual(sortPodsToUpdate({ partition: 4 }, 'b', 4, s, f), []);
  });
  it('unordered: updated first, then by priority, at most replicas - partition', () => {
    const s = [mk('a', { p: '1' }), mk('b'), mk('a', { p: '9' }), mk('a', { p: '5' })];
    const rolling = { partition: 1, unorderedUpdate: { priorityStrategy: { orderPriority: [{ orderedKey: 'p' }] } } };
    assert.deepEqual(sortPodsToUpdate(rolling, 'b', 4, s, f), [1, 2, 3]);
  });
});

describe('rolling update (§4.3 step 8)', () => {
  const base = (ru: object, replicas = 6) =>
    sts({
      replicas,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } as Spec['updateStrategy'],
    });
  function rollout(ru: object, replicas = 6, podOpts: (o: number) => PodOpts = () => ({})) {
    const old = base(ru, replicas);
    const r1 = revisionFor(old, 1);
    const cur = { ...base(ru, replicas), spec: { ...base(ru, replicas).spec!, template: sts({}, 'nginx:2.0').spec!.template } };
    const r2 = revisionFor(cur, 2);
    const pods = Array.from({ length: replicas }, (_, o) => pod(old, r1, o, podOpts(o)));
    cur.status = { currentRevision: r1.metadata.name } as never;
    return { set: cur, revisions: [r1, r2], pods, r1, r2 };
  }
  it('in-place, maxUnavailable 2, partition 2: the two highest ordinals first, UIDs kept', () => {
    const { set, revisions, pods, r2 } = rollout({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 2, partition: 2 });
    const p = plan(set, revisions, pods);
    assert.deepEqual(names(p.inPlaceUpdates), ['web-5', 'web-4']);
    assert.deepEqual(p.deletePods, []);
    const u = p.inPlaceUpdates[0];
    assert.equal(u.updatedPod.spec?.containers[0].image, 'nginx:2.0');
    assert.equal(u.updatedPod.metadata.uid, 'uid-5');
    assert.equal(u.updatedPod.metadata.labels?.['controller-revision-hash'], r2.metadata.name);
    assert.equal(u.updatedPod.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Updating');
    assert.deepEqual(
      u.conditions?.find((c) => c.type === 'InPlaceUpdateReady'),
      { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate', lastTransitionTime: '2026-01-01T00:10:00Z' },
    );
  });
  it('the order pods come in does not change the plan (ordinals order every choice; `rollout plan` is exact)', () => {
    for (const ru of [{ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 2, partition: 2 }, { maxUnavailable: 1 }]) {
      const { set, revisions, pods } = rollout(ru);
      const want = plan(set, revisions, pods);
      for (const order of [[...pods].reverse(), [pods[3], pods[0], pods[5], pods[1], pods[4], pods[2]]]) {
        const got = plan(set, revisions, order);
        assert.deepEqual(names(got.inPlaceUpdates), names(want.inPlaceUpdates));
        assert.deepEqual(got.deletePods, want.deletePods);
      }
    }
  });
  it('unavailable pods use the budget: with web-5 updating only web-4 goes next', () => {
    const { set, revisions, pods, r2 } = rollout({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 2, partition: 2 });
    pods[5].metadata.labels!['controller-revision-hash'] = r2.metadata.name!;
    pods[5].status!.conditions = [
      { type: 'Ready', status: 'False' },
      { type: 'InPlaceUpdateReady', status: 'False' },
    ];
    pods[5].metadata.labels!['lifecycle.apps.kruise.io/state'] = 'Normal';
    const p = plan(set, revisions, pods);
    assert.deepEqual(names(p.inPlaceUpdates), ['web-4']);
  });
  it('partition 2 never touches ordinals 0 and 1', () => {
    const { set, revisions, pods, r2 } = rollout({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 6, partition: 2 });
    for (const o of [2, 3, 4, 5]) pods[o].metadata.labels!['controller-revision-hash'] = r2.metadata.name!;
    const p = plan(set, revisions, pods);
    assert.deepEqual(p.inPlaceUpdates, []);
    assert.deepEqual(p.deletePods, []);
  });
  it('ReCreate deletes the targets', () => {
    const { set, revisions, pods } = rollout({ maxUnavailable: 2 });
    assert.deepEqual(plan(set, revisions, pods).deletePods, ['web-5', 'web-4']);
  });
  it('OrderedReady default maxUnavailable 1: one pod at a time', () => {
    const { set, revisions, pods } = rollout({});
    set.spec!.podManagementPolicy = 'OrderedReady';
    assert.deepEqual(plan(set, revisions, pods).deletePods, ['web-5']);
  });
  it('maxUnavailable percent rounds down, at least 1', () => {
    const { set, revisions, pods } = rollout({ maxUnavailable: '40%' }); // 2.4 → 2
    assert.deepEqual(plan(set, revisions, pods).deletePods, ['web-5', 'web-4']);
    const r = rollout({ maxUnavailable: '10%' }); // 0.6 → 0 → 1
    assert.deepEqual(plan(r.set, r.revisions, r.pods).deletePods, ['web-5']);
  });
  it('paused and OnDelete update nothing', () => {
    const a = rollout({ paused: true, maxUnavailable: 2 });
    assert.deepEqual(plan(a.set, a.revisions, a.pods).deletePods, []);
    const b = rollout({});
    b.set.spec!.updateStrategy = { type: 'OnDelete' };
    assert.deepEqual(plan(b.set, b.revisions, b.pods).deletePods, []);
  });
  it('InPlaceOnly with a non-image change: FailedUpdatePod, nothing deleted', () => {
    const { set, revisions, pods } = rollout({ podUpdatePolicy: 'InPlaceOnly', maxUnavailable: 2 });
    set.spec!.template!.spec = { ...set.spec!.template!.spec!, containers: [{ name: 'main', image: 'nginx:2.0', args: ['x'] }] };
    const r3 = revisionFor(set, 3);
    const p = plan(set, [...revisions, r3], pods);
    assert.match(p.updateError ?? '', /find strategy is InPlaceOnly but Pod web-5 can not update in-place/);
    assert.deepEqual(p.deletePods, []);
    assert.equal(p.status.conditions?.[0].type, 'FailedUpdatePod');
  });
  it('InPlaceIfPossible with a non-image change recreates', () => {
    const { set, revisions, pods } = rollout({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1 });
    set.spec!.template!.spec = { ...set.spec!.template!.spec!, containers: [{ name: 'main', image: 'nginx:2.0', args: ['x'] }] };
    const p = plan(set, [...revisions, revisionFor(set, 3)], pods);
    assert.deepEqual(p.deletePods, ['web-5']);
  });
  it('specified-delete is honoured outside the partition, within maxUnavailable', () => {
    const { set, revisions, pods } = rollout({ partition: 6, maxUnavailable: 1 });
    pods[0].metadata.labels!['apps.kruise.io/specified-delete'] = 'true';
    pods[1].metadata.labels!['apps.kruise.io/specified-delete'] = 'true';
    assert.deepEqual(plan(set, revisions, pods).deletePods, ['web-1']);
  });
  it('inPlaceUpdate hook: a hooked pod goes to PreparingUpdate first', () => {
    const { set, revisions, pods } = rollout({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1 });
    set.spec!.lifecycle = { inPlaceUpdate: { labelsHandler: { hold: 'true' } } };
    pods[5].metadata.labels!.hold = 'true';
    const p = plan(set, revisions, pods);
    assert.deepEqual(p.inPlaceUpdates, []);
    assert.deepEqual(
      p.lifecycleTransitions.map((t) => [t.pod, t.to]),
      [['web-5', 'PreparingUpdate']],
    );
  });
  it('an unfinished in-place update completes: InPlaceUpdateReady=True, Updating → Normal', () => {
    const { set, revisions, pods, r2 } = rollout({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1, partition: 5 });
    const p5 = pods[5];
    p5.metadata.labels!['controller-revision-hash'] = r2.metadata.name!;
    p5.metadata.labels!['lifecycle.apps.kruise.io/state'] = 'Updating';
    p5.metadata.annotations!['apps.kruise.io/inplace-update-state'] = JSON.stringify({
      revision: r2.metadata.name,
      updateTimestamp: EARLIER,
      lastContainerStatuses: { main: { imageID: 'id-1' } },
    });
    p5.spec!.containers[0].image = 'nginx:2.0';
    p5.status!.containerStatuses = [{ name: 'main', image: 'nginx:2.0', imageID: 'id-2', ready: true } as never];
    p5.status!.conditions = [
      { type: 'Ready', status: 'False' },
      { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' },
    ];
    const p = plan(set, revisions, pods);
    assert.deepEqual(
      p.refreshes.map((r) => [r.pod, r.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.status]),
      [['web-5', 'True']],
    );
    assert.deepEqual(
      p.lifecycleTransitions.map((t) => [t.pod, t.to]),
      [['web-5', 'Normal']],
    );
  });
});

describe('volumeClaimUpdateStrategy OnPodRollingUpdate (gate StatefulSetAutoResizePVCGate)', () => {
  const vct = (storage: string) => ({ metadata: { name: 'data' }, spec: { resources: { requests: { storage } } } });
  const claim = (o: number, requested: string, capacity: string) => ({
    metadata: { name: `data-web-${o}` },
    spec: { resources: { requests: { storage: requested } } },
    status: { capacity: { storage: capacity } },
  });
  function setup() {
    const old = sts({ replicas: 2, podManagementPolicy: 'Parallel', volumeClaimTemplates: [vct('1Gi')] });
    const r1 = revisionFor(old, 1);
    const set = sts(
      {
        replicas: 2,
        podManagementPolicy: 'Parallel',
        volumeClaimTemplates: [vct('2Gi')],
        volumeClaimUpdateStrategy: { type: 'OnPodRollingUpdate' },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1 } },
      },
      'nginx:2.0',
    );
    const r2 = revisionFor(set, 2);
    return { set, revisions: [r1, r2], pods: [pod(old, r1, 0), pod(old, r1, 1)] };
  }
  const on = { StatefulSetAutoResizePVCGate: true };
  it('grows the target claim first, and updates the pod only once the capacity shows it', () => {
    const { set, revisions, pods } = setup();
    let p = plan(set, revisions, pods, { pvcs: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi')], features: on });
    assert.deepEqual(p.pvcResizes, [{ pvc: 'data-web-1', storage: '2Gi' }]);
    assert.deepEqual(p.inPlaceUpdates, []);
    p = plan(set, revisions, pods, { pvcs: [claim(0, '1Gi', '1Gi'), claim(1, '2Gi', '1Gi')], features: on });
    assert.deepEqual(p.pvcResizes, []);
    assert.deepEqual(p.inPlaceUpdates, [], 'web-1 waits for its resize and holds the budget');
    p = plan(set, revisions, pods, { pvcs: [claim(0, '1Gi', '1Gi'), claim(1, '2Gi', '2Gi')], features: on });
    assert.deepEqual(names(p.inPlaceUpdates), ['web-1']);
  });
  it('without the gate claims are left alone', () => {
    const { set, revisions, pods } = setup();
    const p = plan(set, revisions, pods, { pvcs: [claim(0, '1Gi', '1Gi'), claim(1, '1Gi', '1Gi')] });
    assert.deepEqual(p.pvcResizes, []);
    assert.deepEqual(names(p.inPlaceUpdates), ['web-1']);
  });
});

describe('status (§4.3 step 9)', () => {
  it('counts replicas, ready, available, current, updated; completes the rollout when all are updated and ready', () => {
    const set = sts({ replicas: 2 });
    const rev = revisionFor(set);
    set.status = { currentRevision: 'old' } as never;
    const p = plan(set, [rev], [pod(set, rev, 0), pod(set, rev, 1)]);
    assert.equal(p.status.replicas, 2);
    assert.equal(p.status.readyReplicas, 2);
    assert.equal(p.status.availableReplicas, 2);
    assert.equal(p.status.updatedReplicas, 2);
    assert.equal(p.status.updatedReadyReplicas, 2);
    assert.equal(p.status.currentRevision, rev.metadata.name);
    assert.equal(p.status.currentReplicas, 2);
    assert.equal(p.status.labelSelector, 'app=web');
    assert.equal(p.status.observedGeneration, 1);
    assert.ok(p.statusChanged);
  });
  it('volumeClaims: compatible = request holds the template, ready = capacity holds the request (upstream updatePVCStatus)', () => {
    const vct = {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '2Gi' } } },
    };
    const set = sts({ replicas: 4, volumeClaimTemplates: [vct] });
    const rev = revisionFor(set);
    const claim = (ord: number, request: string, capacity: string, o: { sc?: string; terminating?: boolean } = {}) =>
      ({
        metadata: { name: `data-web-${ord}`, ...(o.terminating ? { deletionTimestamp: EARLIER } : {}) },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: o.sc ?? 'fast', resources: { requests: { storage: request } } },
        status: { capacity: { storage: capacity } },
      }) as PersistentVolumeClaim;
    const pvcs = [
      claim(0, '2Gi', '2Gi'), // compatible and ready
      claim(1, '2Gi', '1Gi'), // grown, the volume not yet: compatible, not ready
      claim(2, '1Gi', '1Gi'), // not yet grown: neither
      claim(3, '3Gi', '3Gi', { sc: 'slow' }), // another class: neither
      claim(4, '2Gi', '2Gi'), // a condemned pod's: not counted
    ];
    const pods = [0, 1, 2, 3, 4].map((i) => pod(set, rev, i));
    const want = [{ volumeClaimName: 'data', compatibleReplicas: 2, compatibleReadyReplicas: 1 }];
    assert.deepEqual(plan(set, [rev], pods, { pvcs, features: { StatefulSetAutoResizePVCGate: true } }).status.volumeClaims, want);
    assert.deepEqual(plan(set, [rev], pods, { pvcs }).status.volumeClaims, want, 'reported with the gate off too, as upstream');
    // a pod still to be created counts with its claim; a terminating claim does not
    const later = plan(set, [rev], [pod(set, rev, 0)], { pvcs: [claim(0, '2Gi', '2Gi', { terminating: true }), claim(1, '2Gi', '2Gi')] });
    assert.deepEqual(later.status.volumeClaims, [{ volumeClaimName: 'data', compatibleReplicas: 1, compatibleReadyReplicas: 1 }]);
  });
});
