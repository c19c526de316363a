import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chooseRevisions, cleanupPVCs, planCloneSet, revisionsToTruncate } from '../../../src/controllers/cloneset/plan.ts';
import { cloneSet, gates, NOW, pod, revisionOf, template } from './fixtures.ts';

function idQueue(...ids: string[]) {
  const q = [...ids];
  return () => q.shift() ?? 'zzzzz';
}

describe('chooseRevisions', () => {
  it('creates the first revision', () => {
    const c = chooseRevisions(cloneSet(), []);
    assert.ok(c.newRevision);
    assert.equal(c.newRevision!.revision, 1);
    assert.equal(c.current, c.update);
  });
  it('reuses the latest equal revision', () => {
    const cs = cloneSet();
    const r1 = revisionOf(cs, 1);
    const c = chooseRevisions(
      cloneSet(
        {},
        {
          replicas: 0,
          readyReplicas: 0,
          availableReplicas: 0,
          updatedReplicas: 0,
          updatedReadyReplicas: 0,
          currentRevision: r1.metadata.name,
        },
      ),
      [r1],
    );
    assert.equal(c.newRevision, undefined);
    assert.equal(c.update.metadata.name, r1.metadata.name);
  });
  it('an older equal revision is bumped (rollback)', () => {
    const r1 = revisionOf(cloneSet(), 1);
    const r2 = revisionOf(cloneSet({ template: template('nginx:2.0') }), 2);
    const c = chooseRevisions(cloneSet(), [r1, r2]);
    assert.deepEqual(c.revisionUpdate && [c.revisionUpdate.name, c.revisionUpdate.revision], [r1.metadata.name, 3]);
    assert.equal(c.update.revision, 3);
  });
  it('a name collision bumps collisionCount', () => {
    const cs = cloneSet();
    const clash = { ...revisionOf(cs, 1), data: { spec: { template: { other: true } } } };
    const c = chooseRevisions(cs, [clash]);
    assert.equal(c.collisionCount, 1);
    assert.notEqual(c.newRevision!.metadata.name, clash.metadata.name);
  });
});

describe('cleanupPVCs', () => {
  it('keeps active, re-owns inactive, deletes orphans', () => {
    const pvc = (id: string) => ({ metadata: { name: `data-cs-${id}`, labels: { 'apps.kruise.io/cloneset-instance-id': id } } });
    const r = cleanupPVCs([pod('cs-a')], [pod('cs-b', { phase: 'Failed' })], [pvc('a'), pvc('b'), pvc('c')]);
    assert.deepEqual(
      r.kept.map((p) => p.metadata?.name),
      ['data-cs-a'],
    );
    assert.deepEqual(r.reown, [{ pvc: 'data-cs-b', pod: 'cs-b' }]);
    assert.deepEqual(r.deletes, ['data-cs-c']);
  });
});

describe('revisionsToTruncate', () => {
  it('drops the oldest unused revisions beyond the limit', () => {
    const revs = [1, 2, 3, 4].map((n) => ({ ...revisionOf(cloneSet({ template: template(`nginx:${n}`) }), n) }));
    const names = revs.map((r) => r.metadata.name!);
    const got = revisionsToTruncate(cloneSet({ revisionHistoryLimit: 1 }), [pod('a', { revision: names[1] })], revs, names[3], names[3]);
    assert.deepEqual(got, [names[0]]);
  });
});

describe('planCloneSet', () => {
  it('new CloneSet: creates the revision and the pods', () => {
    const plan = planCloneSet({
      cloneSet: cloneSet({ replicas: 2 }),
      revisions: [],
      pods: [],
      pvcs: [],
      now: NOW,
      features: gates(),
      randomId: idQueue('aaaaa', 'bbbbb'),
    });
    assert.ok(plan.newRevision);
    assert.deepEqual(
      plan.createPods.map((c) => c.pod.metadata.name),
      ['cs-aaaaa', 'cs-bbbbb'],
    );
    assert.equal(plan.createPods[0].pod.metadata.labels!['controller-revision-hash'], plan.newRevision!.metadata.name);
    assert.equal(plan.status.replicas, 0);
    assert.equal(plan.status.updateRevision, plan.newRevision!.metadata.name);
    assert.equal(plan.status.expectedUpdatedReplicas, 2);
    assert.ok(plan.statusChanged);
  });

  it('scale changes skip the update phase', () => {
    const r1 = revisionOf(cloneSet(), 1);
    const cs = cloneSet(
      { replicas: 3, template: template('nginx:2.0'), updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } },
      {
        replicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        updatedReplicas: 2,
        updatedReadyReplicas: 2,
        currentRevision: r1.metadata.name,
      },
    );
    const pods = [
      pod('cs-a', { revision: r1.metadata.name, state: 'Normal' }),
      pod('cs-b', { revision: r1.metadata.name, state: 'Normal' }),
    ];
    const plan = planCloneSet({ cloneSet: cs, revisions: [r1], pods, pvcs: [], now: NOW, features: gates(), randomId: idQueue('ccccc') });
    assert.equal(plan.createPods.length, 1);
    assert.equal(plan.inPlaceUpdates.length, 0);

    const cs3 = { ...cs, spec: { ...cs.spec!, replicas: 2 } };
    const plan2 = planCloneSet({ cloneSet: cs3, revisions: [r1, plan.newRevision!], pods, pvcs: [], now: NOW, features: gates() });
    assert.equal(plan2.createPods.length, 0);
    assert.equal(plan2.inPlaceUpdates.length, 1);
    assert.equal(plan2.inPlaceUpdates[0].updatedPod.spec!.containers[0].image, 'nginx:2.0');
  });

  it('truncates podsToDelete to existing pods; ignores terminating pods', () => {
    const r1 = revisionOf(cloneSet(), 1);
    const gone = pod('cs-x', { revision: r1.metadata.name });
    gone.metadata.deletionTimestamp = '2026-07-01T11:00:00Z';
    const cs = cloneSet({ replicas: 1, scaleStrategy: { podsToDelete: ['cs-a', 'cs-x'] } });
    const plan = planCloneSet({
      cloneSet: cs,
      revisions: [r1],
      pods: [pod('cs-a', { revision: r1.metadata.name }), gone],
      pvcs: [],
      now: NOW,
      features: gates(),
      randomId: idQueue('ddddd'),
    });
    assert.deepEqual(plan.podsToDelete, ['cs-a']);
    assert.deepEqual(
      plan.deletePods.map((d) => d.pod),
      ['cs-a'],
    );
  });
});

describe('planCloneSet: pods that tie on every ordering rule go by name, whatever order they come in', () => {
  const r1 = revisionOf(cloneSet(), 1);
  const names = ['cs-f', 'cs-b', 'cs-e', 'cs-a', 'cs-d', 'cs-c'];
  const tied = (n: string) => pod(n, { revision: r1.metadata.name, state: 'Normal' });
  const orders = [names, [...names].sort(), [...names].sort().reverse()];
  const status = {
    replicas: 6,
    readyReplicas: 6,
    availableReplicas: 6,
    updatedReplicas: 6,
    updatedReadyReplicas: 6,
    currentRevision: r1.metadata.name,
  };
  const cases = [
    {
      name: 'recreate update (the issue: 6 replicas, partition 2, maxUnavailable 1): the first by name',
      spec: { replicas: 6, template: template('nginx:2.0'), updateStrategy: { rollingUpdate: { partition: 2, maxUnavailable: 1 } } },
      picked: (p: ReturnType<typeof planCloneSet>) => p.labelPatches.map((l) => l.pod),
      want: ['cs-a'],
    },
    {
      name: 'in-place update, maxUnavailable 2: the first two by name',
      spec: {
        replicas: 6,
        template: template('nginx:2.0'),
        updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' as const, maxUnavailable: 2 } },
      },
      picked: (p: ReturnType<typeof planCloneSet>) => p.inPlaceUpdates.map((u) => u.pod),
      want: ['cs-a', 'cs-b'],
    },
    {
      name: 'scale in to 4: the first two by name are deleted',
      spec: { replicas: 4 },
      picked: (p: ReturnType<typeof planCloneSet>) => p.deletePods.map((d) => d.pod),
      want: ['cs-a', 'cs-b'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      for (const order of orders) {
        const plan = planCloneSet({
          cloneSet: cloneSet(c.spec, status),
          revisions: [r1],
          pods: order.map(tied),
          pvcs: [],
          now: NOW,
          features: gates(),
        });
        assert.deepEqual(c.picked(plan), c.want, `pods given as ${order.join(',')}`);
      }
    });
  }
});
