import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../../src/apis/core-objects.ts';
import type { PodSpec } from '../../../src/apis/core.ts';
import {
  nodeFitFailure,
  nodeShouldRunDaemonPod,
  podMatchesNodeAffinity,
  targetNodeName,
  toleratesTaint,
  withDaemonPodTolerations,
  withNodeNameAffinity,
} from '../../../src/util/nodefit.ts';

const node = (name: string, labels: Record<string, string> = {}, spec: Node['spec'] = {}): Node => ({ metadata: { name, labels }, spec });
const spec = (over: Partial<PodSpec> = {}): PodSpec => ({ containers: [{ name: 'c', image: 'i' }], ...over });
const required = (...terms: object[]) =>
  ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } }) as PodSpec['affinity'];

describe('podMatchesNodeAffinity (nodeSelector AND any required term)', () => {
  const n = node('n1', { zone: 'a', size: '8' });
  const cases: Array<[string, Partial<PodSpec>, boolean]> = [
    ['no constraints', {}, true],
    ['nodeSelector matches', { nodeSelector: { zone: 'a' } }, true],
    ['nodeSelector differs', { nodeSelector: { zone: 'b' } }, false],
    ['In', { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }) }, true],
    ['NotIn', { affinity: required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }) }, false],
    ['Exists', { affinity: required({ matchExpressions: [{ key: 'size', operator: 'Exists' }] }) }, true],
    ['DoesNotExist', { affinity: required({ matchExpressions: [{ key: 'size', operator: 'DoesNotExist' }] }) }, false],
    ['Gt', { affinity: required({ matchExpressions: [{ key: 'size', operator: 'Gt', values: ['4'] }] }) }, true],
    ['Lt', { affinity: required({ matchExpressions: [{ key: 'size', operator: 'Lt', values: ['4'] }] }) }, false],
    [
      'terms are ORed',
      {
        affinity: required(
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['x'] }] },
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
        ),
      },
      true,
    ],
    ['an empty term matches nothing', { affinity: required({}) }, false],
    [
      'matchFields other than metadata.name match nothing',
      { affinity: required({ matchFields: [{ key: 'spec.x', operator: 'In', values: ['n1'] }] }) },
      false,
    ],
    [
      'nodeSelector and affinity must both hold',
      { nodeSelector: { zone: 'b' }, affinity: required({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }) },
      false,
    ],
  ];
  for (const [name, s, want] of cases) test(name, () => assert.equal(podMatchesNodeAffinity(spec(s), n), want));
});

describe('toleratesTaint', () => {
  const taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
  const cases: Array<[object, boolean]> = [
    [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, true],
    [{ key: 'k', value: 'v' }, true],
    [{ key: 'k', value: 'w' }, false],
    [{ key: 'k', operator: 'Exists' }, true],
    [{ operator: 'Exists' }, true],
    [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }, false],
    [{ key: 'other', operator: 'Exists' }, false],
  ];
  for (const [t, want] of cases) test(JSON.stringify(t), () => assert.equal(toleratesTaint(t, taint), want));
});

describe('nodeShouldRunDaemonPod', () => {
  const cases: Array<[string, Node, Partial<PodSpec>, boolean, boolean]> = [
    ['plain node', node('n'), {}, true, true],
    [
      'NoSchedule taint not tolerated: no new pod, an existing one stays',
      node('n', {}, { taints: [{ key: 'd', effect: 'NoSchedule' }] }),
      {},
      false,
      true,
    ],
    ['NoExecute taint not tolerated: neither', node('n', {}, { taints: [{ key: 'd', effect: 'NoExecute' }] }), {}, false, false],
    ['PreferNoSchedule is ignored', node('n', {}, { taints: [{ key: 'd', effect: 'PreferNoSchedule' }] }), {}, true, true],
    [
      'tolerated taint',
      node('n', {}, { taints: [{ key: 'd', effect: 'NoExecute' }] }),
      { tolerations: [{ key: 'd', operator: 'Exists' }] },
      true,
      true,
    ],
    [
      'cordoned node: daemon pods tolerate unschedulable',
      node('n', {}, { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }),
      {},
      true,
      true,
    ],
    [
      'not-ready node: tolerated by default',
      node('n', {}, { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }),
      {},
      true,
      true,
    ],
    [
      'network-unavailable: only hostNetwork pods tolerate it',
      node('n', {}, { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] }),
      {},
      false,
      true,
    ],
    [
      'network-unavailable with hostNetwork',
      node('n', {}, { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] }),
      { hostNetwork: true },
      true,
      true,
    ],
    ['nodeSelector mismatch', node('n', { a: '1' }), { nodeSelector: { a: '2' } }, false, false],
    ['template nodeName names another node', node('n'), { nodeName: 'm' }, false, false],
  ];
  for (const [name, n, s, shouldRun, shouldContinueRunning] of cases) {
    test(name, () => assert.deepEqual(nodeShouldRunDaemonPod(spec(s), n), { shouldRun, shouldContinueRunning }));
  }
});

test('withDaemonPodTolerations adds the defaults once', () => {
  const once = withDaemonPodTolerations(spec());
  assert.equal(once.length, 6);
  assert.deepEqual(withDaemonPodTolerations(spec({ tolerations: once })), once);
  assert.equal(withDaemonPodTolerations(spec({ hostNetwork: true })).length, 7);
});

test('withNodeNameAffinity replaces the required terms, keeps the rest; targetNodeName reads it back', () => {
  const a = withNodeNameAffinity(
    { ...required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }), podAntiAffinity: { x: 1 } },
    'n7',
  );
  assert.deepEqual(a.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms, [
    { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n7'] }] },
  ]);
  assert.deepEqual(a.podAntiAffinity, { x: 1 });
  assert.equal(targetNodeName({ spec: { affinity: a } }), 'n7');
  assert.equal(targetNodeName({ spec: { nodeName: 'bound', affinity: a } }), 'bound');
  assert.equal(targetNodeName({ spec: {} }), undefined);
});

describe('BroadcastJob node fitness (nodeFitFailure)', () => {
  const n = (extra: Record<string, unknown> = {}, allocatable: Record<string, string> = { cpu: '2', memory: '4Gi', pods: '110' }) =>
    ({ metadata: { name: 'n', labels: { zone: 'a' } }, spec: { ...extra }, status: { allocatable } }) as Node;
  const spec = (requests?: Record<string, string>, more: Record<string, unknown> = {}) => ({
    containers: [{ name: 'c', ...(requests ? { resources: { requests } } : {}) }],
    ...more,
  });
  test('fits', () => assert.equal(nodeFitFailure(spec({ cpu: '2', memory: '4Gi' }), n()), undefined));
  test('node name', () => assert.match(nodeFitFailure(spec(undefined, { nodeName: 'other' }), n()) ?? '', /node name/));
  test('node selector', () =>
    assert.match(nodeFitFailure(spec(undefined, { nodeSelector: { zone: 'b' } }), n()) ?? '', /affinity\/selector/));
  test('untolerated taint', () =>
    assert.equal(
      nodeFitFailure(spec(), n({ taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] })),
      "node(s) had taint {k: v}, that the pod didn't tolerate",
    ));
  test('PreferNoSchedule taints do not count', () =>
    assert.equal(nodeFitFailure(spec(), n({ taints: [{ key: 'k', effect: 'PreferNoSchedule' }] })), undefined));
  test('unschedulable unless tolerated', () => {
    assert.equal(nodeFitFailure(spec(), n({ unschedulable: true })), 'node(s) were unschedulable');
    const tolerations = [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }];
    assert.equal(nodeFitFailure(spec(undefined, { tolerations }), n({ unschedulable: true })), undefined);
  });
  test('resources: cpu, memory, extended, pods', () => {
    assert.equal(nodeFitFailure(spec({ cpu: '2001m' }), n()), 'Insufficient cpu');
    assert.equal(nodeFitFailure(spec({ memory: '5Gi', 'example.com/gpu': '1' }), n()), 'Insufficient memory, Insufficient example.com/gpu');
    assert.equal(nodeFitFailure(spec(), n({}, { cpu: '2' })), 'Too many pods');
  });
  test('init containers: the largest of (app containers + sidecars) and (each init + sidecars before it)', () => {
    const s = {
      containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
      initContainers: [
        { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '500m' } } },
        { name: 'init', resources: { requests: { cpu: '1600m' } } },
      ],
    };
    assert.equal(nodeFitFailure(s, n()), 'Insufficient cpu'); // 500m + 1600m > 2
    s.initContainers[1]!.resources.requests.cpu = '1500m';
    assert.equal(nodeFitFailure(s, n()), undefined); // max(1 + 0.5, 0.5 + 1.5) = 2
  });
});
