// The Advanced StatefulSet reconcile loop against an in-memory cache and a recording client:
// writes in plan order with expectations set first, the expectation gate holding the next round,
// failures recorded as FailedCreatePod, bad objects reported instead of crashing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { StatefulSet } from '../../../src/apis/apps/statefulset.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { StatefulSetReconciler } from '../../../src/controllers/statefulset/controller.ts';
import type { Pod } from '../../../src/controllers/statefulset/pods.ts';
import type { KubeObject, Stored } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import type { ResourceType } from '../../../src/runtime/resources.ts';
import { isTerminalError } from '../../../src/runtime/controller.ts';
import { WorkloadExpectations } from '../../../src/controllers/workload.ts';
import type { Clock } from '../../../src/util/clock.ts';
import type { ControllerRevision } from '../../../src/util/revision-data.ts';

interface Call {
  verb: string;
  resource: string;
  name: string;
  body?: any;
}

class FakeClient {
  calls: Call[] = [];
  rv = 100;
  fail: (c: Call) => Error | undefined = () => undefined;
  onCall: (c: Call) => void = () => undefined;
  private record(c: Call) {
    this.calls.push(c);
    this.onCall(c);
    const err = this.fail(c);
    if (err) throw err;
  }
  private stamp<T extends { metadata?: any }>(obj: T): T {
    return { ...obj, metadata: { uid: `uid-${obj.metadata?.name}`, ...obj.metadata, resourceVersion: String(++this.rv) } };
  }
  async create(type: ResourceType, obj: KubeObject) {
    this.record({ verb: 'create', resource: type.resource, name: obj.metadata.name!, body: obj });
    return this.stamp(obj);
  }
  async get(type: ResourceType, name: string): Promise<any> {
    this.record({ verb: 'get', resource: type.resource, name });
    return this.stamp({ metadata: { name } });
  }
  async patch(type: ResourceType, name: string, body: unknown): Promise<any> {
    this.record({ verb: 'patch', resource: type.resource, name, body });
    return this.stamp({ metadata: { name } });
  }
  async delete(type: ResourceType, name: string): Promise<any> {
    this.record({ verb: 'delete', resource: type.resource, name });
    return { metadata: {} };
  }
  async updateStatus(type: ResourceType, obj: KubeObject): Promise<any> {
    this.record({ verb: 'updateStatus', resource: type.resource, name: obj.metadata.name!, body: obj });
    return this.stamp(obj);
  }
}

const NOW = Date.parse('2026-01-01T00:10:00Z');

function sts(spec: Record<string, unknown> = {}): Stored<StatefulSet> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'set-uid', generation: 1, resourceVersion: '1' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
      ...spec,
    },
  } as Stored<StatefulSet>;
}

function setup(set: Stored<StatefulSet>, pods: Pod[] = [], revisions: ControllerRevision[] = []) {
  const client = new FakeClient();
  const events: Array<{ type: string; reason: string; note: string }> = [];
  const clock = { now: () => NOW } as unknown as Clock;
  const expectations = new WorkloadExpectations({ clock });
  const scaleExpectations = expectations.scale;
  const reconciler = new StatefulSetReconciler({
    cache: { getSet: () => set, candidatePods: () => pods, claims: () => [], ownedRevisions: () => revisions },
    client: client as any,
    recorder: {
      event: (_o: unknown, type: string, reason: string, _a: string, note: string) => void events.push({ type, reason, note }),
    } as any,
    features: FEATURE_GATE_DEFAULTS,
    log: pino({ level: 'silent' }),
    expectations,
    clock,
  });
  return { reconciler, client, events, scaleExpectations };
}

test('first round: revision, then web-0 only (OrderedReady), expected before the write; the next round waits for it', async () => {
  const { reconciler, client, events, scaleExpectations } = setup(sts());
  let expectedAtCreate = false;
  client.onCall = (c) => {
    if (c.verb === 'create' && c.resource === 'pods') expectedAtCreate = !scaleExpectations.satisfiedExpectations('ns/web').satisfied;
  };
  await reconciler.reconcile('ns/web');
  assert.deepEqual(
    client.calls.map((c) => `${c.verb} ${c.resource} ${c.name}`),
    [`create controllerrevisions ${client.calls[0].name}`, 'create pods web-0', 'updateStatus statefulsets web'],
  );
  assert.ok(expectedAtCreate);
  assert.deepEqual(
    events.map((e) => e.reason),
    ['SuccessfulCreate'],
  );
  client.calls = [];
  const r = await reconciler.reconcile('ns/web');
  assert.ok(r.requeueAfterMs !== undefined && r.requeueAfterMs > 0);
  assert.deepEqual(client.calls, [], 'no writes while the creation is unobserved');
});

test('a failed creation records FailedCreatePod on the status and fails the round', async () => {
  const { reconciler, client } = setup(sts());
  client.fail = (c) =>
    c.verb === 'create' && c.resource === 'pods'
      ? new StatusError({ status: 'Failure', code: 403, reason: 'Forbidden', message: 'quota exceeded' } as any)
      : undefined;
  await assert.rejects(reconciler.reconcile('ns/web'), /quota exceeded/);
  const status = client.calls.find((c) => c.verb === 'updateStatus')?.body.status;
  assert.equal(status.conditions[0].type, 'FailedCreatePod');
  assert.match(status.conditions[0].message, /quota exceeded/);
});

test('a bad object is reported (event + condition) and ends as a terminal error, not a crash', async () => {
  const { reconciler, client, events } = setup(sts({ podManagementPolicy: 'Parallel', scaleStrategy: { maxUnavailable: 'lots' } }));
  await assert.rejects(reconciler.reconcile('ns/web'), (err) => isTerminalError(err));
  assert.equal(events[0].reason, 'FailedSync');
  const status = client.calls.find((c) => c.verb === 'updateStatus')?.body.status;
  assert.equal(status.conditions[0].type, 'FailedUpdatePod');
});

test('Parallel: condemned pods are deleted in slow-start batches; OrderedReady deletes one per round', async () => {
  const pods = Array.from(
    { length: 8 },
    (_, i) =>
      ({
        metadata: {
          name: `web-${i}`,
          namespace: 'ns',
          uid: `uid-web-${i}`,
          labels: { app: 'web' },
          ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'web', uid: 'set-uid', controller: true }],
        },
        spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      }) as unknown as Pod,
  );
  const inFlight = { now: 0, max: 0 };
  const tracked = (client: FakeClient) => {
    const del = client.delete.bind(client);
    client.delete = async (type, name) => {
      inFlight.max = Math.max(inFlight.max, ++inFlight.now);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight.now--;
      return del(type, name);
    };
  };
  const parallel = setup(sts({ replicas: 0, podManagementPolicy: 'Parallel' }), pods);
  tracked(parallel.client);
  await parallel.reconciler.reconcile('ns/web');
  assert.deepEqual(
    parallel.client.calls.filter((c) => c.verb === 'delete').map((c) => c.name),
    ['web-7', 'web-6', 'web-5', 'web-4', 'web-3', 'web-2', 'web-1', 'web-0'],
  );
  assert.equal(inFlight.max, 4, 'batches of 1, 2, 4 and 1');

  inFlight.max = 0;
  const ordered = setup(sts({ replicas: 0 }), pods);
  tracked(ordered.client);
  await ordered.reconciler.reconcile('ns/web');
  assert.deepEqual(
    ordered.client.calls.filter((c) => c.verb === 'delete').map((c) => c.name),
    ['web-7'],
  );
});
