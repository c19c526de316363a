// EphemeralJob planner (and the reconciler around it) against behaviour spec §17 (/work/shared/spec/openkruise-behaviour.md
// lines 748-751), after upstream's ephemeraljob_controller.go / ephemeraljob_utils.go.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EphemeralJob } from '../../../src/apis/apps/ephemeraljob.ts';
import type { ContainerStatus, Pod, Stored } from '../../../src/apis/core-objects.ts';
import { EphemeralJobReconciler } from '../../../src/controllers/ephemeraljob/controller.ts';
import { ephemeralPodState, planEphemeralJob } from '../../../src/controllers/ephemeraljob/plan.ts';
import { TerminalError } from '../../../src/runtime/controller.ts';
import { ResourceVersionExpectations } from '../../../src/runtime/expectations.ts';

const NOW = Date.parse('2026-07-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const FINALIZER = 'apps.kruise.io/ephemeralcontainers-cleanup';

function job(
  spec: Partial<NonNullable<EphemeralJob['spec']>> = {},
  status?: EphemeralJob['status'],
  meta: object = {},
): Stored<EphemeralJob> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'EphemeralJob',
    metadata: { name: 'dbg', namespace: 'ns', uid: 'job-uid', finalizers: [FINALIZER], ...meta },
    spec: { selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }, ...spec },
    status,
  } as Stored<EphemeralJob>;
}

const running = (name = 'debug'): ContainerStatus => ({
  name,
  ready: false,
  restartCount: 0,
  image: 'busybox',
  imageID: '',
  state: { running: { startedAt: iso(NOW) } },
});
const done = (exitCode = 0, name = 'debug'): ContainerStatus => ({
  name,
  ready: false,
  restartCount: 0,
  image: 'busybox',
  imageID: '',
  state: { terminated: { exitCode, finishedAt: iso(NOW) } },
});

function pod(
  i: number,
  o: { injected?: 'mine' | 'other'; statuses?: ContainerStatus[]; labels?: Record<string, string>; phase?: string } = {},
): Pod {
  const env = o.injected === 'mine' ? [{ name: 'KRUISE_EJOB_ID', value: 'job-uid' }] : [];
  return {
    metadata: { name: `p${i}`, namespace: 'ns', labels: o.labels ?? { app: 'x' }, creationTimestamp: iso(NOW - 1000 * (10 - i)) },
    spec: {
      containers: [{ name: 'main', image: 'nginx' }],
      ...(o.injected ? { ephemeralContainers: [{ name: 'debug', image: 'busybox', env }] } : {}),
    },
    status: { phase: o.phase ?? 'Running', ephemeralContainerStatuses: o.statuses },
  } as Pod;
}

describe('EphemeralJob planner (§17)', () => {
  test('finalizer first; on deletion it is dropped (containers cannot be removed)', () => {
    assert.equal(planEphemeralJob({ job: job({}, undefined, { finalizers: [] }), pods: [], now: NOW }).finalizer, 'add');
    assert.equal(planEphemeralJob({ job: job({}, undefined, { deletionTimestamp: iso(NOW) }), pods: [], now: NOW }).finalizer, 'remove');
  });

  test('targets: active matching pods, oldest first, skipping pods with a same-named container of someone else, limited to replicas', () => {
    const pods = [pod(3), pod(1, { injected: 'other' }), pod(2), pod(4, { labels: { app: 'y' } }), pod(5, { phase: 'Succeeded' }), pod(0)];
    const plan = planEphemeralJob({ job: job({ replicas: 2, parallelism: 5 }), pods, now: NOW });
    assert.equal(plan.status!.match, 2);
    assert.deepEqual(
      plan.inject.map((p) => p.metadata.name),
      ['p0', 'p2'],
    );
    assert.deepEqual(plan.containers, [{ name: 'debug', image: 'busybox', env: [{ name: 'KRUISE_EJOB_ID', value: 'job-uid' }] }]);
  });

  test('injection per round: min(parallelism, toCreate) − running, unreported injections counted as running', () => {
    const pods = [pod(0, { injected: 'mine', statuses: [running()] }), pod(1), pod(2), pod(3)];
    assert.deepEqual(
      planEphemeralJob({ job: job({ parallelism: 2 }), pods, now: NOW }).inject.map((p) => p.metadata.name),
      ['p1'],
    );
    assert.deepEqual(planEphemeralJob({ job: job({ parallelism: 1 }), pods, now: NOW }).inject, []);
    const unreported = [pod(0, { injected: 'mine' }), pod(1), pod(2)];
    assert.deepEqual(planEphemeralJob({ job: job({ parallelism: 1 }), pods: unreported, now: NOW }).inject, []);
    const finished = [pod(0, { injected: 'mine', statuses: [done()] }), pod(1), pod(2)];
    assert.deepEqual(
      planEphemeralJob({ job: job({ parallelism: 1 }), pods: finished, now: NOW }).inject.map((p) => p.metadata.name),
      ['p1'],
    );
  });

  const phaseCases: Array<[string, Partial<NonNullable<EphemeralJob['spec']>>, Pod[], string]> = [
    ['no match ⇒ Waiting (+MatchedEmpty)', {}, [], 'Waiting'],
    [
      'succeeded == replicas > 0 ⇒ Succeeded',
      { replicas: 2 },
      [pod(0, { injected: 'mine', statuses: [done()] }), pod(1, { injected: 'mine', statuses: [done()] })],
      'Succeeded',
    ],
    ['running > 0 ⇒ Running', {}, [pod(0, { injected: 'mine', statuses: [running()] }), pod(1)], 'Running'],
    ['failed == replicas ⇒ Failed', {}, [pod(0, { injected: 'mine', statuses: [done(1)] })], 'Failed'],
    [
      'waiting == replicas ⇒ Waiting',
      {},
      [pod(0, { injected: 'mine', statuses: [{ ...running(), state: { waiting: { reason: 'ContainerCreating' } } }] })],
      'Waiting',
    ],
    ['otherwise Unknown', {}, [pod(0), pod(1)], 'Unknown'],
    ['paused ⇒ Paused', { paused: true }, [pod(0)], 'Paused'],
    ['empty template ⇒ Error', { template: { ephemeralContainers: [] } }, [pod(0)], 'Error'],
  ];
  for (const [name, spec, pods, phase] of phaseCases) {
    test(`phase: ${name}`, () => {
      const plan = planEphemeralJob({ job: job(spec), pods, now: NOW });
      assert.equal(plan.status!.phase, phase);
      if (phase === 'Waiting' && pods.length === 0)
        assert.ok(plan.status!.conditions!.some((c) => c.type === 'MatchedEmpty' && c.reason === 'MatchEmpty'));
      if (phase === 'Succeeded') assert.equal(plan.status!.completionTime, iso(NOW));
      if (phase === 'Paused') assert.deepEqual(plan.inject, []);
    });
  }

  test('past activeDeadlineSeconds while Waiting/Unknown/Running ⇒ Failed (DeadlineExceeded); before it, requeue at the deadline', () => {
    const started = { startTime: iso(NOW - 20_000) };
    const late = planEphemeralJob({ job: job({ activeDeadlineSeconds: 10 }, started), pods: [pod(0)], now: NOW });
    assert.equal(late.status!.phase, 'Failed');
    assert.ok(
      late.status!.conditions!.some(
        (c) =>
          c.type === 'JobFailed' &&
          c.reason === 'DeadlineExceeded' &&
          c.message === 'EphemeralJob ns/dbg was active longer than specified deadline',
      ),
    );
    assert.deepEqual(late.inject, []);
    const early = planEphemeralJob({ job: job({ activeDeadlineSeconds: 60 }, started), pods: [pod(0)], now: NOW });
    assert.equal(early.requeueAfterMs, 40_000);
  });

  test('finished: deleted once ttlSecondsAfterFinished (default 1800) has passed', () => {
    const finished = { completionTime: iso(NOW - 100_000), phase: 'Succeeded' as const };
    assert.equal(planEphemeralJob({ job: job({}, finished), pods: [], now: NOW }).requeueAfterMs, 1_700_000);
    assert.equal(planEphemeralJob({ job: job({ ttlSecondsAfterFinished: 100 }, finished), pods: [], now: NOW }).delete, true);
  });

  test('ephemeralPodState: failed wins, then all succeeded, running, waiting; RunContainerError fails', () => {
    const names = new Set(['a', 'b']);
    assert.equal(ephemeralPodState(names, [done(0, 'a'), done(0, 'b')]), 'Succeeded');
    assert.equal(ephemeralPodState(names, [done(0, 'a'), running('b')]), 'Running');
    assert.equal(ephemeralPodState(names, [done(2, 'a'), running('b')]), 'Failed');
    assert.equal(ephemeralPodState(names, [{ ...running('a'), state: { waiting: { reason: 'RunContainerError' } } }]), 'Failed');
    assert.equal(ephemeralPodState(names, [done(0, 'a')]), 'Unknown');
    assert.equal(ephemeralPodState(names, [done(0, 'other')]), 'Unknown');
  });

  test('an unchanged status is not written again', () => {
    const first = planEphemeralJob({ job: job(), pods: [pod(0, { injected: 'mine', statuses: [running()] })], now: NOW });
    const again = planEphemeralJob({
      job: job({}, first.status),
      pods: [pod(0, { injected: 'mine', statuses: [running()] })],
      now: NOW + 5000,
    });
    assert.equal(again.status, undefined);
  });
});

describe('EphemeralJob reconciler (executor)', () => {
  function run(j: Stored<EphemeralJob>, pods: Pod[]) {
    const calls: string[] = [];
    const events: string[] = [];
    const reconciler = new EphemeralJobReconciler({
      cache: { get: () => j, pods: () => pods },
      client: {
        get: async () => assert.fail('nothing is read'),
        async patch(_t: unknown, name: string, body: unknown, opts: { subresource?: string }) {
          calls.push(`patch ${name}${opts.subresource ? `/${opts.subresource}` : ''} ${JSON.stringify(body)}`);
          return { metadata: { name, uid: `uid-${name}`, resourceVersion: '2' } } as never;
        },
        delete: async () => assert.fail('nothing is deleted'),
        async updateStatus<T>(_t: unknown, obj: T) {
          const { status } = obj as Stored<EphemeralJob>;
          calls.push(`status ${status?.phase ?? ''} ${(status?.conditions ?? []).map((c) => `${c.type}=${c.reason}`).join(',')}`);
          return obj;
        },
      },
      recorder: { event: (_o: unknown, type: string, reason: string) => events.push(`${type} ${reason}`) },
      log: { info() {}, debug() {}, warn() {}, error() {} } as never,
      resourceVersions: new ResourceVersionExpectations(),
      clock: { now: () => NOW } as never,
    });
    return { reconciler, calls, events };
  }

  test('injects into the matching pod through its ephemeralcontainers subresource, then writes the status', async () => {
    const { reconciler, calls } = run(job(), [pod(1)]);
    await reconciler.reconcile('ns/dbg');
    assert.equal(calls.length, 2, calls.join('\n'));
    assert.match(calls[0]!, /^patch p1\/ephemeralcontainers /);
    assert.match(calls[1]!, /^status /);
  });

  test('a selector the planner cannot read: FailedSync event, JobError condition, terminal (no retry loop)', async () => {
    const bad = job({ selector: { matchExpressions: [{ key: 'app', operator: 'Bogus' as never, values: ['x'] }] } });
    const { reconciler, calls, events } = run(bad, [pod(1)]);
    await assert.rejects(reconciler.reconcile('ns/dbg'), TerminalError);
    assert.deepEqual(events, ['Warning FailedSync']);
    assert.deepEqual(calls, ['status  JobError=FailedSync']);
  });
});
