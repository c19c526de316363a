// UnitedDeployment planner against behaviour spec §9.2 (subset workloads), §9.3 (allocation and
// adaptive scheduling detection, line 617) and §9.1 (status), after upstream's controller tests.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { UnitedDeployment } from '../../../src/apis/apps/uniteddeployment.ts';
import type { ControllerRevision, Pod, Stored } from '../../../src/apis/core-objects.ts';
import { nextPartitions, pendingTimeout, planUnitedDeployment, type PlanInput } from '../../../src/controllers/uniteddeployment/plan.ts';
import {
  desiredSubsetWorkload,
  subsetPrefix,
  workloadPartition,
  type SubsetKind,
  type SubsetWorkload,
} from '../../../src/controllers/uniteddeployment/subset.ts';
import { strategicMergePod } from '../../../src/util/strategicmerge.ts';
import { convert } from '../../../src/apis/conversion/index.ts';

const NOW = Date.parse('2026-07-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

type Spec = NonNullable<UnitedDeployment['spec']>;

function ud(spec: Partial<Spec> = {}, status?: UnitedDeployment['status']): Stored<UnitedDeployment> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'UnitedDeployment',
    metadata: { name: 'web', namespace: 'ns', uid: 'ud-uid', generation: 2 },
    spec: {
      replicas: 10,
      selector: { matchLabels: { app: 'web' } },
      template: {
        cloneSetTemplate: {
          metadata: { labels: { app: 'web' } },
          spec: {
            selector: { matchLabels: { app: 'web' } },
            template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1' }] } },
          },
        },
      },
      topology: {
        subsets: [
          {
            name: 'a',
            minReplicas: 2,
            maxReplicas: 4,
            nodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] },
          },
          { name: 'b', maxReplicas: 3, tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
          { name: 'c', patch: { spec: { containers: [{ name: 'main', env: [{ name: 'SUBSET', value: 'c' }] }] } } },
        ],
      },
      updateStrategy: { type: 'Manual', manualUpdate: {} },
      revisionHistoryLimit: 10,
      ...spec,
    },
    status,
  } as Stored<UnitedDeployment>;
}

/** Runs the planner, then feeds its writes back as the observed state (what the API server would hold). */
function settle(u: Stored<UnitedDeployment>, input: Partial<PlanInput> = {}) {
  const plan = planUnitedDeployment({ ud: u, kind: 'CloneSet', revisions: [], workloads: [], pods: [], now: NOW, ...input });
  const revisions: ControllerRevision[] = [...(input.revisions ?? []), ...(plan.newRevision ? [plan.newRevision] : [])];
  const workloads: SubsetWorkload[] = [
    ...(input.workloads ?? []).map((w) => plan.updates.find((x) => x.metadata.name === w.metadata.name) ?? w),
    ...plan.creates.map((w, i) => ({
      ...w,
      metadata: { ...w.metadata, name: `${w.metadata.generateName}x${i}`, uid: `w${i}`, creationTimestamp: iso(NOW - 1000 * (10 - i)) },
    })),
  ].filter((w) => !plan.deletes.includes(w));
  return { plan, revisions, workloads };
}

const withStatus = (w: SubsetWorkload, replicas: number, ready = replicas): SubsetWorkload => ({
  ...w,
  status: { replicas, readyReplicas: ready },
});

describe('subset workloads (§9.2 lines 608-609)', () => {
  test('one CloneSet per subset: generateName, labels, selector, owner, replicas from the allocator, partition 0', () => {
    const { plan } = settle(ud());
    assert.ok(plan.newRevision, 'the first round records a revision');
    const rev = plan.newRevision!.metadata.name!;
    assert.match(rev, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal(plan.creates.length, 3);
    const byName = Object.fromEntries(plan.creates.map((w) => [w.metadata.labels!['apps.kruise.io/subset-name'], w]));
    assert.deepEqual(
      Object.fromEntries(Object.entries(byName).map(([k, w]) => [k, w.spec!.replicas])),
      { a: 4, b: 3, c: 3 },
      'min/max: a (2..4) 4, b (..3) 3, c the rest',
    );
    const a = byName.a;
    assert.equal(a.apiVersion, 'apps.kruise.io/v1beta1');
    assert.equal(a.kind, 'CloneSet');
    assert.equal(a.metadata.generateName, 'web-a-');
    assert.deepEqual(a.metadata.labels, { app: 'web', 'apps.kruise.io/controller-revision-hash': rev, 'apps.kruise.io/subset-name': 'a' });
    assert.equal(a.metadata.annotations!['apps.kruise.io/subset-patch'], '');
    assert.deepEqual(a.metadata.ownerReferences, [
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'UnitedDeployment',
        name: 'web',
        uid: 'ud-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(a.spec!.selector, { matchLabels: { app: 'web', 'apps.kruise.io/subset-name': 'a' } });
    assert.equal(a.spec!.updateStrategy!.rollingUpdate!.partition, 0);
    assert.deepEqual(a.spec!.template!.metadata!.labels, {
      app: 'web',
      'apps.kruise.io/subset-name': 'a',
      'apps.kruise.io/controller-revision-hash': rev,
    });
    assert.deepEqual(a.spec!.template!.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution, {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }],
    });
    assert.deepEqual(byName.b.spec!.template!.spec!.tolerations, [{ key: 'dedicated', operator: 'Exists' }]);
    assert.deepEqual(byName.c.spec!.template!.spec!.containers, [
      { name: 'main', image: 'nginx:1', env: [{ name: 'SUBSET', value: 'c' }] },
    ]);
    assert.equal(
      byName.c.metadata.annotations!['apps.kruise.io/subset-patch'],
      '{"spec":{"containers":[{"name":"main","env":[{"name":"SUBSET","value":"c"}]}]}}',
    );
  });

  test('node selector term expressions are ANDed into every existing required term', () => {
    const w = desiredSubsetWorkload(
      ud({
        template: {
          cloneSetTemplate: {
            spec: {
              selector: { matchLabels: { app: 'web' } },
              template: {
                metadata: { labels: { app: 'web' } },
                spec: {
                  containers: [{ name: 'main', image: 'x' }],
                  affinity: {
                    nodeAffinity: {
                      requiredDuringSchedulingIgnoredDuringExecution: {
                        nodeSelectorTerms: [
                          { matchExpressions: [{ key: 'k1', operator: 'Exists' }] },
                          { matchExpressions: [{ key: 'k2', operator: 'Exists' }] },
                        ],
                      },
                    },
                  },
                },
              },
            },
          },
        } as Spec['template'],
      }),
      'CloneSet',
      { name: 'a', nodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] } },
      'rev',
      1,
      0,
    );
    const zone = { key: 'zone', operator: 'In', values: ['z1'] };
    assert.deepEqual(w.spec!.template!.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms, [
      { matchExpressions: [{ key: 'k1', operator: 'Exists' }, zone] },
      { matchExpressions: [{ key: 'k2', operator: 'Exists' }, zone] },
    ]);
  });

  test('the partition lives where each of the four kinds keeps it', () => {
    const cases: Array<[SubsetKind, string, (w: SubsetWorkload) => unknown]> = [
      ['CloneSet', 'apps.kruise.io/v1beta1', (w) => w.spec!.updateStrategy!.rollingUpdate!.partition],
      ['AdvancedStatefulSet', 'apps.kruise.io/v1beta1', (w) => w.spec!.updateStrategy!.rollingUpdate!.partition],
      ['StatefulSet', 'apps/v1', (w) => [w.spec!.updateStrategy!.type, w.spec!.updateStrategy!.rollingUpdate!.partition]],
      ['Deployment', 'apps/v1', (w) => w.spec!.updateStrategy],
    ];
    const want: Record<SubsetKind, unknown> = {
      CloneSet: 2,
      AdvancedStatefulSet: 2,
      StatefulSet: ['RollingUpdate', 2],
      Deployment: undefined,
    };
    for (const [kind, apiVersion, read] of cases) {
      const field = {
        CloneSet: 'cloneSetTemplate',
        AdvancedStatefulSet: 'advancedStatefulSetTemplate',
        StatefulSet: 'statefulSetTemplate',
        Deployment: 'deploymentTemplate',
      }[kind];
      const u = ud({
        template: {
          [field]: { spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } } } } },
        } as Spec['template'],
      });
      const w = desiredSubsetWorkload(u, kind, { name: 'a' }, 'rev', 5, 2);
      assert.equal(w.apiVersion, apiVersion, kind);
      assert.deepEqual(read(w), want[kind], kind);
      assert.equal(workloadPartition(kind, w), kind === 'Deployment' ? 0 : 2);
    }
  });

  test('a prefix that is not a valid name falls back to <ud>-', () => {
    assert.equal(subsetPrefix('web', 'a'), 'web-a-');
    assert.equal(subsetPrefix('web', 'A_b'), 'web-');
  });
});

describe('rounds', () => {
  test('settled: nothing to write; status sums the subsets and names the revision', () => {
    const first = settle(ud());
    const rev = first.plan.newRevision!.metadata.name!;
    const workloads = first.workloads.map((w) => withStatus(w, w.spec!.replicas!));
    const pods: Pod[] = workloads.flatMap((w) =>
      Array.from({ length: w.spec!.replicas! }, (_, i) => ({
        metadata: { name: `${w.metadata.name}-${i}`, namespace: 'ns', labels: { ...w.spec!.template!.metadata!.labels } },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      })),
    );
    const plan = planUnitedDeployment({ ud: ud(), kind: 'CloneSet', revisions: first.revisions, workloads, pods, now: NOW });
    assert.equal(plan.newRevision, undefined);
    assert.deepEqual([plan.creates, plan.updates, plan.deletes], [[], [], []]);
    const s = plan.status!;
    assert.equal(s.observedGeneration, 2);
    assert.deepEqual([s.replicas, s.readyReplicas, s.updatedReplicas, s.updatedReadyReplicas], [10, 10, 10, 10]);
    assert.equal(s.currentRevision, rev);
    assert.equal(s.updatedRevision, rev);
    assert.equal(s.labelSelector, 'app=web');
    assert.deepEqual(
      s.subsetStatuses!.map((x) => [x.name, x.replicas, x.readyReplicas, x.partition]),
      [
        ['a', 4, 4, 0],
        ['b', 3, 3, 0],
        ['c', 3, 3, 0],
      ],
    );
    assert.deepEqual(
      s.conditions!.map((c) => [c.type, c.status, c.reason]),
      [
        ['UnitedDeploymentUpdated', 'True', 'UnitedDeploymentRevisionUpdated'],
        ['SubsetProvisioned', 'True', ''],
        ['SubsetUpdated', 'True', ''],
      ],
    );
    // The same round again with that status: nothing changes, nothing is written.
    const again = planUnitedDeployment({ ud: ud({}, s), kind: 'CloneSet', revisions: first.revisions, workloads, pods, now: NOW + 5000 });
    assert.equal(again.status, undefined);
  });

  test("served at v1alpha1 (OpenKruise v1.8.2's API): v1.8.2's status members only, and the status read back from v1alpha1 is settled", () => {
    const first = settle(ud());
    const workloads = first.workloads.map((w) => withStatus(w, w.spec!.replicas!));
    const input = { kind: 'CloneSet' as const, revisions: first.revisions, workloads, pods: [], now: NOW, servedVersion: 'v1alpha1' };
    const s = planUnitedDeployment({ ud: ud(), ...input }).status!;
    assert.deepEqual(
      s.conditions!.map((c) => c.type),
      ['SubsetProvisioned', 'SubsetUpdated'],
    );
    assert.equal(s.reservedPods, undefined);
    assert.deepEqual(
      s.subsetStatuses!.map((x) => [x.name, x.replicas, x.partition, x.readyReplicas, x.reservedPods]),
      [
        ['a', 4, 0, undefined, undefined],
        ['b', 3, 0, undefined, undefined],
        ['c', 3, 0, undefined, undefined],
      ],
    );
    // Through v1alpha1 and back, as the informer sees it: nothing left to write.
    const wire = convert(structuredClone({ ...ud(), status: s }), 'apps.kruise.io/v1alpha1');
    const readBack = convert(wire, 'apps.kruise.io/v1beta1') as Stored<UnitedDeployment>;
    assert.equal(planUnitedDeployment({ ud: readBack, ...input, now: NOW + 5000 }).status, undefined);
  });

  test('template change: a new revision, every subset workload updated to it with its partition; current stays until updated pods are ready', () => {
    const first = settle(ud());
    const oldRev = first.plan.newRevision!.metadata.name!;
    const changed = ud(
      { updateStrategy: { type: 'Manual', manualUpdate: { partitions: { a: 3, b: 9 } } } },
      { currentRevision: oldRev, updatedRevision: oldRev, replicas: 10, updatedReplicas: 10 },
    );
    changed.spec!.template!.cloneSetTemplate!.spec.template.spec!.containers[0].image = 'nginx:2';
    const workloads = first.workloads.map((w) => withStatus(w, w.spec!.replicas!));
    const plan = planUnitedDeployment({ ud: changed, kind: 'CloneSet', revisions: first.revisions, workloads, pods: [], now: NOW });
    const newRev = plan.newRevision!.metadata.name!;
    assert.notEqual(newRev, oldRev);
    assert.equal(plan.newRevision!.revision, 2);
    assert.equal(plan.updates.length, 3);
    for (const w of plan.updates) {
      assert.equal(w.metadata.labels!['apps.kruise.io/controller-revision-hash'], newRev);
      assert.equal(w.spec!.template!.spec!.containers[0].image, 'nginx:2');
      assert.ok(w.metadata.name, 'an update keeps the workload name');
    }
    const part = Object.fromEntries(
      plan.updates.map((w) => [w.metadata.labels!['apps.kruise.io/subset-name'], w.spec!.updateStrategy!.rollingUpdate!.partition]),
    );
    assert.deepEqual(part, { a: 3, b: 3, c: 0 }, 'partitions[subset], capped at the subset replicas (b: 9 → 3)');
    assert.equal(plan.status!.currentRevision, oldRev);
    assert.equal(plan.status!.updatedRevision, newRev);
    const cond = plan.status!.conditions!.find((c) => c.type === 'UnitedDeploymentUpdated')!;
    assert.deepEqual(
      [cond.status, cond.reason, cond.message],
      ['False', 'UnitedDeploymentRevisionUpdating', `updating to revision ${newRev}`],
    );
  });

  test('rollback to an older template reuses its revision with a new number', () => {
    const first = settle(ud());
    const v2 = ud();
    v2.spec!.template!.cloneSetTemplate!.spec.template.spec!.containers[0].image = 'nginx:2';
    const second = planUnitedDeployment({ ud: v2, kind: 'CloneSet', revisions: first.revisions, workloads: [], pods: [], now: NOW });
    const revisions = [...first.revisions, second.newRevision!];
    const back = planUnitedDeployment({ ud: ud(), kind: 'CloneSet', revisions, workloads: [], pods: [], now: NOW });
    assert.equal(back.newRevision, undefined);
    assert.deepEqual(back.revisionUpdate, { name: first.revisions[0].metadata.name, revision: 3 });
    assert.equal(back.updateRevision, first.revisions[0].metadata.name);
  });

  test('duplicate workloads of one subset: the oldest is kept; a subset removed from the spec is deleted', () => {
    const first = settle(ud());
    const dupA = {
      ...first.workloads[0],
      metadata: { ...first.workloads[0].metadata, name: 'web-a-dup', uid: 'dup', creationTimestamp: iso(NOW) },
    };
    const u = ud();
    u.spec!.topology!.subsets = u.spec!.topology!.subsets!.filter((s) => s.name !== 'b');
    const plan = planUnitedDeployment({
      ud: u,
      kind: 'CloneSet',
      revisions: first.revisions,
      workloads: [...first.workloads, dupA],
      pods: [],
      now: NOW,
    });
    assert.deepEqual(plan.deletes.map((w) => w.metadata.name).sort(), ['web-a-dup', 'web-b-x1']);
    assert.deepEqual(
      plan.status!.subsetStatuses!.map((s) => s.name),
      ['a', 'c'],
    );
  });

  test('allocation error is reported, nothing is changed', () => {
    const u = ud({ topology: { subsets: [{ name: 'a', replicas: 20 }, { name: 'b' }] } });
    const plan = planUnitedDeployment({ ud: u, kind: 'CloneSet', revisions: [], workloads: [], pods: [], now: NOW });
    assert.match(plan.allocationError!, /specified subsets' replica \(20\) is greater than UnitedDeployment replica \(10\)/);
    assert.deepEqual([plan.creates, plan.updates, plan.deletes], [[], [], []]);
  });

  test('calcNextPartitions (§9.2 line 609): Manual partitions, default 0, capped at replicas', () => {
    const spec = ud({ updateStrategy: { type: 'Manual', manualUpdate: { partitions: { a: 2, b: 7 } } } }).spec!;
    assert.deepEqual(
      Object.fromEntries(
        nextPartitions(
          spec,
          new Map([
            ['a', 4],
            ['b', 3],
            ['c', 3],
          ]),
        ),
      ),
      { a: 2, b: 3, c: 0 },
    );
  });
});

describe('adaptive scheduling (§9.3 line 617)', () => {
  const adaptive = (status?: UnitedDeploymentStatus) =>
    ud(
      {
        topology: {
          ...ud().spec!.topology!,
          scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 10, unschedulableDuration: 60 } },
        },
      },
      status,
    );
  type UnitedDeploymentStatus = NonNullable<UnitedDeployment['status']>;

  const pendingPod = (w: SubsetWorkload, i: number, createdAgoMs: number, unschedulable = true): Pod => ({
    metadata: {
      name: `${w.metadata.name}-p${i}`,
      namespace: 'ns',
      labels: { ...w.spec!.template!.metadata!.labels },
      creationTimestamp: iso(NOW - createdAgoMs),
    },
    spec: { containers: [] },
    status: { phase: 'Pending', conditions: unschedulable ? [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] : [] },
  });

  test('pendingTimeout: only unschedulable pending pods without a node, after rescheduleCriticalSeconds from creation', () => {
    const w = settle(ud()).workloads[0];
    assert.deepEqual(pendingTimeout(pendingPod(w, 0, 11_000), 10_000, NOW), { timedOut: true });
    assert.deepEqual(pendingTimeout(pendingPod(w, 0, 4_000), 10_000, NOW), { timedOut: false, checkAfter: 6_000 });
    assert.deepEqual(pendingTimeout(pendingPod(w, 0, 60_000, false), 10_000, NOW), { timedOut: false });
  });

  test("v1.8.2's unschedulableLastSeconds is read when unschedulableDuration is unset (drop-in); unschedulableDuration wins", () => {
    const requeueWith = (adaptiveFields: Record<string, number>) => {
      const u = (status?: UnitedDeploymentStatus) =>
        ud(
          {
            topology: {
              ...ud().spec!.topology!,
              scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 10, ...adaptiveFields } },
            },
          },
          status,
        );
      const first = settle(u());
      const st = planUnitedDeployment({
        ud: u(),
        kind: 'CloneSet',
        revisions: first.revisions,
        workloads: first.workloads,
        pods: [],
        now: NOW,
      }).status!;
      const b = first.workloads.find((w) => w.metadata.labels!['apps.kruise.io/subset-name'] === 'b')!;
      const workloads = first.workloads.map((w) => (w === b ? withStatus(w, 3, 0) : withStatus(w, w.spec!.replicas!)));
      const pods = [0, 1, 2].map((i) => pendingPod(b, i, 11_000));
      return planUnitedDeployment({ ud: u(st), kind: 'CloneSet', revisions: first.revisions, workloads, pods, now: NOW }).requeueAfterMs;
    };
    assert.equal(requeueWith({ unschedulableLastSeconds: 45 }), 45_000);
    assert.equal(requeueWith({ unschedulableLastSeconds: 45, unschedulableDuration: 60 }), 60_000);
    assert.equal(requeueWith({}), 300_000);
  });

  test('timed-out pending pods mark the subset Schedulable=False and move its replicas; it is retried after unschedulableDuration', () => {
    const first = settle(adaptive());
    const st = planUnitedDeployment({
      ud: adaptive(),
      kind: 'CloneSet',
      revisions: first.revisions,
      workloads: first.workloads,
      pods: [],
      now: NOW,
    }).status!;
    const b = first.workloads.find((w) => w.metadata.labels!['apps.kruise.io/subset-name'] === 'b')!;
    const workloads = first.workloads.map((w) => (w === b ? withStatus(w, 3, 0) : withStatus(w, w.spec!.replicas!)));
    const pods = [0, 1, 2].map((i) => pendingPod(b, i, 11_000));
    const plan = planUnitedDeployment({ ud: adaptive(st), kind: 'CloneSet', revisions: first.revisions, workloads, pods, now: NOW });
    const replicas = Object.fromEntries(plan.updates.map((w) => [w.metadata.labels!['apps.kruise.io/subset-name'], w.spec!.replicas]));
    assert.deepEqual(replicas, { b: 0, c: 6 }, 'b keeps its 0 ready pods; c takes the 3');
    const cond = plan.status!.subsetStatuses!.find((s) => s.name === 'b')!.conditions![0];
    assert.deepEqual(
      [cond.type, cond.status, cond.reason, cond.message, cond.lastTransitionTime],
      ['Schedulable', 'False', 'reschedule', 'timeout pending pods found', iso(NOW)],
    );
    assert.equal(plan.requeueAfterMs, 60_000);

    // Within unschedulableDuration the subset stays unschedulable even without pending pods.
    const later = planUnitedDeployment({
      ud: adaptive(plan.status),
      kind: 'CloneSet',
      revisions: first.revisions,
      workloads: workloads.map((w) => (w === b ? { ...withStatus(w, 0, 0), spec: { ...w.spec, replicas: 0 } } : w)),
      pods: [],
      now: NOW + 30_000,
    });
    assert.equal(later.requeueAfterMs, 30_000, 'looks again when the subset recovers');
    assert.equal(later.status?.subsetStatuses?.find((s) => s.name === 'b')?.conditions?.[0].status ?? 'False', 'False');

    // After it, the subset recovers (Schedulable=True, reason recover) and is allocated again.
    const recovered = planUnitedDeployment({
      ud: adaptive(plan.status),
      kind: 'CloneSet',
      revisions: first.revisions,
      workloads: workloads.map((w) => (w === b ? { ...withStatus(w, 0, 0), spec: { ...w.spec, replicas: 0 } } : w)),
      pods: [],
      now: NOW + 61_000,
    });
    const rc = recovered.status!.subsetStatuses!.find((s) => s.name === 'b')!.conditions![0];
    assert.deepEqual([rc.status, rc.reason, rc.message], ['True', 'recover', 'unschedulable subset recovered after 60.000000 seconds']);
  });

  test('pods pending for less than rescheduleCriticalSeconds: look again when they would time out', () => {
    const first = settle(adaptive());
    const b = first.workloads.find((w) => w.metadata.labels!['apps.kruise.io/subset-name'] === 'b')!;
    const workloads = first.workloads.map((w) => (w === b ? withStatus(w, 3, 0) : withStatus(w, w.spec!.replicas!)));
    const plan = planUnitedDeployment({
      ud: adaptive(),
      kind: 'CloneSet',
      revisions: first.revisions,
      workloads,
      pods: [pendingPod(b, 0, 4_000)],
      now: NOW,
    });
    assert.deepEqual(plan.updates, []);
    assert.equal(plan.requeueAfterMs, 6_000);
    // Exactly at the deadline (reached, not past): looked at in 1 ms, not dropped.
    const due = planUnitedDeployment({
      ud: adaptive(),
      kind: 'CloneSet',
      revisions: first.revisions,
      workloads,
      pods: [pendingPod(b, 0, 10_000)],
      now: NOW,
    });
    assert.deepEqual(due.updates, []);
    assert.equal(due.requeueAfterMs, 1);
  });

  test('a placed pod keeps its subset\'s replica, ready or not; only pods pending past rescheduleCriticalSeconds move (v1.8.2 e2e "adaptive united deployment with elastic allocator")', () => {
    // The e2e's topology: subset-0 and subset-1 at most 2, subset-2 unbounded; 3 replicas after a scale-down.
    const e2e = ud({
      replicas: 3,
      topology: {
        subsets: [{ name: 's0', maxReplicas: 2 }, { name: 's1', maxReplicas: 2 }, { name: 's2' }],
        scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 10, unschedulableDuration: 60 } },
      },
    });
    const first = settle(e2e);
    const subset = (w: SubsetWorkload) => w.metadata.labels!['apps.kruise.io/subset-name'];
    const running = { s0: 2, s1: 1, s2: 1 } as Record<string, number>;
    const ready = { s0: 2, s1: 0, s2: 1 } as Record<string, number>;
    const workloads = first.workloads.map((w) => ({
      ...withStatus(w, running[subset(w)]!, ready[subset(w)]!),
      spec: { ...w.spec, replicas: running[subset(w)] },
    }));
    const s1 = workloads.find((w) => subset(w) === 's1')!;
    const next = (pendingForMs: number) => {
      const plan = planUnitedDeployment({
        ud: e2e,
        kind: 'CloneSet',
        revisions: first.revisions,
        workloads,
        pods: [pendingPod(s1, 0, pendingForMs)],
        now: NOW,
      });
      const out = Object.fromEntries(workloads.map((w) => [subset(w), w.spec!.replicas]));
      for (const w of plan.updates) out[subset(w)] = w.spec!.replicas!;
      return out;
    };
    // subset-1's pod is not ready but not yet timed out: it runs there, so subset-2 gives up its replica.
    assert.deepEqual(next(4_000), { s0: 2, s1: 1, s2: 0 });
    // Timed out: subset-1 runs nothing and becomes unschedulable; its replica moves to subset-2.
    assert.deepEqual(next(11_000), { s0: 2, s1: 0, s2: 1 });
  });

  test('reservation: timed-out pending pods are labelled reserved, temporary replicas go elsewhere, status selector excludes reserved pods', () => {
    const reserve = (status?: UnitedDeploymentStatus) =>
      ud(
        {
          topology: {
            ...ud().spec!.topology!,
            scheduleStrategy: {
              type: 'Adaptive',
              adaptive: { rescheduleCriticalSeconds: 10, unschedulableDuration: 60, reserveUnschedulablePods: true },
            },
          },
        },
        status,
      );
    const first = settle(reserve());
    const b = first.workloads.find((w) => w.metadata.labels!['apps.kruise.io/subset-name'] === 'b')!;
    const workloads = first.workloads.map((w) => (w === b ? withStatus(w, 3, 0) : withStatus(w, w.spec!.replicas!)));
    const pods = [0, 1, 2].map((i) => pendingPod(b, i, 11_000));
    const plan = planUnitedDeployment({ ud: reserve(), kind: 'CloneSet', revisions: first.revisions, workloads, pods, now: NOW });
    assert.deepEqual(
      plan.reservedLabels,
      pods.map((p) => ({ pod: p.metadata.name, value: 'true' })),
    );
    const replicas = Object.fromEntries(plan.updates.map((w) => [w.metadata.labels!['apps.kruise.io/subset-name'], w.spec!.replicas]));
    assert.deepEqual(replicas, { c: 6 }, 'b keeps its 3 reserved pods; c gets 3 temporary ones');
    assert.equal(plan.status!.reservedPods, 3);
    assert.equal(plan.status!.labelSelector, 'app=web,apps.kruise.io/united-deployment-reserved-pod=false');
  });
});

describe('strategic merge patch of a pod template', () => {
  test('maps merge, named lists merge by key, other lists replace, null deletes, $patch directives', () => {
    const template = {
      metadata: { labels: { app: 'web', tier: 'x' } },
      spec: {
        containers: [
          { name: 'main', image: 'a', args: ['1', '2'], env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80, name: 'http' }] },
          { name: 'side', image: 's' },
        ],
        tolerations: [{ key: 't1', operator: 'Exists' }],
      },
    };
    const patched = strategicMergePod(template, {
      metadata: { labels: { tier: null, zone: 'z' } },
      spec: {
        containers: [
          { name: 'main', args: ['3'], env: [{ name: 'B', value: '2' }], ports: [{ containerPort: 80, name: 'web' }] },
          { name: 'side', $patch: 'delete' },
          { name: 'new', image: 'n' },
        ],
        tolerations: [{ key: 't2', operator: 'Exists' }],
        securityContext: { runAsUser: 1, $patch: 'replace' },
      },
    });
    assert.deepEqual(patched, {
      metadata: { labels: { app: 'web', zone: 'z' } },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'a',
            args: ['3'],
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 80, name: 'web' }],
          },
          { name: 'new', image: 'n' },
        ],
        tolerations: [{ key: 't2', operator: 'Exists' }],
        securityContext: { runAsUser: 1 },
      },
    });
  });
});
