// The BroadcastJob and AdvancedCronJob reconcilers over a recording client: the expectation gate,
// the order and shape of their writes, and failed writes leaving nothing half-recorded.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Node, Pod } from '../../../src/apis/core-objects.ts';
import { AdvancedCronJobReconciler } from '../../../src/controllers/advancedcronjob/controller.ts';
import type { AdvancedCronJob, CronChild } from '../../../src/controllers/advancedcronjob/plan.ts';
import { BroadcastJobReconciler, makeHandlers } from '../../../src/controllers/broadcastjob/controller.ts';
import type { BroadcastJob } from '../../../src/controllers/broadcastjob/plan.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../../../src/runtime/expectations.ts';
import { metaTime } from '../../../src/util/clock.ts';

const NOW = Date.parse('2026-07-01T12:00:30Z');
const clock = { now: () => NOW, setTimer: () => ({ cancel() {} }), sleep: async () => {} };

function recordingClient(fail: { create?: StatusError } = {}) {
  const calls: string[] = [];
  const bodies: any[] = [];
  let generated = 0;
  const client = {
    async create(t: any, o: any) {
      calls.push(`create ${t.resource} ${o.metadata.name ?? o.metadata.generateName}`);
      if (fail.create) throw fail.create;
      bodies.push(o);
      return { ...o, metadata: { ...o.metadata, name: o.metadata.name ?? `${o.metadata.generateName}${generated++}` } };
    },
    async delete(t: any, name: string, opts: any) {
      calls.push(`delete ${t.resource} ${name}${opts?.propagationPolicy ? ` ${opts.propagationPolicy}` : ''}`);
      return {};
    },
    async patch(t: any, name: string, body: any) {
      calls.push(`patch ${t.resource} ${name} ${JSON.stringify(body)}`);
      return { metadata: { name, namespace: 'ns', resourceVersion: '8' } };
    },
    async updateStatus(t: any, o: any) {
      calls.push(`updateStatus ${t.resource} ${o.metadata.resourceVersion}`);
      bodies.push(o.status);
      return { ...o, metadata: { ...o.metadata, resourceVersion: String(Number(o.metadata.resourceVersion) + 1) } };
    },
  };
  return { client, calls, bodies };
}

const deps = () => ({
  recorder: { event() {} },
  log: pino({ level: 'silent' }),
  scaleExpectations: new ScaleExpectations(),
  resourceVersions: new ResourceVersionExpectations(),
  clock,
});

describe('BroadcastJobReconciler', () => {
  const nodes: Node[] = ['n0', 'n1', 'n2'].map((name) => ({ metadata: { name }, status: { allocatable: { pods: '10' } } }) as Node);
  const job = (spec: Record<string, unknown> = {}, status?: BroadcastJob['status']): BroadcastJob => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'BroadcastJob',
    metadata: { name: 'bcj', namespace: 'ns', uid: 'u', resourceVersion: '5' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } }, parallelism: 2, ...spec },
    ...(status ? { status } : {}),
  });

  test('creates pods under expectations keyed by node, writes the status, then waits until the pods are seen', async () => {
    const { client, calls, bodies } = recordingClient();
    const d = deps();
    const r = new BroadcastJobReconciler({
      ...d,
      client: client as any,
      cache: { getJob: () => job(), ownedPods: () => [], nodes: () => nodes },
    });
    await r.reconcile('ns/bcj');
    assert.deepEqual(calls, ['create pods bcj-', 'create pods bcj-', 'updateStatus broadcastjobs 5']);
    assert.deepEqual(d.scaleExpectations.getExpectations('ns/bcj')?.create, new Set(['n0', 'n1']));
    assert.equal(bodies.at(-1).active, 2);
    // The cache has not shown the pods (nor the status) yet: the next round waits.
    const again = await r.reconcile('ns/bcj');
    assert.ok((again.requeueAfterMs ?? 0) > 0);
    assert.equal(calls.length, 3);
    // The pod handler observes them by node.
    const queue: string[] = [];
    const handlers = makeHandlers({ queue: { add: (k) => queue.push(k) }, ...d, listJobs: () => [] });
    for (const b of bodies.slice(0, 2) as Pod[]) handlers.pod.onAdd!(b, false);
    assert.deepEqual(d.scaleExpectations.getExpectations('ns/bcj')?.create ?? new Set(), new Set());
    assert.deepEqual(queue, ['ns/bcj', 'ns/bcj']);
  });

  test('a refused creation withdraws its expectation and writes no status', async () => {
    const { client, calls } = recordingClient({ create: new StatusError({ code: 403, reason: 'Forbidden', message: 'quota' }) });
    const d = deps();
    const r = new BroadcastJobReconciler({
      ...d,
      client: client as any,
      cache: { getJob: () => job(), ownedPods: () => [], nodes: () => nodes },
    });
    await assert.rejects(r.reconcile('ns/bcj'), /quota/);
    assert.deepEqual(calls, ['create pods bcj-']); // slow start: the first batch of one failed
    assert.deepEqual(d.scaleExpectations.getExpectations('ns/bcj')?.create ?? new Set(), new Set());
  });

  test('failurePolicy Pause stores spec.paused before the status', async () => {
    const { client, calls } = recordingClient();
    const j = job({ failurePolicy: { type: 'Pause' } }, { phase: 'running', startTime: metaTime(NOW - 5000) });
    const failed: Pod = {
      metadata: { name: 'p', namespace: 'ns', ownerReferences: [] },
      spec: { nodeName: 'n0', containers: [] },
      status: { phase: 'Failed' },
    };
    const r = new BroadcastJobReconciler({
      ...deps(),
      client: client as any,
      cache: { getJob: () => j, ownedPods: () => [failed], nodes: () => nodes },
    });
    await r.reconcile('ns/bcj');
    assert.deepEqual(calls, ['patch broadcastjobs bcj {"spec":{"paused":true}}', 'updateStatus broadcastjobs 8']);
  });

  test('a finished job past its TTL is deleted', async () => {
    const { client, calls } = recordingClient();
    const j = job(
      { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 1 } },
      { phase: 'completed', completionTime: metaTime(NOW - 2000), conditions: [{ type: 'Complete', status: 'True' }] },
    );
    const r = new BroadcastJobReconciler({
      ...deps(),
      client: client as any,
      cache: { getJob: () => j, ownedPods: () => [], nodes: () => nodes },
    });
    assert.deepEqual(await r.reconcile('ns/bcj'), {});
    assert.deepEqual(calls, ['delete broadcastjobs bcj']);
  });
});

describe('AdvancedCronJobReconciler', () => {
  const min = (m: number) => Date.parse('2026-07-01T12:00:00Z') + m * 60_000;
  const cronJob = (spec: Record<string, unknown> = {}): AdvancedCronJob => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'AdvancedCronJob',
    metadata: { name: 'acj', namespace: 'ns', uid: 'u', resourceVersion: '3', creationTimestamp: metaTime(min(-10)) },
    spec: {
      schedule: '*/1 * * * *',
      template: { broadcastJobTemplate: { spec: { template: {} } } },
      successfulJobsHistoryLimit: 1,
      ...spec,
    },
    status: { type: 'BroadcastJob', lastScheduleTime: metaTime(min(-1)) },
  });
  const done = (m: number): CronChild => ({
    metadata: {
      name: `acj-${min(m) / 1000}`,
      namespace: 'ns',
      uid: `c${m}`,
      annotations: { 'apps.kruise.io/scheduled-at': metaTime(min(m)) },
    },
    status: { startTime: metaTime(min(m)), conditions: [{ type: 'Complete', status: 'True' }] },
  });

  test('history trimmed (background propagation), then the new child; requeue at the next start time', async () => {
    const { client, calls } = recordingClient();
    const r = new AdvancedCronJobReconciler({
      ...deps(),
      client: client as any,
      cache: { getCronJob: () => cronJob(), ownedChildren: () => [done(-2), done(-1)] },
    });
    const res = await r.reconcile('ns/acj');
    assert.deepEqual(calls, [`delete broadcastjobs acj-${min(-2) / 1000} Background`, `create broadcastjobs acj-${min(0) / 1000}`]);
    assert.deepEqual(res, { requeueAfterMs: 30_000 });
  });

  test('a child that already exists (cache behind) is not an error', async () => {
    const { client, calls } = recordingClient({ create: new StatusError({ code: 409, reason: 'AlreadyExists', message: 'exists' }) });
    const d = deps();
    const r = new AdvancedCronJobReconciler({
      ...d,
      client: client as any,
      cache: { getCronJob: () => cronJob(), ownedChildren: () => [done(-1)] },
    });
    assert.deepEqual(await r.reconcile('ns/acj'), { requeueAfterMs: 30_000 });
    assert.deepEqual(calls, [`create broadcastjobs acj-${min(0) / 1000}`]);
    assert.deepEqual(d.scaleExpectations.getExpectations('ns/acj')?.create ?? new Set(), new Set());
  });
});

test('BroadcastJob node handler: a node that starts or stops fitting requeues the job; heartbeats do not', () => {
  const queue: string[] = [];
  const job: BroadcastJob = {
    metadata: { name: 'bcj', namespace: 'ns', uid: 'u' },
    spec: { template: { spec: { containers: [], nodeSelector: { role: 'batch' } } } },
  };
  const handlers = makeHandlers({ queue: { add: (k) => queue.push(k) }, ...deps(), listJobs: () => [job] });
  const node = (labels: Record<string, string>, heartbeat: string): Node =>
    ({
      metadata: { name: 'n', labels },
      status: { allocatable: { pods: '10' }, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: heartbeat }] },
    }) as Node;
  handlers.node.onUpdate!(node({}, 't1'), node({}, 't2'));
  assert.deepEqual(queue, []);
  handlers.node.onUpdate!(node({}, 't2'), node({ role: 'batch' }, 't2'));
  assert.deepEqual(queue, ['ns/bcj']);
  handlers.node.onUpdate!(node({ role: 'batch' }, 't2'), node({ role: 'batch', other: 'x' }, 't2'));
  assert.deepEqual(queue, ['ns/bcj']);
  handlers.node.onAdd!(node({ role: 'batch' }, 't'), false);
  handlers.node.onAdd!(node({}, 't'), false);
  assert.deepEqual(queue, ['ns/bcj', 'ns/bcj']);
});
