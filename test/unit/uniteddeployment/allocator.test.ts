// UnitedDeployment replica allocators, term for term against behaviour spec §9.3
// (/work/shared/spec/openkruise-behaviour.md lines 612-616; cases after upstream allocator_test.go).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { UnitedDeploymentSpec } from '../../../src/apis/apps/uniteddeployment.ts';
import {
  AllocationError,
  allocateByMinMax,
  allocateReplicas,
  allocatorFor,
  MAX_INT32,
  parseSubsetReplicas,
  type ObservedSubset,
} from '../../../src/controllers/uniteddeployment/allocator.ts';

type SubsetDef = NonNullable<NonNullable<UnitedDeploymentSpec['topology']>['subsets']>[number];

function spec(
  replicas: number | undefined,
  subsets: SubsetDef[],
  strategy?: { type: 'Adaptive'; reserve?: boolean },
): UnitedDeploymentSpec {
  return {
    replicas,
    selector: { matchLabels: { app: 'ud' } },
    topology: {
      subsets,
      ...(strategy ? { scheduleStrategy: { type: strategy.type, adaptive: { reserveUnschedulablePods: strategy.reserve ?? false } } } : {}),
    },
  };
}

const observed = (replicas: number, o: Partial<ObservedSubset> = {}): ObservedSubset => ({
  replicas,
  runningReplicas: replicas,
  unschedulable: false,
  markedAsUnschedulable: false,
  reservedPods: 0,
  ...o,
});

const asObject = (m: Map<string, number>) => Object.fromEntries(m);

describe('parseSubsetReplicas (§9.3 line 612)', () => {
  const cases: Array<[number, number | string, number | 'error']> = [
    [10, 3, 3], // int ≥ 0 as is
    [10, 0, 0],
    [10, -1, 'error'], // negative int
    [10, '30%', 3], // 10·30/100
    [5, '50%', 3], // 2.5 rounds half up
    [5, '10%', 1], // 0.5 rounds half up
    [7, '33%', 2], // 2.31 rounds down
    [10, '100%', 10],
    [10, '0%', 0],
    [10, '101%', 'error'], // percent must be 0..100
    [10, '-1%', 'error'],
    [10, '1.5%', 'error'], // percent must be an integer
    [10, '30', 'error'], // needs the % suffix
    [-1, '30%', 'error'], // percent needs udReplicas ≥ 0
  ];
  for (const [ud, v, want] of cases) {
    test(`${ud} × ${JSON.stringify(v)} → ${want}`, () => {
      if (want === 'error') assert.throws(() => parseSubsetReplicas(ud, v), AllocationError);
      else assert.equal(parseSubsetReplicas(ud, v), want);
    });
  }
});

describe('allocator choice (NewReplicaAllocator)', () => {
  test('reservation > adaptive > minMax > specific', () => {
    assert.equal(allocatorFor(spec(5, [{ name: 'a' }])), 'specific');
    assert.equal(allocatorFor(spec(5, [{ name: 'a', maxReplicas: 2 }, { name: 'b' }])), 'minMax');
    assert.equal(allocatorFor(spec(5, [{ name: 'a' }], { type: 'Adaptive' })), 'adaptive');
    assert.equal(allocatorFor(spec(5, [{ name: 'a' }], { type: 'Adaptive', reserve: true })), 'reservation');
  });
});

describe('specificAllocator (§9.3 line 613)', () => {
  const cases: Array<{
    name: string;
    replicas: number | undefined;
    subsets: SubsetDef[];
    existing?: Record<string, number>;
    want: Record<string, number> | RegExp;
  }> = [
    {
      name: 'no specified subsets: even split, remainder +1 to subsets from the end of the sorted list',
      replicas: 10,
      subsets: [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
      want: { a: 3, b: 3, c: 4 },
    },
    {
      name: 'sorted by current workload replicas ascending then name: the remainder goes to the largest',
      replicas: 10,
      subsets: [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
      existing: { a: 5, b: 1, c: 1 },
      want: { a: 4, b: 3, c: 3 },
    },
    {
      name: 'equal current replicas sort by name: remainder 2 goes to c then b',
      replicas: 11,
      subsets: [{ name: 'c' }, { name: 'b' }, { name: 'a' }],
      want: { a: 3, b: 4, c: 4 },
    },
    {
      name: 'specified subsets get their parsed value, the rest is split among unspecified',
      replicas: 10,
      subsets: [{ name: 'a', replicas: 4 }, { name: 'b' }, { name: 'c' }],
      want: { a: 4, b: 3, c: 3 },
    },
    {
      name: 'percent specified: round half up of ud·pct/100',
      replicas: 5,
      subsets: [{ name: 'a', replicas: '50%' }, { name: 'b' }],
      want: { a: 3, b: 2 },
    },
    {
      name: 'all specified and summing to replicas',
      replicas: 6,
      subsets: [
        { name: 'a', replicas: 2 },
        { name: 'b', replicas: 4 },
      ],
      want: { a: 2, b: 4 },
    },
    {
      name: 'sum of specified > ud replicas ⇒ error',
      replicas: 5,
      subsets: [{ name: 'a', replicas: 4 }, { name: 'b', replicas: 2 }, { name: 'c' }],
      want: /specified subsets' replica \(6\) is greater than UnitedDeployment replica \(5\)/,
    },
    {
      name: 'all specified and sum < ud replicas ⇒ error',
      replicas: 7,
      subsets: [
        { name: 'a', replicas: 2 },
        { name: 'b', replicas: 4 },
      ],
      want: /specified subsets' replica \(6\) is less than UnitedDeployment replica \(7\)/,
    },
    {
      name: 'ud replicas nil ⇒ all subsets must be specified',
      replicas: undefined,
      subsets: [{ name: 'a', replicas: 2 }, { name: 'b' }],
      want: /all subsets must be specified when UnitedDeployment replica is unspecified/,
    },
    {
      name: 'ud replicas nil, all specified: their values',
      replicas: undefined,
      subsets: [
        { name: 'a', replicas: 2 },
        { name: 'b', replicas: 3 },
      ],
      want: { a: 2, b: 3 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const existing = new Map(Object.entries(c.existing ?? {}).map(([k, v]) => [k, observed(v)]));
      if (c.want instanceof RegExp) assert.throws(() => allocateReplicas(spec(c.replicas, c.subsets), existing), c.want);
      else assert.deepEqual(asObject(allocateReplicas(spec(c.replicas, c.subsets), existing)), c.want);
    });
  }
});

describe('minMaxAllocator (§9.3 line 614)', () => {
  const cases: Array<{ name: string; replicas: number; subsets: SubsetDef[]; want: Record<string, number> | RegExp }> = [
    {
      name: 'issue acceptance: 10 over a (min 2, max 4), b (max 3), c: pass 1 a=2, pass 2 a+2, b+3, c+3',
      replicas: 10,
      subsets: [{ name: 'a', minReplicas: 2, maxReplicas: 4 }, { name: 'b', maxReplicas: 3 }, { name: 'c' }],
      want: { a: 4, b: 3, c: 3 },
    },
    {
      name: 'upstream doc example: 5 over a (2..4), b (2..): pass 1 a=2, b=2, pass 2 a+1',
      replicas: 5,
      subsets: [
        { name: 'a', minReplicas: 2, maxReplicas: 4 },
        { name: 'b', minReplicas: 2 },
      ],
      want: { a: 3, b: 2 },
    },
    {
      name: 'pass 1 stops at the total: mins larger than replicas',
      replicas: 3,
      subsets: [
        { name: 'a', minReplicas: 2 },
        { name: 'b', minReplicas: 2 },
      ],
      want: { a: 2, b: 1 },
    },
    {
      name: 'percent min/max are parsed against ud replicas',
      replicas: 10,
      subsets: [{ name: 'a', minReplicas: '20%', maxReplicas: '50%' }, { name: 'b' }],
      want: { a: 5, b: 5 },
    },
    {
      name: 'min > max ⇒ error naming the subset index',
      replicas: 10,
      subsets: [{ name: 'a' }, { name: 'b', minReplicas: 5, maxReplicas: 3 }],
      want: /subset\[1\]\.maxReplicas\(3\) must be more than or equal to minReplicas\(5\)/,
    },
    {
      name: 'max defaults to MaxInt32: everything left goes to the first subset without max',
      replicas: 10,
      subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }, { name: 'c', minReplicas: 1 }],
      want: { a: 1, b: 8, c: 1 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      if (c.want instanceof RegExp) assert.throws(() => allocateReplicas(spec(c.replicas, c.subsets), new Map()), c.want);
      else assert.deepEqual(asObject(allocateReplicas(spec(c.replicas, c.subsets), new Map())), c.want);
    });
  }
  test('allocateByMinMaxMap never hands out negative replicas', () => {
    const out = allocateByMinMax(
      2,
      new Map([
        ['a', 3],
        ['b', 0],
      ]),
      new Map([
        ['a', 1],
        ['b', MAX_INT32],
      ]),
      [{ name: 'a' }, { name: 'b' }],
    );
    assert.deepEqual(asObject(out), { a: 2, b: 0 });
  });
});

describe('adaptiveAllocator (§9.3 line 615)', () => {
  const subsets: SubsetDef[] = [{ name: 'a', minReplicas: 2, maxReplicas: 4 }, { name: 'b', maxReplicas: 3 }, { name: 'c' }];
  const cases: Array<{ name: string; existing: Record<string, ObservedSubset>; want: Record<string, number> }> = [
    {
      name: 'all schedulable and nothing ready: same as min/max',
      existing: {},
      want: { a: 4, b: 3, c: 3 },
    },
    {
      name: 'unschedulable subset running r: min = min(r, min), max = min(r, max), even below its minReplicas; the rest moves on',
      existing: { a: observed(4, { runningReplicas: 0, unschedulable: true }), b: observed(3), c: observed(3) },
      // a: min = min(0, 2) = 0, max = min(0, 4) = 0: nothing; b, c: running 3 > min 0 ⇒ min 3; pass 2 gives c the remaining 4
      want: { a: 0, b: 3, c: 7 },
    },
    {
      name: 'unschedulable subset running fewer than its minReplicas keeps only those',
      existing: { a: observed(4, { runningReplicas: 1, unschedulable: true }), b: observed(3), c: observed(3) },
      // a: min = min(1, 2) = 1, max = min(1, 4) = 1; b, c min 3; pass 2 gives c the remaining 3
      want: { a: 1, b: 3, c: 6 },
    },
    {
      name: 'unschedulable subset without min and no ready pods: all its replicas move',
      existing: { a: observed(4), b: observed(3, { runningReplicas: 0, unschedulable: true }), c: observed(3) },
      want: { a: 4, b: 0, c: 6 },
    },
    {
      name: 'unschedulable subset with running pods keeps exactly them',
      existing: { a: observed(4), b: observed(3, { runningReplicas: 1, unschedulable: true }), c: observed(3) },
      want: { a: 4, b: 1, c: 5 },
    },
    {
      name: 'schedulable subset running r > min: min = min(r, max) (running pods are never taken away)',
      existing: { a: observed(0), b: observed(0), c: observed(6) },
      // c: min = min(6, MaxInt32) = 6; pass 1: a 2, b 0, c 6 (8); pass 2: a +2 → 10
      want: { a: 4, b: 0, c: 6 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const out = allocateReplicas(spec(10, subsets, { type: 'Adaptive' }), new Map(Object.entries(c.existing)));
      assert.deepEqual(asObject(out), c.want);
    });
  }
});

describe('reservationAllocator (§9.3 line 616)', () => {
  const subsets: SubsetDef[] = [{ name: 'a', minReplicas: 2, maxReplicas: 4 }, { name: 'b', maxReplicas: 3 }, { name: 'c' }];
  const cases: Array<{ name: string; existing: Record<string, ObservedSubset>; want: Record<string, number> }> = [
    {
      name: 'every subset allocatable (maxAllocatable MaxInt32): min/max',
      existing: {},
      want: { a: 4, b: 3, c: 3 },
    },
    {
      name: 'unschedulable a (4 replicas, 4 reserved): maxAllocatable 0, its replicas are re-allocated as temporary pods',
      existing: { a: observed(4, { runningReplicas: 0, unschedulable: true, markedAsUnschedulable: true, reservedPods: 4 }) },
      // pass 1: a allocate(2, 10) → maxAllocatable −2 → counts 0; pass 2: a allocate(4 (its spec.replicas), 10) → 0;
      // b +3, c +7 (rest 10 − 3)
      want: { a: 4, b: 3, c: 7 },
    },
    {
      name: 'partly recovered a (4 replicas, 1 reserved): maxAllocatable 3, one temporary pod elsewhere',
      existing: { a: observed(4, { runningReplicas: 3, unschedulable: true, markedAsUnschedulable: true, reservedPods: 1 }) },
      // a: allocate(2) → 2 counted (max 1 left), allocate(4) → +2 of which 1 counts → 3 counted; b 3, c 4
      want: { a: 4, b: 3, c: 4 },
    },
    {
      name: 'marked unschedulable with no reserved pods left: maxAllocatable = spec.replicas, no temporary pods',
      existing: { a: observed(4, { runningReplicas: 4, markedAsUnschedulable: true }) },
      want: { a: 4, b: 3, c: 3 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const out = allocateReplicas(spec(10, subsets, { type: 'Adaptive', reserve: true }), new Map(Object.entries(c.existing)));
      assert.deepEqual(asObject(out), c.want);
    });
  }
});
