// PodUnavailableBudget rules (spec §16) the controller, the pod webhook and the workload
// controllers share: which operations are protected, and the check-and-decrement of one admission.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../src/apis/core-objects.ts';
import {
  canResizeInPlace,
  isPodUnavailableChanged,
  isPubProtecting,
  pubExemption,
  takePubBudget,
  type StoredPub,
} from '../../../src/util/pub.ts';

const T0 = new Date('2026-11-24T03:00:00Z');
const at = (sec: number) => new Date(T0.getTime() + sec * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function pod(
  name: string,
  opts: { ready?: boolean; deleting?: boolean; labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: { app: 'web', ...opts.labels },
      annotations: { 'pub.kruise.io/related-pub': 'pub', ...opts.annotations },
      ...(opts.deleting ? { deletionTimestamp: at(0) } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

function pub(spec: StoredPub['spec'], status?: Partial<NonNullable<StoredPub['status']>>, annotations?: Record<string, string>): StoredPub {
  return {
    metadata: { name: 'pub', namespace: 'ns', generation: 3, resourceVersion: '10', ...(annotations ? { annotations } : {}) },
    spec,
    ...(status ? { status: { unavailableAllowed: 0, currentAvailable: 0, desiredAvailable: 0, totalReplicas: 0, ...status } } : {}),
  };
}

describe('protected operations', () => {
  test('default DELETE, UPDATE, EVICT; RESIZE follows UPDATE unless InPlacePodVerticalScaling', () => {
    const p = pub({ maxUnavailable: 1 });
    for (const op of ['DELETE', 'UPDATE', 'EVICT'] as const) assert.ok(isPubProtecting(p, op, false));
    assert.ok(isPubProtecting(p, 'RESIZE', false));
    assert.ok(!isPubProtecting(p, 'RESIZE', true));
  });
  test('spec.protectOperations wins over the deprecated annotation', () => {
    const p = pub({ maxUnavailable: 1, protectOperations: ['EVICT'] }, undefined, { 'kruise.io/pub-protect-operations': 'DELETE' });
    assert.ok(isPubProtecting(p, 'EVICT', false));
    assert.ok(!isPubProtecting(p, 'DELETE', false));
  });
  test('the annotation applies when the field is empty', () => {
    const p = pub({ maxUnavailable: 1 }, undefined, { 'kruise.io/pub-protect-operations': 'DELETE,' });
    assert.ok(isPubProtecting(p, 'DELETE', false));
    assert.ok(!isPubProtecting(p, 'EVICT', false));
  });
});

describe('pubExemption', () => {
  const p = pub(
    { maxUnavailable: 2, ignoredPodSelector: { matchLabels: { canary: 'true' } } },
    { desiredAvailable: 8, unavailableAllowed: 2, disruptedPods: { rec: at(0) } },
  );
  const cases: Array<[string, Pod, StoredPub | undefined, string | undefined]> = [
    ['no-protect', pod('a', { annotations: { 'pub.kruise.io/no-protect': 'true' } }), p, 'pod opts out (pub.kruise.io/no-protect)'],
    ['not ready', pod('a', { ready: false }), p, 'pod already unavailable'],
    ['no budget', pod('a'), undefined, 'no PodUnavailableBudget'],
    ['ignored', pod('a', { labels: { canary: 'true' } }), p, 'pod matches ignoredPodSelector'],
    ['desired 0', pod('a'), pub({ maxUnavailable: 2 }, { desiredAvailable: 0 }), 'desiredAvailable is 0'],
    ['recorded', pod('rec'), p, 'pod already recorded by the budget'],
    ['needs budget', pod('a'), p, undefined],
  ];
  for (const [name, po, pb, want] of cases) test(name, () => assert.equal(pubExemption(po, pb, 'DELETE', false), want));
});

describe('takePubBudget', () => {
  test('decrements and records DELETE/EVICT as disrupted, UPDATE as unavailable', () => {
    const p = pub({ maxUnavailable: 2 }, { unavailableAllowed: 2, desiredAvailable: 8, currentAvailable: 10, totalReplicas: 10 });
    const del = takePubBudget(p, 'a', 'EVICT', T0);
    assert.equal(del.status?.unavailableAllowed, 1);
    assert.deepEqual(del.status?.disruptedPods, { a: at(0) });
    const upd = takePubBudget(p, 'b', 'UPDATE', T0);
    assert.deepEqual(upd.status?.unavailablePods, { b: at(0) });
    assert.equal(p.status?.unavailableAllowed, 2, 'the input is not modified');
  });
  test('refuses with upstream Forbidden message at 0', () => {
    const p = pub({ maxUnavailable: 2 }, { unavailableAllowed: 0 });
    assert.equal(
      takePubBudget(p, 'a', 'DELETE', T0).denied,
      'podunavailablebudget.policy.kruise.io "pub" is forbidden: pub unavailable allowed is negative',
    );
  });
  test('refuses past 2000 recorded pods', () => {
    const many = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`p${i}`, at(0)]));
    const p = pub({ maxUnavailable: 2 }, { unavailableAllowed: 5, disruptedPods: many });
    assert.match(takePubBudget(p, 'a', 'DELETE', T0).denied ?? '', /map too big/);
  });
});

describe('pod update classification', () => {
  test('metadata-only changes do not count; spec changes and a new unavailable label do', () => {
    const a = pod('a');
    const b = structuredClone(a);
    b.metadata.annotations!.x = 'y';
    assert.ok(!isPodUnavailableChanged(a, b));
    b.metadata.labels!['unavailable-pod.kruise.io/x'] = '1';
    assert.ok(isPodUnavailableChanged(a, b));
    const c = structuredClone(a);
    c.spec!.containers[0]!.image = 'nginx:2';
    assert.ok(isPodUnavailableChanged(a, c));
    assert.ok(!canResizeInPlace(a, c));
  });
  test('a cpu change without a restart policy is a resize; with RestartContainer it is not', () => {
    const a = pod('a');
    a.spec!.containers[0]!.resources = { requests: { cpu: '100m' } };
    const b = structuredClone(a);
    b.spec!.containers[0]!.resources = { requests: { cpu: '200m' } };
    assert.ok(canResizeInPlace(a, b));
    b.spec!.containers[0]!.resizePolicy = [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }];
    assert.ok(!canResizeInPlace(a, b));
  });
});
