// A shard's side of the sharded manager (src/runtime/sharding.ts): its sharded informers select by
// its shard label, a moved workload stays hidden until the caches of its children caught up, and its
// controllers' creations carry its label.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import type { Informer, InformerSelector, InformerSource } from '../../../src/runtime/informer-factory.ts';
import type { EventHandler, HandlerRegistration } from '../../../src/runtime/informer.ts';
import { CloneSets, Nodes, Pods, type ResourceType } from '../../../src/runtime/resources.ts';
import { ShardInformers, labellingCreates, shardSelector, type ShardScope } from '../../../src/runtime/sharding.ts';
import type { Clock } from '../../../src/util/clock.ts';
import { shardLabels } from '../../../src/util/shard-ring.ts';

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
