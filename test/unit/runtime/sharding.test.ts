// A shard's side of the sharded manager (src/runtime/sharding.ts): its sharded informers select by
// its shard label (on watches of their own, or filtering the leader's caches), a moved workload stays
// hidden until the caches of its children caught up, and its controllers' creations carry its label.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { SharedInformerFactory, type Informer, type InformerSelector, type InformerSource } from '../../../src/runtime/informer-factory.ts';
import type { EventHandler, HandlerRegistration } from '../../../src/runtime/informer.ts';
import { CloneSets, Nodes, Pods, type ResourceType } from '../../../src/runtime/resources.ts';
import {
  FilteredInformer,
  FilteringInformers,
  ShardInformers,
  isShardSelected,
  labellingCreates,
  shardSelector,
  type ShardScope,
} from '../../../src/runtime/sharding.ts';
import { unwrapDeleted } from '../../../src/runtime/store.ts';
import type { Clock } from '../../../src/util/clock.ts';
import { shardLabels } from '../../../src/util/shard-ring.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from './fake-apiserver.ts';

const labels = shardLabels('kruise-manager');
const scope: ShardScope = { labels, shardId: 'a', workloads: [CloneSets], children: [Pods] };

/** An informer over a fixed list whose resourceVersion the test moves. */
class FakeInformer implements Informer<KubeObject> {
  objects: KubeObject[] = [];
  rv = '0';
  handlers: EventHandler<KubeObject>[] = [];
  constructor(
    readonly type: ResourceType,
    readonly selector: InformerSelector,
  ) {}
  lister = {
    get: ((a: string, b?: string) =>
      this.objects.find((o) =>
        b === undefined ? o.metadata.name === a : o.metadata.namespace === a && o.metadata.name === b,
      )) as Informer<KubeObject>['lister']['get'],
    list: () => this.objects,
    byIndex: () => this.objects,
  };
  hasSynced = () => true;
  waitForSync = async () => true;
  lastSyncResourceVersion = () => this.rv;
  addIndexers = () => {};
  addEventHandler(handler: EventHandler<KubeObject>): HandlerRegistration {
    this.handlers.push(handler);
    return { hasSynced: () => true, remove: () => {} };
  }
}

class FakeSource implements InformerSource {
  made: FakeInformer[] = [];
  informerFor<T extends KubeObject>(type: ResourceType, selector: InformerSelector = {}): Informer<T> {
    const informer = new FakeInformer(type, selector);
    this.made.push(informer);
    return informer as unknown as Informer<T>;
  }
  async syncedInformerFor<T extends KubeObject>(type: ResourceType, selector?: InformerSelector): Promise<Informer<T>> {
    return this.informerFor<T>(type, selector);
  }
}

/** A clock whose timers run when the test says. */
function manualClock(): Clock & { fire(): void } {
  let timers: Array<() => void> = [];
  return {
    now: () => 0,
    setTimer(_ms, fn) {
      timers.push(fn);
      return { cancel: () => (timers = timers.filter((t) => t !== fn)) };
    },
    sleep: async () => {},
    fire() {
      const due = timers;
      timers = [];
      for (const fn of due) fn();
    },
  };
}

const cloneSet = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { namespace: 'default', name: 'web', resourceVersion: '50', labels: { [labels.shard]: 'a' }, annotations },
});

describe('ShardInformers', () => {
  it('selects workloads by shard (not draining), children by shard, and leaves other resources alone', () => {
    const source = new FakeSource();
    const informers = new ShardInformers(source, scope);
    informers.informerFor(CloneSets, { namespace: 'prod' });
    informers.informerFor(Pods, { labelSelector: 'app=web' });
    informers.informerFor(Nodes);
    assert.deepEqual(
      source.made.map((i) => i.selector),
      [
        { namespace: 'prod', labelSelector: 'shard.kruise.io/kruise-manager=a,!drain.shard.kruise.io/kruise-manager' },
        { labelSelector: 'app=web,shard.kruise.io/kruise-manager=a' },
        {},
      ],
    );
    assert.equal(shardSelector(scope, 'draining'), 'shard.kruise.io/kruise-manager=a,drain.shard.kruise.io/kruise-manager');
  });

  it('hides a moved workload until its children cache has caught up, then delivers its add', () => {
    const source = new FakeSource();
    const clock = manualClock();
    const informers = new ShardInformers(source, scope, clock);
    const workloads = informers.informerFor(CloneSets);
    informers.informerFor(Pods);
    const [rawWorkloads, pods] = source.made as [FakeInformer, FakeInformer];
    const added: string[] = [];
    workloads.addEventHandler({ onAdd: (o) => void added.push(o.metadata.name!) });

    const moved = cloneSet({ [labels.children]: JSON.stringify({ pods: '40' }) });
    rawWorkloads.objects = [moved];
    pods.rv = '39';
    void rawWorkloads.handlers[0]!.onAdd!(moved, false);
    assert.equal(workloads.lister.get('default', 'web'), undefined, 'hidden while the pod cache is behind');
    assert.deepEqual(workloads.lister.list(), []);
    clock.fire();
    assert.deepEqual(added, [], 'not delivered yet');

    pods.rv = '40';
    clock.fire();
    assert.deepEqual(added, ['web']);
    assert.equal(workloads.lister.get('default', 'web'), moved);
  });

  it('shows a workload without the annotation (never moved, or moved without children) at once', () => {
    const source = new FakeSource();
    const informers = new ShardInformers(source, scope);
    const workloads = informers.informerFor(CloneSets);
    (source.made[0] as FakeInformer).objects = [cloneSet()];
    assert.ok(workloads.lister.get('default', 'web'));
  });
});

describe('labellingCreates', () => {
  it('adds the shard label to what it creates, keeping the object’s own labels; other calls go through as they are', async () => {
    const created: KubeObject[] = [];
    const client = {
      create: async (_type: ResourceType, obj: KubeObject) => (created.push(obj), obj),
      get: async () => 'got',
    } as unknown as KubeClient;
    const labelled = labellingCreates(client, { [labels.shard]: 'a' });
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', labels: { app: 'web' } } };
    await labelled.create(Pods, pod);
    assert.deepEqual(created[0]!.metadata.labels, { app: 'web', [labels.shard]: 'a' });
    assert.deepEqual(pod.metadata.labels, { app: 'web' }, 'the caller’s object is not changed');
    assert.equal(await labelled.get(Pods, 'x'), 'got');
  });
});

describe('FilteringInformers (a shard on the leader’s caches)', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const PODS = '/v1/pods';
  const pod = (name: string, shard?: string, extra: Record<string, string> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'f', labels: { ...(shard ? { [labels.shard]: shard } : {}), ...extra } },
  });

  it('serves a shard’s selected informers from the unselected one, filtered: its lister, its events (labels in → add, out → delete)', async () => {
    server.put(PODS, pod('a1', 'a'));
    server.put(PODS, pod('b1', 'b'));
    server.put(PODS, pod('none'));
    const factory = new SharedInformerFactory(client, { logger: quiet, reflector: { backoff: { initialMs: 5, jitter: 0 } } });
    const stop = new AbortController();
    factory.start(stop.signal);
    try {
      const leader = factory.informerFor(Pods, { namespace: 'f' });
      const informers = new ShardInformers(new FilteringInformers(factory.scope(), [CloneSets, Pods]), scope);
      const pods = informers.informerFor(Pods, { namespace: 'f' });
      const nodes = informers.informerFor(Nodes);
      assert.ok(!(nodes instanceof FilteredInformer), 'other resources pass through');
      assert.equal(await factory.waitForCacheSync(), true);
      const events: string[] = [];
      pods.addEventHandler({
        onAdd: (o, initial) => void events.push(`add ${o.metadata.name}${initial ? ' (initial)' : ''}`),
        onUpdate: (_, o) => void events.push(`update ${o.metadata.name}`),
        onDelete: (o) => void events.push(`delete ${unwrapDeleted(o).metadata.name} ${unwrapDeleted(o).metadata.labels?.[labels.shard]}`),
      });
      await waitFor(() => events.length === 1, 'initial list');
      assert.deepEqual(events, ['add a1 (initial)']);
      assert.deepEqual(
        pods.lister.list().map((p) => p.metadata.name),
        ['a1'],
      );
      assert.equal(pods.lister.get('f', 'b1'), undefined, 'another shard’s pod is not shown');
      assert.equal(pods.lister.get('f', 'a1'), leader.lister.get('f', 'a1'), 'the leader’s cached object itself: held once');
      assert.deepEqual(
        server.openWatches().filter((w) => w.includes(labels.shard)),
        [],
        'no watch of its own',
      );

      server.put(PODS, pod('a1', 'a', { v: '2' })); // stays in: update
      server.put(PODS, pod('b1', 'a')); // moved in: add
      server.put(PODS, pod('none', 'b')); // out → out: nothing
      await waitFor(() => events.length === 3, 'updates');
      server.put(PODS, pod('a1', 'b')); // moved out: delete, of its last state in the shard
      server.remove(PODS, 'f', 'none'); // not ours: nothing
      server.remove(PODS, 'f', 'b1'); // ours: delete
      await waitFor(() => events.length === 5, 'deletes');
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(events, ['add a1 (initial)', 'update a1', 'add b1', 'delete a1 a', 'delete b1 a']);
      assert.deepEqual(pods.lister.list(), []);
      assert.equal(pods.lastSyncResourceVersion(), leader.lastSyncResourceVersion(), 'caught up as far as the leader’s cache');
    } finally {
      stop.abort();
      await factory.whenStopped();
    }
  });

  it('isShardSelected: the shard’s own selectors only', () => {
    assert.equal(isShardSelected(scope, { labelSelector: shardSelector(scope, 'workload') }), true);
    assert.equal(isShardSelected(scope, { labelSelector: shardSelector(scope, 'draining') }), true);
    assert.equal(isShardSelected(scope, { labelSelector: `app=web,${shardSelector(scope, 'child')}` }), true);
    assert.equal(isShardSelected(scope, { labelSelector: `${labels.shard}=ab` }), false);
    assert.equal(isShardSelected(scope, { labelSelector: `${labels.ring}=kruise-manager` }), false);
    assert.equal(isShardSelected(scope, {}), false);
  });
});
