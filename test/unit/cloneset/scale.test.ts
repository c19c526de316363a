import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  availableInstanceIds,
  choosePodsToDelete,
  planScale,
  randomInstanceId,
  sortPodsForDeletion,
  type ScaleInput,
} from '../../../src/controllers/cloneset/scale.ts';
import { slowStartBatches } from '../../../src/controllers/workload-writes.ts';
import type { PersistentVolumeClaim } from '../../../src/apis/core.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { cloneSet, gates, NOW, pod, template, type CloneSetSpec, type PodOpts } from './fixtures.ts';

const OLD = 'cs-old';
const NEW = 'cs-new';

function ids(...list: string[]): () => string {
  const queue = [...list];
  return () => queue.shift() ?? 'zzzzz';
}

function input(spec: Partial<CloneSetSpec>, pods: Pod[], extra: Partial<ScaleInput> = {}): ScaleInput {
  return {
    cloneSet: cloneSet(spec),
    currentRevision: { name: OLD, template: template('nginx:1.0') },
    updateRevision: { name: NEW, template: template('nginx:2.0') },
    pods,
    pvcs: [],
    nowMs: NOW,
    features: gates(),
    randomId: ids('aaaaa', 'bbbbb', 'ccccc', 'ddddd'),
    ...extra,
  };
}

const names = (list: Array<{ pod: string } | Pod>) =>
  list.map((x) => ('pod' in x && typeof x.pod === 'string' ? x.pod : (x as Pod).metadata.name));
const P = (name: string, o: PodOpts = {}) => pod(name, { revision: NEW, ...o });

describe('slowStartBatches', () => {
  const cases: Array<[number, number[]]> = [
    [0, []],
    [1, [1]],
    [3, [1, 2]],
    [10, [1, 2, 4, 3]],
  ];
  for (const [n, want] of cases) it(`${n} → ${JSON.stringify(want)}`, () => assert.deepEqual(slowStartBatches(n), want));
});

describe('availableInstanceIds', () => {
  const pvc = (name: string, id: string): PersistentVolumeClaim => ({
    metadata: { name, labels: { 'apps.kruise.io/cloneset-instance-id': id } },
  });
  it('reuses ids of PVCs without pods before generating, skipping collisions', () => {
    const got = availableInstanceIds(
      3,
      [P('cs-xxxxx')],
      [pvc('data-cs-xxxxx', 'xxxxx'), pvc('data-cs-free1', 'free1')],
      ids('xxxxx', 'free1', 'new01', 'new02'),
    );
    assert.deepEqual(got, ['free1', 'new01', 'new02']);
  });
});

describe('planScale: creations', () => {
  it('scale up creates pods with instance ids, revision labels, readiness gate and PreparingNormal', () => {
    const plan = planScale(input({ replicas: 2 }, []));
    assert.deepEqual(
      plan.createPods.map((c) => c.pod.metadata.name),
      ['cs-aaaaa', 'cs-bbbbb'],
    );
    const p = plan.createPods[0].pod;
    assert.equal(p.metadata.labels!['controller-revision-hash'], NEW);
    assert.equal(p.metadata.labels!['pod-template-hash'], 'new');
    assert.equal(p.metadata.labels!['apps.kruise.io/cloneset-instance-id'], 'aaaaa');
    assert.equal(p.metadata.labels!['lifecycle.apps.kruise.io/state'], 'PreparingNormal');
    assert.deepEqual(p.spec!.readinessGates, [{ conditionType: 'InPlaceUpdateReady' }]);
    assert.equal(p.spec!.containers[0].image, 'nginx:2.0');
    assert.equal(p.metadata.ownerReferences![0].controller, true);
    assert.ok(plan.modified);
  });

  it('CloneSetShortHash writes only the hash', () => {
    const plan = planScale(input({ replicas: 1 }, [], { features: gates({ CloneSetShortHash: true }) }));
    assert.equal(plan.createPods[0].pod.metadata.labels!['controller-revision-hash'], 'new');
  });

  it('creates current-revision pods for the partition first', () => {
    const plan = planScale(input({ replicas: 3, updateStrategy: { rollingUpdate: { partition: 2 } } }, []));
    assert.deepEqual(
      plan.createPods.map((c) => c.revision),
      [OLD, OLD, NEW],
    );
    assert.equal(plan.createPods[0].pod.spec!.containers[0].image, 'nginx:1.0');
  });

  it('volumeClaimTemplates give each pod its PVCs and volumes; existing PVC names are not re-created', () => {
    const vct = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } };
    const free: PersistentVolumeClaim = { metadata: { name: 'data-cs-reuse', labels: { 'apps.kruise.io/cloneset-instance-id': 'reuse' } } };
    const plan = planScale(input({ replicas: 2, volumeClaimTemplates: [vct] }, [], { pvcs: [free] }));
    assert.deepEqual(
      plan.createPods.map((c) => c.pod.metadata.name),
      ['cs-aaaaa', 'cs-reuse'],
    );
    assert.deepEqual(
      plan.createPods.map((c) => c.pvcs.map((x) => x.metadata!.name)),
      [['data-cs-aaaaa'], []],
    );
    assert.deepEqual(plan.createPods[1].pod.spec!.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-cs-reuse' } }]);
    assert.equal(plan.createPods[0].pvcs[0].metadata!.labels!['apps.kruise.io/cloneset-instance-id'], 'aaaaa');
    assert.equal(plan.createPods[0].pvcs[0].metadata!.labels!.app, 'demo');
  });

  it('scaleStrategy.maxUnavailable limits creations and reports ScaleUpLimited', () => {
    const plan = planScale(input({ replicas: 5, scaleStrategy: { maxUnavailable: 2 } }, [P('cs-p0'), P('cs-p1', { ready: false })]));
    assert.equal(plan.createPods.length, 1);
    assert.equal(plan.scaleUpLimited, 'scaleUp is limited because of scaleStrategy.maxUnavailable, limit: 1');
  });
});

describe('planScale: deletions', () => {
  it('scale down deletes the least valuable pods, with their PVCs', () => {
    const pvcs: PersistentVolumeClaim[] = [{ metadata: { name: 'data-cs-p1', labels: { 'apps.kruise.io/cloneset-instance-id': 'p1' } } }];
    const plan = planScale(input({ replicas: 2 }, [P('cs-p0'), P('cs-p1', { ready: false }), P('cs-p2')], { pvcs }));
    assert.deepEqual(
      plan.deletePods.map(({ pod, pvcs }) => ({ pod, pvcs })),
      [{ pod: 'cs-p1', pvcs: ['data-cs-p1'] }],
    );
  });

  it('pod-deletion-cost -100 is deleted before 0', () => {
    const cost = (v: string) => ({ 'controller.kubernetes.io/pod-deletion-cost': v });
    const pods = [P('cs-p0', { annotations: cost('0') }), P('cs-p1', { annotations: cost('-100') }), P('cs-p2')];
    assert.deepEqual(names(planScale(input({ replicas: 2 }, pods)).deletePods), ['cs-p1']);
  });

  it('scale down waits while specified deletions are pending', () => {
    const plan = planScale(input({ replicas: 1, scaleStrategy: { podsToDelete: ['cs-p0'] } }, [P('cs-p0'), P('cs-p1'), P('cs-p2')]));
    assert.deepEqual(names(plan.deletePods), ['cs-p0']);
  });

  it('preDelete hook moves the pod to PreparingDelete and holds readiness', () => {
    const hook = { labelsHandler: { hold: 'true' }, markPodNotReady: true };
    const p = P('cs-p0', { labels: { hold: 'true' } });
    p.spec!.readinessGates!.push({ conditionType: 'KruisePodReady' });
    const plan = planScale(input({ replicas: 1, lifecycle: { preDelete: hook } }, [p, P('cs-p1', { ready: false })]));
    assert.deepEqual(
      plan.deletePods.map((d) => d.pod),
      ['cs-p1'],
    );
    const plan2 = planScale(
      input({ replicas: 1, scaleStrategy: { podsToDelete: ['cs-p0'] }, lifecycle: { preDelete: hook } }, [p, P('cs-p1')]),
    );
    assert.deepEqual(plan2.deletePods, []);
    assert.equal(plan2.lifecycleTransitions[0].to, 'PreparingDelete');
    assert.equal(plan2.lifecycleTransitions[0].readinessCondition?.status, 'False');
  });

  it('a PreparingDelete pod whose hook was released is deleted', () => {
    const hook = { labelsHandler: { hold: 'true' } };
    const plan = planScale(input({ replicas: 1, lifecycle: { preDelete: hook } }, [P('cs-p0', { state: 'PreparingDelete' }), P('cs-p1')]));
    assert.deepEqual(names(plan.deletePods), ['cs-p0']);
  });

  it('replicas growing again brings a PreparingDelete pod back to PreparingNormal', () => {
    const hook = { labelsHandler: { hold: 'true' } };
    const plan = planScale(
      input({ replicas: 2, lifecycle: { preDelete: hook } }, [
        P('cs-p0', { state: 'PreparingDelete', labels: { hold: 'true' } }),
        P('cs-p1'),
      ]),
    );
    assert.deepEqual(
      plan.lifecycleTransitions.map((t) => [t.pod, t.to]),
      [['cs-p0', 'PreparingNormal']],
    );
    assert.equal(plan.createPods.length, 0);
  });
});

describe('planScale: specified deletion with maxSurge / maxUnavailable', () => {
  const spec = (maxUnavailable: number, toDelete: string) => ({
    replicas: 3,
    scaleStrategy: { podsToDelete: [toDelete] },
    updateStrategy: { rollingUpdate: { maxUnavailable, maxSurge: 1 } },
  });
  const a = () => P('cs-a', { ready: false });

  it('maxUnavailable 2 / maxSurge 1: pod-b is deleted at once, then a replacement is created', () => {
    const round1 = planScale(input(spec(2, 'cs-b'), [a(), P('cs-b'), P('cs-c')]));
    assert.deepEqual(names(round1.deletePods), ['cs-b']);
    assert.equal(round1.createPods.length, 0);
    const round2 = planScale(input(spec(2, 'cs-b'), [a(), P('cs-c')]));
    assert.equal(round2.createPods.length, 1);
    assert.deepEqual(round2.deletePods, []);
  });

  it('maxUnavailable 1 / maxSurge 1: the replacement comes first, pod-b goes once it is ready', () => {
    const round1 = planScale(input(spec(1, 'cs-b'), [a(), P('cs-b'), P('cs-c')]));
    assert.equal(round1.createPods.length, 1);
    assert.deepEqual(round1.deletePods, []);
    const round2 = planScale(input(spec(1, 'cs-b'), [a(), P('cs-b'), P('cs-c'), P('cs-d', { ready: false })]));
    assert.equal(round2.createPods.length, 0);
    assert.deepEqual(round2.deletePods, []);
    assert.equal(round2.modified, false);
    const round3 = planScale(input(spec(1, 'cs-b'), [a(), P('cs-b'), P('cs-c'), P('cs-d')]));
    assert.deepEqual(names(round3.deletePods), ['cs-b']);
  });

  it('deleting the unavailable pod-a itself happens at once', () => {
    const plan = planScale(input(spec(1, 'cs-a'), [a(), P('cs-b'), P('cs-c')]));
    assert.deepEqual(names(plan.deletePods), ['cs-a']);
    assert.equal(plan.createPods.length, 0);
  });
});

describe('deletion order', () => {
  const cs = cloneSet();
  const cases: Array<{ name: string; pods: Pod[]; want: string[] }> = [
    { name: 'unassigned first', pods: [P('a'), P('b', { node: '' })], want: ['b', 'a'] },
    { name: 'pending before running', pods: [P('a'), P('b', { phase: 'Pending' })], want: ['b', 'a'] },
    { name: 'unavailable (lifecycle) before available', pods: [P('a'), P('b', { state: 'PreparingUpdate' })], want: ['b', 'a'] },
    { name: 'not ready before ready', pods: [P('a'), P('b', { ready: false })], want: ['b', 'a'] },
    {
      name: 'lower deletion cost first',
      pods: [
        P('a', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '0' } }),
        P('b', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } }),
      ],
      want: ['b', 'a'],
    },
    {
      name: 'crowded node first (same-node rank)',
      pods: [P('a', { node: 'n1' }), P('b', { node: 'n2' }), P('c', { node: 'n2', created: '2026-07-01T11:00:00Z' })],
      want: ['c', 'a', 'b'],
    },
    { name: 'ready more recently first', pods: [P('a'), P('b', { readySince: '2026-07-01T11:00:00Z' })], want: ['b', 'a'] },
    { name: 'newer first', pods: [P('a'), P('b', { created: '2026-07-01T11:00:00Z' })], want: ['b', 'a'] },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(names(sortPodsForDeletion(cs, c.pods, NOW)), c.want));

  it('choosePodsToDelete takes old revision pods first as asked', () => {
    const old = [P('o1', { revision: OLD }), P('o2', { revision: OLD, ready: false })];
    const upd = [P('n1'), P('n2', { ready: false })];
    const chosen = (...args: [number, number]) => choosePodsToDelete(cs, ...args, old, upd, NOW).map((c) => c.pod);
    assert.deepEqual(names(chosen(2, 1)), ['o2', 'n2']);
    assert.deepEqual(names(chosen(1, 2)), ['o2']);
    assert.deepEqual(names(chosen(1, 0)), ['n2']);
  });

  it('choosePodsToDelete names the deletion-order rule that put each pod first', () => {
    const pods = [P('a'), P('b', { ready: false }), P('c', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } })];
    const reasons = (n: number) => choosePodsToDelete(cs, n, 0, [], pods, NOW).map((c) => `${c.pod.metadata.name}: ${c.reason}`);
    assert.deepEqual(reasons(2), [
      'b: scale in: update revision, not available than a',
      'c: scale in: update revision, lower pod-deletion-cost than a',
    ]);
    assert.equal(reasons(3).length, 3);
    assert.match(reasons(3)[0], /every one goes/);
  });
});

// Upstream's TestScale, TestDeletePods and TestGetOrGenAvailableIDs (kruise v1.8.2,
// cloneset_scale_test.go): five pods ready for 10 s, at the one revision there is.

describe('planScale: upstream cases', () => {
  const REV = 'sample-b976d4544';
  const samplePods = (n: number, edit: (p: Pod, i: number) => void = () => undefined): Pod[] =>
    Array.from({ length: n }, (_, i) => {
      const p = {
        metadata: { name: `sample-${i}`, labels: { 'controller-revision-hash': REV } },
        spec: { containers: [{ name: 'main', image: 'sample:v1' }] },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(NOW - 10_000).toISOString() }],
        },
      } as Pod;
      edit(p, i);
      return p;
    });
  const sample = (spec: Partial<CloneSetSpec>, pods: Pod[]): ScaleInput =>
    input({ replicas: 3, updateStrategy: { rollingUpdate: { maxUnavailable: '20%' } }, ...spec }, pods, {
      currentRevision: { name: REV, template: template('sample:v1') },
      updateRevision: { name: REV, template: template('sample:v1') },
    });
  const cases: Array<{ name: string; spec?: Partial<CloneSetSpec>; pods: Pod[]; deleted: number; modified: boolean }> = [
    {
      name: 'replicas=3, maxUnavailable=20%, minReadySeconds=9999, pods=5: scale 5 → 3 deletes nothing yet',
      spec: { minReadySeconds: 9999 },
      pods: samplePods(5),
      deleted: 0,
      modified: false,
    },
    {
      name: 'replicas=3, maxUnavailable=20%, minReadySeconds=0, specified delete pod-0, pods=5: only pod-0 goes this round',
      pods: samplePods(5, (p, i) => {
        if (i === 0) p.metadata.labels!['apps.kruise.io/specified-delete'] = 'true';
      }),
      deleted: 1,
      modified: true,
    },
    { name: 'replicas=3, maxUnavailable=20%, minReadySeconds=0, pods=5: scale 5 → 3', pods: samplePods(5), deleted: 2, modified: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planScale(sample(c.spec ?? {}, c.pods));
      assert.equal(plan.deletePods.length, c.deleted);
      assert.equal(plan.modified, c.modified);
      assert.equal(plan.createPods.length, 0);
    });
  }

  it('deleted pods take their PVCs (same instance id) and only theirs', () => {
    const id = (p: { metadata?: { labels?: Record<string, string> } }, v: string) =>
      (p.metadata!.labels!['apps.kruise.io/cloneset-instance-id'] = v);
    const pods = samplePods(2, (p, i) => id(p, ['id1', 'id3'][i]));
    const pvcs: PersistentVolumeClaim[] = ['id1', 'id2', 'id3'].map((v) => ({
      metadata: { name: `datadir-foo-${v}`, labels: { 'apps.kruise.io/cloneset-instance-id': v } },
    }));
    const plan = planScale({ ...sample({ replicas: 0 }, pods), pvcs });
    assert.deepEqual(plan.deletePods.map((d) => d.pvcs).sort(), [['datadir-foo-id1'], ['datadir-foo-id3']]);
  });

  it('availableInstanceIds: a PVC without its pod lends its id, the rest are random 5-character ids', () => {
    const withId = (v: string) => ({ metadata: { name: v, labels: { 'apps.kruise.io/cloneset-instance-id': v } } });
    const got = availableInstanceIds(2, [withId('a'), withId('b')] as Pod[], [withId('b'), withId('c')], randomInstanceId);
    assert.equal(got.length, 2);
    assert.ok(got.includes('c'));
    assert.equal(got.find((v) => v !== 'c')?.length, 5);
  });
});
