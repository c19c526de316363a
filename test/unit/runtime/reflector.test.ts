import { test, describe, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { FakeClock, realClock, type Clock } from '../../../src/util/clock.ts';
import { KubeClient, type ListOptions, type WatchEvent } from '../../../src/runtime/client.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { Pods } from '../../../src/runtime/resources.ts';
import {
  Backoff,
  Reflector,
  defaultBackoff,
  type ListerWatcher,
  type ReflectorOptions,
  type ReflectorStore,
  type RuntimeLogger,
} from '../../../src/runtime/reflector.ts';
import { FakeApiServer, waitFor } from './fake-apiserver.ts';

const PODS = '/v1/pods';
const quiet: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} };

function pod(name: string, ns = 'r'): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns } };
}

class RecordingStore implements ReflectorStore<KubeObject> {
  readonly ops: string[] = [];
  readonly items = new Map<string, KubeObject>();
  replace(items: KubeObject[], rv: string): void {
    // Sorted: pages read ahead are parsed as they arrive, so their items may interleave.
    this.ops.push(
      `replace ${items
        .map((i) => i.metadata.name)
        .sort()
        .join(',')} @${rv}`,
    );
    this.items.clear();
    for (const i of items) this.items.set(i.metadata.name!, i);
  }
  add(obj: KubeObject): void {
    this.ops.push(`add ${obj.metadata.name}`);
    this.items.set(obj.metadata.name!, obj);
  }
  update(obj: KubeObject): void {
    this.ops.push(`update ${obj.metadata.name}`);
    this.items.set(obj.metadata.name!, obj);
  }
  delete(obj: KubeObject): void {
    this.ops.push(`delete ${obj.metadata.name}`);
    this.items.delete(obj.metadata.name!);
  }
}

/** A reflector of pods with the tests' quiet logger, fixed randomness and short backoff, recording its errors. */
function testReflector(client: ListerWatcher, opts: Partial<ReflectorOptions<KubeObject>> = {}) {
  const store = new RecordingStore();
  const errors: unknown[] = [];
  const reflector = new Reflector<KubeObject>({
    client,
    type: Pods,
    store,
    logger: quiet,
    random: () => 0.5,
    backoff: { initialMs: 5, jitter: 0 },
    onError: (e) => errors.push(e),
    ...opts,
  });
  return { store, errors, reflector };
}

describe('Backoff', () => {
  test('800ms doubling to 30s, jitter on top, reset after 2 min without failures', async () => {
    const clock = new FakeClock();
    const b = new Backoff(defaultBackoff, clock, () => 0);
    const delays = Array.from({ length: 8 }, () => b.next());
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);

    const jittered = new Backoff(defaultBackoff, clock, () => 0.5);
    assert.equal(jittered.next(), 1200);
    assert.equal(jittered.next(), 2400);

    await clock.advance(30_000 + 119_000);
    assert.equal(b.next(), 30000, 'not yet healthy for 2 min after the last backoff ended');
    await clock.advance(30_000 + 120_000);
    assert.equal(b.next(), 800);
  });
});

describe('Reflector', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  const running: { ctrl: AbortController; done: Promise<void> }[] = [];

  before(async () => {
    server = await new FakeApiServer().start();
    client = new KubeClient({ server: server.url, qps: 0 });
  });
  afterEach(async () => {
    for (const r of running.splice(0)) {
      r.ctrl.abort();
      await r.done;
    }
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  function start(opts: Partial<ReflectorOptions<KubeObject>> & { namespace: string }) {
    const { store, errors, reflector } = testReflector(client, opts);
    const ctrl = new AbortController();
    const done = reflector.run(ctrl.signal);
    running.push({ ctrl, done });
    return { store, reflector, errors, ctrl, done };
  }

  const watchesIn = (ns: string) => server.watchRequests().filter((r) => r.path.includes(`/namespaces/${ns}/`));
  const listsIn = (ns: string) => server.listRequests().filter((r) => r.path.includes(`/namespaces/${ns}/`));

  test('lists from the watch cache (RV "0", with a limit as client-go), then watches from the list RV with bookmarks and a random timeout', async () => {
    for (const n of ['a', 'b']) server.put(PODS, { ...pod(n, 'lw'), metadata: { name: n, namespace: 'lw', labels: { app: 'web' } } });
    const listRV = String(server.rv);
    const { store, reflector } = start({ namespace: 'lw', labelSelector: 'app=web', fieldSelector: 'metadata.namespace=lw' });
    await waitFor(() => server.watcherCount('lw') === 1, 'watch');
    const list = listsIn('lw')[0]!;
    assert.equal(list.query.get('resourceVersion'), '0', 'answered whole by the watch cache, limit ignored');
    assert.equal(list.query.get('limit'), '500', 'paged by a server without a watch cache');
    const w = watchesIn('lw')[0]!.query;
    assert.equal(w.get('resourceVersion'), listRV);
    assert.equal(w.get('allowWatchBookmarks'), 'true');
    assert.equal(w.get('timeoutSeconds'), '450');
    assert.equal(w.get('labelSelector'), 'app=web');
    assert.equal(w.get('fieldSelector'), 'metadata.namespace=lw');
    assert.deepEqual(store.ops, [`replace a,b @${listRV}`]);
    assert.equal(reflector.lastSyncResourceVersion(), listRV);
  });

  test('resumes the watch from the last event after a clean close, without relisting', async () => {
    const { store, reflector } = start({ namespace: 'resume' });
    await waitFor(() => server.watcherCount('resume') === 1, 'watch');
    server.put(PODS, pod('a', 'resume'));
    server.put(PODS, { ...pod('a', 'resume'), metadata: { name: 'a', namespace: 'resume', labels: { v: '2' } } });
    const lastRV = String(server.rv);
    await waitFor(() => store.ops.length === 3, 'events');
    server.closeWatches();
    await waitFor(() => watchesIn('resume').length === 2 && server.watcherCount('resume') === 1, 'rewatch');
    assert.equal(watchesIn('resume')[1]!.query.get('resourceVersion'), lastRV);
    assert.equal(listsIn('resume').length, 1);
    server.remove(PODS, 'resume', 'a');
    await waitFor(() => store.ops.length === 4, 'delete');
    assert.deepEqual(store.ops.slice(1), ['add a', 'update a', 'delete a']);
    assert.equal(reflector.lastSyncResourceVersion(), String(server.rv));
  });

  test('bookmarks advance the resourceVersion and touch nothing else', async () => {
    const { store, reflector } = start({ namespace: 'bm' });
    await waitFor(() => server.watcherCount('bm') === 1, 'watch');
    server.bookmark();
    const bookmarkRV = String(server.rv);
    await waitFor(() => reflector.lastSyncResourceVersion() === bookmarkRV, 'bookmark');
    server.closeWatches();
    await waitFor(() => watchesIn('bm').length === 2, 'rewatch');
    assert.equal(watchesIn('bm')[1]!.query.get('resourceVersion'), bookmarkRV);
    assert.equal(store.ops.length, 1, 'only the initial replace');
  });

  test('follows continue tokens through every page, then watches from the list RV', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) server.put(PODS, pod(n, 'pages'));
    const listRV = String(server.rv);
    const { store } = start({ namespace: 'pages', pageSize: 2 });
    await waitFor(() => server.watcherCount('pages') === 1, 'watch');
    server.put(PODS, pod('late', 'pages')); // after the list: arrives by the watch, not by a page
    await waitFor(() => store.ops.length === 2, 'watch event');
    const lists = listsIn('pages');
    assert.equal(lists.length, 3);
    assert.deepEqual(
      lists.map((l) => l.query.get('limit')),
      ['2', '2', '2'],
    );
    assert.equal(lists[0]!.query.get('continue'), null);
    assert.equal(lists[0]!.query.get('resourceVersion'), '0');
    for (const [i, l] of lists.slice(1).entries())
      assert.equal(l.query.get('resourceVersion'), null, `page ${i + 1}: the token pins the snapshot`);
    assert.ok(lists[1]!.query.get('continue') && lists[2]!.query.get('continue'));
    assert.notEqual(lists[1]!.query.get('continue'), lists[2]!.query.get('continue'));
    assert.deepEqual(store.ops, [`replace a,b,c,d,e @${listRV}`, 'add late']);
    assert.equal(watchesIn('pages')[0]!.query.get('resourceVersion'), listRV);
  });

  test('a server that ignores limit (RV "0" from the watch cache) answers whole: one request, no continue', async () => {
    for (const n of ['a', 'b', 'c']) server.put(PODS, pod(n, 'whole'));
    server.ignoreLimit = true;
    try {
      const { store } = start({ namespace: 'whole', pageSize: 2 });
      await waitFor(() => server.watcherCount('whole') === 1, 'watch');
      assert.equal(listsIn('whole').length, 1);
      assert.equal(listsIn('whole')[0]!.query.get('limit'), '2');
      assert.deepEqual(store.ops, [`replace a,b,c @${server.rv}`]);
      assert.equal(watchesIn('whole')[0]!.query.get('resourceVersion'), String(server.rv));
    } finally {
      server.ignoreLimit = false;
    }
  });

  test('pageSize 0 lists everything in one request without a limit', async () => {
    for (const n of ['a', 'b', 'c']) server.put(PODS, pod(n, 'nolimit'));
    const { store } = start({ namespace: 'nolimit', pageSize: 0 });
    await waitFor(() => store.ops.length === 1, 'list');
    assert.equal(listsIn('nolimit').length, 1);
    assert.equal(listsIn('nolimit')[0]!.query.get('limit'), null);
    assert.equal(store.ops[0], `replace a,b,c @${server.rv}`);
  });

  test('managedFields are dropped from every listed page and every watch event', async () => {
    const managed = (name: string, labels: Record<string, string> = {}): KubeObject => ({
      ...pod(name, 'mf'),
      metadata: {
        name,
        namespace: 'mf',
        labels,
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:metadata': {} } }],
      },
    });
    for (const n of ['a', 'b', 'c']) server.put(PODS, managed(n));
    const { store } = start({ namespace: 'mf', pageSize: 2 });
    await waitFor(() => server.watcherCount('mf') === 1, 'watch');
    assert.equal(listsIn('mf').length, 2);
    assert.ok(server.getObject(PODS, 'mf/a')!.metadata.managedFields, 'the server has them');
    server.put(PODS, managed('d'));
    server.put(PODS, managed('a', { v: '2' }));
    server.remove(PODS, 'mf', 'b');
    await waitFor(() => store.ops.length === 4, 'events');
    const seen: KubeObject[] = [];
    const record = (o: KubeObject) => void seen.push(o);
    Object.assign(store, { add: record, update: record, delete: record });
    server.put(PODS, managed('e'));
    server.remove(PODS, 'mf', 'e');
    await waitFor(() => seen.length === 2, 'more events');
    assert.deepEqual([...store.items.keys()].sort(), ['a', 'c', 'd']);
    for (const o of [...store.items.values(), ...seen]) {
      assert.ok(!('managedFields' in o.metadata), `${o.metadata.name} keeps managedFields`);
      assert.equal(o.metadata.namespace, 'mf', 'the rest of metadata stays');
    }
    assert.deepEqual(store.items.get('a')!.metadata.labels, { v: '2' });
  });

  test('relists (consistently, paginated) after a 410 ERROR event; deletions missed meanwhile vanish', async () => {
    for (const n of ['a', 'b', 'c']) server.put(PODS, pod(n, 'gone'));
    const { store, errors } = start({ namespace: 'gone', pageSize: 2 });
    await waitFor(() => server.watcherCount('gone') === 1, 'watch');
    const firstLists = listsIn('gone').length;
    assert.equal(firstLists, 2, 'two pages');
    server.muted = true;
    server.remove(PODS, 'gone', 'b');
    server.put(PODS, pod('d', 'gone'));
    server.compact();
    server.muted = false;
    server.closeWatches();
    await waitFor(() => store.ops.length === 2, 'relist');
    assert.ok(errors.some((e) => (e as { code?: number }).code === 410));
    const relist = listsIn('gone').slice(firstLists);
    assert.equal(relist.length, 2, 'relist is paginated too');
    assert.equal(relist[0]!.query.get('resourceVersion'), null, 'consistent read (RV unset)');
    assert.equal(relist[0]!.query.get('limit'), '2');
    assert.ok(relist[1]!.query.get('continue'));
    assert.equal(relist[1]!.query.get('resourceVersion'), null, 'no RV alongside continue');
    assert.equal(store.ops[1], `replace a,c,d @${server.rv}`);
    await waitFor(() => server.watcherCount('gone') === 1, 'watch again');
    assert.equal(watchesIn('gone').at(-1)!.query.get('resourceVersion'), String(server.rv));
  });

  test('relists after an HTTP 410 on the watch request', async () => {
    server.put(PODS, pod('a', 'gone-http'));
    const { store } = start({ namespace: 'gone-http' });
    await waitFor(() => server.watcherCount('gone-http') === 1, 'watch');
    server.goneAsHttpStatus = true;
    try {
      server.muted = true;
      server.put(PODS, pod('b', 'gone-http'));
      server.compact();
      server.muted = false;
      server.closeWatches();
      await waitFor(() => store.ops.length === 2, 'relist');
      assert.equal(store.ops[1], `replace a,b @${server.rv}`);
    } finally {
      server.goneAsHttpStatus = false;
    }
  });

  test('an expired continue token falls back to one full list, discarding the pages read so far', async () => {
    for (const n of ['a', 'b', 'c'])
      server.put(PODS, { ...pod(n, 'cont'), metadata: { name: n, namespace: 'cont', managedFields: [{ manager: 'm' }] } });
    server.expireContinueTokens = true;
    try {
      const { store, errors } = start({ namespace: 'cont', pageSize: 2 });
      await waitFor(() => server.watcherCount('cont') === 1, 'watch');
      assert.deepEqual(store.ops, [`replace a,b,c @${server.rv}`], 'pages a,b not replaced twice');
      assert.equal(errors.length, 0, 'no backoff');
      const lists = listsIn('cont');
      assert.equal(lists.length, 3);
      assert.ok(lists[1]!.query.get('continue'));
      assert.equal(lists[2]!.query.get('limit'), null);
      assert.equal(lists[2]!.query.get('continue'), null);
      assert.equal(lists[2]!.query.get('resourceVersion'), null);
      for (const o of store.items.values()) assert.ok(!('managedFields' in o.metadata));
      assert.equal(watchesIn('cont')[0]!.query.get('resourceVersion'), String(server.rv));
    } finally {
      server.expireContinueTokens = false;
    }
  });

  test('other watch errors back off and rewatch from the same RV, without relisting', async () => {
    const { errors } = start({ namespace: 'err' });
    await waitFor(() => server.watcherCount('err') === 1, 'watch');
    const rv = watchesIn('err')[0]!.query.get('resourceVersion');
    server.sendWatchError(500, 'InternalError', 'etcd hiccup');
    await waitFor(() => watchesIn('err').length === 2, 'rewatch');
    assert.equal(watchesIn('err')[1]!.query.get('resourceVersion'), rv);
    assert.equal(listsIn('err').length, 1);
    assert.equal((errors[0] as Error).message, 'etcd hiccup');

    server.dropWatches();
    await waitFor(() => watchesIn('err').length === 3, 'rewatch after abrupt close');
    assert.equal(listsIn('err').length, 1);
  });

  test('a watch that goes silent is restarted by the inactivity timer', async () => {
    const clock = new FakeClock();
    const { errors } = start({ namespace: 'idle', clock, inactivityTimeoutMs: 60_000 });
    await waitFor(() => server.watcherCount('idle') === 1, 'watch');
    await clock.advance(59_000);
    server.bookmark(); // activity pushes the deadline out
    await waitFor(() => clock.pending() > 0, 'timer');
    await new Promise((r) => setTimeout(r, 20));
    await clock.advance(59_000);
    assert.equal(watchesIn('idle').length, 1);
    await clock.advance(1_000);
    await waitFor(() => watchesIn('idle').length === 2, 'restarted watch');
    assert.equal(errors.length, 0, 'not an error');
    assert.equal(listsIn('idle').length, 1);
  });

  test('backs off exponentially while the server refuses connections, and stops on abort', async () => {
    const port = await freePort();
    const refused = new KubeClient({ server: `http://127.0.0.1:${port}`, qps: 0 });
    const clock = new FakeClock();
    let lists = 0;
    const counting = {
      list: ((type, opts) => {
        lists++;
        return refused.list(type, opts);
      }) as typeof refused.list,
      watch: refused.watch.bind(refused) as typeof refused.watch,
    };
    try {
      const { errors, ctrl, done } = start({ namespace: 'x', client: counting, clock, backoff: {}, random: () => 0 });
      const expect = async (n: number) => {
        await waitFor(() => errors.length === n && clock.pending() === 1, `failure ${n}`);
        assert.equal(lists, n);
      };
      await expect(1);
      assert.match(String((errors[0] as Error & { code?: string }).code ?? errors[0]), /ECONNREFUSED/);
      await clock.advance(799);
      assert.equal(lists, 1);
      await clock.advance(1);
      await expect(2);
      await clock.advance(1599);
      assert.equal(lists, 2);
      await clock.advance(1);
      await expect(3);
      await clock.advance(3200);
      await expect(4);
      ctrl.abort();
      await done;
      assert.equal(clock.pending(), 0);
    } finally {
      await refused.close();
    }
  });

  test('an abort that lands between the list and the watch still stops the reflector', async () => {
    const ctrl = new AbortController();
    const store = new RecordingStore();
    const replace = store.replace.bind(store);
    store.replace = (items, rv) => {
      replace(items, rv);
      ctrl.abort();
    };
    const reflector = new Reflector<KubeObject>({ client, type: Pods, store, namespace: 'between', logger: quiet });
    await reflector.run(ctrl.signal);
    assert.equal(store.ops.length, 1);
    assert.equal(watchesIn('between').length, 0);
  });

  test('relist() ends the running watch, lists again (no backoff) and resolves once that list replaced the store', async () => {
    server.put(PODS, pod('a', 'relist'));
    const { store, reflector, errors } = start({ namespace: 'relist' });
    await waitFor(() => server.watcherCount('relist') === 1, 'watch');
    // A partition hides changes from the open watch: only a new list shows them.
    server.muted = true;
    server.remove(PODS, 'relist', 'a');
    server.put(PODS, pod('b', 'relist'));
    server.muted = false;
    assert.equal(await reflector.relist(), true);
    assert.deepEqual(store.ops.slice(1), [`replace b @${server.rv}`]);
    assert.equal(listsIn('relist').length, 2);
    assert.deepEqual(
      listsIn('relist').map((l) => l.query.get('resourceVersion')),
      ['0', null],
      'the first list from the watch cache, the relist a consistent read',
    );
    assert.deepEqual(errors, [], 'an interrupted watch is no failure');
    await waitFor(() => server.watcherCount('relist') === 1 && watchesIn('relist').length === 2, 'watch again');
    assert.equal(watchesIn('relist')[1]!.query.get('resourceVersion'), String(server.rv));
  });

  test('a relist asked for while a list is under way is answered by the next list, not that one', async () => {
    server.put(PODS, pod('a', 'relist-mid'));
    const store = new RecordingStore();
    let during: Promise<boolean> | undefined;
    const replace = store.replace.bind(store);
    store.replace = (items, rv) => {
      replace(items, rv);
      // The first list's answer is in: a relist asked for now must not count it.
      during ??= reflector.relist();
    };
    const reflector = new Reflector<KubeObject>({
      client,
      type: Pods,
      store,
      namespace: 'relist-mid',
      logger: quiet,
      backoff: { initialMs: 5, jitter: 0 },
    });
    const ctrl = new AbortController();
    running.push({ ctrl, done: reflector.run(ctrl.signal) });
    await waitFor(() => during !== undefined, 'first list');
    assert.equal(await during, true);
    assert.equal(listsIn('relist-mid').length, 2);
    assert.equal(store.ops.length, 2);
  });

  test('relist() resolves false when the reflector stops before it could list', async () => {
    const { reflector, ctrl, done } = start({ namespace: 'relist-stop' });
    await waitFor(() => server.watcherCount('relist-stop') === 1, 'watch');
    server.outage(true);
    try {
      const answer = reflector.relist();
      await waitFor(() => listsIn('relist-stop').length >= 2, 'a refused list');
      ctrl.abort();
      await done;
      assert.equal(await answer, false);
      assert.equal(await reflector.relist(), false, 'stopped: answered at once');
    } finally {
      server.outage(false);
    }
  });

  test('abort stops a running watch promptly', async () => {
    const { ctrl, done } = start({ namespace: 'stop' });
    await waitFor(() => server.watcherCount('stop') === 1, 'watch');
    ctrl.abort();
    await done;
    await waitFor(() => server.watcherCount('stop') === 0, 'stream closed');
  });
});

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('Reflector after a storage rebuild (CRD written at start-up)', () => {
  /** A clock whose sleeps end at once and are recorded. */
  const recordingClock = () => {
    const sleeps: number[] = [];
    const clock = { ...realClock, sleep: async (ms: number) => void sleeps.push(ms) };
    return { clock, sleeps };
  };
  const gone = new StatusError({
    kind: 'Status',
    status: 'Failure',
    code: 410,
    reason: 'Expired',
    message: 'too old resource version: 1 (5)',
  });
  const initializing = new StatusError({
    kind: 'Status',
    status: 'Failure',
    code: 429,
    reason: 'TooManyRequests',
    message: 'storage is (re)initializing',
    details: { retryAfterSeconds: 1 },
  });

  /** Lists answer the next RV; each watch plays the next script entry: an error, or one event then the end of the stream. */
  function scripted(script: Array<StatusError | 'event'>) {
    let rv = 0;
    const calls: string[] = [];
    const client: ListerWatcher = {
      async list<T extends KubeObject>() {
        calls.push('list');
        return { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(++rv) }, items: [] as T[] };
      },
      async *watch<T extends KubeObject>(_type: unknown, opts: { signal?: AbortSignal }): AsyncGenerator<WatchEvent<T>> {
        calls.push('watch');
        const step = script.shift();
        // The script played out: a watch that stays open until the reflector stops.
        if (step === undefined) return await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve()));
        if (step instanceof StatusError) throw step;
        const object = { ...pod(`p${rv}`, 'x'), metadata: { name: `p${rv}`, namespace: 'x', resourceVersion: String(++rv) } };
        yield { type: 'ADDED', object: object as unknown as T };
      },
    };
    return { client, calls };
  }

  async function runUntil(client: ListerWatcher, clock: Clock, done: () => boolean) {
    const ctrl = new AbortController();
    const reflector = new Reflector<KubeObject>({
      client,
      type: Pods,
      store: new RecordingStore(),
      logger: quiet,
      clock,
      random: () => 0.5,
    });
    const running = reflector.run(ctrl.signal);
    await waitFor(done, 'script played');
    ctrl.abort();
    await running;
  }

  test('a watch refused as too old right after its list relists at once; a second refusal in a row backs off', async () => {
    const { clock, sleeps } = recordingClock();
    const { client, calls } = scripted([gone, gone]);
    await runUntil(client, clock, () => calls.length >= 6);
    assert.deepEqual(calls.slice(0, 6), ['list', 'watch', 'list', 'watch', 'list', 'watch']);
    assert.equal(sleeps[0], 0, 'the first 410 after a list: no wait');
    assert.ok(sleeps[1]! >= 800, `the second in a row: the backoff (${sleeps[1]} ms)`);
  });

  test('a 410 after the watch delivered events backs off as before', async () => {
    const { clock, sleeps } = recordingClock();
    const { client, calls } = scripted(['event', gone]);
    await runUntil(client, clock, () => calls.length >= 5);
    assert.deepEqual(calls.slice(0, 5), ['list', 'watch', 'watch', 'list', 'watch']);
    assert.ok(sleeps.at(-1)! >= 800, `backoff before the relist (${sleeps.join(', ')})`);
  });

  test('"storage is (re)initializing" (429 + Retry-After) waits the time the server asked, three times in a row, then backs off', async () => {
    const { clock, sleeps } = recordingClock();
    const { client, calls } = scripted([initializing, initializing, initializing, initializing]);
    await runUntil(client, clock, () => calls.filter((c) => c === 'watch').length >= 5);
    assert.deepEqual(calls.slice(0, 6), ['list', 'watch', 'watch', 'watch', 'watch', 'watch'], 'no relist: the resourceVersion is fine');
    assert.deepEqual(sleeps.slice(0, 3), [1000, 1000, 1000]);
    assert.ok(sleeps[3]! >= 800 && sleeps[3] !== 1000, `then the backoff (${sleeps[3]} ms)`);
  });
});

describe('Reflector paging: the next page is asked for as soon as its token is known', () => {
  type Page = { items: KubeObject[]; continue?: string };
  /**
   * Pages by continue token (undefined: the first). A page whose `early` is set hands its token to
   * onContinue at once and answers only once the next page was asked for (or after 2 s, so that a
   * reflector that waits for it fails the test instead of hanging it); `fail` pages reject after
   * handing over their token.
   */
  function paged(pages: Map<string | undefined, Page & { early?: boolean; fail?: boolean }>) {
    const asked: Array<string | undefined> = [];
    const requested = new Map<string | undefined, () => void>();
    const inFlight = { now: 0, max: 0 };
    const client: ListerWatcher = {
      async list<T extends KubeObject>(_type: unknown, opts: ListOptions) {
        inFlight.max = Math.max(inFlight.max, ++inFlight.now);
        try {
          return await answer<T>(opts);
        } finally {
          inFlight.now--;
        }
      },
      // A watch that stays open, without events, until the reflector stops.
      async *watch<T extends KubeObject>(_type: unknown, opts: { signal?: AbortSignal }): AsyncGenerator<WatchEvent<T>> {
        await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve()));
        yield* [] as WatchEvent<T>[];
      },
    };
    async function answer<T extends KubeObject>(opts: ListOptions) {
      asked.push(opts.continue);
      requested.get(opts.continue)?.();
      const page = pages.get(opts.continue)!;
      if (page.early && page.continue) {
        const nextAsked = new Promise<void>((resolve) => {
          requested.set(page.continue, resolve);
          setTimeout(resolve, 2000);
        });
        opts.onContinue?.(page.continue);
        await nextAsked;
      }
      if (page.fail) throw new Error('connection reset mid-body');
      return { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '9', continue: page.continue }, items: page.items as T[] };
    }
    return { client, asked, inFlight };
  }

  /** Runs a reflector until its first list has replaced the store (or, given, until errors). */
  async function listOnce(client: ListerWatcher, errorsWanted = 0) {
    const { store, errors, reflector } = testReflector(client);
    const ctrl = new AbortController();
    const running = reflector.run(ctrl.signal);
    const t0 = performance.now();
    await waitFor(() => store.ops.length > 0 && errors.length >= errorsWanted, 'list done');
    const ms = performance.now() - t0;
    ctrl.abort();
    await running;
    return { store, errors, ms };
  }

  test('each page is requested while the one before it is still being read, once, and the store gets them in order', async () => {
    const { client, asked, inFlight } = paged(
      new Map<string | undefined, Page & { early?: boolean }>([
        [undefined, { items: [pod('a')], continue: 'c1', early: true }],
        ['c1', { items: [pod('b')], continue: 'c2', early: true }],
        ['c2', { items: [pod('c')], continue: 'c3', early: true }],
        ['c3', { items: [pod('d')], continue: 'c4', early: true }],
        ['c4', { items: [pod('e')], continue: 'c5', early: true }],
        ['c5', { items: [pod('f')] }],
      ]),
    );
    const { store, errors, ms } = await listOnce(client);
    assert.deepEqual(asked, [undefined, 'c1', 'c2', 'c3', 'c4', 'c5'], 'every page asked for once');
    assert.ok(inFlight.max <= 4, `at most 4 pages asked for and not yet read (${inFlight.max})`);
    assert.deepEqual(store.ops, ['replace a,b,c,d,e,f @9']);
    assert.equal(errors.length, 0);
    assert.ok(ms < 1500, `pages overlapped (${Math.round(ms)} ms; strictly one after another takes ≥ 10 s here)`);
  });

  test('a page that fails after handing over its token: the page read ahead is dropped, the list starts over', async () => {
    let attempts = 0;
    const { client, asked } = paged(
      new Map<string | undefined, Page & { early?: boolean; fail?: boolean }>([
        [
          undefined,
          {
            items: [pod('a')],
            continue: 'c1',
            early: true,
            get fail() {
              return ++attempts === 1;
            },
          },
        ],
        ['c1', { items: [pod('b')] }],
      ]),
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { store, errors } = await listOnce(client, 1);
      assert.equal(errors.length, 1);
      assert.deepEqual(store.ops, ['replace a,b @9']);
      assert.deepEqual(asked, [undefined, 'c1', undefined, 'c1']);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
