// Caches are never read before they sync: waiting has a deadline (--controller-cache-sync-timeout)
// whose error names the caches still filling; informers opened on first use are handed out only
// once synced; --sync-period is every handler's default resync.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeClient } from '../../../src/runtime/client.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { ConfigMaps, Nodes, Pods } from '../../../src/runtime/resources.ts';
import { CacheSyncTimeoutError, SharedInformerFactory } from '../../../src/runtime/informer-factory.ts';
import type { RuntimeLogger } from '../../../src/runtime/reflector.ts';
import { FakeClock } from '../../../src/util/clock.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from './fake-apiserver.ts';

const quiet: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} };
const fast = { backoff: { initialMs: 5, jitter: 0 } };

describe('cache sync', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  let refusing = false;
  /** Factories started by the test: stopped after it even when an assertion failed, so no reflector outlives it. */
  let started: Array<{ factory: SharedInformerFactory; stop: AbortController }> = [];
  afterEach(async () => {
    refusing = false;
    for (const { factory, stop } of started) {
      stop.abort();
      await factory.whenStopped();
    }
    started = [];
  });
  function startFactory(opts: ConstructorParameters<typeof SharedInformerFactory>[1] = {}, register?: (f: SharedInformerFactory) => void) {
    const factory = new SharedInformerFactory(client, { logger: quiet, reflector: fast, ...opts });
    register?.(factory);
    const stop = new AbortController();
    factory.start(stop.signal);
    started.push({ factory, stop });
    return { factory, stop };
  }
  /** Until the test ends, every list of nodes is refused, so the node cache never syncs. */
  function refuseNodeLists(): void {
    refusing = true;
    for (let i = 0; i < 1000; i++) {
      server.failNext((r) => refusing && r.method === 'GET' && r.path === '/api/v1/nodes' && r.query.get('watch') !== 'true', 403, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 403,
        reason: 'Forbidden',
        message: 'nodes is forbidden',
      });
    }
  }

  test('a cache that does not sync within the timeout fails the wait, naming it', async () => {
    refuseNodeLists();
    const { factory, stop } = startFactory({}, (f) => {
      f.informerFor(Pods);
      f.informerFor(Nodes);
    });
    const began = Date.now();
    // Long enough for the pod cache to sync on a busy machine; the node cache never does.
    const err = await factory.waitForCacheSync(stop.signal, 3000).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof CacheSyncTimeoutError, String(err));
    assert.deepEqual(err.resources, ['nodes'], 'only the cache that did not sync');
    assert.match(err.message, /timed out after 3000ms waiting for the cache of nodes to sync/);
    // The deadline ends the wait, not the reflectors' retries (generous: the machine may be busy).
    assert.ok(Date.now() - began < 10_000);
  });

  test('caches that sync in time pass; an abort ends the wait with false, not an error', async () => {
    const { factory, stop } = startFactory({}, (f) => f.informerFor(ConfigMaps));
    assert.equal(await factory.waitForCacheSync(stop.signal, 30_000), true);
    refuseNodeLists();
    factory.informerFor(Nodes);
    const waiting = factory.waitForCacheSync(stop.signal, 60_000);
    stop.abort();
    assert.equal(await waiting, false);
  });

  test('an informer opened on first use is handed out only once it has synced', async () => {
    server.put('/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { zone: 'a' } } });
    const { factory } = startFactory();
    const nodes = await factory.syncedInformerFor<KubeObject>(Nodes, {}, 30_000);
    assert.equal(nodes.hasSynced(), true);
    assert.deepEqual(nodes.lister.get('n1')?.metadata.labels, { zone: 'a' });
  });

  test('an informer opened on first use that cannot sync fails with the timeout error', async () => {
    refuseNodeLists();
    const { factory } = startFactory();
    await assert.rejects(factory.syncedInformerFor(Nodes, {}, 200), /cache of nodes/);
  });

  test('the factory resync period (--sync-period) is the default of every handler', async () => {
    server.put('/v1/configmaps', { metadata: { name: 'cm', namespace: 'rs' } });
    const clock = new FakeClock();
    const updates: string[] = [];
    const optedOut: string[] = [];
    const { factory, stop } = startFactory({ clock, resyncPeriodMs: 60_000 }, (f) => {
      const informer = f.informerFor(ConfigMaps, { namespace: 'rs' });
      informer.addEventHandler({ onUpdate: (old, cur) => void updates.push(`${old === cur ? 'resync' : 'change'} ${cur.metadata.name}`) });
      informer.addEventHandler({ onUpdate: (_, cur) => void optedOut.push(cur.metadata.name!) }, { resyncPeriodMs: 0 });
    });
    assert.equal(await factory.waitForCacheSync(stop.signal), true);
    await clock.advance(60_000);
    await waitFor(() => updates.length === 1, 'the resync');
    assert.deepEqual(updates, ['resync cm']);
    assert.deepEqual(optedOut, []);
  });
});
