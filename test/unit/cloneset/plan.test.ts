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
      picked: (p: ReturnType<typeof planCloneSet>) => [...p.deletePods.map((d) => d.pod), ...p.labelPatches.map((l) => l.pod)],
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

describe('planCloneSet: a ReCreate update deletes in the round that chose the pod when Scale would (recreateAtOnce)', () => {
  const r1 = revisionOf(cloneSet(), 1);
  const status = {
    replicas: 4,
    readyReplicas: 4,
    availableReplicas: 4,
    updatedReplicas: 4,
    updatedReadyReplicas: 4,
    currentRevision: r1.metadata.name,
  };
  const hook = { finalizersHandler: ['example.com/hook'] };
  const surge = { replicas: 4, template: template('nginx:2.0'), updateStrategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } };
  const r2 = revisionOf(cloneSet(surge), 2);
  const at = (name: string, o: Parameters<typeof pod>[1] = {}) => pod(name, { revision: r1.metadata.name, state: 'Normal', ...o });
  const cases: Array<{
    name: string;
    spec: Parameters<typeof cloneSet>[0];
    pods: ReturnType<typeof pod>[];
    deleted: string[];
    marked: string[];
  }> = [
    {
      name: 'ready pods within maxUnavailable 2: deleted now, unmarked (one write each, not two)',
      spec: { replicas: 4, template: template('nginx:2.0'), updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } },
      pods: ['cs-a', 'cs-b', 'cs-c', 'cs-d'].map((n) => at(n)),
      deleted: ['cs-a', 'cs-b'],
      marked: [],
    },
    {
      name: 'an unavailable pod goes first, and one ready pod fills the budget',
      spec: { replicas: 4, template: template('nginx:2.0'), updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } },
      pods: [at('cs-a'), at('cs-b'), at('cs-c', { ready: false }), at('cs-d')],
      deleted: ['cs-a', 'cs-c'],
      marked: [],
    },
    {
      name: 'a preDelete hook: Scale would move the pods to PreparingDelete, so they are only marked (as upstream)',
      spec: {
        replicas: 4,
        template: template('nginx:2.0'),
        updateStrategy: { rollingUpdate: { maxUnavailable: 2 } },
        lifecycle: { preDelete: hook },
      },
      pods: ['cs-a', 'cs-b', 'cs-c', 'cs-d'].map((n) => at(n, { finalizers: ['example.com/hook'] })),
      deleted: [],
      marked: ['cs-a', 'cs-b'],
    },
    {
      name: 'maxSurge 1, maxUnavailable 0, the surge pod up: the chosen pod is deleted now, as Scale would next round',
      spec: surge,
      pods: [...['cs-a', 'cs-b', 'cs-c', 'cs-d'].map((n) => at(n)), pod('cs-e', { revision: r2.metadata.name, state: 'Normal' })],
      deleted: ['cs-a'],
      marked: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planCloneSet({
        cloneSet: cloneSet(c.spec, status),
        revisions: [r1, r2],
        pods: c.pods,
        pvcs: [],
        now: NOW,
        features: gates(),
      });
      assert.deepEqual(
        plan.deletePods.map((d) => d.pod),
        c.deleted,
      );
      assert.deepEqual(
        plan.labelPatches.map((l) => [l.pod, l.labels]),
        c.marked.map((n) => [n, { 'apps.kruise.io/specified-delete': 'true' }]),
      );
      assert.equal(plan.createPods.length, 0);
      assert.deepEqual(
        plan.events.filter((e) => e.reason === 'SuccessfulUpdatePodReCreate').length,
        c.deleted.length + c.marked.length,
        'every pod chosen for recreation keeps its event',
      );
    });
  }
});

describe('planCloneSet: a maxSurge ReCreate update creates the surge pod before choosing any pod', () => {
  it('no pod is marked or deleted while the surge pod is created', () => {
    const r1 = revisionOf(cloneSet(), 1);
    const spec = { replicas: 2, template: template('nginx:2.0'), updateStrategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } };
    const status = {
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      updatedReplicas: 0,
      updatedReadyReplicas: 0,
      currentRevision: r1.metadata.name,
    };
    const pods = ['cs-a', 'cs-b'].map((n) => pod(n, { revision: r1.metadata.name, state: 'Normal' }));
    const plan = planCloneSet({ cloneSet: cloneSet(spec, status), revisions: [r1], pods, pvcs: [], now: NOW, features: gates() });
    assert.equal(plan.createPods.length, 1);
    assert.deepEqual([plan.deletePods, plan.labelPatches], [[], []]);
  });
});
