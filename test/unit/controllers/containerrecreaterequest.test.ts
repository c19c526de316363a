import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  containerStatusSnapshot,
  DAEMON_RESPONSE_TIMEOUT_MS,
  planContainerRecreateRequest,
  type CRR,
  type CRRAction,
} from '../../../src/controllers/containerrecreaterequest/plan.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { CRRExecutor } from '../../../src/controllers/containerrecreaterequest/executor.ts';
import { CRRReconciler, makeHandlers } from '../../../src/controllers/containerrecreaterequest/controller.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { logger } from '../../../src/runtime/log.ts';
import { FakeClock } from '../../../src/util/clock.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const KEY = '[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"}]';

function crr(
  o: { status?: any; spec?: any; labels?: Record<string, string>; finalizers?: string[]; deleting?: boolean; created?: number } = {},
): CRR {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ContainerRecreateRequest',
    metadata: {
      name: 'crr',
      namespace: 'ns',
      uid: 'crr-uid',
      resourceVersion: '10',
      creationTimestamp: iso(o.created ?? T0),
      labels: o.labels ?? {
        'crr.apps.kruise.io/active': 'true',
        'crr.apps.kruise.io/pod-uid': 'pod-uid',
        'crr.apps.kruise.io/node-name': 'n1',
      },
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: iso(T0 + 5000) } : {}),
    },
    spec: { podName: 'pod', containers: [{ name: 'app' }, { name: 'sidecar' }], strategy: { failurePolicy: 'Fail' }, ...o.spec },
    ...(o.status ? { status: o.status } : {}),
  } as CRR;
}

function pod(
  o: { gate?: boolean; kruiseReady?: { status: string; message?: string }; uid?: string; deleting?: boolean; statuses?: any[] } = {},
): Pod {
  return {
    metadata: {
      name: 'pod',
      namespace: 'ns',
      uid: o.uid ?? 'pod-uid',
      resourceVersion: '7',
      ...(o.deleting ? { deletionTimestamp: iso(T0) } : {}),
    },
    spec: { containers: [], ...(o.gate ? { readinessGates: [{ conditionType: 'KruisePodReady' }] } : {}) },
    status: {
      conditions: o.kruiseReady ? [{ type: 'KruisePodReady', ...o.kruiseReady }] : [],
      containerStatuses: o.statuses ?? [
        { name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2', state: { running: { startedAt: iso(T0 + 2000) } } },
        {
          name: 'sidecar',
          ready: true,
          restartCount: 0,
          containerID: 'containerd://side-1',
          state: { running: { startedAt: iso(T0 - 60_000) } },
        },
      ],
    },
  };
}

const completed = (at: number, extra: object = {}) => ({ phase: 'Completed', completionTime: iso(at), ...extra });
const kinds = (actions: CRRAction[]) => actions.map((a) => a.kind);

describe('planContainerRecreateRequest', () => {
  const table: Array<{ name: string; crr: CRR; pod?: Pod; now: number; kinds: string[]; requeue?: number; message?: string }> = [
    { name: 'new CRR, daemon has a minute: wait for it', crr: crr(), pod: pod(), now: T0 + 10_000, kinds: [], requeue: 50_000 },
    {
      name: 'no phase after one minute: daemon has not responded',
      crr: crr(),
      pod: pod(),
      now: T0 + DAEMON_RESPONSE_TIMEOUT_MS,
      kinds: ['complete'],
      message: 'daemon has not responded for a long time',
    },
    {
      name: 'pod missing: pod has gone',
      crr: crr({ status: { phase: 'Recreating' } }),
      pod: undefined,
      now: T0 + 1000,
      kinds: ['complete'],
      message: 'pod has gone',
    },
    {
      name: 'pod recreated with another UID: pod has gone',
      crr: crr({ status: { phase: 'Recreating' } }),
      pod: pod({ uid: 'other' }),
      now: T0 + 1000,
      kinds: ['complete'],
      message: 'pod has gone',
    },
    {
      name: 'pod deleting: pod has gone',
      crr: crr({ status: { phase: 'Pending' } }),
      pod: pod({ deleting: true }),
      now: T0 + 1000,
      kinds: ['complete'],
      message: 'pod has gone',
    },
    {
      name: 'activeDeadlineSeconds sooner than the daemon timeout sets the requeue',
      crr: crr({ spec: { activeDeadlineSeconds: 5 } }),
      pod: pod(),
      now: T0 + 1000,
      kinds: [],
      requeue: 4000,
    },
    {
      name: 'past activeDeadlineSeconds',
      crr: crr({ spec: { activeDeadlineSeconds: 5 }, status: { phase: 'Pending' } }),
      pod: pod(),
      now: T0 + 5000,
      kinds: ['complete'],
      message: 'recreating has exceeded the activeDeadlineSeconds',
    },
    {
      name: 'Pending with a deadline: wait for the deadline only',
      crr: crr({ spec: { activeDeadlineSeconds: 300 }, status: { phase: 'Pending' } }),
      pod: pod(),
      now: T0 + 100_000,
      kinds: [],
      requeue: 200_000,
    },
    {
      name: 'Pending without deadline: nothing to time',
      crr: crr({ status: { phase: 'Pending' } }),
      pod: pod(),
      now: T0 + 100_000,
      kinds: [],
    },
    {
      name: 'Recreating: snapshot synced, polled every 3s',
      crr: crr({ status: { phase: 'Recreating' } }),
      pod: pod(),
      now: T0 + 5000,
      kinds: ['syncSnapshot'],
      requeue: 3000,
    },
    {
      name: 'Recreating, deadline in 1s: requeue at the deadline',
      crr: crr({ spec: { activeDeadlineSeconds: 6 }, status: { phase: 'Recreating' } }),
      pod: pod(),
      now: T0 + 5000,
      kinds: ['syncSnapshot'],
      requeue: 1000,
    },
    {
      name: 'Recreating, snapshot already in sync: nothing to write',
      crr: crr({
        status: {
          phase: 'Recreating',
          containerStatusSnapshot: [{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' }],
        },
      }),
      pod: pod(),
      now: T0 + 5000,
      kinds: [],
      requeue: 3000,
    },
    {
      name: 'unreadyGracePeriodSeconds, gated pod: finalizer + not-ready, then PreRecreateGrace',
      crr: crr({
        spec: { strategy: { unreadyGracePeriodSeconds: 3 } },
        status: {
          phase: 'Recreating',
          containerStatusSnapshot: [{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' }],
        },
      }),
      pod: pod({ gate: true, kruiseReady: { status: 'True' } }),
      now: T0 + 5000,
      kinds: ['acquirePodNotReady', 'setPreRecreateGrace'],
      requeue: 3000,
    },
    {
      name: 'unreadyGracePeriodSeconds, pod without the gate: only the condition',
      crr: crr({
        spec: { strategy: { unreadyGracePeriodSeconds: 3 } },
        status: {
          phase: 'Recreating',
          containerStatusSnapshot: [{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' }],
        },
      }),
      pod: pod(),
      now: T0 + 5000,
      kinds: ['setPreRecreateGrace'],
      requeue: 3000,
    },
    {
      name: 'PreRecreateGrace already True: idempotent',
      crr: crr({
        spec: { strategy: { unreadyGracePeriodSeconds: 3 } },
        finalizers: ['crr.apps.kruise.io/unready-acquired'],
        status: {
          phase: 'Recreating',
          containerStatusSnapshot: [{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' }],
          conditions: [
            { type: 'PreRecreateGrace', status: 'True', reason: 'PreRecreateGrace', message: '', lastTransitionTime: iso(T0 + 1000) },
          ],
        },
      }),
      pod: pod({ gate: true, kruiseReady: { status: 'False', message: KEY } }),
      now: T0 + 9000,
      kinds: [],
      requeue: 3000,
    },
    {
      name: 'completed, active label still on, no TTL',
      crr: crr({ status: completed(T0) }),
      pod: pod(),
      now: T0 + 1000,
      kinds: ['removeActiveLabel'],
    },
    {
      name: 'completed with TTL left',
      crr: crr({ spec: { ttlSecondsAfterFinished: 10 }, labels: {}, status: completed(T0) }),
      pod: pod(),
      now: T0 + 4000,
      kinds: [],
      requeue: 6000,
    },
    {
      name: 'completed past TTL: delete',
      crr: crr({ spec: { ttlSecondsAfterFinished: 10 }, status: completed(T0) }),
      pod: pod(),
      now: T0 + 10_000,
      kinds: ['delete'],
    },
    {
      name: 'completed holding the pod not-ready: release first',
      crr: crr({ finalizers: ['crr.apps.kruise.io/unready-acquired'], status: completed(T0) }),
      pod: pod({ gate: true, kruiseReady: { status: 'False', message: KEY } }),
      now: T0 + 1000,
      kinds: ['releasePodNotReady', 'removeActiveLabel'],
    },
    {
      name: 'deleting with the finalizer: release, nothing else',
      crr: crr({ finalizers: ['crr.apps.kruise.io/unready-acquired'], deleting: true, status: { phase: 'Recreating' } }),
      pod: pod({ gate: true, kruiseReady: { status: 'False', message: KEY } }),
      now: T0 + 1000,
      kinds: ['releasePodNotReady'],
    },
    { name: 'deleting without the finalizer: nothing', crr: crr({ deleting: true }), pod: pod(), now: T0 + 1000, kinds: [] },
  ];
  for (const c of table) {
    test(c.name, () => {
      const plan = planContainerRecreateRequest({ crr: c.crr, pod: c.pod, now: c.now });
      assert.deepEqual(kinds(plan.actions), c.kinds);
      assert.equal(plan.requeueAfterMs, c.requeue);
      if (c.message) assert.equal((plan.actions[0] as { message: string }).message, c.message);
    });
  }

  test('the deadline completes the CRR and leaves the container states as the daemon wrote them (v1.8.2)', () => {
    const plan = planContainerRecreateRequest({
      crr: crr({
        spec: { activeDeadlineSeconds: 3 },
        status: {
          phase: 'Recreating',
          containerRecreateStates: [
            { name: 'app', phase: 'Succeeded' },
            { name: 'sidecar', phase: 'Recreating', isKilled: true },
          ],
        },
      }),
      pod: pod(),
      now: T0 + 3000,
    });
    assert.deepEqual(plan.actions, [
      {
        kind: 'complete',
        message: 'recreating has exceeded the activeDeadlineSeconds',
      },
    ]);
  });

  test('snapshot: only running containers started since the CRR was created', () => {
    assert.deepEqual(containerStatusSnapshot(crr(), pod()), [
      { name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' },
    ]);
    const stopped = pod({ statuses: [{ name: 'app', ready: false, restartCount: 1, state: { terminated: { exitCode: 137 } } }] });
    assert.deepEqual(containerStatusSnapshot(crr(), stopped), []);
  });

  test('acquire adds the key to KruisePodReady (False) and a PreRecreateGrace condition stamped now', () => {
    const plan = planContainerRecreateRequest({
      crr: crr({ spec: { strategy: { unreadyGracePeriodSeconds: 3 } }, status: { phase: 'Recreating' } }),
      pod: pod({ gate: true, kruiseReady: { status: 'True' } }),
      now: T0 + 5000,
    });
    const acquire = plan.actions.find((a) => a.kind === 'acquirePodNotReady');
    assert.deepEqual(acquire, {
      kind: 'acquirePodNotReady',
      addFinalizer: true,
      podCondition: { type: 'KruisePodReady', status: 'False', message: KEY, lastTransitionTime: iso(T0 + 5000) },
    });
    const grace = plan.actions.find((a) => a.kind === 'setPreRecreateGrace');
    assert.equal(grace?.kind, 'setPreRecreateGrace');
    assert.deepEqual(
      grace.conditions.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime]),
      [['PreRecreateGrace', 'True', 'PreRecreateGrace', iso(T0 + 5000)]],
    );
  });

  test('release returns KruisePodReady to True when this was the last key', () => {
    const plan = planContainerRecreateRequest({
      crr: crr({ finalizers: ['crr.apps.kruise.io/unready-acquired'], status: completed(T0) }),
      pod: pod({ gate: true, kruiseReady: { status: 'False', message: KEY } }),
      now: T0 + 1000,
    });
    assert.deepEqual(plan.actions[0], {
      kind: 'releasePodNotReady',
      podCondition: { type: 'KruisePodReady', status: 'True', message: '[]', lastTransitionTime: iso(T0 + 1000) },
    });
  });
});

/** Records every write; `fail` makes the n-th call (0-based) throw. */
function fakeClient(fail?: { at: number; code: number }) {
  const calls: Array<{ verb: string; resource: string; name: string; body?: any; opts?: any }> = [];
  let rv = 10;
  const maybeFail = () => {
    if (fail && calls.length - 1 === fail.at)
      throw new StatusError(
        {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: fail.code,
          reason: fail.code === 409 ? 'Conflict' : 'NotFound',
          message: 'x',
        } as any,
        fail.code,
      );
  };
  return {
    calls,
    async patch(type: any, name: string, body: any, opts: any) {
      calls.push({ verb: 'patch', resource: opts.subresource ? `${type.resource}/${opts.subresource}` : type.resource, name, body, opts });
      maybeFail();
      return { metadata: { name, resourceVersion: String(++rv) } };
    },
    async delete(type: any, name: string, opts: any) {
      calls.push({ verb: 'delete', resource: type.resource, name, opts });
      maybeFail();
      return {};
    },
    async get(type: any, name: string) {
      calls.push({ verb: 'get', resource: type.resource, name });
      throw new StatusError(
        { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: 'gone' } as any,
        404,
      );
    },
  };
}

describe('CRRExecutor', () => {
  const log = logger.child({ test: 'crr' });
  test('acquire: finalizer, then pod condition (CAS on the pod), then the condition with the CRR resourceVersion of the last write', async () => {
    const client = fakeClient();
    const clock = new FakeClock(T0 + 5000);
    const c = crr({ spec: { strategy: { unreadyGracePeriodSeconds: 3 } }, status: { phase: 'Recreating' } });
    const p = pod({ gate: true, kruiseReady: { status: 'True' } });
    const plan = planContainerRecreateRequest({ crr: c, pod: p, now: clock.now() });
    const requeue = await new CRRExecutor({ client: client as any, log, now: () => clock.now() }).execute(c, p, plan);
    assert.equal(requeue, 3000);
    assert.deepEqual(
      client.calls.map((x) => `${x.resource} ${x.body.metadata?.resourceVersion ?? ''}`),
      [
        'containerrecreaterequests/status 10', // snapshot
        'containerrecreaterequests 11', // finalizer
        'pods/status 7', // not-ready key
        'containerrecreaterequests/status 12', // PreRecreateGrace
      ],
    );
    assert.deepEqual(client.calls[1].body.metadata.finalizers, ['crr.apps.kruise.io/unready-acquired']);
    assert.equal(client.calls[2].opts.patchType, 'application/strategic-merge-patch+json');
    assert.equal(client.calls[2].body.status.conditions[0].status, 'False');
  });

  test('complete writes phase, completionTime and message to the status', async () => {
    const client = fakeClient();
    const c = crr();
    const plan = planContainerRecreateRequest({ crr: c, pod: undefined, now: T0 + 1000 });
    await new CRRExecutor({ client: client as any, log, now: () => T0 + 1000 }).execute(c, undefined, plan);
    assert.deepEqual(client.calls[0].body.status, { phase: 'Completed', completionTime: iso(T0 + 1000), message: 'pod has gone' });
  });

  test('release: pod first, then the finalizer goes even if the pod vanished meanwhile', async () => {
    const client = fakeClient({ at: 0, code: 404 });
    const c = crr({ finalizers: ['crr.apps.kruise.io/unready-acquired', 'other'], status: completed(T0) });
    const p = pod({ gate: true, kruiseReady: { status: 'False', message: KEY } });
    const plan = planContainerRecreateRequest({ crr: c, pod: p, now: T0 + 1000 });
    await new CRRExecutor({ client: client as any, log, now: () => T0 + 1000 }).execute(c, p, plan);
    assert.deepEqual(
      client.calls.map((x) => x.resource),
      ['pods/status', 'containerrecreaterequests', 'containerrecreaterequests'],
    );
    assert.deepEqual(client.calls[1].body.metadata.finalizers, ['other']);
    assert.deepEqual(client.calls[2].body.metadata.labels, { 'crr.apps.kruise.io/active': null });
  });

  test('TTL delete is guarded by the CRR uid', async () => {
    const client = fakeClient();
    const c = crr({ spec: { ttlSecondsAfterFinished: 0 }, status: completed(T0) });
    await new CRRExecutor({ client: client as any, log, now: () => T0 }).execute(
      c,
      pod(),
      planContainerRecreateRequest({ crr: c, pod: pod(), now: T0 }),
    );
    assert.deepEqual(
      client.calls.map((x) => [x.verb, x.opts?.preconditions]),
      [['delete', { uid: 'crr-uid' }]],
    );
  });

  test('a conflict ends the round and asks for a quick retry', async () => {
    const client = fakeClient({ at: 0, code: 409 });
    const c = crr({ status: { phase: 'Recreating' } });
    const requeue = await new CRRExecutor({ client: client as any, log, now: () => T0 }).execute(
      c,
      pod(),
      planContainerRecreateRequest({ crr: c, pod: pod(), now: T0 + 5000 }),
    );
    assert.equal(requeue, 1000);
  });
});

describe('CRRReconciler', () => {
  const recorder = {
    events: [] as string[],
    event(_o: any, type: string, reason: string) {
      this.events.push(`${type} ${reason}`);
    },
  };
  test('a cache miss on the pod is confirmed live before the CRR is completed as pod has gone', async () => {
    const client = fakeClient();
    const c = crr({ status: { phase: 'Recreating' } });
    const r = new CRRReconciler({
      cache: { getCRR: () => c, getPod: () => undefined },
      client: client as any,
      recorder: recorder as any,
      log: logger,
      clock: new FakeClock(T0 + 1000),
    });
    await r.reconcile('ns/crr');
    assert.deepEqual(
      client.calls.map((x) => `${x.verb} ${x.resource}`),
      ['get pods', 'patch containerrecreaterequests/status'],
    );
    assert.equal(client.calls[1].body.status.message, 'pod has gone');
  });

  test('a malformed CRR is reported as an event and not retried', async () => {
    const client = fakeClient();
    const bad = {
      metadata: { name: 'crr', namespace: 'ns', labels: { 'crr.apps.kruise.io/pod-uid': 'pod-uid' } },
      spec: { podName: 'pod', containers: 5 },
      status: { phase: 'Recreating' },
    } as any;
    const r = new CRRReconciler({
      cache: { getCRR: () => bad, getPod: () => pod() },
      client: client as any,
      recorder: recorder as any,
      log: logger,
      clock: new FakeClock(T0),
    });
    await assert.rejects(r.reconcile('ns/crr'), { name: 'TerminalError' });
    assert.deepEqual(recorder.events, ['Warning FailedSync']);
  });

  test('pod events enqueue the CRRs of that pod on deletion or container status changes only', () => {
    const added: string[] = [];
    const h = makeHandlers({ add: (k) => added.push(k) }, (ns, p) => (p === 'pod' ? [crr()] : []));
    const p = pod() as any;
    h.pod.onUpdate!(p, { ...p, metadata: { ...p.metadata, resourceVersion: '8', labels: { a: 'b' } } });
    assert.deepEqual(added, []);
    h.pod.onUpdate!(p, { ...p, status: { ...p.status, containerStatuses: [] } });
    h.pod.onUpdate!(p, { ...p, metadata: { ...p.metadata, deletionTimestamp: iso(T0) } });
    h.pod.onDelete!(p);
    assert.deepEqual(added, ['ns/crr', 'ns/crr', 'ns/crr']);
  });
});
