// Advanced DaemonSet planner, term for term against behaviour spec §5.2 (cases after upstream's
// daemonset_controller_test / daemonset_update_test / daemonset_util_test).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DaemonSet } from '../../../src/apis/apps/daemonset.ts';
import type { Node, Pod, Stored } from '../../../src/apis/core-objects.ts';
import type { PodTemplateSpec } from '../../../src/apis/core.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { getNodesNeedingPods } from '../../../src/controllers/daemonset/manage.ts';
import { planDaemonSet, planWaitingStatus, type PlanInput } from '../../../src/controllers/daemonset/plan.ts';
import { filterDaemonPodsNodeToUpdate, updateBudgets } from '../../../src/controllers/daemonset/update.ts';
import { chooseRevisions, newDaemonSetRevision, revisionHash, revisionsToTruncate } from '../../../src/controllers/daemonset/revisions.ts';
import { computePodTemplateHash } from '../../../src/util/go-pod-template.ts';
import type { ControllerRevision } from '../../../src/util/revision-data.ts';

const NOW = Date.parse('2026-07-01T12:00:00Z');
const EARLIER = '2026-07-01T11:00:00Z';

const template = (image = 'nginx:1.0', env?: Array<{ name: string; value: string }>): PodTemplateSpec => ({
  metadata: { labels: { app: 'ds' } },
  spec: { containers: [{ name: 'main', image, ...(env ? { env } : {}) }] },
});

type Spec = NonNullable<DaemonSet['spec']>;
function daemonSet(spec: Partial<Spec> = {}, status?: Partial<NonNullable<DaemonSet['status']>>): Stored<DaemonSet> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name: 'ds', namespace: 'default', uid: 'ds-uid', generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'ds' } },
      template: template(),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      ...spec,
    },
    ...(status
      ? {
          status: {
            currentNumberScheduled: 0,
            numberMisscheduled: 0,
            desiredNumberScheduled: 0,
            numberReady: 0,
            updatedNumberScheduled: 0,
            ...status,
          },
        }
      : {}),
  };
}

const nodes = (n: number, labels: (i: number) => Record<string, string> = () => ({})): Node[] =>
  Array.from({ length: n }, (_, i) => ({ metadata: { name: `node-${i}`, labels: labels(i) } }));

interface PodOpts {
  ready?: boolean;
  phase?: string;
  created?: string;
  deleting?: boolean;
  labels?: Record<string, string>;
  finalizers?: string[];
  inPlaceGate?: boolean;
  image?: string;
}
function pod(name: string, node: string, hash: string, o: PodOpts = {}): Pod {
  const ready = o.ready ?? true;
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      creationTimestamp: o.created ?? EARLIER,
      labels: { app: 'ds', 'controller-revision-hash': hash, ...o.labels },
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: EARLIER } : {}),
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'DaemonSet', name: 'ds', uid: 'ds-uid', controller: true }],
    },
    spec: {
      nodeName: node,
      containers: [{ name: 'main', image: o.image ?? 'nginx:1.0' }],
      ...(o.inPlaceGate ? { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] } : {}),
    },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: EARLIER },
        ...(o.inPlaceGate ? [{ type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: EARLIER }] : []),
      ],
      containerStatuses: [{ name: 'main', image: o.image ?? 'nginx:1.0', imageID: 'id-1', ready, restartCount: 0 }],
    },
  };
}

let seq = 0;
function plan(ds: Stored<DaemonSet>, ns: Node[], pods: Pod[], revisions: ControllerRevision[] = [], over: Partial<PlanInput> = {}) {
  seq = 0;
  return planDaemonSet({
    daemonSet: ds,
    revisions,
    pods,
    nodes: ns,
    now: NOW,
    features: FEATURE_GATE_DEFAULTS,
    randomSuffix: () => `p${seq++}`,
    ...over,
  });
}

const hashOf = (ds: DaemonSet) => revisionHash(newDaemonSetRevision(ds, 1));
const nodeOf = (p: Pod) =>
  p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields?.[0]?.values?.[0];

/** A DaemonSet that moved from image v1 to `next`: its old revision and the hash of each. */
function rolled(
  spec: Partial<Spec> = {},
  status?: Partial<NonNullable<DaemonSet['status']>>,
  next: PodTemplateSpec = template('nginx:2.0'),
) {
  const old = daemonSet(spec, status);
  const oldRev = newDaemonSetRevision(old, 1);
  const ds = daemonSet({ ...spec, template: next }, status);
  return { ds, oldRev, oldHash: revisionHash(oldRev), newHash: hashOf(ds) };
}

describe('GetNodesNeedingPods', () => {
  const names = ['node-5', 'node-10', 'node-1', 'node-3', 'node-2'];
  const cases: Array<[string, number, number, number, boolean, string[]]> = [
    ['not progressive: all nodes, sorted', 0, 5, 2, false, ['node-1', 'node-10', 'node-2', 'node-3', 'node-5']],
    ['progressive: desired - new - partition', 0, 5, 2, true, ['node-1', 'node-10', 'node-2']],
    ['progressive: some already new', 2, 5, 2, true, ['node-1']],
    ['progressive: partition clamped to desired', 0, 5, 9, true, []],
    ['progressive: negative partition counts as 0', 0, 3, -1, true, ['node-1', 'node-10', 'node-2']],
    ['progressive: limited to the nodes needing pods', 0, 20, 0, true, ['node-1', 'node-10', 'node-2', 'node-3', 'node-5']],
  ];
  for (const [name, newPods, desired, partition, progressive, want] of cases) {
    test(name, () => assert.deepEqual(getNodesNeedingPods(newPods, desired, partition, progressive, names), want));
  }
});

describe('updateBudgets (updatedDesiredNodeCounts)', () => {
  const cases: Array<[object | undefined, number, { maxSurge: number; maxUnavailable: number }]> = [
    [{ maxUnavailable: 2 }, 10, { maxSurge: 0, maxUnavailable: 2 }],
    [{ maxUnavailable: '25%' }, 10, { maxSurge: 0, maxUnavailable: 3 }],
    [{ maxUnavailable: 0, maxSurge: '10%' }, 15, { maxSurge: 2, maxUnavailable: 0 }],
    [{ maxUnavailable: 0, maxSurge: 0 }, 4, { maxSurge: 0, maxUnavailable: 1 }],
    [{}, 4, { maxSurge: 0, maxUnavailable: 1 }],
    [{}, 0, { maxSurge: 0, maxUnavailable: 0 }],
  ];
  for (const [ru, desired, want] of cases) {
    test(`${JSON.stringify(ru)} over ${desired}`, () =>
      assert.deepEqual(updateBudgets(daemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } }), desired), want));
  }
  test('OnDelete has no budgets beyond the fallback', () =>
    assert.deepEqual(updateBudgets(daemonSet({ updateStrategy: { type: 'OnDelete' } }), 3), { maxSurge: 0, maxUnavailable: 1 }));
});

describe('filterDaemonPodsNodeToUpdate', () => {
  const ds = (ru: object) => daemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } });
  const map = (entries: Array<[string, Pod[] | undefined]>) => new Map(entries);
  const labels = (n: string): Record<string, string> => (n === 'n-1' || n === 'n-3' ? { canary: 'true' } : {});
  const old = (n: string) => [pod(`p-${n}`, n, 'old')];
  test('reverse lexical order, updated nodes first, then those without an old pod', () => {
    const m = map([
      ['n-1', old('n-1')],
      ['n-2', [pod('x', 'n-2', 'new')]],
      ['n-3', old('n-3')],
      ['n-4', undefined],
      ['n-5', old('n-5')],
    ]);
    assert.deepEqual(filterDaemonPodsNodeToUpdate(ds({}), 'new', m, labels, 0), ['n-2', 'n-4', 'n-5', 'n-3', 'n-1']);
  });
  test('partition keeps len(nodes) - partition', () => {
    const m = map(['n-1', 'n-2', 'n-3', 'n-4', 'n-5'].map((n) => [n, old(n)]));
    assert.deepEqual(filterDaemonPodsNodeToUpdate(ds({}), 'new', m, labels, 2), ['n-5', 'n-4', 'n-3']);
    assert.deepEqual(filterDaemonPodsNodeToUpdate(ds({}), 'new', m, labels, 5), []);
    assert.deepEqual(filterDaemonPodsNodeToUpdate(ds({}), 'new', m, labels, 7), []);
  });
  test('with a selector only matching nodes are candidates', () => {
    const m = map(['n-1', 'n-2', 'n-3', 'n-4'].map((n) => [n, old(n)]));
    assert.deepEqual(filterDaemonPodsNodeToUpdate(ds({ selector: { matchLabels: { canary: 'true' } } }), 'new', m, labels, 0), [
      'n-3',
      'n-1',
    ]);
  });
  test('a pre-deleting old pod makes its node "updating"', () => {
    const pre = pod('p', 'n-1', 'old', { labels: { 'lifecycle.apps.kruise.io/state': 'PreparingDelete' } });
    const m = map([
      ['n-1', [pre]],
      ['n-2', old('n-2')],
    ]);
    assert.deepEqual(filterDaemonPodsNodeToUpdate(ds({}), 'new', m, labels, 1), ['n-1']);
  });
});

describe('revisions', () => {
  test('a new template makes a new revision labelled with its hash', () => {
    const ds = daemonSet();
    const c = chooseRevisions(ds, []);
    assert.ok(c.newRevision);
    assert.equal(c.newRevision.metadata.name, `ds-${c.hash}`);
    assert.equal(c.newRevision.metadata.labels?.['controller-revision-hash'], c.hash);
    assert.equal(c.newRevision.revision, 1);
    assert.equal(c.newRevision.metadata.ownerReferences?.[0]?.kind, 'DaemonSet');
  });
  test('an equal existing revision is reused; an older equal one is bumped (rollback)', () => {
    const v1 = newDaemonSetRevision(daemonSet(), 1);
    const v2 = newDaemonSetRevision(daemonSet({ template: template('nginx:2.0') }), 2);
    assert.equal(chooseRevisions(daemonSet({ template: template('nginx:2.0') }), [v1, v2]).newRevision, undefined);
    const back = chooseRevisions(daemonSet(), [v1, v2]);
    assert.deepEqual(back.revisionBump, { name: v1.metadata.name, revision: 3 });
    assert.equal(back.hash, revisionHash(v1));
  });
  test('collisionCount stays unset (nil) until a name is taken by another template; then 1, and the hash covers it', () => {
    const ds = daemonSet();
    assert.equal(chooseRevisions(ds, []).collisionCount, undefined);
    const mine = newDaemonSetRevision(ds, 1);
    const clash = { ...newDaemonSetRevision(daemonSet({ template: template('other:1') }), 1), metadata: { ...mine.metadata } };
    const c = chooseRevisions(ds, [clash]);
    assert.equal(c.collisionCount, 1);
    assert.equal(c.newRevision?.metadata.name, `ds-${computePodTemplateHash(ds.spec?.template, 1)}`);
    assert.notEqual(computePodTemplateHash(ds.spec?.template, 0), computePodTemplateHash(ds.spec?.template));
  });
  test('history keeps revisionHistoryLimit unused old revisions', () => {
    const ds = daemonSet({ revisionHistoryLimit: 1 });
    const old = [1, 2, 3].map((i) => newDaemonSetRevision(daemonSet({ template: template(`nginx:${i}`) }), i));
    assert.deepEqual(revisionsToTruncate(ds, old, new Set([revisionHash(old[0])])), [old[1].metadata.name]);
  });
});

describe('planDaemonSet: manage', () => {
  test('one pod per eligible node: bound by node-name affinity, daemon tolerations, revision label; tainted node skipped', () => {
    const ns = nodes(4);
    ns[3].spec = { taints: [{ key: 'dedicated', effect: 'NoSchedule' }] };
    const ds = daemonSet();
    const p = plan(ds, ns, []);
    assert.ok(p.newRevision);
    assert.deepEqual(p.createPods.map(nodeOf), ['node-0', 'node-1', 'node-2']);
    const first = p.createPods[0];
    assert.equal(first.metadata.name, 'ds-p0');
    assert.equal(first.metadata.generateName, 'ds-');
    assert.equal(first.metadata.labels?.['controller-revision-hash'], p.hash);
    assert.equal(first.spec?.nodeName, undefined, 'the scheduler binds it');
    assert.ok(first.spec?.tolerations?.some((t) => t.key === 'node.kubernetes.io/unschedulable'));
    assert.deepEqual(first.metadata.ownerReferences?.[0], {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'DaemonSet',
      name: 'ds',
      uid: 'ds-uid',
      controller: true,
      blockOwnerDeletion: true,
    });
    assert.equal(p.status.desiredNumberScheduled, 3);
    assert.equal(p.status.updateRevision, p.hash);
  });

  test('burstReplicas limits creations (scaled against status.desiredNumberScheduled)', () => {
    assert.equal(plan(daemonSet({ burstReplicas: 2 }), nodes(5), []).createPods.length, 2);
    assert.equal(plan(daemonSet({ burstReplicas: '50%' }, { desiredNumberScheduled: 5 }), nodes(5), []).createPods.length, 2);
  });

  test('InPlaceIfPossible pods carry the InPlaceUpdateReady readiness gate', () => {
    const ds = daemonSet({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 1 } },
    });
    assert.deepEqual(plan(ds, nodes(1), []).createPods[0].spec?.readinessGates, [{ conditionType: 'InPlaceUpdateReady' }]);
  });

  test('duplicates: all but the oldest pod on a node are deleted', () => {
    const ds = daemonSet();
    const h = hashOf(ds);
    const pods = [
      pod('a', 'node-0', h, { created: '2026-07-01T11:00:05Z' }),
      pod('b', 'node-0', h),
      pod('c', 'node-0', h, { created: '2026-07-01T11:30:00Z' }),
    ];
    assert.deepEqual(plan(ds, nodes(1), pods).deletePods.sort(), ['a', 'c']);
  });

  test('misscheduled: a pod on a node that stops matching is deleted and counted', () => {
    const ds = daemonSet({ template: { ...template(), spec: { ...template().spec!, nodeSelector: { role: 'x' } } } });
    const h = hashOf(ds);
    const ns = nodes(2, (i): Record<string, string> => (i === 0 ? { role: 'x' } : {}));
    const p = plan(ds, ns, [pod('a', 'node-0', h), pod('b', 'node-1', h)]);
    assert.deepEqual(p.deletePods, ['b']);
    assert.equal(p.status.numberMisscheduled, 1);
    assert.equal(p.status.desiredNumberScheduled, 1);
  });

  test('a NoSchedule taint after placement keeps the pod; NoExecute removes it', () => {
    const ds = daemonSet();
    const h = hashOf(ds);
    const ns = nodes(2);
    ns[0].spec = { taints: [{ key: 'd', effect: 'NoSchedule' }] };
    ns[1].spec = { taints: [{ key: 'd', effect: 'NoExecute' }] };
    assert.deepEqual(plan(ds, ns, [pod('a', 'node-0', h), pod('b', 'node-1', h)]).deletePods, ['b']);
  });

  test('a node with only a terminating pod gets no new pod until it is gone', () => {
    const ds = daemonSet();
    assert.deepEqual(plan(ds, nodes(1), [pod('a', 'node-0', hashOf(ds), { deleting: true })]).createPods, []);
  });

  test('failed pods are deleted with a per-node backoff', () => {
    const ds = daemonSet();
    const failed = pod('a', 'node-0', hashOf(ds), { phase: 'Failed', ready: false });
    const p = plan(ds, nodes(1), [failed]);
    assert.deepEqual(p.deletePods, ['a']);
    assert.deepEqual(p.failedPodNodes, ['node-0']);
    assert.equal(p.events[0]?.reason, 'FailedDaemonPod');
    const waiting = plan(ds, nodes(1), [failed], [], { failedPodBackoff: (n) => (n === 'node-0' ? 4000 : undefined) });
    assert.deepEqual(waiting.deletePods, []);
    assert.equal(waiting.requeueAfterMs, 4000);
  });

  test('progressive creation (scaleStrategy.partitionedScaling) honours the partition', () => {
    const ds = daemonSet(
      {
        scaleStrategy: { partitionedScaling: true },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, partition: 2 } },
      },
      { desiredNumberScheduled: 5 },
    );
    assert.deepEqual(plan(ds, nodes(5), []).createPods.map(nodeOf), ['node-0', 'node-1', 'node-2']);
  });

  test('the preDelete hook moves a hooked pod to PreparingDelete instead of deleting it; unhooked it goes', () => {
    const lifecycle = { preDelete: { labelsHandler: { hold: 'true' } } };
    const ds = daemonSet({ lifecycle, template: { ...template(), spec: { ...template().spec!, nodeSelector: { role: 'x' } } } });
    const h = hashOf(ds);
    const hooked = pod('a', 'node-0', h, { labels: { hold: 'true' } });
    const p = plan(ds, nodes(1), [hooked]);
    assert.deepEqual(p.deletePods, []);
    assert.equal(p.lifecycleTransitions[0]?.to, 'PreparingDelete');
    const released = pod('a', 'node-0', h, { labels: { 'lifecycle.apps.kruise.io/state': 'PreparingDelete' } });
    assert.deepEqual(plan(ds, nodes(1), [released]).deletePods, ['a']);
  });

  test('status: desired, current, ready, available (minReadySeconds), updated, unavailable', () => {
    const ds = daemonSet({ minReadySeconds: 3600 * 2 });
    const h = hashOf(ds);
    const p = plan(ds, nodes(3), [pod('a', 'node-0', h), pod('b', 'node-1', 'old', { ready: false })]);
    assert.deepEqual(
      {
        d: p.status.desiredNumberScheduled,
        c: p.status.currentNumberScheduled,
        r: p.status.numberReady,
        a: p.status.numberAvailable,
        u: p.status.updatedNumberScheduled,
        n: p.status.numberUnavailable,
        g: p.status.observedGeneration,
      },
      { d: 3, c: 2, r: 1, a: 0, u: 1, n: 3, g: 1 },
    );
    assert.ok(p.statusChanged);
  });
});

describe('planDaemonSet: rolling update', () => {
  const allOld = (n: number, hash: string, o: PodOpts = {}) => Array.from({ length: n }, (_, i) => pod(`p${i}`, `node-${i}`, hash, o));

  test('maxUnavailable 1: the highest node first, one at a time', () => {
    const { ds, oldRev, oldHash } = rolled();
    assert.deepEqual(plan(ds, nodes(5), allOld(5, oldHash), [oldRev]).deletePods, ['p4']);
  });

  test('the order pods come in does not change the plan (node names order every choice; `rollout plan` is exact)', () => {
    const { ds, oldRev, oldHash } = rolled({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2, partition: 1 } },
    });
    const pods = allOld(5, oldHash);
    for (const order of [pods, [...pods].reverse(), [pods[2], pods[4], pods[0], pods[3], pods[1]]]) {
      assert.deepEqual(plan(ds, nodes(5), order, [oldRev]).deletePods, ['p4', 'p3']);
    }
  });

  test('maxUnavailable 2 with an updated pod not yet ready: one more', () => {
    const { ds, oldRev, oldHash, newHash } = rolled({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } });
    const pods = [...allOld(4, oldHash), pod('n4', 'node-4', newHash, { ready: false })];
    assert.deepEqual(plan(ds, nodes(5), pods, [oldRev]).deletePods, ['p3']);
  });

  test('an unavailable old pod is replaced whatever the budget', () => {
    const { ds, oldRev, oldHash, newHash } = rolled();
    const pods = [
      pod('p0', 'node-0', oldHash, { ready: false }),
      pod('p1', 'node-1', oldHash),
      pod('n2', 'node-2', newHash, { ready: false }),
    ];
    assert.deepEqual(plan(ds, nodes(3), pods, [oldRev]).deletePods, ['p0']);
  });

  test('a node without a pod counts as unavailable (manage creates there first)', () => {
    const { ds, oldRev, oldHash } = rolled();
    const p = plan(ds, nodes(3), allOld(2, oldHash), [oldRev]);
    assert.deepEqual(p.createPods.map(nodeOf), ['node-2']);
    assert.deepEqual(p.deletePods, []);
  });

  test('partition 2 of 5: only nodes 4, 3, 2 update', () => {
    const { ds, oldRev, oldHash, newHash } = rolled({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 5, partition: 2 } },
    });
    assert.deepEqual(plan(ds, nodes(5), allOld(5, oldHash), [oldRev]).deletePods, ['p4', 'p3', 'p2']);
    const done = [...allOld(2, oldHash), ...[2, 3, 4].map((i) => pod(`n${i}`, `node-${i}`, newHash))];
    assert.deepEqual(plan(ds, nodes(5), done, [oldRev]).deletePods, []);
  });

  test('partition as a percent rounds down against desired', () => {
    const { ds, oldRev, oldHash } = rolled({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 5, partition: '50%' } },
    });
    assert.deepEqual(plan(ds, nodes(5), allOld(5, oldHash), [oldRev]).deletePods, ['p4', 'p3', 'p2']);
  });

  test('selector: only nodes whose labels match update', () => {
    const { ds, oldRev, oldHash } = rolled({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 5, selector: { matchLabels: { canary: 'true' } } } },
    });
    const ns = nodes(4, (i): Record<string, string> => (i % 2 === 0 ? { canary: 'true' } : {}));
    assert.deepEqual(plan(ds, ns, allOld(4, oldHash), [oldRev]).deletePods, ['p2', 'p0']);
  });

  test('paused and OnDelete: no update, creation continues', () => {
    const paused = rolled({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, paused: true } } });
    let p = plan(paused.ds, nodes(3), allOld(2, paused.oldHash), [paused.oldRev]);
    assert.deepEqual(p.deletePods, []);
    assert.equal(p.createPods.length, 1);
    p = plan(paused.ds, nodes(2), allOld(2, paused.oldHash), [paused.oldRev]);
    assert.deepEqual([p.deletePods, p.createPods], [[], []]);
    const onDelete = rolled({ updateStrategy: { type: 'OnDelete' } });
    p = plan(onDelete.ds, nodes(2), allOld(2, onDelete.oldHash), [onDelete.oldRev]);
    assert.deepEqual([p.deletePods, p.createPods], [[], []]);
  });

  test('maxSurge 1: a new pod beside the old one; the old goes once the new one is available', () => {
    const { ds, oldRev, oldHash, newHash } = rolled({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
    });
    let p = plan(ds, nodes(3), allOld(3, oldHash), [oldRev]);
    assert.deepEqual(p.createPods.map(nodeOf), ['node-2']);
    assert.deepEqual(p.deletePods, []);
    // new pod not ready: wait (surge budget used)
    const surging = [...allOld(3, oldHash), pod('n2', 'node-2', newHash, { ready: false, created: '2026-07-01T11:59:00Z' })];
    p = plan(ds, nodes(3), surging, [oldRev]);
    assert.deepEqual([p.createPods, p.deletePods], [[], []]);
    // new pod available: manage deletes the old one
    surging[3] = pod('n2', 'node-2', newHash, { created: '2026-07-01T11:59:00Z' });
    assert.deepEqual(plan(ds, nodes(3), surging, [oldRev]).deletePods, ['p2']);
  });

  test('maxSurge: an unavailable old pod gets its replacement at once', () => {
    const { ds, oldRev, oldHash } = rolled({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
    });
    const pods = [pod('p0', 'node-0', oldHash, { ready: false }), pod('p1', 'node-1', oldHash)];
    assert.deepEqual(plan(ds, nodes(2), pods, [oldRev]).createPods.map(nodeOf), ['node-0', 'node-1']);
  });

  test('InPlaceIfPossible: an image change updates in place; another change deletes', () => {
    const ru = {
      updateStrategy: {
        type: 'RollingUpdate' as const,
        rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible' as const, maxUnavailable: 1 },
      },
    };
    const image = rolled(ru);
    let p = plan(image.ds, nodes(2), allOld(2, image.oldHash, { inPlaceGate: true }), [image.oldRev]);
    assert.deepEqual(p.deletePods, []);
    assert.equal(p.inPlaceUpdates.length, 1);
    const u = p.inPlaceUpdates[0];
    assert.equal(u.pod, 'p1');
    assert.equal(u.updatedPod.spec?.containers[0]?.image, 'nginx:2.0');
    assert.equal(u.updatedPod.metadata.labels?.['controller-revision-hash'], image.newHash);
    assert.equal(u.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.status, 'False');
    assert.ok(u.updatedPod.metadata.annotations?.['apps.kruise.io/inplace-update-state']);

    const env = rolled(ru, undefined, template('nginx:1.0', [{ name: 'X', value: '1' }]));
    p = plan(env.ds, nodes(2), allOld(2, env.oldHash, { inPlaceGate: true }), [env.oldRev]);
    assert.deepEqual([p.deletePods, p.inPlaceUpdates.length], [['p1'], 0]);
  });

  test('a pod updating in place is unavailable until InPlaceUpdateReady is True', () => {
    const ru = {
      updateStrategy: {
        type: 'RollingUpdate' as const,
        rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible' as const, maxUnavailable: 1 },
      },
    };
    const { ds, oldRev, oldHash, newHash } = rolled(ru);
    const updating = pod('p1', 'node-1', newHash, { inPlaceGate: true, image: 'nginx:2.0' });
    updating.status!.conditions = updating.status!.conditions!.map((c) =>
      c.type === 'InPlaceUpdateReady' ? { ...c, status: 'False' } : c,
    );
    const p = plan(ds, nodes(2), [pod('p0', 'node-0', oldHash, { inPlaceGate: true }), updating], [oldRev]);
    assert.deepEqual([p.inPlaceUpdates.length, p.deletePods], [0, []]);
  });

  test('DaemonSetPruneIneligibleNodes: pods on nodes that no longer fit go at once and use no budget', () => {
    const spec = { template: { ...template('nginx:2.0'), spec: { ...template('nginx:2.0').spec! } } };
    const { ds, oldRev, oldHash } = rolled({}, undefined, spec.template);
    const ns = nodes(3);
    ns[2].spec = { taints: [{ key: 'd', effect: 'NoSchedule' }] };
    const pods = allOld(3, oldHash);
    const without = plan(ds, ns, pods, [oldRev]);
    assert.deepEqual(without.deletePods, ['p2'], 'without the gate the tainted node takes the update budget');
    const gated = plan(ds, ns, pods, [oldRev], { features: { ...FEATURE_GATE_DEFAULTS, DaemonSetPruneIneligibleNodes: true } });
    assert.deepEqual(gated.deletePods, ['p2']);
    // the next round, with p2 gone, the budget goes to an eligible node
    const after = plan(ds, ns, pods.slice(0, 2), [oldRev], { features: { ...FEATURE_GATE_DEFAULTS, DaemonSetPruneIneligibleNodes: true } });
    assert.deepEqual(after.deletePods, ['p1']);
  });

  test('manage writes first: no rolling update in a round that creates or deletes', () => {
    const { ds, oldRev, oldHash } = rolled();
    const pods = [...allOld(2, oldHash), pod('dup', 'node-0', oldHash, { created: '2026-07-01T11:30:00Z' })];
    assert.deepEqual(plan(ds, nodes(2), pods, [oldRev]).deletePods, ['dup']);
  });
});

describe('planDaemonSet: image pre-download (PreDownloadImageForDaemonSetUpdate)', () => {
  const inPlace = (over: object = {}) => ({
    updateStrategy: {
      type: 'RollingUpdate' as const,
      rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible' as const, maxUnavailable: 1, ...over },
    },
  });
  test('an in-place rollout over more than 3 nodes pulls the new image on nodes still at the old revision', () => {
    const { ds, oldRev, oldHash, newHash } = rolled(inPlace(), { desiredNumberScheduled: 5 });
    const pods = Array.from({ length: 5 }, (_, i) => pod(`p${i}`, `node-${i}`, oldHash, { inPlaceGate: true }));
    const p = plan(ds, nodes(5), pods, [oldRev], { imagePullJobs: [] });
    const job = p.preDownload?.createJobs[0];
    assert.equal(p.preDownload?.createJobs.length, 1);
    assert.equal(job?.spec?.image, 'nginx:2.0');
    assert.equal(job?.metadata?.name, `ds-${newHash}-main`);
    assert.deepEqual(job?.spec?.podSelector?.matchExpressions, [
      { key: 'controller-revision-hash', operator: 'NotIn', values: [`ds-${newHash}`, newHash] },
    ]);
    assert.deepEqual(p.preDownload?.labelRevision, { name: `ds-${newHash}`, key: 'apps.kruise.io/pre-predownload-created' });
  });
  test('Standard (recreate), few nodes, or everything in one batch: the revision is marked ignored', () => {
    const pods = (hash: string, n: number) => Array.from({ length: n }, (_, i) => pod(`p${i}`, `node-${i}`, hash));
    const standard = rolled({}, { desiredNumberScheduled: 5 });
    assert.equal(
      plan(standard.ds, nodes(5), pods(standard.oldHash, 5), [standard.oldRev], { imagePullJobs: [] }).preDownload?.labelRevision?.key,
      'apps.kruise.io/image-predownload-ignored',
    );
    const few = rolled(inPlace(), { desiredNumberScheduled: 3 });
    assert.equal(plan(few.ds, nodes(3), pods(few.oldHash, 3), [few.oldRev], { imagePullJobs: [] }).preDownload?.createJobs.length, 0);
    const oneBatch = rolled(inPlace({ maxUnavailable: '100%' }), { desiredNumberScheduled: 5 });
    assert.equal(
      plan(oneBatch.ds, nodes(5), pods(oneBatch.oldHash, 5), [oneBatch.oldRev], { imagePullJobs: [] }).preDownload?.createJobs.length,
      0,
    );
  });
  test('without the gate (no job list) nothing is planned; once converged the jobs are deleted', () => {
    const { ds, oldRev, oldHash } = rolled(inPlace(), { desiredNumberScheduled: 5 });
    const pods = Array.from({ length: 5 }, (_, i) => pod(`p${i}`, `node-${i}`, oldHash, { inPlaceGate: true }));
    assert.equal(plan(ds, nodes(5), pods, [oldRev]).preDownload, undefined);
    const done = Array.from({ length: 5 }, (_, i) => pod(`p${i}`, `node-${i}`, hashOf(ds), { inPlaceGate: true }));
    assert.deepEqual(plan(ds, nodes(5), done, [oldRev], { imagePullJobs: ['old-job'] }).preDownload?.deleteJobs, ['old-job']);
  });
});

describe('a round waiting for its own pod writes (upstream syncDaemonSet with unsatisfied expectations)', () => {
  const input = (ds: Stored<DaemonSet>, pods: Pod[]): PlanInput => ({
    daemonSet: ds,
    revisions: [],
    pods,
    nodes: nodes(3),
    now: NOW,
    features: FEATURE_GATE_DEFAULTS,
    randomSuffix: () => 'x',
  });

  test('the status counts the pods the cache has; observedGeneration stays', () => {
    const ds = {
      ...daemonSet({}, { desiredNumberScheduled: 3, observedGeneration: 1 }),
      metadata: { ...daemonSet().metadata, generation: 2 },
    };
    const hash = hashOf(ds);
    const status = planWaitingStatus(input(ds, [pod('a', 'node-0', hash), pod('b', 'node-1', hash, { ready: false })]));
    assert.deepEqual(
      [status?.desiredNumberScheduled, status?.currentNumberScheduled, status?.numberReady, status?.updatedNumberScheduled],
      [3, 2, 1, 2],
    );
    assert.equal(status?.observedGeneration, 1, 'the controller has not acted on generation 2');
  });

  test('nothing to write when the counts are as written', () => {
    const ds = daemonSet();
    const hash = hashOf(ds);
    const pods = [pod('a', 'node-0', hash), pod('b', 'node-1', hash), pod('c', 'node-2', hash)];
    const written = planWaitingStatus(input(ds, pods))!;
    assert.equal(planWaitingStatus(input({ ...ds, status: written }, pods)), undefined);
  });
});
