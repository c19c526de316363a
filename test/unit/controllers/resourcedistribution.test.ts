// ResourceDistribution decisions, table-style (spec §13): target namespaces, the copies to create,
// update and delete, conflicts and missing namespaces, the hash, and the six-condition status.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import type { Namespace } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../../../src/runtime/expectations.ts';
import { CONFLICT_REQUEUE_MS } from '../../../src/runtime/writes.ts';
import { ResourceDistributionReconciler } from '../../../src/controllers/resourcedistribution/controller.ts';
import {
  CONDITION_TYPES,
  CONFLICT_MESSAGE,
  desiredCopy,
  distributionStatus,
  matchedNamespaces,
  namespaceConcerns,
  planDistribution,
  resourceHash,
  type DistributedResource,
  type ResourceDistribution,
} from '../../../src/controllers/resourcedistribution/plan.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const HASH_KEY = 'kruise.io/resourcedistribution.resource.hashcode';
const FROM_KEY = 'kruise.io/resourcedistribution.resource.from';

function rd(targets: NonNullable<ResourceDistribution['spec']>['targets'], status?: ResourceDistribution['status']): ResourceDistribution {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ResourceDistribution',
    metadata: { name: 'dist', uid: 'rd-uid', generation: 3 },
    spec: {
      resource: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', labels: { app: 'x' } },
        type: 'Opaque',
        data: { k: 'dg==' },
      },
      targets,
    },
    ...(status ? { status } : {}),
  };
}

const ns = (name: string, labels?: Record<string, string>, terminating = false): Namespace => ({
  metadata: { name, ...(labels ? { labels } : {}), ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
});

const NAMESPACES = [
  ns('default'),
  ns('kube-system', { team: 'a' }),
  ns('kube-public'),
  ns('team-a1', { team: 'a' }),
  ns('team-a2', { team: 'a' }),
  ns('team-b', { team: 'b' }),
  ns('other'),
];

describe('matchedNamespaces', () => {
  const cases: Array<[string, NonNullable<ResourceDistribution['spec']>['targets'], string[]]> = [
    [
      'allNamespaces never includes kube-system / kube-public',
      { allNamespaces: true },
      ['default', 'other', 'team-a1', 'team-a2', 'team-b'],
    ],
    [
      'allNamespaces minus excluded list',
      { allNamespaces: true, excludedNamespaces: { list: [{ name: 'other' }] } },
      ['default', 'team-a1', 'team-a2', 'team-b'],
    ],
    ['namespaceSelector team=a (kube-system dropped)', { namespaceSelector: { matchLabels: { team: 'a' } } }, ['team-a1', 'team-a2']],
    [
      'included list ∪ selector, absent namespaces kept',
      { includedNamespaces: { list: [{ name: 'other' }, { name: 'ghost' }] }, namespaceSelector: { matchLabels: { team: 'b' } } },
      ['ghost', 'other', 'team-b'],
    ],
    ['empty selector matches nothing', { namespaceSelector: {} }, []],
    ['included pattern matches whole names', { includedNamespaces: { pattern: 'team-a.*' } }, ['team-a1', 'team-a2']],
    ['excluded pattern removes', { allNamespaces: true, excludedNamespaces: { pattern: 'team-.*' } }, ['default', 'other']],
    ['included kube-system by name is still refused', { includedNamespaces: { list: [{ name: 'kube-system' }] } }, []],
    [
      'matchExpressions',
      { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] } },
      ['team-a1', 'team-a2', 'team-b'],
    ],
  ];
  for (const [name, targets, want] of cases) {
    test(name, () => assert.deepEqual(matchedNamespaces(rd(targets), NAMESPACES), want));
  }
  test('a pattern that is not a regular expression matches nothing and is reported', () => {
    const bad: string[] = [];
    assert.deepEqual(matchedNamespaces(rd({ includedNamespaces: { pattern: '(' } }), NAMESPACES, bad), []);
    assert.deepEqual(bad, ['(']);
  });
});

describe('resourceHash', () => {
  test('SHA-256 of the resource as Go json.Marshal writes it (sorted keys, compact)', () => {
    const want = createHash('sha256')
      .update('{"apiVersion":"v1","data":{"k":"dg=="},"kind":"Secret","metadata":{"labels":{"app":"x"},"name":"creds"},"type":"Opaque"}')
      .digest('hex');
    assert.equal(resourceHash(rd({})), want);
  });
});

function copyIn(namespace: string, d: ResourceDistribution, overrides: (c: DistributedResource) => void = () => {}): DistributedResource {
  const c = desiredCopy(d, d.spec!.resource as unknown as DistributedResource, namespace, resourceHash(d));
  // As the cache holds it: no apiVersion/kind, a uid and resourceVersion.
  delete (c as { apiVersion?: string }).apiVersion;
  delete (c as { kind?: string }).kind;
  c.metadata.uid = `${namespace}-uid`;
  c.metadata.resourceVersion = '7';
  overrides(c);
  return c;
}

describe('planDistribution', () => {
  const d = rd({ namespaceSelector: { matchLabels: { team: 'a' } }, includedNamespaces: { list: [{ name: 'ghost' }] } });

  test('creates copies with namespace, controller ref and the hash / from annotations', () => {
    const plan = planDistribution({ rd: d, namespaces: NAMESPACES, existing: () => undefined });
    assert.deepEqual(plan.matched, ['ghost', 'team-a1', 'team-a2']);
    assert.deepEqual(
      plan.create.map((c) => c.metadata.namespace),
      ['team-a1', 'team-a2'],
    );
    const c = plan.create[0]!;
    assert.equal(c.kind, 'Secret');
    assert.deepEqual(c.metadata.ownerReferences, [
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ResourceDistribution',
        name: 'dist',
        uid: 'rd-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(c.metadata.annotations, { [HASH_KEY]: resourceHash(d), [FROM_KEY]: 'dist' });
    assert.deepEqual(c.metadata.labels, { app: 'x' });
    assert.deepEqual(plan.failures, [{ type: 'NamespaceNotExists', namespace: 'ghost', message: 'namespace not found or is terminating' }]);
  });

  test('an unchanged copy is not rewritten; an edited one is restored keeping foreign metadata', () => {
    const unchanged = copyIn('team-a1', d);
    const edited = copyIn('team-a2', d, (c) => {
      (c as { data?: Record<string, string> }).data = { k: 'ZWRpdGVk' };
      c.metadata.labels = { ...c.metadata.labels, extra: 'kept' };
    });
    const copies: Record<string, DistributedResource> = { 'team-a1': unchanged, 'team-a2': edited };
    const plan = planDistribution({ rd: d, namespaces: NAMESPACES, existing: (n) => copies[n] });
    assert.deepEqual(plan.create, []);
    assert.equal(plan.update.length, 1);
    const u = plan.update[0] as DistributedResource & { data?: Record<string, string> };
    assert.equal(u.metadata.namespace, 'team-a2');
    assert.equal(u.metadata.resourceVersion, '7');
    assert.deepEqual(u.data, { k: 'dg==' });
    assert.deepEqual(u.metadata.labels, { app: 'x', extra: 'kept' });
  });

  test('a new resource hash rewrites copies; a controller ref to the distribution keeps the version it names', () => {
    const alphaRef = (c: DistributedResource) => (c.metadata.ownerReferences![0]!.apiVersion = 'apps.kruise.io/v1alpha1');
    const stale = copyIn('team-a1', d, (c) => (c.metadata.annotations![HASH_KEY] = 'old'));
    // Written by OpenKruise v1.8 (or re-pointed by `kruise storage-version migrate --to openkruise-v1.8`).
    const alpha = copyIn('team-a2', d, alphaRef);
    const copies: Record<string, DistributedResource> = { 'team-a1': stale, 'team-a2': alpha };
    let plan = planDistribution({ rd: d, namespaces: NAMESPACES, existing: (n) => copies[n] });
    assert.deepEqual(
      plan.update.map((c) => [c.metadata.namespace, c.metadata.ownerReferences![0]!.apiVersion, c.metadata.annotations![HASH_KEY]]),
      [['team-a1', 'apps.kruise.io/v1beta1', resourceHash(d)]],
    );
    // Rewritten for another reason, the v1alpha1 reference stays v1alpha1.
    copies['team-a2'] = copyIn('team-a2', d, (c) => (alphaRef(c), (c.metadata.annotations![HASH_KEY] = 'old')));
    plan = planDistribution({ rd: d, namespaces: NAMESPACES, existing: (n) => copies[n] });
    assert.deepEqual(
      plan.update.map((c) => [c.metadata.namespace, c.metadata.ownerReferences![0]!.apiVersion]),
      [
        ['team-a1', 'apps.kruise.io/v1beta1'],
        ['team-a2', 'apps.kruise.io/v1alpha1'],
      ],
    );
    // A reference to an earlier distribution of the same name (another uid) is replaced by a v1beta1 one.
    copies['team-a2'] = copyIn('team-a2', d, (c) => (alphaRef(c), (c.metadata.ownerReferences![0]!.uid = 'earlier-uid')));
    plan = planDistribution({ rd: d, namespaces: NAMESPACES, existing: (n) => copies[n] });
    assert.deepEqual(
      plan.update.map((c) => [c.metadata.namespace, c.metadata.ownerReferences!.map((r) => `${r.apiVersion} ${r.uid}`)]),
      [
        ['team-a1', ['apps.kruise.io/v1beta1 rd-uid']],
        ['team-a2', ['apps.kruise.io/v1beta1 rd-uid']],
      ],
    );
  });

  test('stringData and a defaulted type compare as the API server stores them', () => {
    const withStringData = rd({ includedNamespaces: { list: [{ name: 'team-b' }] } });
    withStringData.spec!.resource = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { k: 'v' } };
    const stored = copyIn('team-b', withStringData, (c) => {
      delete (c as { stringData?: unknown }).stringData;
      (c as { data?: Record<string, string> }).data = { k: 'dg==' };
      (c as { type?: string }).type = 'Opaque';
    });
    const plan = planDistribution({ rd: withStringData, namespaces: NAMESPACES, existing: () => stored });
    assert.deepEqual(plan.update, []);
  });

  test('a same-named object another owner controls is a conflict and left alone', () => {
    const foreign: DistributedResource = { metadata: { name: 'creds', namespace: 'team-a1', uid: 'f' } };
    const plan = planDistribution({ rd: d, namespaces: NAMESPACES, existing: (n) => (n === 'team-a1' ? foreign : undefined) });
    assert.deepEqual(
      plan.create.map((c) => c.metadata.namespace),
      ['team-a2'],
    );
    assert.deepEqual(plan.update, []);
    assert.deepEqual(
      plan.failures.map((f) => [f.type, f.namespace]),
      [
        ['NamespaceNotExists', 'ghost'],
        ['ConflictOccurred', 'team-a1'],
      ],
    );
  });

  test('copies this distribution controls in namespaces that stopped matching are deleted; others are not', () => {
    const own = copyIn('team-b', d);
    const foreign: DistributedResource = { metadata: { name: 'creds', namespace: 'other', uid: 'f' } };
    const terminating = copyIn('team-b', d);
    const namespaces = [...NAMESPACES, ns('going', {}, true)];
    const copies: Record<string, DistributedResource> = { 'team-b': own, other: foreign, going: terminating };
    const plan = planDistribution({ rd: d, namespaces, existing: (n) => copies[n] });
    assert.deepEqual(plan.delete, [own]);
  });

  test('a terminating target namespace is NamespaceNotExists', () => {
    const plan = planDistribution({ rd: d, namespaces: [ns('team-a1', { team: 'a' }, true)], existing: () => undefined });
    assert.deepEqual(
      plan.failures.map((f) => [f.type, f.namespace]),
      [
        ['NamespaceNotExists', 'ghost'],
        ['NamespaceNotExists', 'team-a1'],
      ],
    );
  });

  test('an unsupported resource plans nothing', () => {
    const bad = rd({ allNamespaces: true });
    bad.spec!.resource = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } };
    const plan = planDistribution({ rd: bad, namespaces: NAMESPACES, existing: () => undefined });
    assert.match(plan.invalid ?? '', /unsupported resource GroupKind/);
    assert.deepEqual([plan.create, plan.update, plan.delete], [[], [], []]);
  });
});

describe('distributionStatus', () => {
  const d = rd({ allNamespaces: true });
  test('six conditions in upstream order; desired/succeeded/failed; observedGeneration', () => {
    const status = distributionStatus(
      d,
      5,
      [
        { type: 'ConflictOccurred', namespace: 'a', message: CONFLICT_MESSAGE },
        { type: 'CreateResourceFailed', namespace: 'b', message: 'boom' },
        { type: 'DeleteResourceFailed', namespace: 'c', message: 'nope' },
      ],
      NOW,
    )!;
    assert.deepEqual([status.desired, status.succeeded, status.failed, status.observedGeneration], [5, 3, 2, 3]);
    assert.deepEqual(
      status.conditions!.map((c) => c.type),
      CONDITION_TYPES,
    );
    assert.deepEqual(
      status.conditions!.map((c) => [c.status, c.reason, c.failedNamespaces]),
      [
        ['False', 'Succeeded', undefined],
        ['True', 'boom', ['b']],
        ['False', 'Succeeded', undefined],
        ['True', 'nope', ['c']],
        ['True', CONFLICT_MESSAGE, ['a']],
        ['False', 'Succeeded', undefined],
      ],
    );
    assert.ok(status.conditions!.every((c) => c.lastTransitionTime === '2026-01-01T12:00:00Z'));
  });

  test('unchanged status is not rewritten; lastTransitionTime moves only with a condition status', () => {
    const first = distributionStatus(d, 2, [], NOW)!;
    const stored = rd({ allNamespaces: true }, first);
    assert.equal(distributionStatus(stored, 2, [], NOW + 60_000), undefined);
    const next = distributionStatus(stored, 2, [{ type: 'ConflictOccurred', namespace: 'x', message: CONFLICT_MESSAGE }], NOW + 60_000)!;
    assert.equal(next.conditions![4]!.lastTransitionTime, '2026-01-01T12:01:00Z');
    assert.equal(next.conditions![0]!.lastTransitionTime, '2026-01-01T12:00:00Z');
  });
});

describe('namespaceConcerns', () => {
  const d = rd({ namespaceSelector: { matchLabels: { team: 'a' } }, includedNamespaces: { list: [{ name: 'listed' }] } });
  test('by selector, by included list, not otherwise', () => {
    assert.equal(namespaceConcerns(d, ns('n', { team: 'a' })), true);
    assert.equal(namespaceConcerns(d, ns('listed')), true);
    assert.equal(namespaceConcerns(d, ns('n', { team: 'b' })), false);
  });
});

describe('ResourceDistributionReconciler', () => {
  const log = pino({ level: 'silent' });
  const forbidden = (msg: string) => new StatusError({ code: 403, reason: 'Forbidden', message: msg });
  const conflict = () => new StatusError({ code: 409, reason: 'Conflict', message: 'the object has been modified' });

  function setup(opts: { failCreateIn?: string; conflictOnUpdate?: boolean; copies?: Record<string, DistributedResource> } = {}) {
    const d = rd({ namespaceSelector: { matchLabels: { team: 'a' } } });
    const calls: string[] = [];
    const statuses: ResourceDistribution['status'][] = [];
    const client = {
      async create(t: { resource: string }, o: DistributedResource) {
        if (o.metadata.namespace === opts.failCreateIn) throw forbidden('secrets is forbidden');
        calls.push(`create ${t.resource} ${o.metadata.namespace}`);
        return o;
      },
      async update(t: { resource: string }, o: DistributedResource) {
        if (opts.conflictOnUpdate) throw conflict();
        calls.push(`update ${t.resource} ${o.metadata.namespace}`);
        return { ...o, metadata: { ...o.metadata, resourceVersion: '8' } };
      },
      async delete(t: { resource: string }, name: string, o: { namespace?: string }) {
        calls.push(`delete ${t.resource} ${o.namespace}/${name}`);
        return {};
      },
      async updateStatus(_t: unknown, o: ResourceDistribution) {
        statuses.push(o.status);
        return o;
      },
    };
    const scaleExpectations = new ScaleExpectations();
    const r = new ResourceDistributionReconciler({
      cache: {
        getDistribution: (name) => (name === 'dist' ? d : undefined),
        listDistributions: () => [d],
        listNamespaces: () => NAMESPACES,
        getObject: (kind, ns, name) => (kind === 'Secret' && name === 'creds' ? opts.copies?.[ns] : undefined),
      },
      client: client as never,
      recorder: { event() {} },
      log,
      scaleExpectations,
      resourceVersions: new ResourceVersionExpectations(),
      clock: { now: () => NOW } as never,
    });
    return { r, calls, statuses, scaleExpectations };
  }

  test('creates the copies, then waits for them to be seen before planning again', async () => {
    const { r, calls, statuses, scaleExpectations } = setup();
    assert.deepEqual(await r.reconcile('dist'), {});
    assert.deepEqual(calls, ['create secrets team-a1', 'create secrets team-a2']);
    assert.deepEqual([statuses[0]?.desired, statuses[0]?.succeeded], [2, 2]);
    const again = await r.reconcile('dist');
    assert.ok((again.requeueAfterMs ?? 0) > 0, 'gated on the creations not yet observed');
    assert.equal(calls.length, 2);
    scaleExpectations.observeScale('dist', 'create', 'team-a1');
    scaleExpectations.observeScale('dist', 'create', 'team-a2');
    // Seen: the next round plans again (nothing in the cache yet, so it would create again).
    assert.deepEqual(await r.reconcile('dist'), {});
    assert.equal(calls.length, 4);
  });

  test('a failed create is CreateResourceFailed for that namespace and fails the round (retried with backoff)', async () => {
    const { r, calls, statuses } = setup({ failCreateIn: 'team-a2' });
    await assert.rejects(r.reconcile('dist'), /CreateResourceFailed in namespace team-a2: secrets is forbidden/);
    assert.deepEqual(calls, ['create secrets team-a1']);
    const created = statuses[0]!.conditions![1]!;
    assert.deepEqual(
      [created.type, created.status, created.reason, created.failedNamespaces],
      ['CreateResourceFailed', 'True', 'secrets is forbidden', ['team-a2']],
    );
    assert.deepEqual([statuses[0]!.desired, statuses[0]!.succeeded, statuses[0]!.failed], [2, 1, 1]);
  });

  test('a copy update that loses a race (409) requeues shortly, not a failure', async () => {
    const d = rd({ namespaceSelector: { matchLabels: { team: 'a' } } });
    const stale = copyIn('team-a1', d, (c) => (c.metadata.annotations![HASH_KEY] = 'old'));
    const fresh = copyIn('team-a2', d);
    const { r, statuses } = setup({ conflictOnUpdate: true, copies: { 'team-a1': stale, 'team-a2': fresh } });
    assert.deepEqual(await r.reconcile('dist'), { requeueAfterMs: CONFLICT_REQUEUE_MS });
    assert.equal(statuses[0]!.conditions![2]!.status, 'False');
  });
});
