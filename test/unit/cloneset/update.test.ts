import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { calculateDiffsWithExpectation } from '../../../src/controllers/cloneset/diff.ts';
import { limitUpdateIndexes, planUpdate, sortUpdateIndexes, type UpdateInput } from '../../../src/controllers/cloneset/update.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { sortByPriority, sortByScatter } from '../../../src/util/updatesort.ts';
import type { UpdatePriorityStrategy } from '../../../src/apis/apps/pub.ts';
import { cloneSet, gates, NOW, pod, revisionOf, template, type CloneSetSpec, type PodOpts } from './fixtures.ts';

const csOld = cloneSet({ template: template('nginx:1.0') });
const revOld = revisionOf(csOld, 1);
const OLD = revOld.metadata.name!;

function setup(
  spec: Partial<CloneSetSpec>,
  pods: Pod[],
  newTemplate = template('nginx:2.0'),
  extra: Partial<UpdateInput> = {},
): UpdateInput {
  const cs = cloneSet(
    { replicas: pods.length, ...spec, template: newTemplate },
    { replicas: pods.length, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0, currentRevision: OLD },
  );
  const revNew = revisionOf(cs, 2);
  return {
    cloneSet: cs,
    revisions: [revOld, revNew],
    currentRevision: revOld,
    updateRevision: revNew,
    pods,
    nowMs: NOW,
    features: gates(),
    ...extra,
  };
}

const O = (name: string, o: PodOpts = {}) => pod(name, { revision: OLD, state: 'Normal', ...o });
const inPlace = (over: object = {}) => ({
  updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1, ...over } },
});

describe('planUpdate', () => {
  it('InPlaceIfPossible: in-place image update plan', () => {
    const plan = planUpdate(setup(inPlace(), [O('cs-a'), O('cs-b')]));
    assert.equal(plan.inPlaceUpdates.length, 1);
    const u = plan.inPlaceUpdates[0];
    assert.equal(u.updatedPod.spec!.containers[0].image, 'nginx:2.0');
    assert.equal(u.updatedPod.metadata.labels!['lifecycle.apps.kruise.io/state'], 'Updating');
    assert.equal(u.updatedPod.metadata.labels!['controller-revision-hash'], u.revision);
    assert.equal(u.conditions!.find((c) => c.type === 'InPlaceUpdateReady')!.status, 'False');
    assert.equal(plan.events[0].reason, 'SuccessfulUpdatePodInPlace');
  });

  it('ReCreate marks pods specified-delete within maxUnavailable', () => {
    const plan = planUpdate(setup({ updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } }, [O('cs-a'), O('cs-b'), O('cs-c')]));
    assert.equal(plan.labelPatches.length, 2);
    assert.deepEqual(plan.labelPatches[0].labels, { 'apps.kruise.io/specified-delete': 'true' });
    assert.equal(plan.inPlaceUpdates.length, 0);
  });

  it('InPlaceIfPossible falls back to recreate for non-image changes; InPlaceOnly errors', () => {
    const t = template('nginx:1.0', { spec: { containers: [{ name: 'main', image: 'nginx:1.0', args: ['x'] }] } });
    assert.equal(planUpdate(setup(inPlace(), [O('cs-a')], t)).labelPatches.length, 1);
    const plan = planUpdate(setup({ updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } } }, [O('cs-a')], t));
    assert.equal(plan.error, 'find Pod cs-a update strategy is InPlaceOnly but can not update in-place');
  });

  it('paused and OnDelete update nothing', () => {
    assert.equal(planUpdate(setup(inPlace({ paused: true }), [O('cs-a')])).inPlaceUpdates.length, 0);
    assert.equal(planUpdate(setup({ updateStrategy: { type: 'OnDelete' } }, [O('cs-a')])).labelPatches.length, 0);
  });

  it('partition keeps pods at the old revision', () => {
    const plan = planUpdate(setup(inPlace({ partition: 2, maxUnavailable: 3 }), [O('cs-a'), O('cs-b'), O('cs-c')]));
    assert.equal(plan.inPlaceUpdates.length, 1);
  });

  it('an unavailable old pod is updated first; available ones then wait for maxUnavailable', () => {
    const plan = planUpdate(setup(inPlace(), [O('cs-a'), O('cs-b', { ready: false }), O('cs-c')]));
    assert.deepEqual(
      plan.inPlaceUpdates.map((u) => u.pod),
      ['cs-b'],
    );
  });

  it('inPlaceUpdate hook sends the pod to PreparingUpdate first', () => {
    const hook = { labelsHandler: { hold: 'true' } };
    const plan = planUpdate(setup({ ...inPlace(), lifecycle: { inPlaceUpdate: hook } }, [O('cs-a', { labels: { hold: 'true' } })]));
    assert.deepEqual(
      plan.lifecycleTransitions.map((t) => [t.pod, t.to]),
      [['cs-a', 'PreparingUpdate']],
    );
    assert.equal(plan.inPlaceUpdates.length, 0);
  });

  it('refresh: an Updating pod whose image changed becomes Normal and update stops for this round', () => {
    const input = setup(inPlace(), []);
    const updating = pod('cs-a', { revision: input.updateRevision.metadata.name, state: 'Updating', image: 'nginx:2.0' });
    updating.metadata.annotations = {
      'apps.kruise.io/inplace-update-state': JSON.stringify({
        revision: 'x',
        updateTimestamp: '2026-07-01T11:00:00Z',
        lastContainerStatuses: { main: { imageID: 'id-nginx:1.0' } },
      }),
    };
    const plan = planUpdate({ ...input, pods: [updating, O('cs-b')] });
    assert.deepEqual(
      plan.lifecycleTransitions.map((t) => [t.pod, t.from, t.to]),
      [['cs-a', 'Updating', 'Normal']],
    );
    assert.equal(plan.inPlaceUpdates.length, 0);
  });

  it('refresh: PreparingNormal becomes Normal once scheduled; back-fills pod-template-hash', () => {
    const p = O('cs-a', { state: 'PreparingNormal' });
    delete p.metadata.labels!['pod-template-hash'];
    const plan = planUpdate(setup(inPlace(), [p]));
    assert.deepEqual(
      plan.lifecycleTransitions.map((t) => t.to),
      ['Normal'],
    );
    assert.deepEqual(plan.labelPatches, [{ pod: 'cs-a', labels: { 'pod-template-hash': OLD.slice(OLD.lastIndexOf('-') + 1) } }]);
  });
});

describe('update ordering', () => {
  const pods = [
    pod('p0', { labels: { w: 'low' } }),
    pod('p1', { labels: { w: 'high' } }),
    pod('p2', { labels: { w: 'high', zone: 'a' } }),
    pod('p3', {}),
  ];
  it('weightPriority: heavier first, ties by pod index descending', () => {
    const strategy: UpdatePriorityStrategy = {
      weightPriority: [
        { weight: 50, matchSelector: { matchLabels: { w: 'high' } } },
        { weight: 10, matchSelector: { matchLabels: { zone: 'a' } } },
      ],
    };
    assert.deepEqual(sortByPriority(strategy, pods, [0, 1, 2, 3]), [2, 1, 3, 0]);
  });
  it('orderPriority: by key order, then larger trailing number first', () => {
    const ps = [pod('a', { labels: { v: 'x1' } }), pod('b', { labels: { v: 'x10' } }), pod('c', {})];
    assert.deepEqual(sortByPriority({ orderPriority: [{ orderedKey: 'v' }] }, ps, [0, 1, 2]), [2, 1, 0]);
  });
  it('scatterStrategy spreads matching pods', () => {
    const ps = ['a', 'a', 'a', 'b', 'b', 'b'].map((z, i) => pod(`p${i}`, { labels: { zone: z } }));
    assert.deepEqual(sortByScatter([{ key: 'zone', value: 'a' }], ps, [0, 1, 2, 3, 4, 5]), [0, 3, 4, 1, 5, 2]);
  });
  it('PreparingUpdate pods go first', () => {
    const ps = [pod('a'), pod('b', { state: 'PreparingUpdate' })];
    assert.deepEqual(sortUpdateIndexes(cloneSet(), ps, [0, 1]), [1, 0]);
  });
});

// Upstream's TestUpdate (kruise v1.8.2, cloneset_update_test.go), case for case: one pod, a CloneSet
// of one replica, and the pod as it must look once the Update phase's writes are applied. Upstream's
// clock stands an hour behind the wall clock its grace-period check reads, so its "10 s ago" and
// "1 min ago" updates are 3610 s and 3660 s old against a 3630 s grace period.

const REV_OLD = 'rev_old';
const REV_NEW = 'rev_new';
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString().replace('.000Z', 'Z');
const NOW_T = at(0);

const upstreamRevision = (name: string, containers: object[]) => ({
  metadata: { name },
  revision: name === REV_OLD ? 1 : 2,
  data: { spec: { template: { $patch: 'replace', spec: { containers } } } },
});
const REVS = [upstreamRevision(REV_OLD, [{ name: 'c1', image: 'foo1' }]), upstreamRevision(REV_NEW, [{ name: 'c1', image: 'foo2' }])];

interface UpstreamPod {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  /** Container c1 (image) with status imageID image-id-xyz; none when absent. */
  image?: string;
  conditions: Array<{ type: string; status: string; reason?: string; lastTransitionTime?: string }>;
}

interface UpdateCase {
  name: string;
  spec?: object;
  /** Revisions [current…, update]; upstream passes the update revision alone when it has no others. */
  revisions?: ReturnType<typeof upstreamRevision>[];
  pod: UpstreamPod;
  want: UpstreamPod;
  requeueAfterMs?: number;
  /** Where the behaviour spec overrides upstream's case. */
  note?: string;
}

const READY = { type: 'Ready', status: 'True' };
const IPU_READY = { type: 'InPlaceUpdateReady', status: 'True' };
const IPU_READY_AT = { ...IPU_READY, lastTransitionTime: NOW_T };
const IPU_STARTED = { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate', lastTransitionTime: NOW_T };
const revLabels = (rev: string) => ({ 'controller-revision-hash': rev, 'pod-template-hash': rev });
const GRACE = '{"revision":"rev_new","containerImages":{"c1":"foo2"},"graceSeconds":3630}';
const inPlaceState = ({
  updateTimestamp,
  lastContainerStatuses = null,
  ...rest
}: {
  updateTimestamp: string;
  lastContainerStatuses?: object | null;
  [k: string]: unknown;
}) => JSON.stringify({ revision: REV_NEW, updateTimestamp, lastContainerStatuses, ...rest });
const IN_PLACE = { updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } };
const IN_PLACE_GRACE = {
  updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 3630 } } },
};

/** A pod whose in-place update to rev_new (image foo2) started secondsAgo and waits out the grace period. */
const inGrace = (secondsAgo: number): UpstreamPod => ({
  labels: { 'controller-revision-hash': REV_NEW, 'apps.kruise.io/cloneset-instance-id': 'id-0' },
  annotations: {
    'apps.kruise.io/inplace-update-state': inPlaceState({ updateTimestamp: at(secondsAgo) }),
    'apps.kruise.io/inplace-update-grace': GRACE,
  },
  image: 'foo1',
  conditions: [READY, IPU_STARTED],
});
/** The state of an in-place update of c1 started now, without a grace period. */
const UPDATED_IN_PLACE_NOW = {
  'apps.kruise.io/inplace-update-state': inPlaceState({
    updateTimestamp: NOW_T,
    lastContainerStatuses: { c1: { imageID: 'image-id-xyz' } },
    updateImages: true,
    containerBatchesRecord: [{ timestamp: NOW_T, containers: ['c1'] }],
  }),
};

const updateCases: UpdateCase[] = [
  {
    name: 'do nothing',
    revisions: [REVS[1]],
    pod: { labels: { 'controller-revision-hash': REV_NEW }, conditions: [READY, IPU_READY] },
    want: { labels: revLabels(REV_NEW), conditions: [READY, IPU_READY] },
  },
  {
    name: 'normal update condition',
    revisions: [REVS[1]],
    pod: { labels: { 'controller-revision-hash': REV_NEW }, conditions: [READY] },
    want: { labels: revLabels(REV_NEW), conditions: [READY, IPU_READY_AT] },
  },
  {
    name: 'recreate update 1',
    spec: { updateStrategy: { rollingUpdate: { podUpdatePolicy: 'ReCreate' } } },
    pod: { labels: { ...revLabels(REV_OLD), 'apps.kruise.io/cloneset-instance-id': 'id-0' }, conditions: [READY, IPU_READY] },
    want: {
      labels: { ...revLabels(REV_OLD), 'apps.kruise.io/cloneset-instance-id': 'id-0', 'apps.kruise.io/specified-delete': 'true' },
      conditions: [READY, IPU_READY],
    },
  },
  {
    name: 'recreate update 2',
    spec: IN_PLACE,
    revisions: [REVS[0], upstreamRevision(REV_NEW, [{ name: 'c1', image: 'foo2', env: [{ name: 'k', value: 'v' }] }])],
    pod: {
      labels: { ...revLabels(REV_OLD), 'apps.kruise.io/cloneset-instance-id': 'id-0' },
      image: 'foo1',
      conditions: [READY, IPU_READY],
    },
    want: {
      labels: { ...revLabels(REV_OLD), 'apps.kruise.io/cloneset-instance-id': 'id-0', 'apps.kruise.io/specified-delete': 'true' },
      image: 'foo1',
      conditions: [READY, IPU_READY],
    },
  },
  {
    name: 'inplace update',
    spec: IN_PLACE,
    pod: {
      labels: { ...revLabels(REV_OLD), 'apps.kruise.io/cloneset-instance-id': 'id-0' },
      image: 'foo1',
      conditions: [READY, IPU_READY],
    },
    want: {
      labels: { ...revLabels(REV_NEW), 'apps.kruise.io/cloneset-instance-id': 'id-0', 'lifecycle.apps.kruise.io/state': 'Updating' },
      annotations: UPDATED_IN_PLACE_NOW,
      image: 'foo2',
      conditions: [READY, IPU_STARTED],
    },
  },
  {
    name: 'inplace update with grace period',
    spec: IN_PLACE_GRACE,
    pod: {
      labels: { ...revLabels(REV_OLD), 'apps.kruise.io/cloneset-instance-id': 'id-0' },
      image: 'foo1',
      conditions: [READY, IPU_READY],
    },
    want: {
      labels: { ...revLabels(REV_NEW), 'apps.kruise.io/cloneset-instance-id': 'id-0', 'lifecycle.apps.kruise.io/state': 'Updating' },
      annotations: {
        'apps.kruise.io/inplace-update-state': inPlaceState({ updateTimestamp: NOW_T, updateImages: true }),
        'apps.kruise.io/inplace-update-grace': GRACE,
      },
      image: 'foo1',
      conditions: [READY, IPU_STARTED],
    },
    requeueAfterMs: 3_630_000,
  },
  {
    name: 'inplace update during grace period',
    spec: IN_PLACE_GRACE,
    pod: inGrace(3610),
    want: { ...inGrace(3610), labels: { ...revLabels(REV_NEW), 'apps.kruise.io/cloneset-instance-id': 'id-0' } },
    requeueAfterMs: 20_000,
  },
  {
    name: 'inplace update continuously after grace period',
    spec: IN_PLACE_GRACE,
    pod: inGrace(3660),
    want: {
      labels: { ...revLabels(REV_NEW), 'apps.kruise.io/cloneset-instance-id': 'id-0' },
      annotations: {
        // Upstream's fixture omits lastContainerStatuses here; its PatchSpecToPod records them, as we do.
        'apps.kruise.io/inplace-update-state': inPlaceState({
          updateTimestamp: at(3660),
          lastContainerStatuses: { c1: { imageID: 'image-id-xyz' } },
          containerBatchesRecord: [{ timestamp: NOW_T, containers: ['c1'] }],
        }),
      },
      image: 'foo2',
      conditions: [READY, IPU_STARTED],
    },
  },
  {
    name: 'create: preparingNormal->Normal without hook',
    revisions: [REVS[1]],
    pod: {
      labels: { ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False' }, IPU_READY],
    },
    want: {
      labels: { ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'Normal' },
      conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False' }, IPU_READY],
    },
    note: 'behaviour spec §3.7: without a preNormal hook the pod must be scheduled first (upstream v1.8.2 moves it at once)',
  },
  {
    name: 'create: preparingNormal stays while unscheduled, without hook',
    revisions: [REVS[1]],
    pod: {
      labels: { ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      conditions: [{ type: 'Ready', status: 'False' }, IPU_READY],
    },
    want: {
      labels: { ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      conditions: [{ type: 'Ready', status: 'False' }, IPU_READY],
    },
    note: 'behaviour spec §3.7 (no upstream case)',
  },
  {
    name: 'create: preparingNormal->preparingNormal, preNormal does not hook',
    spec: { lifecycle: { preNormal: { labelsHandler: { preNormalHooked: 'true' } } } },
    revisions: [REVS[1]],
    pod: {
      labels: { ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      conditions: [{ type: 'Ready', status: 'False' }, IPU_READY],
    },
    want: {
      labels: { ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      conditions: [{ type: 'Ready', status: 'False' }, IPU_READY],
    },
  },
  {
    name: 'create: preparingNormal->Normal, preNormal does hook',
    spec: { lifecycle: { preNormal: { labelsHandler: { preNormalHooked: 'true' } } } },
    revisions: [REVS[1]],
    pod: {
      labels: { preNormalHooked: 'true', ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      conditions: [{ type: 'Ready', status: 'False' }, IPU_READY],
    },
    want: {
      labels: { preNormalHooked: 'true', ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'Normal' },
      conditions: [{ type: 'Ready', status: 'False' }, IPU_READY],
    },
  },
  {
    name: 'recreate update: preparingNormal, preNormal does not hook, specific delete',
    spec: { lifecycle: { preNormal: { finalizersHandler: ['preNormalHooked'] } } },
    pod: { labels: { ...revLabels(REV_OLD), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' }, conditions: [READY, IPU_READY] },
    want: {
      labels: { ...revLabels(REV_OLD), 'apps.kruise.io/specified-delete': 'true', 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      conditions: [READY, IPU_READY],
    },
  },
  {
    name: 'in-place update: preparingNormal->Updating, preNormal & InPlaceUpdate does not hook',
    spec: { ...IN_PLACE, lifecycle: { preNormal: { finalizersHandler: ['slb.com/online'] } } },
    pod: {
      labels: { ...revLabels(REV_OLD), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      image: 'foo1',
      conditions: [READY, IPU_READY_AT],
    },
    want: {
      labels: { ...revLabels(REV_NEW), 'lifecycle.apps.kruise.io/state': 'Updating' },
      annotations: UPDATED_IN_PLACE_NOW,
      image: 'foo2',
      conditions: [READY, IPU_STARTED],
    },
  },
  {
    name: 'in-place update: preparingNormal->Normal, preNormal & InPlaceUpdate does hook',
    spec: {
      ...IN_PLACE,
      lifecycle: { preNormal: { finalizersHandler: ['slb/online'] }, inPlaceUpdate: { finalizersHandler: ['slb/online'] } },
    },
    pod: {
      labels: { ...revLabels(REV_OLD), 'lifecycle.apps.kruise.io/state': 'PreparingNormal' },
      finalizers: ['slb/online'],
      image: 'foo1',
      conditions: [READY, IPU_READY_AT],
    },
    want: {
      labels: { ...revLabels(REV_OLD), 'lifecycle.apps.kruise.io/state': 'Normal' },
      finalizers: ['slb/online'],
      image: 'foo1',
      conditions: [READY, IPU_READY_AT],
    },
  },
  {
    name: 'in-place update: Normal->preparingUpdate, preNormal & InPlaceUpdate does hook',
    spec: {
      ...IN_PLACE,
      lifecycle: { preNormal: { finalizersHandler: ['slb/online'] }, inPlaceUpdate: { finalizersHandler: ['slb/online'] } },
    },
    pod: {
      labels: { ...revLabels(REV_OLD), 'lifecycle.apps.kruise.io/state': 'Normal' },
      finalizers: ['slb/online'],
      image: 'foo1',
      conditions: [READY, IPU_READY_AT],
    },
    want: {
      labels: { ...revLabels(REV_OLD), 'lifecycle.apps.kruise.io/state': 'PreparingUpdate' },
      finalizers: ['slb/online'],
      image: 'foo1',
      conditions: [READY, IPU_READY_AT],
    },
  },
];

function upstreamUpdatePod(p: UpstreamPod): Pod {
  return {
    metadata: {
      name: 'pod-0',
      namespace: 'default',
      labels: { ...p.labels },
      ...(p.annotations ? { annotations: { ...p.annotations } } : {}),
      ...(p.finalizers ? { finalizers: [...p.finalizers] } : {}),
    },
    spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: p.image ? [{ name: 'c1', image: p.image }] : [] },
    status: {
      phase: 'Running',
      conditions: p.conditions.map((c) => ({ ...c })),
      ...(p.image ? { containerStatuses: [{ name: 'c1', imageID: 'image-id-xyz' }] } : {}),
    },
  } as Pod;
}

/** The pod after the plan's writes, in the executor's order; the lifecycle timestamp is left out. */
function applyUpdatePlan(pod: Pod, plan: ReturnType<typeof planUpdate>): UpstreamPod {
  let p = structuredClone(pod);
  const name = p.metadata.name;
  for (const r of plan.refreshes.filter((x) => x.pod === name)) {
    if (r.conditions) p.status = { ...p.status, conditions: r.conditions };
    if (r.updatedPod) p = { ...p, metadata: r.updatedPod.metadata, spec: r.updatedPod.spec };
  }
  for (const t of plan.lifecycleTransitions.filter((x) => x.pod === name)) {
    p.metadata.labels = { ...p.metadata.labels, ...t.labels };
    p.metadata.annotations = { ...p.metadata.annotations, ...t.annotations };
    for (const f of t.addFinalizers) if (!p.metadata.finalizers?.includes(f)) p.metadata.finalizers = [...(p.metadata.finalizers ?? []), f];
  }
  for (const l of plan.labelPatches.filter((x) => x.pod === name)) p.metadata.labels = { ...p.metadata.labels, ...l.labels };
  for (const u of plan.inPlaceUpdates.filter((x) => x.pod === name)) {
    if (u.conditions) p.status = { ...p.status, conditions: u.conditions };
    p = { ...p, metadata: u.updatedPod.metadata, spec: u.updatedPod.spec };
  }
  const annotations = { ...p.metadata.annotations };
  delete annotations['lifecycle.apps.kruise.io/timestamp'];
  const image = p.spec?.containers[0]?.image;
  return {
    labels: p.metadata.labels ?? {},
    ...(Object.keys(annotations).length ? { annotations } : {}),
    ...(p.metadata.finalizers?.length ? { finalizers: p.metadata.finalizers } : {}),
    ...(image ? { image } : {}),
    conditions: p.status?.conditions ?? [],
  };
}

describe('planUpdate: upstream TestUpdate cases', () => {
  for (const c of updateCases) {
    it(c.note ? `${c.name} [${c.note}]` : c.name, () => {
      const revisions = (c.revisions ?? REVS) as unknown as UpdateInput['revisions'];
      const cs = {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'CloneSet',
        metadata: { name: 'clone-test', namespace: 'default' },
        spec: { replicas: 1, selector: { matchLabels: {} }, template: {}, ...c.spec },
      };
      const pod = upstreamUpdatePod(c.pod);
      const plan = planUpdate({
        cloneSet: cs as UpdateInput['cloneSet'],
        revisions,
        currentRevision: revisions[0],
        updateRevision: revisions[revisions.length - 1],
        pods: [pod],
        nowMs: NOW,
        features: gates(),
      });
      assert.equal(plan.error, undefined);
      assert.deepEqual(applyUpdatePlan(pod, plan), c.want);
      assert.equal(plan.requeueAfterMs, c.requeueAfterMs);
    });
  }
});

// Upstream's TestSortUpdateIndexes and TestCalculateUpdateCount (cloneset_update_test.go).

const statusPod = (phase: string | undefined, ready: boolean, revision?: string): Pod =>
  ({
    metadata: { name: 'p', ...(revision ? { labels: { 'controller-revision-hash': revision } } : {}) },
    spec: { containers: [] },
    status: { ...(phase ? { phase } : {}), ...(ready ? { conditions: [{ type: 'Ready', status: 'True' }] } : {}) },
  }) as Pod;

describe('sortUpdateIndexes: upstream cases', () => {
  it('not-ready before ready, pending before running', () => {
    const pods = [
      statusPod('Pending', true),
      statusPod('Pending', false),
      statusPod('Pending', false),
      statusPod('Running', true),
      statusPod('Running', false),
    ];
    assert.deepEqual(sortUpdateIndexes(cloneSet({ updateStrategy: {} }), pods, [0, 1, 3, 4]), [1, 0, 4, 3]);
  });
});

describe('limitUpdateIndexes (calculateUpdateCount): upstream cases', () => {
  // R: running and ready, U: never started; oldIndexes are at the current revision, the rest updated.
  const cases: Array<{ name: string; rolling: object; replicas: number; oldIndexes: number[]; pods: string; want: number }> = [
    { name: 'default maxUnavailable, all ready', rolling: {}, replicas: 3, oldIndexes: [0, 1, 2], pods: 'RRR', want: 1 },
    {
      name: 'default maxUnavailable, one old unavailable in the middle',
      rolling: {},
      replicas: 3,
      oldIndexes: [0, 1, 2],
      pods: 'RUR',
      want: 0,
    },
    { name: 'default maxUnavailable, one old unavailable first', rolling: {}, replicas: 3, oldIndexes: [0, 1, 2], pods: 'URR', want: 1 },
    {
      name: 'default maxUnavailable of 10, two unavailable',
      rolling: {},
      replicas: 10,
      oldIndexes: [0, 1, 2, 3, 4, 5, 6, 7, 8],
      pods: 'URRRRRRRUR',
      want: 1,
    },
    {
      name: 'partition 2, maxUnavailable 3',
      rolling: { partition: 2, maxUnavailable: 3 },
      replicas: 3,
      oldIndexes: [0, 1],
      pods: 'URR',
      want: 0,
    },
    {
      name: 'partition 2, maxUnavailable 50%',
      rolling: { partition: 2, maxUnavailable: '50%' },
      replicas: 8,
      oldIndexes: [0, 1, 2, 3, 4, 5, 6],
      pods: 'URURRRRU',
      want: 3,
    },
    {
      name: 'old revision all unavailable, maxUnavailable 2: update 2',
      rolling: { partition: 0, maxUnavailable: 2 },
      replicas: 5,
      oldIndexes: [0, 1, 2, 3, 4],
      pods: 'UUUUU',
      want: 2,
    },
    {
      name: 'old revision all unavailable, maxUnavailable 2, 2 updating: none',
      rolling: { partition: 0, maxUnavailable: 2 },
      replicas: 5,
      oldIndexes: [0, 1, 2],
      pods: 'UUUUU',
      want: 0,
    },
    {
      name: 'old revision all unavailable, maxUnavailable 2, 1 updated 1 updating: 1',
      rolling: { partition: 0, maxUnavailable: 2 },
      replicas: 5,
      oldIndexes: [0, 1, 2],
      pods: 'UUURU',
      want: 1,
    },
    {
      name: 'maxUnavailable 2, maxSurge 1, 1 creating: 2',
      rolling: { partition: 0, maxUnavailable: 2, maxSurge: 1 },
      replicas: 5,
      oldIndexes: [0, 1, 2, 3, 4],
      pods: 'UUUUUU',
      want: 2,
    },
    {
      name: 'maxUnavailable 2, maxSurge 1, 1 updated 1 updating: 2',
      rolling: { partition: 0, maxUnavailable: 2, maxSurge: 1 },
      replicas: 5,
      oldIndexes: [0, 1, 2, 3],
      pods: 'UUUURU',
      want: 2,
    },
    {
      name: 'maxUnavailable 2, maxSurge 1, 1 updated 2 updating: 1',
      rolling: { partition: 0, maxUnavailable: 2, maxSurge: 1 },
      replicas: 5,
      oldIndexes: [0, 1, 2],
      pods: 'UUUURU',
      want: 1,
    },
    {
      name: 'maxUnavailable 2, maxSurge 1, 3 updating: none',
      rolling: { partition: 0, maxUnavailable: 2, maxSurge: 1 },
      replicas: 5,
      oldIndexes: [0, 1, 2],
      pods: 'UUUUUU',
      want: 0,
    },
    {
      name: 'rollback with maxUnavailable while new-revision pods are unavailable',
      rolling: { partition: 7, maxUnavailable: 2 },
      replicas: 8,
      oldIndexes: [0, 1, 2],
      pods: 'RRRUUUUU',
      want: 2,
    },
    {
      name: 'maxUnavailable 0, maxSurge 2, one surge used',
      rolling: { maxUnavailable: 0, maxSurge: 2 },
      replicas: 4,
      oldIndexes: [0, 1],
      pods: 'RRRRR',
      want: 1,
    },
    {
      name: 'maxUnavailable 0, maxSurge 2, two surge used',
      rolling: { maxUnavailable: 0, maxSurge: 2 },
      replicas: 4,
      oldIndexes: [0, 1, 2, 3],
      pods: 'RRRRRR',
      want: 2,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pods = [...c.pods].map((k, i) =>
        statusPod(k === 'R' ? 'Running' : undefined, k === 'R', c.oldIndexes.includes(i) ? 'current' : 'updated'),
      );
      const newIndexes = pods.map((_, i) => i).filter((i) => !c.oldIndexes.includes(i));
      const cs = cloneSet({ replicas: c.replicas, updateStrategy: { rollingUpdate: c.rolling } });
      const diffs = calculateDiffsWithExpectation(cs, pods, 'current', 'updated', {
        nowMs: NOW,
        features: gates({ CloneSetPartitionRollback: true }),
      });
      const [waiting, target] = diffs.updateNum > 0 ? [c.oldIndexes, 'updated'] : diffs.updateNum < 0 ? [newIndexes, 'current'] : [[], ''];
      assert.equal(limitUpdateIndexes(cs, diffs, waiting, pods, target, NOW).length, c.want);
    });
  }
});
