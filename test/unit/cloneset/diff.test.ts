import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { calculateDiffsWithExpectation, EMPTY_DIFFS, type ExpectationDiffs } from '../../../src/controllers/cloneset/diff.ts';
import { isPodUpdate } from '../../../src/controllers/cloneset/pods.ts';
import type { CloneSet } from '../../../src/apis/apps/cloneset.ts';
import type { Pod } from '../../../src/controllers/cloneset/pods.ts';
import { cloneSet, gates, NOW, pod, type CloneSetSpec, type PodOpts } from './fixtures.ts';

const OLD = 'cs-old';
const NEW = 'cs-new';

interface Case {
  name: string;
  spec: Partial<CloneSetSpec>;
  pods: Array<[string, PodOpts]>;
  current?: string;
  rollbackGate?: boolean;
  preparingUpdateAsUpdate?: boolean;
  excludeFlag?: boolean;
  want: Partial<ExpectationDiffs>;
}

const n = (count: number, o: PodOpts, prefix = 'p'): Array<[string, PodOpts]> =>
  Array.from({ length: count }, (_, i) => [`${prefix}${i}`, o] as [string, PodOpts]);

const cases: Case[] = [
  { name: 'scale up from nothing', spec: { replicas: 3 }, pods: [], want: { scaleUpNum: 3, scaleUpLimit: 3, scaleUpNumOldRevision: 0 } },
  {
    name: 'scale down, ready deletions bounded by maxUnavailable plus the excess',
    spec: { replicas: 2 },
    pods: n(4, { revision: NEW }),
    // maxUnavailable 20% of 2 rounds up to 1; + (4 - 2) excess
    want: { scaleDownNum: 2, deleteReadyLimit: 3 },
  },
  {
    name: 'scale down prefers old revision pods above the partition',
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { partition: 1 } } },
    pods: [...n(3, { revision: OLD }, 'o'), ...n(2, { revision: NEW }, 'n')],
    want: { scaleDownNum: 2, scaleDownNumOldRevision: 2, deleteReadyLimit: 3 },
  },
  {
    name: 'specified delete without surge',
    spec: { replicas: 3, scaleStrategy: { podsToDelete: ['p0'] } },
    pods: n(3, { revision: NEW }),
    want: { deleteReadyLimit: 1 },
  },
  {
    name: 'specified-delete label counts as well',
    spec: { replicas: 3 },
    pods: [['p0', { revision: NEW, labels: { 'apps.kruise.io/specified-delete': 'true' } }], ...n(2, { revision: NEW }, 'q')],
    want: { deleteReadyLimit: 1 },
  },
  {
    name: 'partition as int',
    spec: { replicas: 5, updateStrategy: { rollingUpdate: { partition: 2 } } },
    pods: n(5, { revision: OLD }),
    want: { updateNum: 3, updateMaxUnavailable: 1 },
  },
  {
    name: 'partition 90% of 8 still updates one pod',
    spec: { replicas: 8, updateStrategy: { rollingUpdate: { partition: '90%' } } },
    pods: n(8, { revision: OLD }),
    want: { updateNum: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'partition 100% keeps everything',
    spec: { replicas: 8, updateStrategy: { rollingUpdate: { partition: '100%' } } },
    pods: n(8, { revision: OLD }),
    want: {},
  },
  {
    name: 'maxSurge during update creates an extra new-revision pod',
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { maxSurge: 1 } } },
    pods: n(3, { revision: OLD }),
    // with surge, maxUnavailable 20% of 3 rounds down to 0
    want: { useSurge: 1, scaleUpNum: 1, scaleUpLimit: 1, updateNum: 3, updateMaxUnavailable: 0 },
  },
  {
    name: 'paused forces maxSurge to 0',
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { maxSurge: 1, paused: true } } },
    pods: n(3, { revision: OLD }),
    want: { updateNum: 3, updateMaxUnavailable: 1 },
  },
  {
    name: 'surge after all updated shrinks back',
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { maxSurge: 1 } } },
    pods: [...n(3, { revision: NEW }), ['o0', { revision: OLD }]],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
  },
  {
    name: 'partition increase rolls back under CloneSetPartitionRollback',
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { partition: 2 } } },
    pods: n(3, { revision: NEW }),
    rollbackGate: true,
    want: { updateNum: -2, updateMaxUnavailable: 1 },
  },
  {
    name: 'partition increase without the gate does nothing',
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { partition: 2 } } },
    pods: n(3, { revision: NEW }),
    want: {},
  },
  {
    name: 'no rollback when current == update even with the gate',
    spec: { replicas: 3, updateStrategy: { rollingUpdate: { partition: 2 } } },
    pods: n(3, { revision: NEW }),
    current: NEW,
    rollbackGate: true,
    want: {},
  },
  {
    name: 'PreparingDelete pods count towards replicas and unavailability',
    spec: { replicas: 3 },
    pods: [...n(2, { revision: NEW }), ['d0', { revision: NEW, state: 'PreparingDelete' }]],
    want: {},
  },
  {
    name: 'excludePreparingDelete scales up a replacement',
    spec: { replicas: 3, scaleStrategy: { excludePreparingDelete: true } },
    pods: [...n(2, { revision: NEW }), ['d0', { revision: NEW, state: 'PreparingDelete' }]],
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: 'the manager flag excludes PreparingDelete too',
    spec: { replicas: 3 },
    pods: [...n(2, { revision: NEW }), ['d0', { revision: NEW, state: 'PreparingDelete' }]],
    excludeFlag: true,
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: 'scaleStrategy.maxUnavailable limits creations while pods are unavailable',
    spec: { replicas: 5, scaleStrategy: { maxUnavailable: 2 } },
    pods: [
      ['p0', { revision: NEW }],
      ['p1', { revision: NEW, ready: false }],
    ],
    want: { scaleUpNum: 3, scaleUpLimit: 1 },
  },
  {
    name: 'PreparingUpdateAsUpdate treats PreparingUpdate pods as updated',
    spec: { replicas: 2 },
    pods: [
      ['p0', { revision: OLD, state: 'PreparingUpdate' }],
      ['p1', { revision: NEW }],
    ],
    preparingUpdateAsUpdate: true,
    want: {},
  },
  {
    name: 'without PreparingUpdateAsUpdate the same pod is old',
    spec: { replicas: 2 },
    pods: [
      ['p0', { revision: OLD, state: 'PreparingUpdate' }],
      ['p1', { revision: NEW }],
    ],
    want: { updateNum: 1, updateMaxUnavailable: 1 },
  },
  // Specified deletion with surge (expand-then-shrink replacement)
  {
    name: 'maxUnavailable 2 / maxSurge 1: no surge needed to delete pod-b',
    spec: { replicas: 3, scaleStrategy: { podsToDelete: ['b'] }, updateStrategy: { rollingUpdate: { maxUnavailable: 2, maxSurge: 1 } } },
    pods: [
      ['a', { revision: NEW, ready: false }],
      ['b', { revision: NEW }],
      ['c', { revision: NEW }],
    ],
    want: { deleteReadyLimit: 1 },
  },
  {
    name: 'maxUnavailable 1 / maxSurge 1: surge one replacement before deleting pod-b',
    spec: { replicas: 3, scaleStrategy: { podsToDelete: ['b'] }, updateStrategy: { rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } },
    pods: [
      ['a', { revision: NEW, ready: false }],
      ['b', { revision: NEW }],
      ['c', { revision: NEW }],
    ],
    want: { useSurge: 1, scaleUpNum: 1, scaleUpLimit: 1, deleteReadyLimit: 0 },
  },
];

describe('calculateDiffsWithExpectation', () => {
  for (const c of cases) {
    it(c.name, () => {
      const cs = cloneSet(c.spec);
      const pods = c.pods.map(([name, o]) => pod(name, o));
      const features = gates({ CloneSetPartitionRollback: !!c.rollbackGate, PreparingUpdateAsUpdate: !!c.preparingUpdateAsUpdate });
      const got = calculateDiffsWithExpectation(cs, pods, c.current ?? OLD, NEW, {
        nowMs: NOW,
        features,
        isPodUpdate: (p, r) => isPodUpdate(p, r, features),
        scalingExcludePreparingDelete: c.excludeFlag,
      });
      assert.deepEqual(got, { ...EMPTY_DIFFS, ...c.want });
    });
  }

  it('minReadySeconds keeps freshly ready pods unavailable', () => {
    const cs = cloneSet({ replicas: 2, minReadySeconds: 600, scaleStrategy: { maxUnavailable: 1 } });
    const pods = [pod('p0', { revision: NEW, readySince: '2026-07-01T11:59:00Z' })];
    const got = calculateDiffsWithExpectation(cs, pods, NEW, NEW, { nowMs: NOW, features: gates() });
    assert.equal(got.scaleUpNum, 1);
    assert.equal(got.scaleUpLimit, 0);
  });
});

// Upstream's TestCalculateDiffsWithExpectation (kruise v1.8.2, cloneset_sync_utils_test.go), case for
// case: the same CloneSets and pods, the same expected diffs. Upstream runs them with
// PreparingUpdateAsUpdate on and CloneSetPartitionRollback on unless a case turns it off; its pods carry
// only the revision and lifecycle labels, a Ready condition when ready, and the specified-delete label.

interface UpstreamSet {
  replicas: number;
  partition: number | string;
  maxUnavailable: number | string;
  maxSurge: number | string;
  scaleMaxUnavailable?: number;
  paused?: boolean;
}

/** `<old|new> <ready|unready> [lifecycle state other than Normal] [delete]` */
type PodCode = string;

interface UpstreamCase {
  name: string;
  set: UpstreamSet;
  pods: PodCode[];
  /** The CloneSet carries the scaling-exclude-preparing-delete label. */
  excludePreparingDeleteLabel?: boolean;
  /** currentRevision == updateRevision. */
  revisionConsistent?: boolean;
  rollbackGate?: false;
  /** Called as the scale path calls it: with revision.IsPodUpdate. */
  scalingIsPodUpdate?: boolean;
  want: Partial<ExpectationDiffs>;
}

function upstreamSet(s: UpstreamSet, excludePreparingDelete: boolean): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: {
      name: 'cs',
      namespace: 'default',
      ...(excludePreparingDelete ? { labels: { 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete': 'true' } } : {}),
    },
    spec: {
      replicas: s.replicas,
      selector: { matchLabels: { app: 'demo' } },
      template: { metadata: { labels: { app: 'demo' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
      updateStrategy: {
        rollingUpdate: {
          partition: s.partition,
          maxUnavailable: s.maxUnavailable,
          maxSurge: s.maxSurge,
          ...(s.paused ? { paused: true } : {}),
        },
      },
      ...(s.scaleMaxUnavailable !== undefined ? { scaleStrategy: { maxUnavailable: s.scaleMaxUnavailable } } : {}),
    },
  } as CloneSet;
}

function upstreamPod(code: PodCode, i: number): Pod {
  const [rev, readiness, ...rest] = code.split(' ');
  const del = rest.includes('delete');
  const state = rest.find((w) => w !== 'delete') ?? 'Normal';
  return {
    metadata: {
      name: `pod-${i}`,
      labels: {
        'controller-revision-hash': `${rev}_rev`,
        'lifecycle.apps.kruise.io/state': state,
        ...(del ? { 'apps.kruise.io/specified-delete': 'true' } : {}),
      },
    },
    spec: { containers: [{ name: 'main', image: 'nginx' }] },
    ...(readiness === 'ready' ? { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } : {}),
  } as Pod;
}

const upstreamCases: UpstreamCase[] = [
  {
    name: 'an empty cloneset',
    set: { replicas: 0, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: [],
    want: {},
  },
  {
    name: 'increase replicas to 5 (step 1/2)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: [],
    want: { scaleUpNum: 5, scaleUpLimit: 5 },
  },
  {
    name: 'increase replicas to 5 (step 2/2)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: {},
  },
  {
    name: 'specified delete 1 pod (all ready) (step 1/3)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready delete', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: { deleteReadyLimit: 1 },
  },
  {
    name: 'specified delete 1 pod (all ready) (step 2/3)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready'],
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: 'specified delete 1 pod (all ready) (step 3/3)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: {},
  },
  {
    name: 'specified delete 2 pod (all ready) (step 1/6)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready delete', 'new ready delete', 'new ready', 'new ready', 'new ready'],
    want: { deleteReadyLimit: 1 },
  },
  {
    name: 'specified delete 2 pod (all ready) (step 2/6)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready delete', 'new ready', 'new ready', 'new ready'],
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: 'specified delete 2 pod (all ready) (step 3/6)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready delete', 'new ready', 'new ready', 'new ready', 'new unready'],
    want: {},
  },
  {
    name: 'specified delete 2 pod (all ready) (step 4/6)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready delete', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: { deleteReadyLimit: 1 },
  },
  {
    name: 'specified delete 2 pod (all ready) (step 5/6)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready'],
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: 'specified delete 2 pod (all ready) (step 6/6)',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: {},
  },
  {
    name: 'specified delete 2 pod and replicas to 4 (step 1/3)',
    set: { replicas: 4, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new unready delete', 'new unready delete', 'new ready', 'new ready', 'new ready'],
    want: { deleteReadyLimit: 2 },
  },
  {
    name: 'specified delete 2 pod and replicas to 4 (step 2/3)',
    set: { replicas: 4, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready'],
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: 'specified delete 2 pod and replicas to 4 (step 3/3)',
    set: { replicas: 4, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready'],
    want: {},
  },
  {
    name: 'update partition=3 (step 1/3)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { updateNum: 2, updateMaxUnavailable: 1 },
  },
  {
    name: 'update partition=3 (step 2/3)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { updateNum: 1, updateMaxUnavailable: 1 },
  },
  {
    name: 'update partition=3 (step 3/3)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'old ready', 'old ready', 'old ready'],
    want: {},
  },
  {
    name: 'rollback partition=4 (step 1/3)',
    set: { replicas: 5, partition: 4, maxUnavailable: 2, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready', 'old ready'],
    want: { updateNum: -3, updateMaxUnavailable: 2 },
  },
  {
    name: 'rollback partition=4 (step 2/3)',
    set: { replicas: 5, partition: 4, maxUnavailable: 2, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'old ready', 'old ready', 'old ready'],
    want: { updateNum: -1, updateMaxUnavailable: 2 },
  },
  {
    name: 'rollback partition=4 (step 3/3)',
    set: { replicas: 5, partition: 4, maxUnavailable: 2, maxSurge: 0 },
    pods: ['new ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: {},
  },
  {
    name: 'specified delete with maxSurge (step 1/4)',
    set: { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    pods: ['new ready delete', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: { scaleUpNum: 1, useSurge: 1, scaleUpLimit: 1 },
  },
  {
    name: 'specified delete with maxSurge (step 2/4)',
    set: { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    pods: ['new ready delete', 'new ready', 'new ready', 'new ready', 'new ready', 'new unready'],
    want: { useSurge: 1 },
  },
  {
    name: 'specified delete with maxSurge (step 3/4)',
    set: { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    pods: ['new ready delete', 'new ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: { deleteReadyLimit: 1, useSurge: 1 },
  },
  {
    name: 'specified delete with maxSurge (step 4/4)',
    set: { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    want: {},
  },
  {
    name: 'update in-place partition=3 with maxSurge (step 1/4)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { scaleUpNum: 1, useSurge: 1, updateNum: 2, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  },
  {
    name: 'update in-place partition=3 with maxSurge (step 2/4)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: { useSurge: 1, updateNum: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'update in-place partition=3 with maxSurge (step 3/4)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new unready Updating', 'new unready'],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 0 },
  },
  {
    name: 'update in-place partition=3 with maxSurge (step 4/4)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new ready', 'new unready'],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
  },
  {
    name: 'update recreate partition=3 with maxSurge (step 1/7)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { scaleUpNum: 1, useSurge: 1, updateNum: 2, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  },
  {
    name: 'update recreate partition=3 with maxSurge (step 2/7)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: { useSurge: 1, updateNum: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'update recreate partition=3 with maxSurge (step 3/7)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready delete', 'new unready'],
    want: { useSurge: 1, useSurgeOldRevision: 1, deleteReadyLimit: 1, updateNum: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'update recreate partition=3 with maxSurge (step 4/7)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: { useSurge: 1, scaleUpNum: 1, updateNum: 1, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  },
  {
    name: 'update recreate partition=3 with maxSurge (step 5/7)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new unready', 'new unready'],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 0 },
  },
  {
    name: 'update recreate partition=3 with maxSurge (step 6/7)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new ready', 'new unready'],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
  },
  {
    name: 'update recreate partition=3 with maxSurge (step 7/7)',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: ['old ready', 'old ready', 'old ready', 'new ready', 'new ready'],
    want: {},
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 1/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: 3, maxSurge: 2 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { scaleUpNum: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 3, scaleUpLimit: 1 },
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 2/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: 3, maxSurge: 2 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 3 },
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 3/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: 3, maxSurge: 2 },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: {},
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 1/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: '40%', maxSurge: '30%' },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { scaleUpNum: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 2, scaleUpLimit: 1 },
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 2/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: '40%', maxSurge: '30%' },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 2 },
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 3/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: '40%', maxSurge: '30%' },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: {},
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 1/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: '30%', maxSurge: '30%' },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { scaleUpNum: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 2/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: '30%', maxSurge: '30%' },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
  },
  {
    name: 'update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 3/3)',
    set: { replicas: 5, partition: '99%', maxUnavailable: '30%', maxSurge: '30%' },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'new unready'],
    want: {},
  },
  {
    name: 'revision consistent 1',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    revisionConsistent: true,
    want: {},
  },
  {
    name: 'revision consistent 2',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    revisionConsistent: true,
    want: {},
  },
  {
    name: 'revision consistent 3',
    set: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 },
    pods: ['old ready', 'old ready', 'new ready', 'new ready', 'new ready'],
    revisionConsistent: true,
    want: {},
  },
  {
    name: 'revision consistent 4',
    set: { replicas: 5, partition: 1, maxUnavailable: 1, maxSurge: 0 },
    pods: ['old ready', 'old ready', 'old ready', 'new ready', 'new ready'],
    revisionConsistent: true,
    want: { updateNum: 2, updateMaxUnavailable: 1 },
  },
  {
    name: 'allow to update when fail to scale out normally',
    set: { replicas: 5, partition: 1, maxUnavailable: 2, maxSurge: 0 },
    pods: ['old ready', 'old ready', 'new ready', 'new ready'],
    revisionConsistent: true,
    want: { scaleUpNum: 1, updateNum: 1, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  },
  {
    name: 'allow to update when fail to scale in normally',
    set: { replicas: 5, partition: 1, maxUnavailable: 1, maxSurge: 0 },
    pods: ['old ready', 'old ready', 'old ready', 'new ready', 'new ready', 'new ready'],
    revisionConsistent: true,
    want: { scaleDownNum: 1, scaleDownNumOldRevision: 2, deleteReadyLimit: 2, updateNum: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'disable rollback feature-gate',
    set: { replicas: 5, partition: 4, maxUnavailable: 1, maxSurge: 0 },
    pods: ['old ready', 'new ready', 'new ready', 'new ready', 'new ready'],
    rollbackGate: false,
    want: {},
  },
  {
    name: 'increase replicas 0 to 5 with scale maxUnavailable = 2',
    set: { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0, scaleMaxUnavailable: 2 },
    pods: [],
    want: { scaleUpNum: 5, scaleUpLimit: 2 },
  },
  {
    name: 'increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 1',
    set: { replicas: 6, partition: 0, maxUnavailable: 1, maxSurge: 0, scaleMaxUnavailable: 2 },
    pods: ['new ready', 'new ready', 'new unready'],
    want: { scaleUpNum: 3, scaleUpLimit: 1 },
  },
  {
    name: 'increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 2',
    set: { replicas: 6, partition: 0, maxUnavailable: 1, maxSurge: 0, scaleMaxUnavailable: 2 },
    pods: ['new ready', 'new unready', 'new unready'],
    want: { scaleUpNum: 3, scaleUpLimit: 0 },
  },
  {
    name: '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 1/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready delete'],
    want: { deleteReadyLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 2/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete'],
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 3/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready'],
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 4/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new unready'],
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 1/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready delete'],
    excludePreparingDeleteLabel: true,
    want: { deleteReadyLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 2/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete'],
    excludePreparingDeleteLabel: true,
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 3/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete', 'new unready'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 4/4)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete', 'new unready'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 1/5)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready delete'],
    excludePreparingDeleteLabel: true,
    want: { deleteReadyLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 2/5)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete'],
    excludePreparingDeleteLabel: true,
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 3/5)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete', 'new unready'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 4/5)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready', 'new unready'],
    excludePreparingDeleteLabel: true,
    want: { scaleDownNum: 1, deleteReadyLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 5/5)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 1/6)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 2/6)',
    set: { replicas: 2, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready delete'],
    excludePreparingDeleteLabel: true,
    want: { deleteReadyLimit: 2 },
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 3/6)',
    set: { replicas: 2, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 4/6)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete'],
    excludePreparingDeleteLabel: true,
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 5/6)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new ready PreparingDelete delete', 'new unready'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 6/6)',
    set: { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    pods: ['new ready', 'new ready', 'new unready'],
    excludePreparingDeleteLabel: true,
    want: {},
  },
  {
    name: '[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 1',
    set: { replicas: 4, partition: '90%', maxUnavailable: 1, maxSurge: 0 },
    pods: ['old ready PreparingUpdate', 'old ready', 'old ready'],
    excludePreparingDeleteLabel: true,
    scalingIsPodUpdate: true,
    want: { scaleUpNum: 1, scaleUpLimit: 1, scaleUpNumOldRevision: 1 },
  },
  {
    name: '[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 2',
    set: { replicas: 4, partition: 2, maxUnavailable: 1, maxSurge: 0 },
    pods: ['old ready PreparingUpdate', 'old ready', 'old ready'],
    excludePreparingDeleteLabel: true,
    scalingIsPodUpdate: true,
    want: { scaleUpNum: 1, scaleUpLimit: 1 },
  },
  {
    name: '[UpdateStrategyPaused=true] scale up pods with maxSurge=3,maxUnavailable=0',
    set: { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 3, paused: true },
    pods: ['old ready', 'old ready', 'old ready'],
    want: { scaleUpNum: 2, scaleUpLimit: 2, updateNum: 3, updateMaxUnavailable: -2 },
  },
  {
    name: '[UpdateStrategyPaused=true] scale down pods with maxSurge=3,maxUnavailable=0',
    set: { replicas: 3, partition: 0, maxUnavailable: 0, maxSurge: 3, paused: true },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready'],
    want: { scaleDownNum: 2, scaleDownNumOldRevision: 5, deleteReadyLimit: 2, updateNum: 3, updateMaxUnavailable: 2 },
  },
  {
    name: '[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0',
    set: { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 3, paused: true },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready', 'new unready', 'new unready', 'new unready'],
    want: { scaleDownNum: 3, scaleDownNumOldRevision: 5, updateNum: 2, updateMaxUnavailable: 3 },
  },
  {
    name: '[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0',
    set: { replicas: 5, partition: 2, maxUnavailable: 0, maxSurge: 3, paused: true },
    pods: ['old ready', 'old ready', 'old ready', 'old ready', 'old ready', 'new unready', 'new unready', 'new unready'],
    want: { scaleDownNum: 3, scaleDownNumOldRevision: 3 },
  },
];

describe('calculateDiffsWithExpectation: upstream cases', () => {
  for (const c of upstreamCases) {
    it(c.name, () => {
      const features = gates({ PreparingUpdateAsUpdate: true, CloneSetPartitionRollback: c.rollbackGate ?? true });
      const got = calculateDiffsWithExpectation(
        upstreamSet(c.set, !!c.excludePreparingDeleteLabel),
        c.pods.map(upstreamPod),
        c.revisionConsistent ? 'new_rev' : 'old_rev',
        'new_rev',
        { nowMs: NOW, features, ...(c.scalingIsPodUpdate ? { isPodUpdate: (p: Pod, r: string) => isPodUpdate(p, r, features) } : {}) },
      );
      assert.deepEqual(got, { ...EMPTY_DIFFS, ...c.want });
    });
  }
});
