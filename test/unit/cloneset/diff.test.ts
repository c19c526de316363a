import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { calculateDiffsWithExpectation, EMPTY_DIFFS, type ExpectationDiffs } from '../../../src/controllers/cloneset/diff.ts';
import { isPodUpdate } from '../../../src/controllers/cloneset/pods.ts';
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
    pods: [['p0', { revision: NEW }], ['p1', { revision: NEW, ready: false }]],
    want: { scaleUpNum: 3, scaleUpLimit: 1 },
  },
  {
    name: 'PreparingUpdateAsUpdate treats PreparingUpdate pods as updated',
    spec: { replicas: 2 },
    pods: [['p0', { revision: OLD, state: 'PreparingUpdate' }], ['p1', { revision: NEW }]],
    preparingUpdateAsUpdate: true,
    want: {},
  },
  {
    name: 'without PreparingUpdateAsUpdate the same pod is old',
    spec: { replicas: 2 },
    pods: [['p0', { revision: OLD, state: 'PreparingUpdate' }], ['p1', { revision: NEW }]],
    want: { updateNum: 1, updateMaxUnavailable: 1 },
  },
  // Specified deletion with surge (expand-then-shrink replacement)
  {
    name: 'maxUnavailable 2 / maxSurge 1: no surge needed to delete pod-b',
    spec: { replicas: 3, scaleStrategy: { podsToDelete: ['b'] }, updateStrategy: { rollingUpdate: { maxUnavailable: 2, maxSurge: 1 } } },
    pods: [['a', { revision: NEW, ready: false }], ['b', { revision: NEW }], ['c', { revision: NEW }]],
    want: { deleteReadyLimit: 1 },
  },
  {
    name: 'maxUnavailable 1 / maxSurge 1: surge one replacement before deleting pod-b',
    spec: { replicas: 3, scaleStrategy: { podsToDelete: ['b'] }, updateStrategy: { rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } },
    pods: [['a', { revision: NEW, ready: false }], ['b', { revision: NEW }], ['c', { revision: NEW }]],
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
