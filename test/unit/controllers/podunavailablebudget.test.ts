// The PodUnavailableBudget planner (spec §16), term for term: desiredAvailable, currentAvailable,
// unavailableAllowed, the expiry of disruptedPods / unavailablePods, and the round around them
// (related-pub annotations, events).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { planPub, planPubStatus, pubDesiredAvailable } from '../../../src/controllers/podunavailablebudget/plan.ts';
import { PubReconciler } from '../../../src/controllers/podunavailablebudget/controller.ts';
import { ResourceVersionExpectations } from '../../../src/runtime/expectations.ts';
import type { StoredPub } from '../../../src/util/pub.ts';

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
    const plan = planPubStatus({ pub: pub({ maxUnavailable: 2 }), pods, totalReplicas: 10, now: T0.getTime() });
    assert.deepEqual(plan.status, {
      observedGeneration: 3,
      disruptedPods: {},
      unavailablePods: {},
      unavailableAllowed: 2,
      currentAvailable: 10,
      desiredAvailable: 8,
      totalReplicas: 10,
    });
    assert.equal(plan.requeueAfterMs, undefined);
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
    const plan = planPubStatus({ pub: p, pods: mixed, totalReplicas: 6, now: T0.getTime() });
    assert.equal(plan.computed.currentAvailable, 1);
    assert.equal(plan.computed.desiredAvailable, 4);
    assert.equal(plan.computed.unavailableAllowed, 0);
    assert.deepEqual(plan.computed.disruptedPods, { d: at(-5) });
    assert.deepEqual(plan.computed.unavailablePods, { e: at(-5) });
    // The earliest expiry: e's unavailable entry (10 s) before d's disrupted one (20 s).
    assert.equal(plan.requeueAfterMs, 5_000 + 1);
  });

  test('a disrupted entry older than 20 s is dropped with NotDeleted; an unavailable one older than 10 s silently', () => {
    const p = pub({ maxUnavailable: 2 }, { disruptedPods: { p0: at(-21), p1: at(-19) }, unavailablePods: { p2: at(-11), p3: at(-9) } });
    const plan = planPubStatus({ pub: p, pods, totalReplicas: 10, now: T0.getTime() });
    assert.deepEqual(plan.notDeleted, ['p0']);
    assert.deepEqual(plan.computed.disruptedPods, { p1: at(-19) });
    assert.deepEqual(plan.computed.unavailablePods, { p3: at(-9) });
    assert.equal(plan.computed.currentAvailable, 8);
    assert.equal(plan.computed.unavailableAllowed, 0);
  });

  test('entries of pods that are gone are dropped', () => {
    const p = pub({ maxUnavailable: 2 }, { disruptedPods: { gone: at(-1) } });
    assert.deepEqual(planPubStatus({ pub: p, pods, totalReplicas: 10, now: T0.getTime() }).computed.disruptedPods, {});
  });

  test('an unchanged status is not written', () => {
    const first = planPubStatus({ pub: pub({ maxUnavailable: 2 }), pods, totalReplicas: 10, now: T0.getTime() });
    const p = { ...pub({ maxUnavailable: 2 }), status: first.computed };
    assert.equal(planPubStatus({ pub: p, pods, totalReplicas: 10, now: T0.getTime() }).status, undefined);
  });

  test('a pod in the middle of an in-place update is not available', () => {
    const updating = pod('u');
    updating.metadata.annotations!['apps.kruise.io/inplace-update-state'] = JSON.stringify({
      revision: 'r2',
      lastContainerStatuses: { c: { imageID: 'old' } },
    });
    updating.status!.containerStatuses = [{ name: 'c', image: 'nginx:1', imageID: 'old', ready: true, restartCount: 0 } as never];
    updating.spec!.containers[0]!.image = 'nginx:2';
    const plan = planPubStatus({ pub: pub({ maxUnavailable: 0 }), pods: [updating, pod('x')], totalReplicas: 2, now: T0.getTime() });
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
      now: T0.getTime(),
    });
    // upgraded and injected-only count; the pod still running the recorded imageID and the unreadable record do not.
    assert.equal(plan.computed.currentAvailable, 2);
  });
});

describe('planPub (one round)', () => {
  const plain = (name: string) => {
    const p = pod(name);
    delete p.metadata.annotations!['pub.kruise.io/related-pub'];
    return p;
  };
  const cases: Array<{
    name: string;
    pub: StoredPub;
    pods: Pod[];
    annotate: string[];
    events: string[];
    status: boolean;
  }> = [
    {
      name: 'no pods: NoPods, a status all the same',
      pub: pub({ maxUnavailable: 1 }),
      pods: [],
      annotate: [],
      events: ['Normal NoPods'],
      status: true,
    },
    {
      name: 'pods created before the budget get the related-pub annotation',
      pub: pub({ maxUnavailable: 1 }),
      pods: [plain('old'), pod('new')],
      annotate: ['old'],
      events: [],
      status: true,
    },
    {
      name: 'a percent that cannot be parsed: upstream event, no status',
      pub: pub({ maxUnavailable: '1.5%' }),
      pods: [plain('old')],
      annotate: ['old'],
      events: ['Warning CalculateExpectedPodCountFailed'],
      status: false,
    },
    {
      name: 'a recorded deletion that did not happen: NotDeleted on the pod',
      pub: pub({ maxUnavailable: 1 }, { disruptedPods: { p0: at(-21) } }),
      pods: [pod('p0')],
      annotate: [],
      events: ['Warning NotDeleted p0'],
      status: true,
    },
  ];
  for (const c of cases)
    test(c.name, () => {
      const plan = planPub({ pub: c.pub, pods: c.pods, totalReplicas: 2, now: T0.getTime() });
      assert.deepEqual(plan.annotate, c.annotate);
      assert.deepEqual(
        plan.events.map((e) => [e.type, e.reason, e.pod?.metadata.name].filter(Boolean).join(' ')),
        c.events,
      );
      assert.equal(plan.status !== undefined, c.status);
    });
});

describe('PubReconciler (executor)', () => {
  const silent = { info() {}, debug() {}, warn() {}, error() {} } as never;
  function run(p: StoredPub, pods: Pod[]) {
    const calls: string[] = [];
    const events: string[] = [];
    const resourceVersions = new ResourceVersionExpectations();
    let rv = 20;
    const reconciler = new PubReconciler({
      cache: {
        getPub: () => p,
        pubsIn: () => [p],
        podsIn: () => pods,
        podsOwnedBy: () => [],
        replicaSetsOwnedBy: () => [],
        workload: async () => undefined,
      },
      client: {
        async patch(_t: unknown, name: string, body: unknown) {
          calls.push(`patch ${name} ${JSON.stringify(body)}`);
          const pod = pods.find((x) => x.metadata.name === name)!;
          return { ...pod, metadata: { ...pod.metadata, resourceVersion: String(++rv) } } as never;
        },
        async updateStatus<T>(_t: unknown, obj: T) {
          calls.push(`status allowed=${(obj as StoredPub).status?.unavailableAllowed}`);
          return obj;
        },
      },
      recorder: { event: (_o: unknown, type: string, reason: string) => events.push(`${type} ${reason}`) },
      log: silent,
      resourceVersions,
      clock: { now: () => T0.getTime() } as never,
    });
    return { reconciler, calls, events };
  }
  const selected = (p: Pod) => {
    p.metadata.resourceVersion = '5';
    p.metadata.uid = `uid-${p.metadata.name}`;
    return p;
  };

  test('back-fills the related-pub annotation, then writes the status; the next look at the earliest expiry', async () => {
    const bare = selected(pod('old'));
    delete bare.metadata.annotations!['pub.kruise.io/related-pub'];
    const p = pub({ selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 }, { unavailablePods: { new: at(-4) } });
    const { reconciler, calls } = run(p, [bare, selected(pod('new'))]);
    assert.deepEqual(await reconciler.reconcile('ns/pub'), { requeueAfterMs: 6_000 + 1 });
    assert.deepEqual(calls, [
      'patch old {"metadata":{"annotations":{"pub.kruise.io/related-pub":"pub","kruise.io/related-pub":"pub"}}}',
      'status allowed=1',
    ]);
    // (No workload owns the pods: totalReplicas 0, so desiredAvailable 0.) The patched pod is
    // expected in the cache: the next round waits for it.
    assert.ok(((await reconciler.reconcile('ns/pub')).requeueAfterMs ?? 0) > 0);
  });

  test('a percent that cannot be parsed: the upstream event, no status, not terminal', async () => {
    const p = pub({ selector: { matchLabels: { app: 'web' } }, maxUnavailable: '1.5%' });
    const { reconciler, calls, events } = run(p, [selected(pod('a'))]);
    assert.deepEqual(await reconciler.reconcile('ns/pub'), {});
    assert.deepEqual(calls, []);
    assert.deepEqual(events, ['Warning CalculateExpectedPodCountFailed']);
  });
});
