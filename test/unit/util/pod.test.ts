import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  activePodsLess,
  activePodsWithRanksLess,
  compareActivePods,
  compareActivePodsWithRanks,
  getPodDeletionCost,
  getPodRevision,
  isPodActive,
  isPodAtRevision,
  isPodAvailable,
  isPodReady,
  isPodTerminating,
  parsePodDeletionCost,
  podReadyTime,
  sameNodeRanker,
  spreadConstraintsRanker,
  timeMillis,
  type PodFacts,
  type RankedOrderOptions,
} from '../../../src/util/pod.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const THEN = Date.parse('2025-12-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

interface PodOpts {
  name?: string;
  uid?: string;
  node?: string;
  phase?: string;
  ready?: boolean;
  readySince?: number;
  created?: number;
  restarts?: number;
  sidecarRestarts?: number;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  deleting?: boolean;
}

function pod(o: PodOpts = {}): PodFacts {
  return {
    metadata: {
      name: o.name ?? 'p',
      uid: o.uid ?? o.name ?? 'p',
      labels: o.labels,
      annotations: o.annotations,
      creationTimestamp: o.created === undefined ? undefined : iso(o.created),
      deletionTimestamp: o.deleting ? iso(NOW) : undefined,
    },
    spec: {
      nodeName: o.node ?? '',
      initContainers: o.sidecarRestarts === undefined ? [] : [{ name: 'sidecar', restartPolicy: 'Always' }, { name: 'init' }],
    },
    status: {
      phase: o.phase ?? 'Running',
      conditions:
        o.ready === undefined
          ? []
          : [
              {
                type: 'Ready',
                status: o.ready ? 'True' : 'False',
                lastTransitionTime: o.readySince === undefined ? undefined : iso(o.readySince),
              },
            ],
      containerStatuses: [{ name: 'main', restartCount: o.restarts ?? 0 }],
      initContainerStatuses:
        o.sidecarRestarts === undefined
          ? []
          : [
              { name: 'sidecar', restartCount: o.sidecarRestarts },
              { name: 'init', restartCount: 100 },
            ],
    },
  };
}

describe('pod predicates', () => {
  const activity: Array<[string, PodFacts, boolean, boolean]> = [
    // [name, pod, active, terminating]
    ['running', pod(), true, false],
    ['pending', pod({ phase: 'Pending' }), true, false],
    ['no status', { metadata: {} }, true, false],
    ['succeeded', pod({ phase: 'Succeeded' }), false, false],
    ['failed', pod({ phase: 'Failed' }), false, false],
    ['running, being deleted', pod({ deleting: true }), false, true],
    ['failed, being deleted', pod({ phase: 'Failed', deleting: true }), false, false],
  ];
  for (const [name, p, active, terminating] of activity) {
    it(`${name}: active=${active} terminating=${terminating}`, () => {
      assert.equal(isPodActive(p), active);
      assert.equal(isPodTerminating(p), terminating);
    });
  }

  const readiness: Array<[string, PodFacts, boolean, number | undefined]> = [
    ['Ready True', pod({ ready: true, readySince: THEN }), true, THEN],
    ['Ready True without time', pod({ ready: true }), true, undefined],
    ['Ready False', pod({ ready: false, readySince: THEN }), false, undefined],
    ['no conditions', pod(), false, undefined],
    [
      'first Ready condition decides',
      {
        status: {
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'Ready', status: 'True', lastTransitionTime: iso(THEN) },
          ],
        },
      },
      false,
      undefined,
    ],
  ];
  for (const [name, p, ready, since] of readiness) {
    it(`${name}: ready=${ready}`, () => {
      assert.equal(isPodReady(p), ready);
      assert.equal(podReadyTime(p), since);
    });
  }

  const availability: Array<[string, PodFacts, number, boolean]> = [
    ['not ready', pod({ ready: false, readySince: THEN }), 0, false],
    ['ready, minReadySeconds 0', pod({ ready: true }), 0, true],
    ['ready 10s, needs 10s', pod({ ready: true, readySince: NOW - 10_000 }), 10, true],
    ['ready 9s, needs 10s', pod({ ready: true, readySince: NOW - 9_000 }), 10, false],
    ['ready, no transition time, needs 10s', pod({ ready: true }), 10, false],
  ];
  for (const [name, p, minReady, want] of availability) {
    it(`available: ${name} → ${want}`, () => {
      assert.equal(isPodAvailable(p, minReady, NOW), want);
    });
  }

  it('timeMillis treats unset and Go zero times as unset', () => {
    assert.equal(timeMillis(undefined), undefined);
    assert.equal(timeMillis(null), undefined);
    assert.equal(timeMillis(''), undefined);
    assert.equal(timeMillis('0001-01-01T00:00:00Z'), undefined);
    assert.equal(timeMillis('1970-01-01T00:00:00Z'), 0);
    assert.equal(timeMillis(new Date(THEN)), THEN);
  });
});

describe('pod-deletion-cost', () => {
  const cases: Array<[string | undefined, number]> = [
    [undefined, 0],
    ['10', 10],
    ['-100', -100],
    ['0', 0],
    ['-0', 0],
    ['+10', 0],
    ['008', 0],
    ['-008', -8], // upstream checks only the first character
    ['1.0', 0],
    ['', 0],
    ['abc', 0],
    ['-', 0],
    ['2147483647', 2147483647],
    ['2147483648', 0],
    ['-2147483648', -2147483648],
    ['-2147483649', 0],
  ];
  for (const [value, want] of cases) {
    it(`${JSON.stringify(value)} → ${want}`, () => {
      assert.equal(parsePodDeletionCost(value), want);
      const annotations = value === undefined ? undefined : { 'controller.kubernetes.io/pod-deletion-cost': value };
      assert.equal(getPodDeletionCost(pod({ annotations })), want);
    });
  }
});

describe('revision label helpers', () => {
  const p = pod({ labels: { 'controller-revision-hash': 'demo-54c58795ff', custom: 'demo-897f4dc56' } });
  it('reads controller-revision-hash or a custom key', () => {
    assert.equal(getPodRevision(p), 'demo-54c58795ff');
    assert.equal(getPodRevision(p, 'custom'), 'demo-897f4dc56');
    assert.equal(getPodRevision(pod()), '');
  });
  it('compares full names or short hashes', () => {
    assert.equal(isPodAtRevision(p, 'demo-54c58795ff'), true);
    assert.equal(isPodAtRevision(p, '54c58795ff'), true);
    assert.equal(isPodAtRevision(p, 'demo-897f4dc56'), false);
    assert.equal(isPodAtRevision(p, 'demo-897f4dc56', 'custom'), true);
    assert.equal(isPodAtRevision(pod(), 'demo-54c58795ff'), false);
  });
});

// Pods as in upstream's TestSortingActivePods (Kubernetes controller_utils_test.go and Kruise
// pod_sorter_test.go).
const unscheduled = pod({ name: 'unscheduled', phase: 'Pending' });
const scheduledPending = pod({ name: 'pending', node: 'node', phase: 'Pending' });
const unknownPhase = pod({ name: 'unknown-phase', node: 'node', phase: 'Unknown' });
const runningNotReady = pod({ name: 'not-ready', node: 'node' });
const readyNoTransition = pod({ name: 'ready-no-last-transition-time', node: 'node', ready: true });
const readyNow = pod({ name: 'ready-now', node: 'node', ready: true, readySince: NOW, created: NOW });
const readyThen = pod({ name: 'ready-then', node: 'node', ready: true, readySince: THEN, created: THEN });
const readyNowHighRestarts = pod({ name: 'ready-high-restarts', node: 'node', ready: true, readySince: NOW, created: NOW, restarts: 9001 });
const readyNowCreatedThen = pod({ name: 'ready-now-created-then', node: 'node', ready: true, readySince: NOW, created: THEN });
const lowCost = pod({
  name: 'low-deletion-cost',
  node: 'node',
  ready: true,
  readySince: NOW,
  created: THEN,
  annotations: { 'controller.kubernetes.io/pod-deletion-cost': '10' },
});
const highCost = pod({
  name: 'high-deletion-cost',
  node: 'node',
  ready: true,
  readySince: NOW,
  created: THEN,
  annotations: { 'controller.kubernetes.io/pod-deletion-cost': '100' },
});

// [lesser (deleted first), greater, why]
const commonOrder: Array<[PodFacts, PodFacts, string]> = [
  [unscheduled, scheduledPending, 'unassigned before assigned'],
  [scheduledPending, unknownPhase, 'Pending before Unknown'],
  [unknownPhase, runningNotReady, 'Unknown before Running'],
  [runningNotReady, readyNoTransition, 'not ready before ready'],
  [readyNoTransition, readyNow, 'unset ready time before any ready time'],
  [readyNow, readyThen, 'ready more recently before ready longer'],
  [readyNowHighRestarts, readyNow, 'more restarts before fewer'],
  [readyNow, readyNowCreatedThen, 'newer before older'],
  [pod({ name: 'no-created', node: 'node' }), pod({ name: 'created', node: 'node', created: THEN }), 'unset creation time before any'],
];

function assertStrictOrder(less: (a: PodFacts, b: PodFacts) => boolean, lesser: PodFacts, greater: PodFacts): void {
  assert.equal(less(lesser, greater), true, `${lesser.metadata?.name} should come before ${greater.metadata?.name}`);
  assert.equal(less(greater, lesser), false, `${greater.metadata?.name} should not come before ${lesser.metadata?.name}`);
}

const equalityPods = [
  unscheduled,
  scheduledPending,
  unknownPhase,
  runningNotReady,
  readyNowCreatedThen,
  readyNow,
  readyThen,
  readyNowHighRestarts,
];

describe('ActivePods order (Kubernetes)', () => {
  for (const [lesser, greater, why] of commonOrder) {
    it(why, () => assertStrictOrder(activePodsLess, lesser, greater));
  }

  it('a pod is never less than itself', () => {
    for (const p of equalityPods) assert.equal(activePodsLess(p, p), false);
  });

  it('ignores pod-deletion-cost', () => {
    assert.equal(activePodsLess(lowCost, highCost), false);
    assert.equal(activePodsLess(highCost, lowCost), false);
  });

  it('breaks restart ties with restartable init (sidecar) containers only', () => {
    const a = pod({ name: 'a', node: 'n', restarts: 1, sidecarRestarts: 5 });
    const b = pod({ name: 'b', node: 'n', restarts: 1, sidecarRestarts: 2 });
    assertStrictOrder(activePodsLess, a, b);
    // Plain init containers (restartCount 100 here) do not count.
    const c = pod({ name: 'c', node: 'n', restarts: 1, sidecarRestarts: 2 });
    assert.equal(activePodsLess(b, c), false);
    assert.equal(activePodsLess(c, b), false);
  });

  it('sorts a shuffled list into deletion order', () => {
    const expected = [
      unscheduled,
      scheduledPending,
      unknownPhase,
      runningNotReady,
      readyNoTransition,
      readyNowHighRestarts,
      readyNow,
      readyNowCreatedThen,
      readyThen,
    ];
    const shuffled = [
      readyThen,
      readyNow,
      unscheduled,
      readyNowCreatedThen,
      runningNotReady,
      readyNowHighRestarts,
      unknownPhase,
      readyNoTransition,
      scheduledPending,
    ];
    assert.deepEqual(
      shuffled.sort(compareActivePods).map((p) => p.metadata?.name),
      expected.map((p) => p.metadata?.name),
    );
  });
});

describe('ActivePodsWithRanks order (Kruise deletion order)', () => {
  const less =
    (opts: RankedOrderOptions = {}) =>
    (a: PodFacts, b: PodFacts) =>
      activePodsWithRanksLess(a, b, opts);

  for (const [lesser, greater, why] of commonOrder) {
    it(why, () => assertStrictOrder(less(), lesser, greater));
  }

  it('a pod is never less than itself', () => {
    for (const p of equalityPods) assert.equal(activePodsWithRanksLess(p, p), false);
  });

  it('lower pod-deletion-cost first', () => {
    assertStrictOrder(less(), lowCost, highCost);
    const negative = pod({ name: 'neg', node: 'n', ready: true, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } });
    const zero = pod({ name: 'zero', node: 'n', ready: true });
    assertStrictOrder(less(), negative, zero);
    // Invalid cost counts as 0.
    const invalid = pod({ name: 'invalid', node: 'n', ready: true, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '+10' } });
    assert.equal(activePodsWithRanksLess(invalid, zero), false);
    assert.equal(activePodsWithRanksLess(zero, invalid), false);
  });

  it('deletion cost outranks readiness time, restarts and age, but not readiness', () => {
    const cheapOld = pod({
      name: 'cheap',
      node: 'n',
      ready: true,
      readySince: THEN,
      created: THEN,
      annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-1' },
    });
    const youngRestarting = pod({ name: 'young', node: 'n', ready: true, readySince: NOW, created: NOW, restarts: 50 });
    assertStrictOrder(less(), cheapOld, youngRestarting);
    const notReadyExpensive = pod({
      name: 'not-ready-expensive',
      node: 'n',
      ready: false,
      annotations: { 'controller.kubernetes.io/pod-deletion-cost': '1000' },
    });
    assertStrictOrder(less(), notReadyExpensive, cheapOld);
  });

  it('not available before available (when an availability function is given)', () => {
    const a = pod({ name: 'unavailable', node: 'n', ready: true, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '100' } });
    const b = pod({ name: 'available', node: 'n', ready: true });
    const isAvailable = (p: PodFacts) => p.metadata?.name === 'available';
    assertStrictOrder(less({ isAvailable }), a, b);
    // Without it, cost decides.
    assertStrictOrder(less(), b, a);
  });

  it('higher rank first, after cost and before ready time', () => {
    const ranks: Record<string, number> = { crowded: 2, alone: 0 };
    const rank = (p: PodFacts) => ranks[p.metadata?.name ?? ''] ?? 0;
    const crowded = pod({ name: 'crowded', node: 'a', ready: true, readySince: THEN });
    const alone = pod({ name: 'alone', node: 'b', ready: true, readySince: NOW });
    assertStrictOrder(less({ rank }), crowded, alone);
    assertStrictOrder(less(), alone, crowded);
    const costly = pod({ name: 'crowded', node: 'a', ready: true, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '5' } });
    assertStrictOrder(less({ rank }), alone, costly);
  });

  it('counts regular container restarts only', () => {
    const a = pod({ name: 'a', node: 'n', restarts: 1, sidecarRestarts: 5 });
    const b = pod({ name: 'b', node: 'n', restarts: 1, sidecarRestarts: 2 });
    assert.equal(activePodsWithRanksLess(a, b), false);
    assert.equal(activePodsWithRanksLess(b, a), false);
  });

  it('comparator sorts into deletion order', () => {
    const sorted = [highCost, readyThen, lowCost, runningNotReady, unscheduled].sort(compareActivePodsWithRanks());
    assert.deepEqual(
      sorted.map((p) => p.metadata?.name),
      ['unscheduled', 'not-ready', 'ready-then', 'low-deletion-cost', 'high-deletion-cost'],
    );
  });
});

describe('rankers', () => {
  it('sameNodeRanker ranks all but the best pod on crowded nodes (upstream TestSameNodeRanker)', () => {
    // node a: 0, 4, 10; node b: 3, 6; node c: 5; node d: 7, 8, 9; unassigned: 1, 2
    const nodes: Record<string, string> = { '0': 'a', '3': 'b', '4': 'a', '5': 'c', '6': 'b', '7': 'd', '8': 'd', '9': 'd', '10': 'a' };
    const pods = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10'].map((uid) => ({
      metadata: { uid },
      spec: { nodeName: nodes[uid] ?? '' },
    }));
    const rank = sameNodeRanker(pods);
    const ranks = Object.fromEntries(pods.map((p) => [p.metadata.uid, rank(p)]).filter(([, r]) => r !== 0));
    assert.deepEqual(ranks, { '0': 2, '4': 1, '3': 1, '7': 2, '8': 1 });
  });

  it('sameNodeRanker keeps the most valuable pod on a node unranked', () => {
    const weak = pod({ name: 'weak', node: 'n', ready: false });
    const strong = pod({ name: 'strong', node: 'n', ready: true });
    const rank = sameNodeRanker([strong, weak]);
    assert.equal(rank(weak), 1);
    assert.equal(rank(strong), 0);
  });

  // upstream TestSpreadConstraintsRanker
  const ZONE = 'failure-domain.beta.kubernetes.io/zone';
  const HOST = 'kubernetes.io/hostname';
  const nodeLabels: Record<string, Record<string, string>> = {
    a: {},
    b: { [HOST]: 'b', [ZONE]: 'z1' },
    c: { [HOST]: 'c', [ZONE]: 'z1' },
    d: { [HOST]: 'd', [ZONE]: 'z1' },
    e: { [HOST]: 'e', [ZONE]: 'z2' },
    f: { [HOST]: 'f', [ZONE]: 'z2' },
    g: { [HOST]: 'g', [ZONE]: 'z2' },
    h: { [HOST]: 'h', [ZONE]: 'z3' },
    i: { [HOST]: 'i', [ZONE]: 'z3' },
  };
  const genPods = (n: number, node: string) =>
    Array.from({ length: n }, (_, i) => ({ metadata: { uid: `${node}-${i}` }, spec: { nodeName: node } }));
  const pods = [
    ...genPods(2, 'a'),
    ...genPods(2, 'b'),
    ...genPods(3, 'c'),
    ...genPods(5, 'd'),
    ...genPods(5, 'e'),
    ...genPods(3, 'f'),
    ...genPods(5, 'i'),
  ];

  const spreadCases: Array<[string, Array<{ topologyKey: string; limitedValues?: string[] }>, string[]]> = [
    [
      'zone{no limit}',
      [{ topologyKey: ZONE }],
      [
        'd-0',
        'd-1',
        'c-0',
        'e-0',
        'd-2',
        'e-1',
        'b-0',
        'e-2',
        'c-1',
        'f-0',
        'i-0',
        'd-3',
        'e-3',
        'i-1',
        'b-1',
        'f-1',
        'i-2',
        'c-2',
        'e-4',
        'i-3',
        'd-4',
        'f-2',
        'i-4',
      ],
    ],
    [
      'zone{limited (z2, z3)}',
      [{ topologyKey: ZONE, limitedValues: ['z2', 'z3'] }],
      ['e-0', 'e-1', 'e-2', 'f-0', 'i-0', 'e-3', 'i-1', 'f-1', 'i-2', 'e-4', 'i-3', 'f-2', 'i-4'],
    ],
    [
      'zone{no limit}, host',
      [{ topologyKey: ZONE }, { topologyKey: HOST }],
      [
        'd-0',
        'e-0',
        'd-1',
        'e-1',
        'c-0',
        'i-0',
        'd-2',
        'e-2',
        'i-1',
        'f-0',
        'b-0',
        'c-1',
        'i-2',
        'd-3',
        'e-3',
        'f-1',
        'i-3',
        'b-1',
        'c-2',
        'e-4',
        'd-4',
        'f-2',
        'i-4',
      ],
    ],
  ];
  for (const [name, constraints, expected] of spreadCases) {
    it(`spreadConstraintsRanker: ${name}`, () => {
      const rank = spreadConstraintsRanker(pods, constraints, (node) => nodeLabels[node]);
      const ranked = pods.filter((p) => rank(p) > 0).sort((x, y) => rank(y) - rank(x));
      assert.deepEqual(
        ranked.map((p) => p.metadata.uid),
        expected,
      );
    });
  }

  it('spreadConstraintsRanker skips pods on nodes it cannot read', () => {
    const rank = spreadConstraintsRanker(pods, [{ topologyKey: ZONE }], (node) => (node === 'd' ? undefined : nodeLabels[node]));
    assert.equal(rank({ metadata: { uid: 'd-0' } }), 0);
    assert.ok(rank({ metadata: { uid: 'c-0' } }) > 0);
  });
});
