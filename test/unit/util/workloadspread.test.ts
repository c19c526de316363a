import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { strategicMergePod } from '../../../src/util/strategicmerge.ts';
import {
  formatMatchedWorkloadSpread,
  initialSubsetStatuses,
  injectSubsetIntoPod,
  matchedWorkloadSpreadOf,
  podVersion,
  recordPodInSubset,
  statefulOrdinal,
  statefulSubset,
  suitableSubset,
  workloadReplicasOf,
  type SpreadView,
  type SubsetStatus,
} from '../../../src/util/workloadspread.ts';

const NOW = Date.parse('2026-01-02T03:04:05.678Z');
const ws = (subsets: SpreadView['spec']['subsets'], kind = 'CloneSet', status?: SpreadView['status']): SpreadView => ({
  metadata: { name: 'ws', namespace: 'default' },
  spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind, name: 'cs' }, subsets },
  status,
});
const pod = (name: string, extra: Partial<Pod['metadata']> = {}): Pod => ({
  metadata: {
    name,
    namespace: 'default',
    ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs', uid: 'u', controller: true }],
    ...extra,
  },
  spec: { containers: [{ name: 'main', image: 'nginx' }] },
});
const st = (name: string, missingReplicas: number, extra: Partial<SubsetStatus> = {}): SubsetStatus => ({
  name,
  replicas: 0,
  missingReplicas,
  ...extra,
});

describe('WorkloadSpread annotation', () => {
  test('JSON as upstream marshals InjectWorkloadSpread (uid omitted when empty)', () => {
    assert.equal(formatMatchedWorkloadSpread({ name: 'ws', subset: 'a' }), '{"name":"ws","subset":"a"}');
    assert.equal(formatMatchedWorkloadSpread({ name: 'ws', subset: 'a', uid: 'x' }), '{"name":"ws","subset":"a","uid":"x"}');
  });
  test('parse: absent, malformed and valid', () => {
    assert.equal(matchedWorkloadSpreadOf(pod('p')), undefined);
    assert.equal(matchedWorkloadSpreadOf(pod('p', { annotations: { 'apps.kruise.io/matched-workloadspread': '{' } })), undefined);
    assert.deepEqual(
      matchedWorkloadSpreadOf(pod('p', { annotations: { 'apps.kruise.io/matched-workloadspread': '{"name":"w","subset":"b"}' } })),
      {
        name: 'w',
        subset: 'b',
      },
    );
  });
});

describe('subset choice', () => {
  test('initial statuses: int, percent rounded up against workload replicas, nil = -1', () => {
    const w = ws([{ name: 'a', maxReplicas: '30%' }, { name: 'b', maxReplicas: 2 }, { name: 'c' }]);
    assert.deepEqual(
      initialSubsetStatuses(w, 5).map((s) => s.missingReplicas),
      [2, 2, -1],
    );
    assert.deepEqual(
      initialSubsetStatuses(w, 0).map((s) => s.missingReplicas),
      [0, 2, -1],
    );
  });
  test('first schedulable subset with missing replicas > 0 or -1', () => {
    const cases: Array<[SubsetStatus[], string | undefined]> = [
      [[st('a', 0), st('b', 1), st('c', -1)], 'b'],
      [[st('a', 0), st('b', 0), st('c', -1)], 'c'],
      [[st('a', 0), st('b', 0)], undefined],
      [
        [
          st('a', 2, {
            conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', message: '', lastTransitionTime: 't' }],
          }),
          st('b', -1),
        ],
        'b',
      ],
      [
        [
          st('a', 2, { conditions: [{ type: 'Schedulable', status: 'True', reason: 'Sufficient', message: '', lastTransitionTime: 't' }] }),
          st('b', -1),
        ],
        'a',
      ],
    ];
    for (const [statuses, want] of cases) assert.equal(suitableSubset(statuses)?.name, want, JSON.stringify(statuses));
  });
  test('StatefulSet ordinals: thresholds by cumulative maxReplicas, unschedulable subsets skipped', () => {
    assert.equal(statefulOrdinal('web-12'), 12);
    assert.equal(statefulOrdinal('web'), -1);
    const w = ws([{ name: 'a', maxReplicas: 2 }, { name: 'b', maxReplicas: 3 }, { name: 'c' }], 'StatefulSet');
    assert.deepEqual(
      ['s-0', 's-1', 's-2', 's-4', 's-5', 's-99'].map((n) => statefulSubset(w, n)),
      ['a', 'a', 'b', 'b', 'c', 'c'],
    );
    const bounded = ws(
      [
        { name: 'a', maxReplicas: 1 },
        { name: 'b', maxReplicas: 1 },
      ],
      'StatefulSet',
    );
    assert.equal(statefulSubset(bounded, 's-2'), undefined);
    const aDown = ws([{ name: 'a', maxReplicas: 2 }, { name: 'b' }], 'StatefulSet', {
      subsetStatuses: [
        st('a', 0, {
          conditions: [{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', message: '', lastTransitionTime: 't' }],
        }),
      ],
    });
    assert.equal(statefulSubset(aDown, 's-0'), 'b');
  });
  test('pod version: ReplicaSet pods by pod-template-hash, others ignored', () => {
    assert.equal(podVersion(pod('p', { labels: { 'pod-template-hash': 'abc' } })), 'versionIgnored');
    const rsPod = pod('p', {
      labels: { 'pod-template-hash': 'abc' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }],
    });
    assert.equal(podVersion(rsPod), 'abc');
  });
  test('workload replicas: spec.replicas, Job parallelism, replicasPathList sum', () => {
    assert.equal(workloadReplicasOf(ws([]), { spec: { replicas: 6 } }), 6);
    const job = ws([], 'Job');
    assert.equal(workloadReplicasOf(job, { spec: { parallelism: 3 } }), 3);
    const paths = ws([]);
    paths.spec.targetFilter = { replicasPathList: ['spec.replicas', 'spec.extra.n'] };
    assert.equal(workloadReplicasOf(paths, { spec: { replicas: 2, extra: { n: 5 } } }), 7);
    assert.equal(workloadReplicasOf(ws([]), undefined), 0);
  });
});

describe('creatingPods / deletingPods bookkeeping', () => {
  const opts = { now: NOW, workloadReplicas: 6, newUID: () => 'gen-uid' };
  test('create: records the pod in the first suitable subset and decrements missingReplicas', () => {
    const w = ws([{ name: 'a', maxReplicas: 1 }, { name: 'b', maxReplicas: 2 }, { name: 'c' }]);
    const status = {};
    const r1 = recordPodInSubset(w, status, pod('p1'), 'Create', opts);
    assert.deepEqual(r1, { changed: true, subset: 'a' });
    const r2 = recordPodInSubset(w, status, pod('p2'), 'Create', opts);
    assert.deepEqual(r2, { changed: true, subset: 'b' });
    assert.deepEqual((status as SpreadView['status'])!.versionedSubsetStatuses!.versionIgnored, [
      { name: 'a', replicas: 0, missingReplicas: 0, creatingPods: { p1: '2026-01-02T03:04:05Z' } },
      { name: 'b', replicas: 0, missingReplicas: 1, creatingPods: { p2: '2026-01-02T03:04:05Z' } },
      { name: 'c', replicas: 0, missingReplicas: -1 },
    ]);
    // Again for p1: already recorded, idempotent.
    assert.deepEqual(recordPodInSubset(w, status, pod('p1'), 'Create', opts), { changed: false, subset: 'a' });
  });
  test('create into an unlimited subset writes nothing; generateName-only pods get a generated id', () => {
    const w = ws([{ name: 'a', maxReplicas: 0 }, { name: 'c' }]);
    assert.deepEqual(recordPodInSubset(w, {}, pod('p'), 'Create', opts), { changed: false, subset: 'c' });
    const w2 = ws([{ name: 'a', maxReplicas: 3 }, { name: 'c' }]);
    const status = {};
    assert.deepEqual(recordPodInSubset(w2, status, pod(''), 'Create', opts), { changed: true, subset: 'a', generatedUID: 'gen-uid' });
  });
  test('create with every subset full: no subset, nothing changed', () => {
    const w = ws([{ name: 'a', maxReplicas: 1 }]);
    const status = { versionedSubsetStatuses: { versionIgnored: [st('a', 0)] } };
    assert.deepEqual(recordPodInSubset(w, status, pod('p'), 'Create', opts), { changed: false });
  });
  test('delete: records the pod in its annotated subset and increments missingReplicas; twice is a no-op', () => {
    const w = ws([{ name: 'a', maxReplicas: 2 }, { name: 'c' }]);
    const status = { versionedSubsetStatuses: { versionIgnored: [st('a', 0), st('c', -1)] } };
    const matched = { name: 'ws', subset: 'a' };
    assert.deepEqual(recordPodInSubset(w, status, pod('p'), 'Delete', { ...opts, matched }), { changed: true, subset: 'a' });
    assert.deepEqual(status.versionedSubsetStatuses.versionIgnored[0], st('a', 1, { deletingPods: { p: '2026-01-02T03:04:05Z' } }));
    assert.deepEqual(recordPodInSubset(w, status, pod('p'), 'Eviction', { ...opts, matched }), { changed: false });
    // A subset that no longer exists, or an unlimited one: nothing to book.
    assert.deepEqual(recordPodInSubset(w, status, pod('q'), 'Delete', { ...opts, matched: { name: 'ws', subset: 'gone' } }), {
      changed: false,
    });
    assert.deepEqual(recordPodInSubset(w, status, pod('q'), 'Delete', { ...opts, matched: { name: 'ws', subset: 'c' } }), {
      changed: false,
      subset: 'c',
    });
  });
});

describe('injection into the pod', () => {
  const subset = {
    name: 'a',
    requiredNodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
    preferredNodeSelector: [{ weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }],
    tolerations: [{ key: 'zone', operator: 'Equal', value: 'a', effect: 'NoSchedule' }],
    patch: { metadata: { labels: { subset: 'a' } }, spec: { containers: [{ name: 'main', resources: { limits: { cpu: '1' } } }] } },
  } as SpreadView['spec']['subsets'][number];
  test('required term becomes the only term; preferred, tolerations appended; patch merged; annotation set', () => {
    const out = injectSubsetIntoPod(ws([subset]), pod('p'), 'a', 'uid-1');
    assert.deepEqual(out.spec!.affinity, {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [subset.requiredNodeSelector] },
        preferredDuringSchedulingIgnoredDuringExecution: subset.preferredNodeSelector,
      },
    });
    assert.deepEqual(out.spec!.tolerations, subset.tolerations);
    assert.deepEqual(out.spec!.containers, [{ name: 'main', image: 'nginx', resources: { limits: { cpu: '1' } } }]);
    assert.equal(out.metadata.labels!.subset, 'a');
    assert.equal(out.metadata.annotations!['apps.kruise.io/matched-workloadspread'], '{"name":"ws","subset":"a","uid":"uid-1"}');
  });
  test('required term is ANDed into every existing term', () => {
    const p = pod('p');
    p.spec!.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] },
          ],
        },
      },
    };
    const out = injectSubsetIntoPod(ws([{ name: 'a', requiredNodeSelector: subset.requiredNodeSelector }]), p, 'a');
    assert.deepEqual(out.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms, [
      { matchExpressions: [{ key: 'x', operator: 'Exists' }, ...subset.requiredNodeSelector!.matchExpressions!] },
      {
        matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }],
        matchExpressions: subset.requiredNodeSelector!.matchExpressions,
      },
    ]);
  });
  test('a patch changing priorityClassName drops the resolved priority', () => {
    const p = pod('p');
    p.spec!.priorityClassName = 'low';
    p.spec!.priority = 10;
    const out = injectSubsetIntoPod(ws([{ name: 'a', patch: { spec: { priorityClassName: 'high' } } }]), p, 'a');
    assert.equal(out.spec!.priorityClassName, 'high');
    assert.equal(out.spec!.priority, undefined);
  });
});

describe('strategic merge on pods', () => {
  test('maps merge, null deletes, merge lists by key, $patch delete, other lists replaced', () => {
    const p = {
      metadata: { labels: { a: '1', b: '2' }, finalizers: ['x'] },
      spec: {
        containers: [
          { name: 'main', image: 'i', env: [{ name: 'A', value: '1' }] },
          { name: 'side', image: 's' },
        ],
        tolerations: [{ key: 'old' }],
      },
    };
    const out = strategicMergePod(p, {
      metadata: { labels: { b: null, c: '3' }, finalizers: ['y', 'x'] },
      spec: {
        containers: [
          { name: 'main', env: [{ name: 'B', value: '2' }] },
          { name: 'side', $patch: 'delete' },
        ],
        tolerations: [{ key: 'new' }],
      },
    });
    assert.deepEqual(out, {
      metadata: { labels: { a: '1', c: '3' }, finalizers: ['x', 'y'] },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'i',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
          },
        ],
        tolerations: [{ key: 'new' }],
      },
    });
    assert.deepEqual(p.metadata.labels, { a: '1', b: '2' }, 'input unchanged');
  });
});
