// The CloneSet executor and reconcile loop against an in-memory cache and a recording client:
// expectations gate reconciles and are set before writes, writes go out in plan order with the
// right preconditions, conflicts requeue, bad objects are reported instead of crashing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { CloneSet } from '../../../src/apis/apps/cloneset.ts';
import { CloneSetReconciler, scaleExpectationLeakage, type CloneSetCache } from '../../../src/controllers/cloneset/controller.ts';
import { makeHandlers } from '../../../src/controllers/cloneset/event-handler.ts';
import { changedConditions, podUpdatePatch } from '../../../src/controllers/workload-writes.ts';
import { planCloneSet } from '../../../src/controllers/cloneset/plan.ts';
import type { Pod } from '../../../src/controllers/cloneset/pods.ts';
import type { KubeObject, Stored } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import type { ResourceType } from '../../../src/runtime/resources.ts';
import { isTerminalError } from '../../../src/runtime/controller.ts';
import { WorkloadExpectations } from '../../../src/controllers/workload.ts';
import { DeletedFinalStateUnknown } from '../../../src/runtime/store.ts';
import { LowPriority } from '../../../src/runtime/workqueue.ts';
import type { ControllerRevision } from '../../../src/util/revision-data.ts';
import type { FeatureGates } from '../../../src/apis/features.ts';
import { cloneSet, gates, NOW, NOW_S, pod, revisionOf, template } from './fixtures.ts';

interface Call {
  verb: 'create' | 'get' | 'patch' | 'delete' | 'updateStatus';
  resource: string;
  name: string;
  body?: any;
  opts?: any;
}

class FakeClient {
  calls: Call[] = [];
  rv = 1000;
  /** Requests sent and not answered yet, and the most there were at once. */
  inFlight = 0;
  maxInFlight = 0;
  /** Throws the returned error for a matching call (checked as it is answered, in the order sent). */
  fail: (c: Call) => Error | undefined = () => undefined;
  /** Runs as each call is sent (to inspect expectations at write time). */
  onCall: (c: Call) => void = () => undefined;

  /** Records the call, answers it on a later turn of the event loop (as a server would). */
  private async answer<T>(c: Call, result: () => T): Promise<T> {
    this.calls.push(c);
    this.onCall(c);
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      const err = this.fail(c);
      if (err) throw err;
      return result();
    } finally {
      this.inFlight--;
    }
  }

  private stamp<T extends { metadata?: any }>(obj: T): T {
    return { ...obj, metadata: { uid: `uid-${obj.metadata?.name}`, ...obj.metadata, resourceVersion: String(++this.rv) } };
  }

  create(type: ResourceType, obj: KubeObject) {
    return this.answer({ verb: 'create', resource: type.resource, name: obj.metadata.name!, body: obj }, () => this.stamp(obj));
  }
  get(type: ResourceType, name: string): Promise<any> {
    return this.answer({ verb: 'get', resource: type.resource, name }, () => this.stamp({ metadata: { name } }));
  }
  patch(type: ResourceType, name: string, body: unknown, opts: any): Promise<any> {
    return this.answer({ verb: 'patch', resource: type.resource, name, body, opts }, () => this.stamp({ metadata: { name } }));
  }
  delete(type: ResourceType, name: string, opts: any): Promise<any> {
    return this.answer({ verb: 'delete', resource: type.resource, name, opts }, () => ({ metadata: {} }));
  }
  updateStatus(type: ResourceType, obj: KubeObject): Promise<any> {
    return this.answer({ verb: 'updateStatus', resource: type.resource, name: obj.metadata.name!, body: obj }, () => this.stamp(obj));
  }
}

const conflict = () =>
  new StatusError({ status: 'Failure', code: 409, reason: 'Conflict', message: 'the object has been modified' } as any);
const forbidden = () => new StatusError({ status: 'Failure', code: 403, reason: 'Forbidden', message: 'quota exceeded' } as any);
const terminating = () =>
  new StatusError({
    status: 'Failure',
    code: 403,
    reason: 'Forbidden',
    message: 'pods "cs-id000" is forbidden: unable to create new content in namespace default because it is being terminated',
    details: {
      name: 'cs-id000',
      kind: 'pods',
      causes: [{ reason: 'NamespaceTerminating', message: 'namespace default is being terminated', field: 'metadata.namespace' }],
    },
  } as any);

function setup(opts: {
  cs: Stored<CloneSet>;
  pods?: Pod[];
  revisions?: ControllerRevision[];
  now?: number;
  timeout?: number;
  features?: FeatureGates;
}) {
  let now = opts.now ?? NOW;
  const clock = { now: () => now, setTimer: () => ({ cancel() {} }), sleep: async () => {} };
  const cache: CloneSetCache = {
    getCloneSet: (ns, name) => (opts.cs.metadata?.namespace === ns && opts.cs.metadata?.name === name ? opts.cs : undefined),
    ownedPods: () => opts.pods ?? [],
    ownedPVCs: () => [],
    ownedRevisions: () => opts.revisions ?? [],
  };
  const client = new FakeClient();
  const events: Array<{ type: string; reason: string; note: string }> = [];
  const recorder = {
    event: (_o: unknown, type: string, reason: string, _a: string, note: string) => void events.push({ type, reason, note }),
  };
  const exp = { clock, timeout: opts.timeout ?? 60_000 };
  const expectations = new WorkloadExpectations(exp);
  const { scale: scaleExpectations, revisions: revisionExpectations, resourceVersions } = expectations;
  let ids = 0;
  const reconciler = new CloneSetReconciler({
    cache,
    client: client as any,
    recorder: recorder as any,
    features: opts.features ?? gates(),
    log: pino({ level: 'silent' }),
    expectations,
    clock,
    randomId: () => `id${String(ids++).padStart(3, '0')}`,
  });
  return { reconciler, client, events, scaleExpectations, revisionExpectations, resourceVersions, advance: (ms: number) => (now += ms) };
}

/** A CloneSet whose current revision exists and whose status already matches `pods`. */
function settled(spec: Parameters<typeof cloneSet>[0], pods: (rev: string) => Pod[]) {
  const base = cloneSet(spec);
  const rev = revisionOf(base);
  const name = rev.metadata.name!;
  const ps = pods(name);
  const cs = cloneSet(spec, planCloneSet({ cloneSet: base, revisions: [rev], pods: ps, pvcs: [], now: NOW, features: gates() }).status);
  return { cs, rev, revName: name, pods: ps };
}

/** One reconcile of a settled 1-replica CloneSet owning the given pod: the pod writes it made. */
async function podWritesOf(podAt: (revision: string) => Pod) {
  const { cs, rev, pods } = settled({ replicas: 1 }, (r) => [podAt(r)]);
  const env = setup({ cs, revisions: [rev], pods });
  await env.reconciler.reconcile('default/cs');
  return env.client.calls.filter((c) => c.resource === 'pods');
}

describe('CloneSet reconcile', () => {
  test('scale-out creates pods with controller ownerReferences, expecting each before its create', async () => {
    const { cs, rev } = settled({ replicas: 0 }, () => []);
    const scaled = { ...cs, spec: { ...cs.spec!, replicas: 3 } } as Stored<CloneSet>;
    const env = setup({ cs: scaled, revisions: [rev] });
    env.client.onCall = (c) => {
      if (c.verb === 'create' && c.resource === 'pods') {
        assert.ok(env.scaleExpectations.getExpectations('default/cs')?.create.has(c.name), `${c.name} expected before its create`);
      }
    };
    const result = await env.reconciler.reconcile('default/cs');
    const creates = env.client.calls.filter((c) => c.verb === 'create' && c.resource === 'pods');
    assert.deepEqual(
      creates.map((c) => c.name),
      ['cs-id000', 'cs-id001', 'cs-id002'],
    );
    for (const c of creates) {
      assert.deepEqual(c.body.metadata.ownerReferences, [
        { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'cs', uid: 'cs-uid', controller: true, blockOwnerDeletion: true },
      ]);
    }
    assert.deepEqual(
      env.events.map((e) => e.reason),
      ['SuccessfulCreate', 'SuccessfulCreate', 'SuccessfulCreate'],
    );
    assert.equal(env.events[0].note, 'succeed to create pod cs-id000');
    // Nothing observed yet: the next reconcile waits for the informer, for the rest of the timeout.
    const satisfied = env.scaleExpectations.satisfiedExpectations('default/cs');
    assert.equal(satisfied.satisfied, false);
    assert.deepEqual(satisfied.dirty.create, ['cs-id000', 'cs-id001', 'cs-id002']);
    assert.equal(result.requeueAfterMs, undefined);
    env.client.calls = [];
    env.advance(10_000);
    assert.deepEqual(await env.reconciler.reconcile('default/cs'), { requeueAfterMs: 50_000 });
    assert.deepEqual(env.client.calls, []);
  });

  test('an expectation unsatisfied past the timeout is dropped, counted, and the reconcile goes on', async () => {
    const { cs, rev } = settled({ replicas: 1 }, () => []);
    const env = setup({ cs, revisions: [rev], timeout: 1000 });
    env.scaleExpectations.expectScale('default/cs', 'create', 'cs-lost');
    assert.ok((await env.reconciler.reconcile('default/cs')).requeueAfterMs! > 0);
    env.advance(1000);
    const before = (await scaleExpectationLeakage.get()).values.find((v) => v.labels.name === 'cs')?.value ?? 0;
    await env.reconciler.reconcile('default/cs');
    const afterCount = (await scaleExpectationLeakage.get()).values.find((v) => v.labels.name === 'cs')?.value ?? 0;
    assert.equal(afterCount, before + 1);
    assert.ok(
      env.client.calls.some((c) => c.verb === 'create' && c.resource === 'pods'),
      'the reconcile went on to create the missing pod',
    );
  });

  test('a failing create batch stops slow start, withdraws expectations and records FailedCreate + FailedScale', async () => {
    const { cs, rev } = settled({ replicas: 0 }, () => []);
    const env = setup({ cs: { ...cs, spec: { ...cs.spec!, replicas: 4 } } as Stored<CloneSet>, revisions: [rev] });
    env.client.fail = (c) => (c.verb === 'create' && c.name === 'cs-id001' ? forbidden() : undefined);
    await assert.rejects(env.reconciler.reconcile('default/cs'), /quota exceeded/);
    // batches 1, 2 (fails on cs-id001), and the last batch of 1 never tried
    assert.deepEqual(
      env.client.calls.filter((c) => c.verb === 'create').map((c) => c.name),
      ['cs-id000', 'cs-id001', 'cs-id002'],
    );
    assert.deepEqual(env.scaleExpectations.satisfiedExpectations('default/cs').dirty.create, ['cs-id000', 'cs-id002']);
    assert.ok(env.events.some((e) => e.type === 'Warning' && e.reason === 'FailedCreate'));
    const status = env.client.calls.find((c) => c.verb === 'updateStatus')!;
    assert.ok(status.body.status.conditions.some((c: any) => c.type === 'FailedScale' && c.message === 'quota exceeded'));
  });

  test('a namespace being terminated stops creations quietly: no error, no FailedCreate, no retry until the expectations time out', async () => {
    const { cs, rev } = settled({ replicas: 0 }, () => []);
    const env = setup({ cs: { ...cs, spec: { ...cs.spec!, replicas: 4 } } as Stored<CloneSet>, revisions: [rev] });
    env.client.fail = (c) => (c.verb === 'create' && c.resource === 'pods' ? terminating() : undefined);
    assert.equal((await env.reconciler.reconcile('default/cs')).requeueAfterMs, undefined);
    assert.deepEqual(
      env.client.calls.filter((c) => c.verb === 'create').map((c) => c.name),
      ['cs-id000'],
    );
    assert.deepEqual(
      env.events.filter((e) => e.type === 'Warning'),
      [],
    );
    const status = env.client.calls.find((c) => c.verb === 'updateStatus');
    assert.ok(!status?.body.status.conditions?.some((c: any) => c.type === 'FailedScale'));
    // the refused creation stays expected: the next reconciles make no call
    env.client.calls = [];
    env.advance(10_000);
    assert.ok((await env.reconciler.reconcile('default/cs')).requeueAfterMs! > 0);
    assert.deepEqual(env.client.calls, []);
  });

  test('a namespace being terminated refusing the revision ends the reconcile quietly; the revision stays expected', async () => {
    const { cs } = settled({ replicas: 2 }, () => []);
    const env = setup({ cs });
    env.client.fail = (c) => (c.verb === 'create' ? terminating() : undefined);
    assert.equal((await env.reconciler.reconcile('default/cs')).requeueAfterMs, undefined);
    assert.deepEqual(
      env.client.calls.map((c) => `${c.verb} ${c.resource}`),
      ['create controllerrevisions'],
    );
    assert.equal(env.revisionExpectations.satisfiedExpectations('default/cs').satisfied, false);
    assert.deepEqual(env.events, []);
  });

  test('scale-in deletes with a uid precondition, expecting the delete first', async () => {
    const { cs, rev, pods } = settled({ replicas: 2 }, (r) => [pod('cs-a', { revision: r }), pod('cs-b', { revision: r })]);
    const env = setup({ cs: { ...cs, spec: { ...cs.spec!, replicas: 1 } } as Stored<CloneSet>, revisions: [rev], pods });
    env.client.onCall = (c) => {
      if (c.verb === 'delete') assert.ok(env.scaleExpectations.getExpectations('default/cs')?.delete.has(c.name));
    };
    await env.reconciler.reconcile('default/cs');
    const deletes = env.client.calls.filter((c) => c.verb === 'delete');
    assert.equal(deletes.length, 1);
    assert.deepEqual(deletes[0].opts.preconditions, { uid: `uid-${deletes[0].name}` });
    assert.ok(env.events.some((e) => e.reason === 'SuccessfulDelete' && e.note === `succeed to delete pod ${deletes[0].name}`));
  });

  test('scale-in sends its deletions in slow-start batches (1, 2, 4, …); a failing batch stops the rest', async () => {
    const names = Array.from({ length: 16 }, (_, i) => `cs-p${String(i).padStart(2, '0')}`);
    const { cs, rev, pods } = settled({ replicas: 16 }, (r) => names.map((n) => pod(n, { revision: r })));
    const scaledIn = { ...cs, spec: { ...cs.spec!, replicas: 0 } } as Stored<CloneSet>;

    const env = setup({ cs: scaledIn, revisions: [rev], pods });
    await env.reconciler.reconcile('default/cs');
    assert.equal(env.client.calls.filter((c) => c.verb === 'delete').length, 16);
    assert.equal(env.client.maxInFlight, 8, 'batches of 1, 2, 4, 8 and 1 in flight together');

    const failing = setup({ cs: scaledIn, revisions: [rev], pods });
    let answered = 0;
    failing.client.fail = (c) => (c.verb === 'delete' && ++answered === 4 ? forbidden() : undefined);
    await assert.rejects(failing.reconciler.reconcile('default/cs'), /quota exceeded/);
    const sent = failing.client.calls.filter((c) => c.verb === 'delete').map((c) => c.name);
    assert.equal(sent.length, 7, 'the batch of 4 with the failure settles; the batches after it are not sent');
    const refused = sent[3];
    const expected = [...(failing.scaleExpectations.getExpectations('default/cs')?.delete ?? [])].sort();
    assert.deepEqual(expected, sent.filter((n) => n !== refused).sort(), 'the refused deletion is no longer expected');
    assert.ok(failing.events.some((e) => e.type === 'Warning' && e.reason === 'FailedDelete' && e.note.includes(refused)));
  });

  test("a wave of new pods' PreparingNormal → Normal patches go out in slow-start batches; a conflict ends the round after its batch", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `cs-p${i}`);
    const make = (r: string) => names.map((n) => pod(n, { revision: r, state: 'PreparingNormal', ready: false }));
    const { cs, rev, pods } = settled({ replicas: 8 }, make);

    const env = setup({ cs, revisions: [rev], pods });
    await env.reconciler.reconcile('default/cs');
    const patched = env.client.calls.filter((c) => c.verb === 'patch' && c.resource === 'pods');
    assert.deepEqual(patched.map((c) => c.name).sort(), names);
    assert.equal(env.client.maxInFlight, 4, 'batches of 1, 2, 4 and 1');

    const racing = setup({ cs, revisions: [rev], pods });
    let answered = 0;
    racing.client.fail = (c) => (c.verb === 'patch' && ++answered === 2 ? conflict() : undefined);
    assert.deepEqual(await racing.reconciler.reconcile('default/cs'), { requeueAfterMs: 1000 });
    assert.equal(racing.client.calls.filter((c) => c.verb === 'patch').length, 3, 'batches 1 and 2 sent, then the round ends');
  });

  test('status is written through the status subresource only when it changed', async () => {
    const { cs, rev, pods } = settled({ replicas: 2 }, (r) => [pod('cs-a', { revision: r }), pod('cs-b', { revision: r })]);
    const env = setup({ cs, revisions: [rev], pods });
    await env.reconciler.reconcile('default/cs');
    assert.deepEqual(env.client.calls, []);

    const bumped = { ...cs, metadata: { ...cs.metadata, generation: 2 } } as Stored<CloneSet>;
    const env2 = setup({ cs: bumped, revisions: [rev], pods });
    await env2.reconciler.reconcile('default/cs');
    assert.deepEqual(
      env2.client.calls.map((c) => c.verb),
      ['updateStatus'],
    );
    assert.equal(env2.client.calls[0].body.status.observedGeneration, 2);
  });

  test('after a status write, a round on the stale cached CloneSet waits for the watch instead of writing (no 409)', async () => {
    const { cs, rev, pods } = settled({ replicas: 2 }, (r) => [pod('cs-a', { revision: r }), pod('cs-b', { revision: r })]);
    const opts = { cs: { ...cs, metadata: { ...cs.metadata, generation: 2 } } as Stored<CloneSet>, revisions: [rev], pods };
    const env = setup(opts);
    await env.reconciler.reconcile('default/cs');
    assert.deepEqual(
      env.client.calls.map((c) => c.verb),
      ['updateStatus'],
    );
    const written = env.client.calls[0].body as Stored<CloneSet>;

    // A pod event re-queues the key before the CloneSet's watch event: the cache still has the old copy.
    opts.cs = { ...opts.cs, metadata: { ...opts.cs.metadata, generation: 3 } } as Stored<CloneSet>;
    const waited = await env.reconciler.reconcile('default/cs');
    assert.ok((waited.requeueAfterMs ?? 0) > 0, 'requeued');
    assert.equal(env.client.calls.length, 1, 'no status written from the stale copy');

    // The watch brings the written version: the next round writes again.
    opts.cs = { ...opts.cs, metadata: { ...opts.cs.metadata, resourceVersion: String(env.client.rv) }, status: written.status };
    await env.reconciler.reconcile('default/cs');
    assert.deepEqual(
      env.client.calls.map((c) => c.verb),
      ['updateStatus', 'updateStatus'],
    );
  });

  test('a new template creates its ControllerRevision first; in-place updates write the condition, then a CAS patch', async () => {
    const spec = { replicas: 1, updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' as const, maxUnavailable: 1 } } };
    const { cs, rev, pods } = settled(spec, (r) => [
      { ...pod('cs-a', { revision: r }), metadata: { ...pod('cs-a', { revision: r }).metadata, resourceVersion: '7' } },
    ]);
    const updated = { ...cs, spec: { ...cs.spec!, template: template('nginx:2.0') } } as Stored<CloneSet>;
    const env = setup({ cs: updated, revisions: [rev], pods });
    await env.reconciler.reconcile('default/cs');
    const writes = env.client.calls.map((c) => `${c.verb} ${c.resource}${c.opts?.subresource ? '/' + c.opts.subresource : ''}`);
    assert.deepEqual(writes, ['create controllerrevisions', 'patch pods/status', 'patch pods', 'updateStatus clonesets']);
    const [, cond, spec2] = env.client.calls;
    assert.deepEqual(cond.body.status.conditions.map((c: any) => [c.type, c.status]).sort(), [
      ['InPlaceUpdateReady', 'False'],
      ['Ready', 'False'],
    ]);
    assert.equal(spec2.opts.patchType, 'application/strategic-merge-patch+json');
    assert.equal(spec2.body.metadata.resourceVersion, String(env.client.rv - 2), 'CAS on the version the condition write returned');
    assert.deepEqual(spec2.body.spec.containers, [{ name: 'main', image: 'nginx:2.0' }]);
    assert.equal(spec2.body.metadata.labels['lifecycle.apps.kruise.io/state'], 'Updating');
    assert.ok(env.events.some((e) => e.reason === 'SuccessfulUpdatePodInPlace'));
    // The next reconcile waits until the cache shows the pod at least at the written version.
    assert.ok((await env.reconciler.reconcile('default/cs')).requeueAfterMs! > 0);
  });

  test('InPlaceWorkloadVerticalScaling: a resource change is a CAS resize through pods/resize, then the patch of the pod', async () => {
    const spec = { replicas: 1, updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' as const, maxUnavailable: 1 } } };
    const sized = (cpu: string) => ({
      metadata: { labels: { app: 'demo' } },
      spec: { containers: [{ name: 'main', image: 'nginx:1.0', resources: { requests: { cpu }, limits: { cpu: '1' } } }] },
    });
    const { cs, rev, pods } = settled({ ...spec, template: sized('100m') }, (r) => {
      const p = pod('cs-a', { revision: r, containers: sized('100m').spec.containers });
      return [{ ...p, metadata: { ...p.metadata, resourceVersion: '7' } }];
    });
    const updated = { ...cs, spec: { ...cs.spec!, template: sized('200m') } } as Stored<CloneSet>;
    const env = setup({ cs: updated, revisions: [rev], pods, features: gates({ InPlaceWorkloadVerticalScaling: true }) });
    await env.reconciler.reconcile('default/cs');
    const writes = env.client.calls.map((c) => `${c.verb} ${c.resource}${c.opts?.subresource ? '/' + c.opts.subresource : ''}`);
    assert.deepEqual(
      writes,
      ['create controllerrevisions', 'patch pods/resize', 'patch pods', 'updateStatus clonesets'],
      'a resize alone keeps the pod Ready',
    );
    const [, resize, meta] = env.client.calls;
    assert.deepEqual(resize.body, {
      metadata: { resourceVersion: '7' },
      spec: { containers: [{ name: 'main', resources: { requests: { cpu: '200m' }, limits: { cpu: '1' } } }] },
    });
    assert.equal(meta.body.metadata.resourceVersion, undefined, 'the resize was the compare-and-swap');
    assert.equal(meta.body.spec, undefined, 'the pod itself refuses resource changes');
    assert.ok(JSON.parse(meta.body.metadata.annotations['apps.kruise.io/inplace-update-state']).updateResources);

    // Without the gate the same change recreates the pod: deleted in this round (recreateAtOnce).
    const off = setup({ cs: updated, revisions: [rev], pods });
    await off.reconciler.reconcile('default/cs');
    assert.deepEqual(
      off.client.calls.filter((c) => c.resource === 'pods').map((c) => `${c.verb} ${c.name}`),
      ['delete cs-a'],
      'deleted for recreation',
    );
  });

  test("a new pod's PreparingNormal → Normal and its first InPlaceUpdateReady are one pods/status patch", async () => {
    const conditions = [
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-07-01T10:30:00Z' },
      { type: 'ContainersReady', status: 'True' },
    ];
    const podWrites = await podWritesOf((r) => pod('cs-a', { revision: r, state: 'PreparingNormal', conditions }));
    assert.deepEqual(
      podWrites.map((c) => `${c.verb} ${c.opts?.subresource ?? ''}`),
      ['patch status'],
      'one write: upstream makes two (the label on the pod, then the condition on its status)',
    );
    const { body } = podWrites[0];
    assert.equal(body.metadata.labels['lifecycle.apps.kruise.io/state'], 'Normal');
    assert.deepEqual(
      body.status.conditions.map((c: any) => [c.type, c.status]),
      [['InPlaceUpdateReady', 'True']],
    );
    assert.equal(podWrites[0].opts.patchType, 'application/strategic-merge-patch+json');
  });

  test('an unscheduled new pod gets no write: its first InPlaceUpdateReady waits for PreparingNormal → Normal', async () => {
    const conditions = [{ type: 'PodScheduled', status: 'False' }];
    const podWrites = await podWritesOf((r) =>
      pod('cs-a', { revision: r, state: 'PreparingNormal', node: '', phase: 'Pending', ready: false, conditions }),
    );
    assert.deepEqual(podWrites, []);
  });

  test('a lifecycle change with no condition to write stays a patch of the pod itself', async () => {
    const podWrites = await podWritesOf((r) => pod('cs-a', { revision: r, state: 'PreparingNormal' }));
    assert.deepEqual(
      podWrites.map((c) => `${c.verb} ${c.opts?.subresource ?? ''}`),
      ['patch '],
    );
    assert.equal(podWrites[0].body.metadata.labels['lifecycle.apps.kruise.io/state'], 'Normal');
  });

  test('a resourceVersion conflict on the in-place patch requeues without an error', async () => {
    const spec = { replicas: 1, updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' as const, maxUnavailable: 1 } } };
    const { cs, rev, pods } = settled(spec, (r) => [pod('cs-a', { revision: r })]);
    const env = setup({
      cs: { ...cs, spec: { ...cs.spec!, template: template('nginx:2.0') } } as Stored<CloneSet>,
      revisions: [rev],
      pods,
    });
    env.client.fail = (c) => (c.verb === 'patch' && c.resource === 'pods' && !c.opts.subresource ? conflict() : undefined);
    const result = await env.reconciler.reconcile('default/cs');
    assert.ok(result.requeueAfterMs! > 0);
    assert.ok(!env.client.calls.some((c) => c.verb === 'updateStatus'));
  });

  test('a malformed pod is reported on the CloneSet (event + condition) and the key is not retried hot', async () => {
    const { cs, rev } = settled({ replicas: 1 }, () => []);
    const bad = pod('cs-a', {
      revision: rev.metadata.name!,
      state: 'Updating',
      annotations: { 'apps.kruise.io/inplace-update-state': '{not json' },
    });
    const env = setup({ cs, revisions: [rev], pods: [bad] });
    await assert.rejects(env.reconciler.reconcile('default/cs'), (err) => isTerminalError(err));
    assert.ok(env.events.some((e) => e.type === 'Warning' && e.reason === 'FailedSync'));
    const status = env.client.calls.find((c) => c.verb === 'updateStatus')!;
    assert.ok(status.body.status.conditions.some((c: any) => c.type === 'FailedScale' && c.status === 'True'));
  });

  test('a CloneSet gone from the cache drops its expectations', async () => {
    const env = setup({ cs: cloneSet() });
    env.scaleExpectations.expectScale('default/other', 'create', 'x');
    assert.deepEqual(await env.reconciler.reconcile('default/other'), {});
    assert.equal(env.scaleExpectations.getExpectations('default/other'), undefined);
  });
});

describe('CloneSet event handlers', () => {
  const owner = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'cs', uid: 'cs-uid', controller: true };
  const owned = (name: string, extra: Record<string, unknown> = {}) => {
    const p = pod(name);
    return { ...p, metadata: { ...p.metadata, ownerReferences: [owner], resourceVersion: '1', ...extra } } as Pod;
  };
  function handlers() {
    const added: Array<{ key: string; priority?: number }> = [];
    const expectations = new WorkloadExpectations();
    const { scale, revisions: revs } = expectations;
    const h = makeHandlers({
      queue: { add: (key, opts) => void added.push({ key, priority: opts?.priority }) },
      expectations,
      getCloneSet: (ns, name) => (ns === 'default' && name === 'cs' ? cloneSet() : undefined),
      listCloneSets: (ns) => (ns === 'default' ? [cloneSet()] : []),
    });
    return { h, added, scale, revs };
  }

  test('pod events observe expectations and enqueue the owner through its controllerRef', () => {
    const { h, added, scale } = handlers();
    scale.expectScale('default/cs', 'create', 'cs-a');
    scale.expectScale('default/cs', 'delete', 'cs-b');
    h.pod.onAdd!(owned('cs-a'), false);
    h.pod.onUpdate!(owned('cs-b'), owned('cs-b', { resourceVersion: '2', deletionTimestamp: '2026-07-01T12:00:00Z' }));
    assert.equal(scale.getExpectations('default/cs'), undefined);
    assert.deepEqual(added, [
      { key: 'default/cs', priority: undefined },
      { key: 'default/cs', priority: undefined },
    ]);
  });

  test('initial-list objects are queued at low priority; resyncs and foreign owners are ignored', () => {
    const { h, added } = handlers();
    h.pod.onAdd!(owned('cs-a'), true);
    h.pod.onUpdate!(owned('cs-a'), owned('cs-a'));
    h.pod.onAdd!({ ...owned('cs-x'), metadata: { ...owned('cs-x').metadata, ownerReferences: [{ ...owner, uid: 'other' }] } }, false);
    assert.deepEqual(added, [{ key: 'default/cs', priority: LowPriority }]);
  });

  test('an orphan pod enqueues the CloneSets selecting it; one with a foreign controller does not', () => {
    const { h, added } = handlers();
    h.pod.onAdd!(pod('loose', { orphan: true }) as Pod, true);
    h.pod.onAdd!(
      {
        ...pod('rs-owned'),
        metadata: {
          ...pod('rs-owned').metadata,
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true }],
        },
      } as Pod,
      false,
    );
    assert.deepEqual(added, [{ key: 'default/cs', priority: LowPriority }]);
  });

  test('deletes (also as tombstones) observe the delete; a deleted CloneSet forgets its expectations', () => {
    const { h, added, scale } = handlers();
    scale.expectScale('default/cs', 'delete', 'cs-a');
    h.pod.onDelete!(new DeletedFinalStateUnknown('default/cs-a', owned('cs-a')));
    assert.equal(scale.getExpectations('default/cs'), undefined);
    scale.expectScale('default/cs', 'create', 'cs-z');
    h.cloneSet.onDelete!(cloneSet());
    assert.equal(scale.getExpectations('default/cs'), undefined);
    assert.equal(added.length, 2);
  });

  test('PVC and revision adds observe their create expectations', () => {
    const { h, scale, revs } = handlers();
    scale.expectScale('default/cs', 'create', 'data-cs-a');
    revs.expectScale('default/cs', 'create', 'cs-rev');
    h.pvc.onAdd!({ metadata: { name: 'data-cs-a', namespace: 'default', ownerReferences: [owner] } } as any, false);
    h.revision.onAdd!({ metadata: { name: 'cs-rev', namespace: 'default', ownerReferences: [owner] }, revision: 1 } as any, false);
    assert.equal(scale.getExpectations('default/cs'), undefined);
    assert.equal(revs.getExpectations('default/cs'), undefined);
  });
});

describe('pod patches', () => {
  test('podUpdatePatch carries label/annotation diffs, added finalizers, changed images and the CAS version', () => {
    const old = pod('cs-a', { labels: { gone: 'x' }, annotations: { keep: '1' } });
    const updated = structuredClone(old);
    delete updated.metadata.labels!.gone;
    updated.metadata.labels!.added = 'y';
    updated.metadata.annotations = { keep: '1', extra: '2' };
    updated.metadata.finalizers = ['f'];
    updated.spec!.containers[0].image = 'nginx:2.0';
    assert.deepEqual(podUpdatePatch(old, updated, '42'), {
      metadata: { labels: { added: 'y', gone: null }, annotations: { extra: '2' }, finalizers: ['f'], resourceVersion: '42' },
      spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] },
    });
    assert.equal(podUpdatePatch(old, structuredClone(old), '42'), undefined);
  });

  test('changedConditions sends only conditions that differ', () => {
    const p = pod('cs-a');
    assert.deepEqual(changedConditions(p, [{ type: 'InPlaceUpdateReady', status: 'True' }]), []);
    assert.deepEqual(
      changedConditions(p, [{ type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate' }]).map((c) => c.type),
      ['InPlaceUpdateReady'],
    );
  });

  test('changedConditions clears a reason and message the new condition drops (strategic merge would keep them)', () => {
    const p = pod('cs-a');
    p.status!.conditions = [
      ...p.status!.conditions!.filter((c) => c.type !== 'InPlaceUpdateReady'),
      { type: 'InPlaceUpdateReady', status: 'False', reason: 'StartInPlaceUpdate', message: 'm' },
    ];
    const [entry] = changedConditions(p, [{ type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: NOW_S }]);
    assert.deepEqual(entry, { type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: NOW_S, reason: null, message: null });
    // Once the server holds the cleared condition there is nothing left to write.
    p.status!.conditions = p.status!.conditions!.map((c) =>
      c.type === 'InPlaceUpdateReady' ? { type: c.type, status: 'True', lastTransitionTime: NOW_S } : c,
    );
    assert.deepEqual(changedConditions(p, [{ type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: NOW_S }]), []);
  });
});
