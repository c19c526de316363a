import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node, Pod } from '../../../src/apis/core-objects.ts';
import { planWorkloadSpread, type SpreadInputs } from '../../../src/controllers/workloadspread/plan.ts';
import { readCustomTarget, REPLICAS_UNKNOWN, WorkloadSpreadReconciler } from '../../../src/controllers/workloadspread/controller.ts';
import { makeSpreadHandlers } from '../../../src/controllers/workloadspread/event-handler.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { ScaleExpectations } from '../../../src/runtime/expectations.ts';
import type { SpreadView, SubsetStatus } from '../../../src/util/workloadspread.ts';

const NOW = Date.parse('2026-01-02T03:04:05Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const ago = (s: number) => iso(NOW - s * 1000);

type Subsets = SpreadView['spec']['subsets'];
const ws = (subsets: Subsets, status?: SpreadView['status'], extra: Partial<SpreadView['spec']> = {}): SpreadInputs['ws'] => ({
  metadata: { name: 'ws', namespace: 'default', generation: 3 },
  spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs' }, subsets, ...extra },
  status,
});
const ZONES: Subsets = [
  { name: 'a', maxReplicas: 2, requiredNodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
  { name: 'b', maxReplicas: 2, requiredNodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] } },
  { name: 'c', requiredNodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['c'] }] } },
];

interface PodOpts {
  subset?: string;
  ready?: boolean;
  cost?: string;
  node?: string;
  created?: number;
  phase?: string;
  unschedulable?: boolean;
  uid?: string;
}
function pod(name: string, o: PodOpts = {}): Pod {
  const annotations: Record<string, string> = {};
  if (o.subset)
    annotations['apps.kruise.io/matched-workloadspread'] = JSON.stringify({
      name: 'ws',
      subset: o.subset,
      ...(o.uid ? { uid: o.uid } : {}),
    });
  if (o.cost) annotations['controller.kubernetes.io/pod-deletion-cost'] = o.cost;
  const conditions = o.unschedulable
    ? [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }]
    : [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: ago(100) }];
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      creationTimestamp: ago(o.created ?? 100),
      annotations,
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs', uid: 'cs-uid', controller: true }],
    },
    spec: { containers: [{ name: 'main', image: 'nginx' }], ...(o.node ? { nodeName: o.node } : {}) },
    status: { phase: o.phase ?? (o.unschedulable ? 'Pending' : 'Running'), conditions },
  };
}
const node = (name: string, zone: string): Node => ({ metadata: { name, labels: { zone } } });
const NODES = new Map([
  ['n-a', node('n-a', 'a')],
  ['n-b', node('n-b', 'b')],
  ['n-c', node('n-c', 'c')],
]);
const plan = (w: SpreadInputs['ws'], pods: Pod[], replicas = 6, extra: Partial<SpreadInputs> = {}) =>
  planWorkloadSpread({
    ws: w,
    pods,
    workloadReplicas: replicas,
    latestVersion: 'versionIgnored',
    deletionCost: true,
    node: (n) => NODES.get(n),
    now: NOW,
    ...extra,
  });
const brief = (s: SubsetStatus) => [s.name, s.replicas, s.missingReplicas];

describe('WorkloadSpread planner: replicas and missingReplicas', () => {
  test('2/2/2 over a/b/c (2, 2, nil): full subsets have 0 missing, unlimited -1', () => {
    const pods = ['a', 'a', 'b', 'b', 'c', 'c'].map((z, i) => pod(`p${i}`, { subset: z }));
    const p = plan(ws(ZONES), pods);
    assert.deepEqual(p.status!.subsetStatuses!.map(brief), [
      ['a', 2, 0],
      ['b', 2, 0],
      ['c', 2, -1],
    ]);
    assert.deepEqual(Object.keys(p.status!.versionedSubsetStatuses!), ['versionIgnored']);
    assert.equal(p.status!.observedGeneration, 3);
  });
  test('percent maxReplicas scale (round up) against the workload replicas', () => {
    const pods = [pod('p0', { subset: 'a' })];
    const p = plan(ws([{ name: 'a', maxReplicas: '50%' }, { name: 'b' }]), pods, 5);
    assert.deepEqual(p.status!.subsetStatuses!.map(brief), [
      ['a', 1, 2],
      ['b', 0, -1],
    ]);
  });
  test('inactive pods count neither as replicas nor against missing', () => {
    const done = pod('p0', { subset: 'a', phase: 'Succeeded' });
    const p = plan(ws(ZONES), [done, pod('p1', { subset: 'a' })]);
    assert.deepEqual(brief(p.status!.subsetStatuses![0]!), ['a', 1, 1]);
  });
});

describe('WorkloadSpread planner: creatingPods / deletingPods', () => {
  const versioned = (entries: Partial<SubsetStatus>[]) => ({
    versionedSubsetStatuses: { versionIgnored: entries.map((e, i) => ({ name: ZONES[i]!.name, replicas: 0, missingReplicas: 0, ...e })) },
  });
  test('an entry whose pod appeared is dropped; a live one holds a slot and schedules the next round; an expired one warns', () => {
    const status = versioned([{ creatingPods: { p0: ago(5), p9: ago(10) } }, { creatingPods: { gone: ago(31) } }]);
    const p = plan(ws(ZONES), [pod('p0', { subset: 'a' })], 6);
    // Upstream keeps the statuses of subsetStatuses and of each version apart; check the version's.
    const v = plan(ws(ZONES, status), [pod('p0', { subset: 'a' })], 6).status!.versionedSubsetStatuses!.versionIgnored!;
    assert.deepEqual(v[0], { name: 'a', replicas: 1, missingReplicas: 0, creatingPods: { p9: ago(10) } });
    assert.deepEqual(v[1], { name: 'b', replicas: 0, missingReplicas: 2 });
    assert.equal(p.requeueAfterMs, undefined);
    const p2 = plan(ws(ZONES, status), [pod('p0', { subset: 'a' })], 6);
    assert.equal(p2.requeueAfterMs, 20_000);
  });
  test('a generated uid entry is cleared by the pod carrying that uid', () => {
    const status = versioned([{ creatingPods: { 'gen-1': ago(1) } }]);
    const v = plan(ws(ZONES, status), [pod('cs-xyz', { subset: 'a', uid: 'gen-1' })]).status!.versionedSubsetStatuses!.versionIgnored!;
    assert.deepEqual(v[0], { name: 'a', replicas: 1, missingReplicas: 1 });
  });
  test('deletingPods: a live entry frees its slot; after 15 s it is dropped', () => {
    const pods = [pod('p0', { subset: 'a' }), pod('p1', { subset: 'a' })];
    const fresh = plan(ws(ZONES, versioned([{ deletingPods: { p1: ago(3) } }])), pods).status!.versionedSubsetStatuses!.versionIgnored!;
    assert.deepEqual(fresh[0], { name: 'a', replicas: 2, missingReplicas: 1, deletingPods: { p1: ago(3) } });
    const stale = plan(ws(ZONES, versioned([{ deletingPods: { p1: ago(16) } }])), pods);
    assert.deepEqual(stale.status!.versionedSubsetStatuses!.versionIgnored![0], { name: 'a', replicas: 2, missingReplicas: 0 });
    assert.deepEqual(
      stale.events.map((e) => e.reason),
      [],
      'events are reported from subsetStatuses only',
    );
    const staleTop = plan(
      ws(ZONES, { subsetStatuses: [{ name: 'a', replicas: 2, missingReplicas: 0, deletingPods: { p1: ago(16) } }] }),
      pods,
    );
    assert.deepEqual(
      staleTop.events.map((e) => [e.type, e.reason, e.message]),
      [['Warning', 'DeletePodFailed', "Pod default/p1 was expected to be deleted but it wasn't"]],
    );
  });
  test('an unchanged status is not written again', () => {
    const pods = ['a', 'b', 'c'].map((z, i) => pod(`p${i}`, { subset: z }));
    const first = plan(ws(ZONES), pods).status!;
    assert.equal(plan(ws(ZONES, first), pods).status, undefined);
  });
});

describe('WorkloadSpread planner: pod-deletion-cost', () => {
  test('subset order: 100*(N-i) within maxReplicas, surplus (weakest first) -100*(i+1), fake subset -100*(N+1)', () => {
    const pods = [
      pod('a0', { subset: 'a' }),
      pod('a1', { subset: 'a' }),
      pod('a2', { subset: 'a', ready: false }),
      pod('b0', { subset: 'b' }),
      pod('c0', { subset: 'c' }),
      pod('x0'),
    ];
    const costs = Object.fromEntries(
      plan(ws(ZONES), pods).podPatches.map((p) => [p.name, p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost']]),
    );
    assert.deepEqual(costs, { a0: '300', a1: '300', a2: '-100', b0: '200', c0: '100', x0: '-400' });
  });
  test('pods already carrying their cost are not patched; targets without deletion cost get none', () => {
    const pods = [pod('a0', { subset: 'a', cost: '300' }), pod('c0', { subset: 'c' })];
    assert.deepEqual(
      plan(ws(ZONES), pods).podPatches.map((p) => p.name),
      ['c0'],
    );
    assert.deepEqual(plan(ws(ZONES), pods, 6, { deletionCost: false }).podPatches, []);
  });
  test('an old version drains from the last subset first (order reversed)', () => {
    const pods = [pod('a0', { subset: 'a' }), pod('c0', { subset: 'c' })];
    const costs = Object.fromEntries(
      plan(ws(ZONES), pods, 6, { latestVersion: 'newer' }).podPatches.map((p) => [
        p.name,
        p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'],
      ]),
    );
    assert.deepEqual(costs, { a0: '100', c0: '300' });
  });
});

describe('WorkloadSpread planner: late matching by node', () => {
  test('an unannotated scheduled pod joins the subset of its node, with the annotation patched', () => {
    const p = plan(ws(ZONES), [pod('x', { node: 'n-b' })]);
    const patch = p.podPatches.find((q) => q.name === 'x')!;
    assert.equal(patch.metadata.annotations!['apps.kruise.io/matched-workloadspread'], '{"name":"ws","subset":"b"}');
    assert.equal(patch.metadata.annotations!['controller.kubernetes.io/pod-deletion-cost'], '200');
    assert.deepEqual(brief(p.status!.subsetStatuses![1]!), ['b', 1, 1]);
  });
});

describe('WorkloadSpread planner: adaptive rescheduling', () => {
  const adaptive = (status?: SpreadView['status']) =>
    ws(ZONES, status, { scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 10 } } });
  test('pods unschedulable past the critical time mark the subset Schedulable=False and are deleted', () => {
    const pods = [
      pod('a0', { subset: 'a', unschedulable: true, created: 11 }),
      pod('a1', { subset: 'a', unschedulable: true, created: 4 }),
    ];
    const p = plan(adaptive(), pods);
    assert.deepEqual(p.podsToDelete, ['a0']);
    const [a, b, c] = p.status!.subsetStatuses!;
    assert.deepEqual(a!.conditions, [
      { type: 'Schedulable', status: 'False', reason: 'Unspecified', message: '', lastTransitionTime: iso(NOW) },
    ]);
    assert.deepEqual(b!.conditions, [
      { type: 'Schedulable', status: 'True', reason: 'Unspecified', message: '', lastTransitionTime: iso(NOW) },
    ]);
    assert.equal(c!.conditions![0]!.status, 'True', 'the last subset is always schedulable');
    // a1 times out in 6 s: the next round is due then.
    assert.equal(p.requeueAfterMs, 6_000);
    // The webhook reads the versioned statuses: they carry the condition too.
    assert.equal(p.status!.versionedSubsetStatuses!.versionIgnored![0]!.conditions![0]!.status, 'False');
  });
  test('a deadline reached exactly (not yet past) is looked at again in 1 ms, not forgotten', () => {
    const due = plan(adaptive(), [pod('a0', { subset: 'a', unschedulable: true, created: 10 })]);
    assert.deepEqual(due.podsToDelete, []);
    assert.equal(due.requeueAfterMs, 1);
    const cond = { type: 'Schedulable', status: 'False' as const, reason: 'Unspecified', message: '', lastTransitionTime: ago(300) };
    const recovering = plan(adaptive({ subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: 2, conditions: [cond] }] }), []);
    assert.equal(recovering.status?.subsetStatuses?.[0]?.conditions?.[0]?.status ?? 'False', 'False');
    assert.equal(recovering.requeueAfterMs, 1);
  });
  test('an unschedulable subset recovers 300 s after it was marked, with a RecoverSchedulable event', () => {
    const cond = (t: number) => ({
      type: 'Schedulable',
      status: 'False' as const,
      reason: 'Unspecified',
      message: '',
      lastTransitionTime: ago(t),
    });
    const early = plan(adaptive({ subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: 2, conditions: [cond(100)] }] }), []);
    assert.equal(early.status!.subsetStatuses![0]!.conditions![0]!.status, 'False');
    assert.equal(early.requeueAfterMs, 200_000);
    const late = plan(adaptive({ subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: 2, conditions: [cond(301)] }] }), []);
    assert.deepEqual(late.status!.subsetStatuses![0]!.conditions, [
      { type: 'Schedulable', status: 'True', reason: 'Unspecified', message: '', lastTransitionTime: iso(NOW) },
    ]);
    assert.deepEqual(
      late.events.map((e) => e.reason),
      ['RecoverSchedulable'],
    );
  });
  test('without Adaptive no Schedulable condition is kept', () => {
    const p = plan(
      ws(ZONES, {
        subsetStatuses: [
          {
            name: 'a',
            replicas: 0,
            missingReplicas: 2,
            conditions: [{ type: 'Schedulable', status: 'False', reason: 'Unspecified', message: '', lastTransitionTime: ago(1) }],
          },
        ],
      }),
      [],
    );
    assert.equal(p.status!.subsetStatuses![0]!.conditions, undefined);
    assert.deepEqual(p.podsToDelete, []);
  });
});

describe('WorkloadSpread reconciler (executor)', () => {
  const cs = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name: 'cs', namespace: 'default', uid: 'cs-uid' },
    spec: { replicas: 4 },
  };
  function setup(opts: { conflict?: boolean } = {}) {
    const w = adaptiveWs();
    const pods = [pod('a0', { subset: 'a', unschedulable: true, created: 30 }), pod('c0', { subset: 'c' })];
    const calls: string[] = [];
    const events: string[] = [];
    const reconciler = new WorkloadSpreadReconciler({
      cache: {
        getWorkloadSpread: () => w as any,
        getWorkload: (group, kind) => (group === 'apps.kruise.io' && kind === 'CloneSet' ? (cs as any) : undefined),
        ownedBy: (kind, uid) => (kind === 'Pod' && uid === 'cs-uid' ? (pods as any) : []),
        node: () => undefined,
        customWorkload: async () => undefined,
        podsIn: () => [],
        whitelist: () => [],
      },
      client: {
        async patch(_t: any, name: string, body: any) {
          calls.push(`patch ${name} ${JSON.stringify(body.metadata.annotations)}`);
          return {} as any;
        },
        async updateStatus(_t: any, obj: any) {
          if (opts.conflict) throw new StatusError({ kind: 'Status', reason: 'Conflict', code: 409, message: 'conflict' } as any);
          calls.push(`status ${obj.status.subsetStatuses.map((s: any) => `${s.name}:${s.replicas}/${s.missingReplicas}`).join(',')}`);
          return obj;
        },
        async delete(_t: any, name: string) {
          calls.push(`delete ${name}`);
          return {} as any;
        },
      },
      recorder: { event: (_o: any, type: string, reason: string) => events.push(`${type} ${reason}`) },
      log: { info() {}, debug() {}, warn() {}, error() {} } as any,
      clock: { now: () => NOW } as any,
    });
    return { reconciler, calls, events };
  }
  const adaptiveWs = () => ws(ZONES, undefined, { scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 10 } } });

  test('patches deletion costs, writes the status, then deletes the pods stuck unschedulable', async () => {
    const { reconciler, calls } = setup();
    assert.deepEqual(await reconciler.reconcile('default/ws'), {});
    assert.deepEqual(calls, [
      'patch a0 {"controller.kubernetes.io/pod-deletion-cost":"300"}',
      'patch c0 {"controller.kubernetes.io/pod-deletion-cost":"100"}',
      'status a:1/1,b:0/2,c:1/-1',
      'delete a0',
    ]);
  });
  test('a status write lost to the webhook requeues and deletes nothing', async () => {
    const { reconciler, calls } = setup({ conflict: true });
    assert.deepEqual(await reconciler.reconcile('default/ws'), { requeueAfterMs: 1000 });
    assert.ok(!calls.some((c) => c.startsWith('delete')));
  });
  test('a pod it deleted is awaited: the next round waits until the cache has seen it go', async () => {
    const { reconciler, calls } = setup();
    await reconciler.reconcile('default/ws');
    calls.length = 0;
    const next = await reconciler.reconcile('default/ws');
    assert.ok((next.requeueAfterMs ?? 0) > 0, JSON.stringify(next));
    assert.deepEqual(calls, []);
  });
});

describe('WorkloadSpread reconciler: custom workloads (whitelist, scale subresource)', () => {
  const gizmo = { metadata: { name: 'g', namespace: 'default', uid: 'g-uid' }, spec: { size: 5 } };
  const customWs = (extra: Partial<SpreadView['spec']> = {}) => ({
    ...ws([{ name: 'a', maxReplicas: '50%' }, { name: 'b' }], undefined, extra),
    spec: {
      targetRef: { apiVersion: 'example.com/v1', kind: 'Gizmo', name: 'g' },
      subsets: [{ name: 'a', maxReplicas: '50%' }, { name: 'b' }],
      ...extra,
    },
  });
  const owned = (name: string, subset: string, uid = 'g-uid') => {
    const p = pod(name, { subset });
    p.metadata.ownerReferences = [{ apiVersion: 'example.com/v1', kind: 'Gizmo', name: 'g', uid, controller: true }];
    return p;
  };
  function run(opts: { w: any; pods: Pod[]; podsInNamespace?: Pod[]; selector?: string; whitelist?: any[]; scaleReplicas?: number }) {
    const statuses: any[] = [];
    const reconciler = new WorkloadSpreadReconciler({
      cache: {
        getWorkloadSpread: () => opts.w,
        getWorkload: () => assert.fail('a custom target is not read from the built-in caches'),
        ownedBy: (kind, uid) => (kind === 'Pod' && uid === 'g-uid' ? (opts.pods as any) : []),
        node: () => undefined,
        customWorkload: async (apiVersion, kind, _ns, name) =>
          apiVersion === 'example.com/v1' && kind === 'Gizmo' && name === 'g'
            ? { object: gizmo as any, replicas: opts.scaleReplicas ?? 4, selector: opts.selector }
            : undefined,
        podsIn: () => opts.podsInNamespace ?? [],
        whitelist: () => opts.whitelist ?? [],
      },
      client: {
        async patch() {
          return {} as any;
        },
        async updateStatus(_t: any, obj: any) {
          statuses.push(obj.status.subsetStatuses.map((s: any) => `${s.name}:${s.replicas}/${s.missingReplicas}`).join(','));
          return obj;
        },
        async delete() {
          return {} as any;
        },
      },
      recorder: { event: () => {} },
      log: { info() {}, debug() {}, warn() {}, error() {} } as any,
      clock: { now: () => NOW } as any,
    });
    return { reconciler, statuses };
  }

  test('replicas from the Scale; pods by controller reference', async () => {
    const { reconciler, statuses } = run({ w: customWs(), pods: [owned('p0', 'a'), owned('p1', 'b')] });
    await reconciler.reconcile('default/ws');
    // 50% of the Scale's 4 replicas: 2 in a, 1 there so 1 missing.
    assert.deepEqual(statuses, ['a:1/1,b:1/-1']);
  });

  test("the whitelist entry's replicasPath wins over the Scale; targetFilter.replicasPathList wins over both", async () => {
    const whitelist = [{ group: 'example.com', version: 'v1', kind: 'Gizmo', replicasPath: 'spec.size', subResources: [] }];
    const a = run({ w: customWs(), pods: [owned('p0', 'a')], whitelist });
    await a.reconciler.reconcile('default/ws');
    // 50% of 5 rounded up: 3.
    assert.deepEqual(a.statuses, ['a:1/2,b:0/-1']);
    const b = run({ w: customWs({ targetFilter: { replicasPathList: ['spec.size', 'spec.size'] } }), pods: [owned('p0', 'a')], whitelist });
    await b.reconciler.reconcile('default/ws');
    assert.deepEqual(b.statuses, ['a:1/4,b:0/-1']);
  });

  test("with no pod naming it as controller, the Scale's selector finds the pods", async () => {
    const loose = pod('free', { subset: 'a' });
    loose.metadata.ownerReferences = [];
    loose.metadata.labels = { app: 'gizmo' };
    const other = pod('other', { subset: 'a' });
    other.metadata.labels = { app: 'other' };
    const { reconciler, statuses } = run({ w: customWs(), pods: [], podsInNamespace: [loose, other], selector: 'app=gizmo' });
    await reconciler.reconcile('default/ws');
    assert.deepEqual(statuses, ['a:1/1,b:0/-1']);
  });

  test('no scale subresource (an Advanced DaemonSet): replicas unknown, the pods it controls count (upstream e2e "job-like custom workload")', async () => {
    let scaleRead = false;
    const target = await readCustomTarget(gizmo as any, undefined);
    assert.deepEqual(target, { object: gizmo, replicas: REPLICAS_UNKNOWN });
    assert.equal(await readCustomTarget(undefined, undefined), undefined, 'no workload yet: nothing, and the status is still written');
    const scaled = await readCustomTarget(gizmo as any, async () => {
      scaleRead = true;
      return { spec: { replicas: 3 }, status: { replicas: 3, selector: 'app=g' } };
    });
    assert.ok(scaleRead);
    assert.deepEqual(scaled, { object: gizmo, replicas: 3, selector: 'app=g' });
    const w = {
      ...customWs(),
      spec: {
        ...customWs().spec,
        subsets: [
          { name: 'a', maxReplicas: 2 },
          { name: 'b', maxReplicas: 5 },
        ],
      },
    };
    const { reconciler, statuses } = run({
      w,
      pods: [owned('p0', 'a'), owned('p1', 'a'), owned('p2', 'b')],
      scaleReplicas: REPLICAS_UNKNOWN,
    });
    await reconciler.reconcile('default/ws');
    assert.deepEqual(statuses, ['a:2/0,b:1/4']);
  });

  test('a Scale of 0 replicas covers no pods', async () => {
    const { reconciler, statuses } = run({ w: customWs(), pods: [owned('p0', 'a')], scaleReplicas: 0 });
    await reconciler.reconcile('default/ws');
    assert.deepEqual(statuses, ['a:0/0,b:0/-1']);
  });
});

describe('WorkloadSpread event handlers: what starts a round (upstream workloadspread_event_handler.go)', () => {
  function handlers() {
    const queued: string[] = [];
    const scale = new ScaleExpectations();
    const h = makeSpreadHandlers({
      queue: { add: (key) => queued.push(key) },
      scale,
      targeting: (ns, group, kind, name) =>
        (group === 'apps.kruise.io' && kind === 'CloneSet' && name === 'cs') ||
        (group === 'apps' && kind === 'Deployment' && name === 'dep')
          ? [`${ns}/ws`]
          : [],
    });
    return { h, queued, scale };
  }
  const withoutSubset = (name: string) => pod(name, { node: 'n-b' });
  const podCases: Array<{ name: string; event: (h: ReturnType<typeof makeSpreadHandlers>['pod']) => unknown; queued: string[] }> = [
    // The e2e "only one subset, zone-a=2": the pods a full subset turned away carry no annotation;
    // a round for them would give them the fake subset's cost (-200) where upstream leaves them be.
    {
      name: "a pod without the annotation, of the spread's CloneSet, created",
      event: (h) => h.onAdd!(withoutSubset('x0'), false),
      queued: [],
    },
    {
      name: 'a pod without the annotation turning ready',
      event: (h) => h.onUpdate!(pod('x0', { ready: false }), withoutSubset('x0')),
      queued: [],
    },
    { name: 'a pod without the annotation, deleted', event: (h) => h.onDelete!(withoutSubset('x0')), queued: [] },
    { name: 'an annotated pod created', event: (h) => h.onAdd!(pod('a0', { subset: 'a' }), false), queued: ['default/ws'] },
    { name: 'an annotated pod deleted', event: (h) => h.onDelete!(pod('a0', { subset: 'a' })), queued: ['default/ws'] },
    {
      name: 'an annotated pod turning ready: nothing a round would change',
      event: (h) => h.onUpdate!(pod('a0', { subset: 'a', ready: false }), pod('a0', { subset: 'a' })),
      queued: [],
    },
    {
      name: 'an annotated pod failing (active → inactive)',
      event: (h) => h.onUpdate!(pod('a0', { subset: 'a' }), pod('a0', { subset: 'a', phase: 'Failed' })),
      queued: ['default/ws'],
    },
    {
      name: 'an annotated pending pod found Unschedulable (Kruise TS: Adaptive rescheduling on time)',
      event: (h) => {
        const pending = pod('a0', { subset: 'a' });
        pending.status = { phase: 'Pending' };
        return h.onUpdate!(pending, pod('a0', { subset: 'a', unschedulable: true }));
      },
      queued: ['default/ws'],
    },
  ];
  for (const c of podCases)
    test(`pod: ${c.name}`, async () => {
      const { h, queued } = handlers();
      await c.event(h.pod);
      assert.deepEqual(queued, c.queued);
    });

  test('pod: a deletion the spread made is observed against its scale expectations', async () => {
    const { h, scale } = handlers();
    scale.expectScale('default/ws', 'delete', 'a0');
    await h.pod.onDelete!(pod('a0', { subset: 'a' }));
    assert.equal(scale.satisfiedExpectations('default/ws').satisfied, true);
  });

  const cs = (replicas: number, status: Record<string, unknown> = {}) => ({
    metadata: { name: 'cs', namespace: 'default' },
    spec: { replicas },
    status: { currentRevision: 'r1', updateRevision: 'r1', ...status },
  });
  const dep = (replicas: number, revision = '1') => ({
    metadata: { name: 'dep', namespace: 'default', annotations: { 'deployment.kubernetes.io/revision': revision } },
    spec: { replicas },
  });
  const rs = (replicas: number) => ({
    metadata: {
      name: 'dep-abc',
      namespace: 'default',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'dep', uid: 'd', controller: true }],
    },
    spec: { replicas },
  });
  const workloadCases: Array<{ name: string; group: string; kind: string; old: any; cur: any; queued: string[]; replicasPath?: string }> = [
    // The same e2e: the CloneSet's status moving while its new pods come up starts no round.
    { name: 'CloneSet status churn', group: 'apps.kruise.io', kind: 'CloneSet', old: cs(6), cur: cs(6, { readyReplicas: 4 }), queued: [] },
    { name: 'CloneSet replicas', group: 'apps.kruise.io', kind: 'CloneSet', old: cs(2), cur: cs(6), queued: ['default/ws'] },
    {
      name: 'CloneSet rollout (updateRevision leaves currentRevision)',
      group: 'apps.kruise.io',
      kind: 'CloneSet',
      old: cs(6),
      cur: cs(6, { updateRevision: 'r2' }),
      queued: ['default/ws'],
    },
    { name: 'Deployment revision', group: 'apps', kind: 'Deployment', old: dep(3), cur: dep(3, '2'), queued: ['default/ws'] },
    {
      name: 'Deployment status churn',
      group: 'apps',
      kind: 'Deployment',
      old: dep(3),
      cur: { ...dep(3), status: { readyReplicas: 1 } },
      queued: [],
    },
    {
      name: "a ReplicaSet's replicas reach its Deployment's spread",
      group: 'apps',
      kind: 'ReplicaSet',
      old: rs(1),
      cur: rs(2),
      queued: ['default/ws'],
    },
    {
      name: "a custom workload's replicasPath",
      group: 'apps.kruise.io',
      kind: 'CloneSet',
      old: { ...cs(1), spec: { size: 1 } },
      cur: { ...cs(1), spec: { size: 3 } },
      replicasPath: 'spec.size',
      queued: ['default/ws'],
    },
  ];
  for (const c of workloadCases)
    test(`workload: ${c.name}`, async () => {
      const { h, queued } = handlers();
      await h.workload(c.group, c.kind, () => c.replicasPath).onUpdate!(c.old, c.cur);
      assert.deepEqual(queued, c.queued);
    });
});
