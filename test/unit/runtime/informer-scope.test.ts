// One informer per resource type for the whole manager process: the webhooks read the factory's
// informers directly, each leadership term through an InformerScope whose handlers go with the
// term, and a relist at the end of a term is what the next term waits for.
import { test, describe, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeClient } from '../../../src/runtime/client.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { Pods } from '../../../src/runtime/resources.ts';
import type { EventHandler } from '../../../src/runtime/informer.ts';
import { SharedInformerFactory } from '../../../src/runtime/informer-factory.ts';
import { DeletedFinalStateUnknown, unwrapDeleted } from '../../../src/runtime/store.ts';
import type { RuntimeLogger } from '../../../src/runtime/reflector.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from './fake-apiserver.ts';

const PODS = '/v1/pods';
const quiet: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} };
const fast = { backoff: { initialMs: 5, jitter: 0 } };

function pod(ns: string, name: string, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels } };
}

function recorder(): { events: string[]; handler: EventHandler<KubeObject> } {
  const events: string[] = [];
  return {
    events,
    handler: {
      onAdd: (obj) => void events.push(`add ${obj.metadata.name}`),
      onUpdate: (old, obj) => void events.push(`update ${obj.metadata.name} ${JSON.stringify(obj.metadata.labels ?? {})}`),
      onDelete: (obj) =>
        void events.push(`delete ${unwrapDeleted(obj).metadata.name}${obj instanceof DeletedFinalStateUnknown ? ' (tombstone)' : ''}`),
    },
  };
}

describe('InformerScope', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  function started(): SharedInformerFactory {
    const factory = new SharedInformerFactory(client, { logger: quiet, reflector: fast });
    const ctrl = new AbortController();
    factory.start(ctrl.signal);
    stops.push(async () => {
      ctrl.abort();
      await factory.whenStopped();
    });
    return factory;
  }
  const podWatches = (ns: string) => server.watchRequests().filter((r) => r.path === `/api/v1/namespaces/${ns}/pods`);

  test('the webhook and every term read one informer: one list and one watch per resource and selector', async () => {
    server.put(PODS, pod('one', 'a'));
    const factory = started();
    const webhook = factory.informerFor(Pods, { namespace: 'one' });
    const term1 = factory.scope();
    const term2 = factory.scope();
    const viewed = [term1.informerFor(Pods, { namespace: 'one' }), term2.informerFor(Pods, { namespace: 'one' })];
    assert.equal(term1.informerFor(Pods, { namespace: 'one' }), viewed[0], 'a scope hands out one view per informer');
    assert.equal(await term1.waitForCacheSync(), true);
    await waitFor(() => server.watcherCount('one') === 1, 'watch');
    assert.equal(podWatches('one').length, 1);
    assert.equal(server.listRequests().filter((r) => r.path === '/api/v1/namespaces/one/pods').length, 1);
    for (const view of viewed) assert.equal(view.lister.get('one', 'a'), webhook.lister.get('one', 'a'), 'the very same cached object');
  });

  test("a term's handlers are removed when it ends; the informer and other readers carry on", async () => {
    const factory = started();
    const term = factory.scope();
    const mine = recorder();
    const other = recorder();
    term.informerFor(Pods, { namespace: 'end' }).addEventHandler(mine.handler);
    term.informerFor(Pods, { namespace: 'end' }).addEventHandler(mine.handler);
    const webhook = factory.informerFor(Pods, { namespace: 'end' });
    webhook.addEventHandler(other.handler);
    assert.equal(term.handlerCount(), 2);
    assert.equal(await term.waitForCacheSync(), true);
    await waitFor(() => server.watcherCount('end') === 1, 'watch');
    server.put(PODS, pod('end', 'a'));
    await waitFor(() => mine.events.length === 2 && other.events.length === 1, 'live add');

    term.close();
    assert.equal(term.handlerCount(), 0);
    server.put(PODS, pod('end', 'b'));
    await waitFor(() => other.events.length === 2, 'the webhook informer still watches');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(mine.events, ['add a', 'add a'], 'nothing reaches an ended term');
    // A controller of the ended term registering late (a cache opened on first use) leaks nothing.
    term.informerFor(Pods, { namespace: 'end' }).addEventHandler(mine.handler);
    assert.equal(term.handlerCount(), 0);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(mine.events, ['add a', 'add a']);
  });

  test('after a leadership gap the next term sees what changed meanwhile; the webhook reads a synced cache throughout', async () => {
    server.put(PODS, pod('gap', 'a'));
    server.put(PODS, pod('gap', 'b'));
    const factory = started();
    const webhook = factory.informerFor(Pods, { namespace: 'gap' });
    const term1 = factory.scope();
    term1.informerFor(Pods, { namespace: 'gap' }).addEventHandler(recorder().handler);
    assert.equal(await term1.waitForCacheSync(), true);
    await waitFor(() => server.watcherCount('gap') === 1, 'watch');

    // The gap: a partition hides every change from the open watch while another leader acts.
    server.muted = true;
    server.put(PODS, pod('gap', 'a', { v: '2' }));
    server.remove(PODS, 'gap', 'b');
    server.put(PODS, pod('gap', 'c'));
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      webhook.lister
        .list()
        .map((p) => p.metadata.name)
        .sort(),
      ['a', 'b'],
      'the cache missed the gap',
    );
    server.muted = false;
    // The next list is held back, as by an API server still coming back.
    server.failNext((r) => r.path === '/api/v1/namespaces/gap/pods' && r.query.get('watch') !== 'true', 503, {});

    // Leadership lost: the term ends, every cache relists, the next term is built at once.
    term1.close();
    const relisted = factory.relist();
    const term2 = factory.scope();
    const view = term2.informerFor(Pods, { namespace: 'gap' });
    const seen = recorder();
    view.addEventHandler(seen.handler);
    assert.equal(view.hasSynced(), false, 'the new term may not act before the relist is in');
    assert.equal(webhook.hasSynced(), true, 'admission keeps its synced cache');
    assert.equal(webhook.lister.get('gap', 'b')?.metadata.name, 'b', 'old contents until the list replaces them');
    assert.equal(await term2.waitForCacheSync(), true);
    assert.equal(await relisted, true);
    assert.equal(view.hasSynced(), true);
    assert.deepEqual(
      view.lister
        .list()
        .map((p) => `${p.metadata.name}${JSON.stringify(p.metadata.labels ?? {})}`)
        .sort(),
      ['a{"v":"2"}', 'c{}'],
    );
    // The handler got the stale objects first (as any handler registered on a synced cache), then the
    // difference the list made.
    await waitFor(() => seen.events.length === 5, 'diff delivered');
    assert.deepEqual(seen.events, ['add a', 'add b', 'update a {"v":"2"}', 'add c', 'delete b (tombstone)']);
    // The relist's watch opens after its list (later still on a busy machine).
    await waitFor(() => server.watcherCount('gap') === 1 && podWatches('gap').length >= 2, 'watching again');
    assert.equal(podWatches('gap').length, 2, 'one new watch, from the relist, replacing the old one');
  });

  test('a later term adding the same index keeps the first one', async () => {
    const factory = started();
    const byLabel = { label: (p: KubeObject) => [p.metadata.labels?.app ?? ''] };
    server.put(PODS, pod('idx', 'a', { app: 'x' }));
    factory.scope().informerFor(Pods, { namespace: 'idx' }).addIndexers(byLabel);
    const next = factory.scope().informerFor(Pods, { namespace: 'idx' });
    next.addIndexers(byLabel);
    assert.equal(await next.waitForSync(), true);
    assert.deepEqual(
      next.lister.byIndex('label', 'x').map((p) => p.metadata.name),
      ['a'],
    );
    assert.throws(
      () => factory.informerFor(Pods, { namespace: 'idx' }).addIndexers(byLabel),
      /already exists/,
      'the informer itself still refuses',
    );
  });
  test('stopInformers stops and forgets the informers it matches (their watches close); the others run on', async () => {
    server.put(PODS, pod('stop', 'a', { shard: 'x' }));
    const factory = started();
    const everything = factory.informerFor(Pods, { namespace: 'stop' });
    const selected = factory.informerFor(Pods, { namespace: 'stop', labelSelector: 'shard=x' });
    assert.equal(await factory.waitForCacheSync(), true);
    await waitFor(() => server.watcherCount('stop') === 2, 'two watches');

    assert.equal(
      factory.stopInformers((_, selector) => selector.labelSelector === 'shard=x'),
      1,
    );
    await waitFor(() => server.watcherCount('stop') === 1, 'the selected watch closed');
    assert.deepEqual(server.openWatches(), ['/v1/pods stop']);
    assert.equal(factory.informerFor(Pods, { namespace: 'stop' }), everything, 'the other informer is the same, still running');
    server.put(PODS, pod('stop', 'b'));
    await waitFor(() => everything.lister.get('stop', 'b') !== undefined, 'still watched');
    assert.equal(await factory.waitForCacheSync(undefined, 1_000), true, 'a stopped informer is not waited for');
    const again = factory.informerFor(Pods, { namespace: 'stop', labelSelector: 'shard=x' });
    assert.notEqual(again, selected, 'asked again: a new informer');
    assert.equal(await factory.waitForCacheSync(), true);
    assert.deepEqual(
      again.lister.list().map((p) => p.metadata.name),
      ['a'],
    );
  });
});
