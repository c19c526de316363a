// PodUnavailableBudget arithmetic (spec §16), term for term: desiredAvailable, currentAvailable,
// unavailableAllowed, the expiry of disruptedPods / unavailablePods, which operations are
// protected, and the check-and-decrement of one admission.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../src/apis/core-objects.ts';
import {
  canResizeInPlace,
  isPodUnavailableChanged,
  isPubProtecting,
  planPubStatus,
  pubDesiredAvailable,
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

describe('desiredAvailable', () => {
  const cases: Array<[string, StoredPub['spec'], number, number]> = [
    ['maxUnavailable int', { maxUnavailable: 2 }, 10, 8],
    ['maxUnavailable percent rounds up the unavailable', { maxUnavailable: '25%' }, 10, 7],
    ['maxUnavailable above total clamps at 0', { maxUnavailable: 12 }, 10, 0],
    ['minAvailable int is taken as is', { minAvailable: 12 }, 10, 12],
    ['minAvailable percent rounds up', { minAvailable: '55%' }, 10, 6],
    ['neither', {}, 10, 0],
  ];
  for (const [name, spec, total, want] of cases) test(name, () => assert.equal(pubDesiredAvailable(pub(spec), total), want));
});

describe('planPubStatus', () => {
  const pods = Array.from({ length: 10 }, (_, i) => pod(`p${i}`));

  test('10 ready pods, maxUnavailable 2: current 10, desired 8, allowed 2, observedGeneration', () => {
    const plan = planPubStatus({ pub: pub({ maxUnavailable: 2 }), pods, totalReplicas: 10, now: T0 });
    assert.deepEqual(plan.status, {
      observedGeneration: 3,
      disruptedPods: {},
      unavailablePods: {},
      unavailableAllowed: 2,
      currentAvailable: 10,
      desiredAvailable: 8,
      totalReplicas: 10,
    });
    assert.equal(plan.recheckAt, undefined);
  });

  test('not-ready, unavailable-labelled, deleting and recorded pods do not count; allowed never negative', () => {
    const mixed = [
      pod('a', { ready: false }),
      pod('b', { labels: { 'unavailable-pod.kruise.io/drain': 'x' } }),
      pod('c', { deleting: true }),
      pod('d'),
      pod('e'),
      pod('f'),
    ];
    const p = pub({ maxUnavailable: 2 }, { disruptedPods: { d: at(-5) }, unavailablePods: { e: at(-5) } });
    const plan = planPubStatus({ pub: p, pods: mixed, totalReplicas: 6, now: T0 });
    assert.equal(plan.computed.currentAvailable, 1);
    assert.equal(plan.computed.desiredAvailable, 4);
    assert.equal(plan.computed.unavailableAllowed, 0);
    assert.deepEqual(plan.computed.disruptedPods, { d: at(-5) });
    assert.deepEqual(plan.computed.unavailablePods, { e: at(-5) });
    // The earliest expiry: e's unavailable entry (10 s) before d's disrupted one (20 s).
    assert.equal(plan.recheckAt?.toISOString(), new Date(T0.getTime() + 5_000).toISOString());
  });

  test('a disrupted entry older than 20 s is dropped with NotDeleted; an unavailable one older than 10 s silently', () => {
    const p = pub({ maxUnavailable: 2 }, { disruptedPods: { p0: at(-21), p1: at(-19) }, unavailablePods: { p2: at(-11), p3: at(-9) } });
    const plan = planPubStatus({ pub: p, pods, totalReplicas: 10, now: T0 });
    assert.deepEqual(plan.notDeleted, ['p0']);
    assert.deepEqual(plan.computed.disruptedPods, { p1: at(-19) });
    assert.deepEqual(plan.computed.unavailablePods, { p3: at(-9) });
    assert.equal(plan.computed.currentAvailable, 8);
    assert.equal(plan.computed.unavailableAllowed, 0);
  });

  test('entries of pods that are gone are dropped', () => {
    const p = pub({ maxUnavailable: 2 }, { disruptedPods: { gone: at(-1) } });
    assert.deepEqual(planPubStatus({ pub: p, pods, totalReplicas: 10, now: T0 }).computed.disruptedPods, {});
  });

  test('an unchanged status is not written', () => {
    const first = planPubStatus({ pub: pub({ maxUnavailable: 2 }), pods, totalReplicas: 10, now: T0 });
    const p = { ...pub({ maxUnavailable: 2 }), status: first.computed };
    assert.equal(planPubStatus({ pub: p, pods, totalReplicas: 10, now: T0 }).status, undefined);
  });

  test('a pod in the middle of an in-place update is not available', () => {
    const updating = pod('u');
    updating.metadata.annotations!['apps.kruise.io/inplace-update-state'] = JSON.stringify({
      revision: 'r2',
      lastContainerStatuses: { c: { imageID: 'old' } },
    });
    updating.status!.containerStatuses = [{ name: 'c', image: 'nginx:1', imageID: 'old', ready: true, restartCount: 0 } as never];
    updating.spec!.containers[0]!.image = 'nginx:2';
    const plan = planPubStatus({ pub: pub({ maxUnavailable: 0 }), pods: [updating, pod('x')], totalReplicas: 2, now: T0 });
    assert.equal(plan.computed.currentAvailable, 1);
  });

  test('a pod whose SidecarSet in-place sidecar upgrade is unfinished is not available (isPodStateConsistent)', () => {
    const withSidecar = (name: string, runningImageID: string, annotations: Record<string, string>) => {
      const p = pod(name, { annotations: { 'kruise.io/sidecarset-injected-list': 'sc', ...annotations } });
      p.spec!.containers.push({ name: 'log', image: 'log:2', env: [{ name: 'IS_INJECTED', value: 'true' }] });
      p.status!.containerStatuses = [
        { name: 'c', image: 'nginx:1', imageID: 'app', ready: true, restartCount: 0 } as never,
        { name: 'log', image: 'log:1', imageID: runningImageID, ready: true, restartCount: 0 } as never,
      ];
      return p;
    };
    const state = (imageID: string) =>
      JSON.stringify({ sc: { revision: 'r2', updateTimestamp: at(0), lastContainerStatuses: { log: { imageID } } } });
    const upgrading = withSidecar('upgrading', 'log-v1', { 'kruise.io/sidecarset-inplace-update-state': state('log-v1') });
    const upgraded = withSidecar('upgraded', 'log-v2', { 'kruise.io/sidecarset-inplace-update-state': state('log-v1') });
    upgraded.status!.containerStatuses![1]!.image = 'log:2';
    const neverUpgraded = withSidecar('injected-only', 'log-v1', {});
    const malformed = withSidecar('malformed', 'log-v1', { 'kruise.io/sidecarset-inplace-update-state': '{' });
    const plan = planPubStatus({
      pub: pub({ maxUnavailable: 0 }),
      pods: [upgrading, upgraded, neverUpgraded, malformed],
      totalReplicas: 4,
      now: T0,
    });
    // upgraded and injected-only count; the pod still running the recorded imageID and the unreadable record do not.
    assert.equal(plan.computed.currentAvailable, 2);
  });
});

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
