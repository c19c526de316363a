import { test, describe, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/util/clock.ts';
import { Selector, parseSelector, selectorFromSet } from '../../../src/util/labelselector.ts';
import { KubeClient } from '../../../src/runtime/client.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { ConfigMaps, Nodes, Pods } from '../../../src/runtime/resources.ts';
import { SharedIndexInformer, type EventHandler, type InformerOptions } from '../../../src/runtime/informer.ts';
import { SharedInformerFactory } from '../../../src/runtime/informer-factory.ts';
import {
  DeletedFinalStateUnknown,
  NamespaceIndex,
  NodeNameIndex,
  OwnerUIDIndex,
  deepFreeze,
  freezeCachedObjects,
  objectKey,
  splitKey,
  unwrapDeleted,
} from '../../../src/runtime/store.ts';
import type { RuntimeLogger } from '../../../src/runtime/reflector.ts';
import { FakeApiServer, waitFor, useFakeApiServer } from './fake-apiserver.ts';

const PODS = '/v1/pods';
const NODES = '/v1/nodes';
const quiet: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} };
const fast = { backoff: { initialMs: 5, jitter: 0 } };

interface Pod extends KubeObject {
  spec?: { nodeName?: string; containers?: { name: string }[] };
}

function pod(ns: string, name: string, extra: Partial<Pod> & { labels?: Record<string, string> } = {}): Pod {
  const { labels, ...rest } = extra;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels }, spec: { containers: [{ name: 'c' }] }, ...rest };
}

type Ev = string;

/** Records handler calls as compact strings. */
function recorder(): { events: Ev[]; raw: unknown[][]; handler: EventHandler<Pod> } {
  const events: Ev[] = [];
  const raw: unknown[][] = [];
  return {
    events,
    raw,
    handler: {
      onAdd(obj, initial) {
        events.push(`add ${obj.metadata.name}${initial ? ' (initial)' : ''}`);
        raw.push(['add', obj]);
      },
      onUpdate(old, obj) {
        events.push(`update ${obj.metadata.name} ${old.metadata.resourceVersion}->${obj.metadata.resourceVersion}`);
        raw.push(['update', old, obj]);
      },
      onDelete(obj) {
        const tomb = obj instanceof DeletedFinalStateUnknown;
        events.push(`delete ${unwrapDeleted(obj).metadata.name}${tomb ? ' (tombstone)' : ''}`);
        raw.push(['delete', obj]);
      },
    },
  };
}

describe('SharedIndexInformer', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  const stops: { ctrl: AbortController; done: Promise<void> }[] = [];

  before(async () => {
    server = await new FakeApiServer().start();
    client = new KubeClient({ server: server.url, qps: 0 });
  });
  afterEach(async () => {
    for (const s of stops.splice(0)) {
      s.ctrl.abort();
      await s.done;
    }
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  function informer<T extends KubeObject = Pod>(namespace: string, opts: InformerOptions<T> = {}, type = Pods) {
    return new SharedIndexInformer<T>(client, type, { namespace, logger: quiet, reflector: fast, ...opts });
  }
  function run(inf: SharedIndexInformer<any>) {
    const ctrl = new AbortController();
    const done = inf.run(ctrl.signal);
    stops.push({ ctrl, done });
    return ctrl;
  }

  test('initial list: onAdd(obj, true), hasSynced, waitForSync, then live add/update/delete with (old, new)', async () => {
    server.put(PODS, pod('i1', 'a'));
    server.put(PODS, pod('i1', 'b'));
    const inf = informer('i1');
    const rec = recorder();
    const reg = inf.addEventHandler(rec.handler);
    assert.equal(inf.hasSynced(), false);
    run(inf);
    assert.equal(await inf.waitForSync(), true);
    assert.equal(inf.hasSynced(), true);
    await waitFor(() => reg.hasSynced(), 'handler synced');
    assert.deepEqual(rec.events, ['add a (initial)', 'add b (initial)']);

    await waitFor(() => server.watcherCount('i1') === 1, 'watch');
    const oldRV = server.getObject(PODS, 'i1/a')!.metadata.resourceVersion;
    server.put(PODS, pod('i1', 'a', { labels: { v: '2' } }));
    server.put(PODS, pod('i1', 'c'));
    server.remove(PODS, 'i1', 'b');
    await waitFor(() => rec.events.length === 5, 'live events');
    const newRV = server.getObject(PODS, 'i1/a')!.metadata.resourceVersion;
    assert.deepEqual(rec.events.slice(2), [`update a ${oldRV}->${newRV}`, 'add c', 'delete b']);
    const [, old, cur] = rec.raw[2] as [string, Pod, Pod];
    assert.equal(old.metadata.labels, undefined);
    assert.deepEqual(cur.metadata.labels, { v: '2' });
    assert.ok(!((rec.raw[4] as unknown[])[1] instanceof DeletedFinalStateUnknown), 'watched delete is not a tombstone');
    assert.deepEqual(inf.lister.list().map(objectKey).sort(), ['i1/a', 'i1/c']);
    assert.equal(inf.lastSyncResourceVersion(), String(server.rv));
  });

  test('relist after 410: tombstones for objects deleted while disconnected, updates and adds for the rest', async () => {
    for (const n of ['a', 'b', 'c']) server.put(PODS, pod('i2', n));
    const inf = informer('i2');
    const rec = recorder();
    inf.addEventHandler(rec.handler);
    run(inf);
    await inf.waitForSync();
    await waitFor(() => rec.events.length === 3 && server.watcherCount('i2') === 1, 'synced');
    const lastB = inf.lister.get('i2', 'b')!;
    const oldC = inf.lister.get('i2', 'c')!.metadata.resourceVersion;

    server.muted = true;
    server.remove(PODS, 'i2', 'b');
    server.put(PODS, pod('i2', 'c', { labels: { changed: 'yes' } }));
    server.put(PODS, pod('i2', 'd'));
    server.compact();
    server.muted = false;
    server.dropWatches();

    await waitFor(() => rec.events.length === 6, 'relist events');
    const newC = server.getObject(PODS, 'i2/c')!.metadata.resourceVersion;
    assert.deepEqual(rec.events.slice(3), [`update c ${oldC}->${newC}`, 'add d', 'delete b (tombstone)']);
    const tomb = (rec.raw[5] as unknown[])[1] as DeletedFinalStateUnknown<Pod>;
    assert.ok(tomb instanceof DeletedFinalStateUnknown);
    assert.equal(tomb.key, 'i2/b');
    assert.equal(tomb.obj, lastB, 'last known state');
    assert.equal(inf.lister.get('i2', 'b'), undefined);
  });

  test('the cache mutation detector is on in the test suite (hack/test.ts), off by default', () => {
    assert.equal(freezeCachedObjects, process.env.KRUISE_CACHE_MUTATION_DETECTOR === 'true');
    assert.equal(freezeCachedObjects, true, 'run through ./run.sh test, which sets KRUISE_CACHE_MUTATION_DETECTOR=true');
  });

  test('cached objects are deep-frozen (mutation detector) and carry no managedFields', async () => {
    server.put(PODS, {
      ...pod('i3', 'f', { labels: { a: 'b' } }),
      metadata: { name: 'f', namespace: 'i3', labels: { a: 'b' }, managedFields: [{ manager: 'kubectl' }] },
    } as KubeObject);
    const inf = informer('i3');
    let seen: Pod | undefined;
    inf.addEventHandler({ onAdd: (o) => void (seen = o) });
    run(inf);
    await inf.waitForSync();
    const p = inf.lister.get('i3', 'f')!;
    assert.equal(p.metadata.managedFields, undefined);
    assert.ok(Object.isFrozen(p) && Object.isFrozen(p.metadata) && Object.isFrozen(p.spec!.containers![0]));
    assert.throws(() => {
      p.metadata.labels!.a = 'mutated';
    }, TypeError);
    assert.throws(() => {
      p.spec!.containers!.push({ name: 'x' });
    }, TypeError);
    assert.equal(p.metadata.labels!.a, 'b');
    await waitFor(() => seen !== undefined, 'handler');
    assert.equal(seen, p, 'handlers see the same frozen object');
    const copy = structuredClone(p);
    copy.metadata.labels!.a = 'ok';
    assert.equal(copy.metadata.labels!.a, 'ok');
  });

  test('indexes: namespace, controller owner uid, node name and custom ones, kept up to date', async () => {
    const owner = (uid: string, controller: boolean) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller });
    server.put(
      PODS,
      pod('i4', 'p1', {
        spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
        metadata: { name: 'p1', namespace: 'i4', ownerReferences: [owner('u1', true)] },
      }),
    );
    server.put(
      PODS,
      pod('i4', 'p2', {
        spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
        metadata: { name: 'p2', namespace: 'i4', ownerReferences: [owner('u1', false), owner('u2', true)] },
      }),
    );
    server.put(PODS, pod('i4', 'p3', { metadata: { name: 'p3', namespace: 'i4', labels: { tier: 'db' } } }));
    const inf = informer('i4', {
      indexers: { tier: (p) => (p.metadata.labels?.tier ? [p.metadata.labels.tier] : []) },
    });
    inf.addIndexers({ containerNames: (p) => (p.spec?.containers ?? []).map((c) => c.name) });
    assert.throws(() => inf.addIndexers({ tier: () => [] }), /already exists/);
    run(inf);
    await inf.waitForSync();
    const names = (ps: Pod[]) => ps.map((p) => p.metadata.name).sort();
    assert.deepEqual(names(inf.lister.byIndex(OwnerUIDIndex, 'u1')), ['p1']);
    assert.deepEqual(names(inf.lister.byIndex(OwnerUIDIndex, 'u2')), ['p2']);
    assert.deepEqual(names(inf.lister.byIndex(NodeNameIndex, 'n1')), ['p1', 'p2']);
    assert.deepEqual(names(inf.lister.byIndex(NamespaceIndex, 'i4')), ['p1', 'p2', 'p3']);
    assert.deepEqual(names(inf.lister.byIndex('tier', 'db')), ['p3']);
    assert.deepEqual(names(inf.lister.byIndex('containerNames', 'c')), ['p1', 'p2', 'p3']);
    assert.throws(() => inf.lister.byIndex('nope', 'x'), /no indexer/);

    await waitFor(() => server.watcherCount('i4') === 1, 'watch');
    server.put(
      PODS,
      pod('i4', 'p1', { spec: { nodeName: 'n2' }, metadata: { name: 'p1', namespace: 'i4', ownerReferences: [owner('u1', true)] } }),
    );
    server.remove(PODS, 'i4', 'p2');
    await waitFor(() => inf.lister.byIndex(NodeNameIndex, 'n2').length === 1 && !inf.lister.get('i4', 'p2'), 'changes');
    assert.deepEqual(inf.lister.byIndex(NodeNameIndex, 'n1'), []);
    assert.deepEqual(inf.lister.byIndex(OwnerUIDIndex, 'u2'), []);
  });

  test('lister: get by namespace/name or name, list by namespace and labels', async () => {
    server.put(PODS, pod('i5', 'web-1', { labels: { app: 'web', tier: 'fe' } }));
    server.put(PODS, pod('i5', 'web-2', { labels: { app: 'web' } }));
    server.put(PODS, pod('i5', 'db', { labels: { app: 'db' } }));
    server.put(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { zone: 'z1' } } });
    const inf = informer('i5');
    const nodes = informer<KubeObject>('', {}, Nodes);
    run(inf);
    run(nodes);
    await inf.waitForSync();
    await nodes.waitForSync();
    assert.equal(inf.lister.get('i5', 'db')!.metadata.name, 'db');
    assert.equal(inf.lister.get('other', 'db'), undefined);
    assert.equal(nodes.lister.get('node-a')!.metadata.name, 'node-a');
    assert.equal(nodes.lister.get('', 'node-a')!.metadata.name, 'node-a');
    const names = (ps: KubeObject[]) => ps.map((p) => p.metadata.name).sort();
    assert.deepEqual(names(inf.lister.list('i5', selectorFromSet({ app: 'web' }))), ['web-1', 'web-2']);
    assert.deepEqual(names(inf.lister.list('i5', parseSelector('app=web,tier=fe'))), ['web-1']);
    assert.deepEqual(names(inf.lister.list(undefined, parseSelector('app!=web'))), ['db']);
    assert.deepEqual(names(inf.lister.list('i5', Selector.nothing())), []);
    assert.deepEqual(names(inf.lister.list('nowhere')), []);
    assert.deepEqual(names(nodes.lister.list(undefined, parseSelector('zone in (z1,z2)'))), ['node-a']);
    assert.equal(
      nodes.lister.list().every((n) => n.kind === 'Node' && n.apiVersion === 'v1'),
      true,
      'list items typed',
    );
  });

  test('a slow handler does not hold up the others, and still sees every event in order', async () => {
    server.put(PODS, pod('i6', 'a'));
    const inf = informer('i6');
    const fastRec = recorder();
    const slowSeen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    inf.addEventHandler({
      async onAdd(o) {
        slowSeen.push(`add ${o.metadata.name}`);
        await gate;
      },
      onUpdate: (_o, n) => void slowSeen.push(`update ${n.metadata.name}`),
      onDelete: (o) => void slowSeen.push(`delete ${unwrapDeleted(o).metadata.name}`),
    });
    inf.addEventHandler(fastRec.handler);
    run(inf);
    await inf.waitForSync();
    await waitFor(() => server.watcherCount('i6') === 1, 'watch');
    for (let i = 0; i < 50; i++) server.put(PODS, pod('i6', 'a', { labels: { n: String(i) } }));
    server.remove(PODS, 'i6', 'a');
    await waitFor(() => fastRec.events.length === 52, 'fast handler got everything');
    assert.deepEqual(slowSeen, ['add a'], 'slow handler still on its first event');
    release();
    await waitFor(() => slowSeen.length === 52, 'slow handler catches up');
    assert.equal(slowSeen[1], 'update a');
    assert.equal(slowSeen[51], 'delete a');
  });

  test('handlers added after sync get the cache as initial adds; removed handlers stop; errors are contained', async () => {
    server.put(PODS, pod('i7', 'a'));
    server.put(PODS, pod('i7', 'b'));
    const errors: unknown[] = [];
    const inf = informer('i7', { logger: { ...quiet, error: (o) => void errors.push((o as { err: unknown }).err) } });
    run(inf);
    await inf.waitForSync();
    const late = recorder();
    const reg = inf.addEventHandler(late.handler);
    await waitFor(() => reg.hasSynced(), 'late handler synced');
    assert.deepEqual(late.events.sort(), ['add a (initial)', 'add b (initial)']);

    const gone = recorder();
    const goneReg = inf.addEventHandler(gone.handler);
    await waitFor(() => goneReg.hasSynced(), 'second synced');
    goneReg.remove();

    let calls = 0;
    inf.addEventHandler({
      onUpdate() {
        calls++;
        throw new Error('boom');
      },
    });
    await waitFor(() => server.watcherCount('i7') === 1, 'watch');
    server.put(PODS, pod('i7', 'a', { labels: { x: '1' } }));
    server.put(PODS, pod('i7', 'a', { labels: { x: '2' } }));
    await waitFor(() => calls === 2 && late.events.length === 4, 'updates');
    assert.equal(errors.length, 2);
    assert.equal((errors[0] as Error).message, 'boom');
    assert.equal(gone.events.length, 2, 'removed handler saw only the initial list');
  });

  test('resync re-delivers onUpdate(obj, obj) per handler period', async () => {
    server.put(PODS, pod('i8', 'a'));
    server.put(PODS, pod('i8', 'b'));
    const clock = new FakeClock();
    const inf = informer('i8', { clock });
    const every30 = recorder();
    const never = recorder();
    inf.addEventHandler(every30.handler, { resyncPeriodMs: 30_000 });
    inf.addEventHandler(never.handler);
    run(inf);
    await inf.waitForSync();
    await waitFor(() => every30.events.length === 2 && never.events.length === 2, 'initial');
    await clock.advance(29_999);
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(every30.events.length, 2);
    await clock.advance(1);
    await waitFor(() => every30.events.length === 4, 'first resync');
    const [, old, cur] = every30.raw[2] as [string, Pod, Pod];
    assert.equal(old, cur, 'old and new are the same cached object');
    await clock.advance(30_000);
    await waitFor(() => every30.events.length === 6, 'second resync');
    assert.equal(never.events.length, 2);
    assert.equal(server.listRequests().filter((r) => r.path.includes('/i8/')).length, 1, 'resync makes no API call');
  });

  test('waitForSync gives up on abort; run() only once', async () => {
    const inf = informer('i9');
    const ctrl = new AbortController();
    const waiting = inf.waitForSync(ctrl.signal);
    ctrl.abort();
    assert.equal(await waiting, false);
    run(inf);
    await assert.rejects(inf.run(new AbortController().signal), /already started/);
  });
});

describe('SharedInformerFactory', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  test('one informer (one list+watch) per type and selector, shared by consumers; late informers start at once', async () => {
    server.put(PODS, pod('f', 'a'));
    server.put('/v1/configmaps', { metadata: { name: 'cm', namespace: 'f' } });
    const factory = new SharedInformerFactory(client, { logger: quiet, reflector: fast });
    const a = factory.informerFor<Pod>(Pods);
    const b = factory.informerFor<Pod>(Pods);
    const scoped = factory.informerFor<Pod>(Pods, { namespace: 'f' });
    const labelled = factory.informerFor<Pod>(Pods, { labelSelector: 'app=x' });
    assert.equal(a, b);
    assert.notEqual(a, scoped);
    assert.notEqual(a, labelled);
    const ra = recorder();
    const rb = recorder();
    a.addEventHandler(ra.handler);
    b.addEventHandler(rb.handler);

    const ctrl = new AbortController();
    factory.start(ctrl.signal);
    assert.throws(() => factory.start(ctrl.signal), /already started/);
    assert.equal(await factory.waitForCacheSync(ctrl.signal), true);
    await waitFor(() => ra.events.length === 1 && rb.events.length === 1, 'both handlers');
    assert.deepEqual(ra.events, ['add a (initial)']);
    assert.equal(labelled.lister.list().length, 0);
    const podLists = server.listRequests().filter((r) => r.path === '/api/v1/pods');
    assert.equal(podLists.length, 2, 'all-namespaces informers: plain and labelled');

    const cms = factory.informerFor(ConfigMaps, { namespace: 'f' });
    assert.equal(cms.isStarted(), true);
    assert.equal(await cms.waitForSync(ctrl.signal), true);
    assert.equal(cms.lister.get('f', 'cm')!.metadata.name, 'cm');

    ctrl.abort();
    await factory.whenStopped();
  });
});

describe('helpers', () => {
  test('object keys', () => {
    assert.equal(objectKey({ metadata: { name: 'n', namespace: 'ns' } }), 'ns/n');
    assert.equal(objectKey({ metadata: { name: 'node' } }), 'node');
    assert.deepEqual(splitKey('ns/n'), { namespace: 'ns', name: 'n' });
    assert.deepEqual(splitKey('node'), { name: 'node' });
  });

  test('deepFreeze freezes nested arrays and objects', () => {
    const o = deepFreeze({ a: { b: [{ c: 1 }] } });
    assert.ok(Object.isFrozen(o.a.b[0]));
  });
});
