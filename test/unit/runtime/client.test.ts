import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../../src/util/clock.ts';
import { createCA, issueCert } from '../../../src/util/pki.ts';
import { KubeClient, PatchType, WatchDecodeError, fromKubeconfigFile, type WatchEvent } from '../../../src/runtime/client.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import {
  StatusError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isTooManyRequests,
} from '../../../src/runtime/errors.ts';
import { ConfigMaps, Deployments, Events, Leases, Namespaces, Pods } from '../../../src/runtime/resources.ts';
import { FakeApiServer, status, waitFor, useFakeApiServer } from './fake-apiserver.ts';

const PODS = '/v1/pods';
const CMS = '/v1/configmaps';
const DEPLOYS = 'apps/v1/deployments';

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

function pod(name: string, labels: Record<string, string> = {}, ns = 'default'): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels } };
}

describe('KubeClient CRUD', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  test('create, get, conflicting update, update, delete', async () => {
    const created = await client.create<Pod>(Pods, { metadata: { name: 'a', namespace: 'default' } });
    assert.equal(created.metadata.name, 'a');
    const req = server.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/api/v1/namespaces/default/pods');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body).kind, 'Pod', 'type meta filled in');
    assert.equal(JSON.parse(req.body).apiVersion, 'v1');

    const got = await client.get<Pod>(Pods, 'a', { namespace: 'default' });
    assert.equal(got.metadata.uid, created.metadata.uid);

    const stale = { ...got, metadata: { ...got.metadata, resourceVersion: '1' } };
    await assert.rejects(client.update(Pods, stale), (e) => isConflict(e) && (e as StatusError).code === 409);

    const updated = await client.update<Pod>(Pods, { ...got, metadata: { ...got.metadata, labels: { x: 'y' } } });
    assert.deepEqual(updated.metadata.labels, { x: 'y' });
    assert.notEqual(updated.metadata.resourceVersion, got.metadata.resourceVersion);

    await assert.rejects(client.delete(Pods, 'a', { namespace: 'default', preconditions: { uid: 'other' } }), isConflict);
    await client.delete(Pods, 'a', {
      namespace: 'default',
      preconditions: { uid: created.metadata.uid, resourceVersion: updated.metadata.resourceVersion },
      propagationPolicy: 'Foreground',
      gracePeriodSeconds: 0,
    });
    const body = JSON.parse(server.requests.at(-1)!.body);
    assert.deepEqual(body, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { uid: created.metadata.uid, resourceVersion: updated.metadata.resourceVersion },
      propagationPolicy: 'Foreground',
      gracePeriodSeconds: 0,
    });
    await assert.rejects(client.get(Pods, 'a', { namespace: 'default' }), (e) => {
      assert.ok(isNotFound(e));
      assert.equal((e as StatusError).message, 'pods "a" not found');
      return true;
    });
  });

  test('create of an existing object is AlreadyExists', async () => {
    await client.create(ConfigMaps, { metadata: { name: 'dup', namespace: 'default' } });
    await assert.rejects(client.create(ConfigMaps, { metadata: { name: 'dup', namespace: 'default' } }), (e) => {
      assert.ok(isAlreadyExists(e));
      assert.ok(!isConflict(e));
      assert.equal((e as StatusError).reason, 'AlreadyExists');
      return true;
    });
  });

  test('patch types, server-side apply and dry run', async () => {
    server.put(CMS, { metadata: { name: 'p', namespace: 'default' }, data: { a: '1', b: '2' } } as KubeObject);
    const merged = await client.patch<KubeObject & { data: Record<string, string> }>(
      ConfigMaps,
      'p',
      { data: { a: null, c: '3' } },
      { namespace: 'default', patchType: PatchType.Merge },
    );
    assert.deepEqual(merged.data, { b: '2', c: '3' });
    assert.equal(server.requests.at(-1)!.headers['content-type'], 'application/merge-patch+json');

    const jp = await client.patch<KubeObject & { data: Record<string, string> }>(
      ConfigMaps,
      'p',
      [{ op: 'replace', path: '/data/b', value: 'x' }],
      { namespace: 'default', patchType: PatchType.JSON },
    );
    assert.equal(jp.data.b, 'x');
    assert.equal(server.requests.at(-1)!.headers['content-type'], 'application/json-patch+json');

    await client.patch(ConfigMaps, 'p', { data: { d: '4' } }, { namespace: 'default', patchType: PatchType.StrategicMerge, dryRun: true });
    assert.equal(server.requests.at(-1)!.headers['content-type'], 'application/strategic-merge-patch+json');
    assert.equal(server.requests.at(-1)!.query.get('dryRun'), 'All');

    await client.apply(ConfigMaps, { metadata: { name: 'p', namespace: 'default' }, data: { e: '5' } } as KubeObject, {
      fieldManager: 'kruise-manager',
      force: true,
    });
    const req = server.requests.at(-1)!;
    assert.equal(req.method, 'PATCH');
    assert.equal(req.headers['content-type'], 'application/apply-patch+yaml');
    assert.equal(req.query.get('fieldManager'), 'kruise-manager');
    assert.equal(req.query.get('force'), 'true');
    assert.equal(JSON.parse(req.body).kind, 'ConfigMap');

    await assert.rejects(client.patch(ConfigMaps, 'p', {}, { namespace: 'default', patchType: PatchType.Apply }), /fieldManager/);
    await assert.rejects(client.patch(ConfigMaps, 'p', {}, { namespace: 'default', patchType: PatchType.Merge, force: true }), /force/);
  });

  test('list pagination, selectors and type meta on items', async () => {
    for (let i = 0; i < 5; i++) server.put(PODS, pod(`page-${i}`, { app: 'paged' }, 'paging'));
    server.put(PODS, pod('other', { app: 'x' }, 'paging'));
    const before = server.requests.length;
    const all = await client.listAll<Pod>(Pods, { namespace: 'paging', labelSelector: 'app=paged', limit: 2 });
    assert.deepEqual(
      all.items.map((p) => p.metadata.name),
      ['page-0', 'page-1', 'page-2', 'page-3', 'page-4'],
    );
    assert.ok(all.items.every((p) => p.kind === 'Pod' && p.apiVersion === 'v1'));
    const pages = server.requests.slice(before);
    assert.equal(pages.length, 3);
    assert.equal(pages[0]!.query.get('continue'), null);
    assert.ok(pages[1]!.query.get('continue'));
    assert.ok(pages.every((r) => r.query.get('limit') === '2' && r.query.get('labelSelector') === 'app=paged'));
    assert.equal(all.metadata.resourceVersion, JSON.parse(Buffer.from(pages[1]!.query.get('continue')!, 'base64url').toString()).rv);

    const one = await client.list<Pod>(Pods, { namespace: 'paging', limit: 4, fieldSelector: 'metadata.name=other', resourceVersion: '0' });
    assert.deepEqual(
      one.items.map((p) => p.metadata.name),
      ['other'],
    );
    assert.equal(server.requests.at(-1)!.query.get('resourceVersion'), '0');
    assert.equal(server.requests.at(-1)!.query.get('fieldSelector'), 'metadata.name=other');

    await client.list(Pods);
    assert.equal(server.requests.at(-1)!.path, '/api/v1/pods', 'all namespaces');
  });

  test('paths for groups, cluster-scoped and namespaced types', async () => {
    await client.list(Events, { namespace: 'ns1' });
    assert.equal(server.requests.at(-1)!.path, '/apis/events.k8s.io/v1/namespaces/ns1/events');
    await client.list(Leases, { namespace: 'kruise-system' });
    assert.equal(server.requests.at(-1)!.path, '/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases');
    await assert.rejects(client.get(Namespaces, 'nope'), isNotFound);
    assert.equal(server.requests.at(-1)!.path, '/api/v1/namespaces/nope');
    await assert.rejects(client.get(Pods, 'x'), /namespace required/);
    await assert.rejects(client.create(Pods, { metadata: { name: 'x' } }), /namespace required/);
  });

  test('status and scale subresources', async () => {
    server.put(DEPLOYS, {
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 2 },
      status: { replicas: 1 },
    } as KubeObject);
    type D = KubeObject & { spec: { replicas: number }; status: { replicas: number; observedGeneration?: number } };
    const st = await client.getStatus<D>(Deployments, 'web', { namespace: 'default' });
    assert.equal(server.requests.at(-1)!.path, '/apis/apps/v1/namespaces/default/deployments/web/status');
    const upd = await client.updateStatus<D>(Deployments, { ...st, status: { replicas: 2 } });
    assert.equal(upd.status.replicas, 2);
    assert.equal(server.requests.at(-1)!.method, 'PUT');
    assert.equal(server.requests.at(-1)!.path, '/apis/apps/v1/namespaces/default/deployments/web/status');
    const patched = await client.patchStatus<D>(
      Deployments,
      'web',
      { status: { observedGeneration: 3 } },
      {
        namespace: 'default',
        patchType: PatchType.Merge,
      },
    );
    assert.equal(patched.status.observedGeneration, 3);

    const scale = await client.getScale(Deployments, 'web', { namespace: 'default' });
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.spec?.replicas, 2);
    const scaled = await client.updateScale(Deployments, 'web', { ...scale, spec: { replicas: 5 } });
    assert.equal(scaled.spec?.replicas, 5);
    assert.equal(server.requests.at(-1)!.path, '/apis/apps/v1/namespaces/default/deployments/web/scale');
    assert.equal(JSON.parse(server.requests.at(-1)!.body).apiVersion, 'autoscaling/v1');
  });

  test('evict: success deletes, a disruption budget refusal is TooManyRequests and not retried', async () => {
    server.put(PODS, pod('ev1'));
    server.put(PODS, pod('ev2'));
    server.evictionBlocked.add('ev2');
    await client.evict('default', 'ev1', { gracePeriodSeconds: 5 });
    const req = server.requests.at(-1)!;
    assert.equal(req.path, '/api/v1/namespaces/default/pods/ev1/eviction');
    assert.deepEqual(JSON.parse(req.body), {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'ev1', namespace: 'default' },
      deleteOptions: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 5 },
    });
    assert.equal(server.getObject(PODS, 'default/ev1'), undefined);

    const before = server.requests.length;
    await assert.rejects(client.evict('default', 'ev2'), isTooManyRequests);
    assert.equal(server.requests.length - before, 1);
  });

  test('deleteCollection', async () => {
    server.put(PODS, pod('dc1', { batch: 'b' }, 'dc'));
    server.put(PODS, pod('dc2', { batch: 'b' }, 'dc'));
    server.put(PODS, pod('dc3', { batch: 'c' }, 'dc'));
    await client.deleteCollection(Pods, { namespace: 'dc', labelSelector: 'batch=b', propagationPolicy: 'Background' });
    const req = server.requests.at(-1)!;
    assert.equal(req.method, 'DELETE');
    assert.equal(req.path, '/api/v1/namespaces/dc/pods');
    assert.equal(JSON.parse(req.body).propagationPolicy, 'Background');
    const left = await client.list<Pod>(Pods, { namespace: 'dc' });
    assert.deepEqual(
      left.items.map((p) => p.metadata.name),
      ['dc3'],
    );
  });
});

describe('StatusError', () => {
  test('parses a Status body', () => {
    const e = StatusError.fromResponse(
      422,
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 422,
        reason: 'Invalid',
        message: 'Pod "x" is invalid: spec.containers: Required value',
        details: { name: 'x', kind: 'Pod', causes: [{ type: 'FieldValueRequired', field: 'spec.containers' }] },
      }),
    );
    assert.ok(isInvalid(e));
    assert.equal(e.code, 422);
    assert.equal(e.message, 'Pod "x" is invalid: spec.containers: Required value');
    assert.equal(e.status.details?.causes?.[0]?.field, 'spec.containers');
    assert.ok(e instanceof Error);
  });

  test('non-Status bodies fall back to the HTTP code', () => {
    const e = StatusError.fromResponse(502, '<html>Bad Gateway</html>');
    assert.equal(e.code, 502);
    assert.equal(e.reason, 'Unknown');
    assert.equal(e.message, '<html>Bad Gateway</html>');
    const nf = StatusError.fromResponse(404, '');
    assert.ok(isNotFound(nf));
    assert.equal(nf.message, 'NotFound (HTTP 404)');
    assert.ok(isForbidden(StatusError.fromResponse(403, 'nope')));
  });

  test('gone and expired', () => {
    assert.ok(isGone(new StatusError(status(410, 'Expired', 'too old resource version'))));
    assert.ok(isGone(new StatusError({ kind: 'Status', code: 410, reason: 'Gone' })));
    assert.ok(isGone(StatusError.fromResponse(410, 'x')));
    assert.ok(!isGone(new StatusError(status(409, 'Conflict', 'c'))));
    assert.ok(!isNotFound(new Error('plain')));
  });
});

describe('watch', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  test('query parameters, events, bookmarks, errors and abort', async () => {
    const ctrl = new AbortController();
    const rv = String(server.rv);
    const events = client.watch<Pod>(Pods, {
      namespace: 'w',
      resourceVersion: rv,
      allowWatchBookmarks: true,
      timeoutSeconds: 321,
      labelSelector: 'a=b',
      fieldSelector: 'spec.nodeName=n1',
      signal: ctrl.signal,
    });
    const it = events[Symbol.asyncIterator]();
    const first = it.next();
    await waitFor(() => server.watcherCount('w') === 1, 'watcher');
    const q = server.watchRequests().at(-1)!.query;
    assert.equal(q.get('resourceVersion'), rv);
    assert.equal(q.get('allowWatchBookmarks'), 'true');
    assert.equal(q.get('timeoutSeconds'), '321');
    assert.equal(q.get('labelSelector'), 'a=b');
    assert.equal(q.get('fieldSelector'), 'spec.nodeName=n1');

    server.put(PODS, { ...pod('w1', { a: 'b' }, 'w'), spec: { nodeName: 'n1' } } as KubeObject);
    const ev = (await first).value as WatchEvent<Pod>;
    assert.equal(ev.type, 'ADDED');
    assert.equal(ev.object.metadata.name, 'w1');

    server.bookmark();
    const bm = (await it.next()).value as WatchEvent<Pod>;
    assert.equal(bm.type, 'BOOKMARK');
    assert.equal(bm.object.metadata.resourceVersion, String(server.rv));

    server.sendWatchError(410, 'Expired', 'too old resource version: 1 (50)');
    const err = (await it.next()).value as WatchEvent<Pod>;
    assert.equal(err.type, 'ERROR');
    assert.ok(isGone(new StatusError(err.object as never)));

    const pending = it.next();
    ctrl.abort();
    await assert.rejects(pending);
    await waitFor(() => server.watcherCount('w') === 0, 'server to see the close');
  });

  test('events split across chunks, multi-byte characters split across chunks, no trailing newline', async () => {
    const events: WatchEvent<Pod>[] = [];
    const done = (async () => {
      for await (const ev of client.watch<Pod>(ConfigMaps, { namespace: 'chunks', resourceVersion: String(server.rv) })) events.push(ev);
    })();
    await waitFor(() => server.watcherCount('chunks') === 1, 'watcher');
    const e1 = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'ünïcödé', resourceVersion: '1' } } }) + '\n';
    const e2 = JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: '✓', resourceVersion: '2' } } }) + '\n\n';
    const e3 = JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'last', resourceVersion: '3' } } });
    const bytes = Buffer.from(e1 + e2 + e3);
    // Split in the middle of the 'ü' (2 bytes) and of the '✓' (3 bytes).
    const cuts = [5, bytes.indexOf(Buffer.from('ü')) + 1, bytes.indexOf(Buffer.from('✓')) + 2, bytes.length - 4];
    let prev = 0;
    for (const c of cuts) {
      server.writeRaw(bytes.subarray(prev, c));
      prev = c;
      await new Promise((r) => setTimeout(r, 5));
    }
    server.writeRaw(bytes.subarray(prev));
    server.closeWatches();
    await done;
    assert.deepEqual(
      events.map((e) => [e.type, (e.object as KubeObject).metadata.name]),
      [
        ['ADDED', 'ünïcödé'],
        ['MODIFIED', '✓'],
        ['DELETED', 'last'],
      ],
    );
  });

  test('garbage on the stream is an error, not silently skipped', async () => {
    const done = (async () => {
      for await (const _ of client.watch(ConfigMaps, { namespace: 'garbage', resourceVersion: String(server.rv) })) {
        // drain
      }
    })();
    await waitFor(() => server.watcherCount('garbage') === 1, 'watcher');
    server.writeRaw('{"type":"ADDED","obj\n');
    await assert.rejects(done, WatchDecodeError);
  });

  test('a truncated final event is an error', async () => {
    const done = (async () => {
      for await (const _ of client.watch(ConfigMaps, { namespace: 'trunc', resourceVersion: String(server.rv) })) {
        // drain
      }
    })();
    await waitFor(() => server.watcherCount('trunc') === 1, 'watcher');
    server.writeRaw('{"type":"ADDED","object":{"metadata"');
    server.closeWatches();
    await assert.rejects(done, WatchDecodeError);
  });

  test('an abrupt close surfaces as an error', async () => {
    const done = (async () => {
      for await (const _ of client.watch(ConfigMaps, { namespace: 'drop', resourceVersion: String(server.rv) })) {
        // drain
      }
    })();
    await waitFor(() => server.watcherCount('drop') === 1, 'watcher');
    server.dropWatches();
    await assert.rejects(done);
  });

  test('HTTP errors on the watch request throw StatusError', async () => {
    server.goneAsHttpStatus = true;
    server.compact();
    try {
      const it = client.watch(Pods, { resourceVersion: '1' });
      await assert.rejects(it.next(), (e) => isGone(e) && (e as StatusError).code === 410);
    } finally {
      server.goneAsHttpStatus = false;
    }
  });

  test('leaving the loop early closes the stream', async () => {
    server.put(PODS, pod('early', {}, 'early'));
    for await (const ev of client.watch<Pod>(Pods, { namespace: 'early' })) {
      assert.ok(ev.type === 'ADDED');
      assert.equal(ev.object.metadata.name, 'early');
      break;
    }
    await waitFor(() => server.watcherCount('early') === 0, 'close after break');
  });
});

describe('rate limiting and retries', () => {
  let server: FakeApiServer;
  before(async () => {
    server = await new FakeApiServer().start();
    server.put(CMS, { metadata: { name: 'c', namespace: 'default' } });
  });
  after(() => server.close());

  test('withOwnLimit: each derived client has its own budget and user agent over the shared connections', async () => {
    const clock = new FakeClock();
    const parent = new KubeClient({ server: server.url, qps: 1, burst: 1, clock, userAgent: 'kruise-manager' });
    const a = parent.withOwnLimit({ userAgent: 'kruise-manager/a-controller', qps: 1, burst: 1 });
    const b = parent.withOwnLimit({ userAgent: 'kruise-manager/b-controller', qps: 1, burst: 1 });
    try {
      const before = server.requests.length;
      // One token each: three requests at once, none waits for another's budget.
      await Promise.all([parent, a, b].map((c) => c.get(ConfigMaps, 'c', { namespace: 'default' })));
      const agents = server.requests.slice(before).map((r) => r.headers['user-agent']);
      assert.deepEqual(agents.sort(), ['kruise-manager', 'kruise-manager/a-controller', 'kruise-manager/b-controller']);
      // A's budget is spent: its next request waits for A's own next token.
      const held = a.get(ConfigMaps, 'c', { namespace: 'default' });
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(server.requests.length - before, 3, "a's second request waits for a's own token");
      await clock.advance(1000);
      await held;
      // Closing a derived client leaves the parent's connections open.
      await a.close();
      const next = parent.get(ConfigMaps, 'c', { namespace: 'default' });
      await clock.advance(1000);
      await next;
    } finally {
      await parent.close();
    }
  });

  test("a list's continue pages are not charged to the rate limiter: only its first request is", async () => {
    for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) server.put(CMS, { metadata: { name: n, namespace: 'paged' } });
    const clock = new FakeClock();
    const client = new KubeClient({ server: server.url, qps: 1, burst: 1, clock });
    try {
      const before = server.requests.length;
      // One token: the whole five-page list goes through on it, with the fake clock standing still.
      const all = await client.listAll(ConfigMaps, { namespace: 'paged', limit: 1 });
      assert.equal(all.items.length, 5);
      assert.equal(server.requests.length - before, 5);
      // The next list begins a new one: it waits for a token.
      const held = client.list(ConfigMaps, { namespace: 'paged', limit: 1 });
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(server.requests.length - before, 5, 'a new list waits for its token');
      await clock.advance(1000);
      await held;
    } finally {
      await client.close();
    }
  });

  test('onContinue: the token is handed over from the start of the body, before the page is read', async () => {
    const sent = { rest: () => {} };
    const raw = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"tok\\"1"},"items":[');
      sent.rest = () => res.end('{"metadata":{"name":"a","namespace":"x"}}]}');
      // Without an early token the body still ends (and the assertion below fails) instead of hanging.
      setTimeout(() => sent.rest(), 2000);
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    const client = new KubeClient({ server: `http://127.0.0.1:${(raw.address() as AddressInfo).port}`, qps: 0 });
    try {
      const tokens: string[] = [];
      const page = client.list(ConfigMaps, {
        namespace: 'x',
        limit: 1,
        onContinue: (t) => {
          tokens.push(t);
          sent.rest();
        },
      });
      const list = await page;
      assert.deepEqual(tokens, ['tok"1'], 'told once, JSON escapes decoded, while the body was still open');
      assert.equal(list.metadata.continue, 'tok"1');
      assert.equal(list.items.length, 1);
    } finally {
      await client.close();
      raw.close();
    }
  });

  test('writeFence: a refused write never reaches the API server; reads pass', async () => {
    const parent = new KubeClient({ server: server.url, qps: 0 });
    let held = true;
    const fenced = parent.withOwnLimit({
      userAgent: 'kruise-manager/fenced-controller',
      qps: 0,
      burst: 0,
      writeFence: () => {
        if (!held) throw new Error('write refused: this replica no longer holds the leader lease');
      },
    });
    try {
      const before = server.requests.length;
      await fenced.patch(ConfigMaps, 'c', { data: { a: '1' } }, { namespace: 'default', patchType: PatchType.Merge });
      held = false;
      await assert.rejects(
        fenced.patch(ConfigMaps, 'c', { data: { a: '2' } }, { namespace: 'default', patchType: PatchType.Merge }),
        /no longer holds the leader lease/,
      );
      await assert.rejects(fenced.delete(ConfigMaps, 'c', { namespace: 'default' }), /no longer holds/);
      const cm = await fenced.get<KubeObject & { data?: Record<string, string> }>(ConfigMaps, 'c', { namespace: 'default' });
      assert.equal(cm.data?.a, '1');
      assert.deepEqual(
        server.requests.slice(before).map((r) => r.method),
        ['PATCH', 'GET'],
      );
    } finally {
      await parent.close();
    }
  });

  test('requests beyond the burst wait for tokens; watches are not limited', async () => {
    const clock = new FakeClock();
    const client = new KubeClient({ server: server.url, qps: 1, burst: 2, clock });
    try {
      const before = server.requests.length;
      const gets = [0, 1, 2].map(() => client.get(ConfigMaps, 'c', { namespace: 'default' }));
      await waitFor(() => server.requests.length - before === 2, 'burst');
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(server.requests.length - before, 2, 'third request held back');

      const ctrl = new AbortController();
      const w = client.watch(ConfigMaps, { namespace: 'default', resourceVersion: String(server.rv), signal: ctrl.signal });
      const wnext = w.next();
      await waitFor(() => server.watcherCount() === 1, 'watch goes through while limited');

      await clock.advance(999);
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(server.requests.length - before, 3, 'still held (watch excepted)');
      await clock.advance(1);
      await Promise.all(gets);
      assert.equal(server.requests.length - before, 4);
      ctrl.abort();
      await assert.rejects(wnext);
    } finally {
      await client.close();
    }
  });

  test('429 with Retry-After is retried after the delay; without it, it is not', async () => {
    const clock = new FakeClock();
    const client = new KubeClient({ server: server.url, qps: 0, clock });
    try {
      const isGet = (r: { method: string; path: string }) => r.method === 'GET' && r.path.endsWith('/configmaps/c');
      server.failNext(isGet, 429, status(429, 'TooManyRequests', 'throttled'), { 'retry-after': '2' });
      const before = server.requests.length;
      const got = client.get(ConfigMaps, 'c', { namespace: 'default' });
      await waitFor(() => clock.pending() === 1, 'retry sleep');
      assert.equal(server.requests.length - before, 1);
      await clock.advance(2000);
      assert.equal((await got).metadata.name, 'c');
      assert.equal(server.requests.length - before, 2);

      server.failNext(isGet, 429, status(429, 'TooManyRequests', 'no hint'));
      await assert.rejects(client.get(ConfigMaps, 'c', { namespace: 'default' }), isTooManyRequests);
    } finally {
      await client.close();
    }
  });

  test('503 with Retry-After (an API server still installing its paths) is retried, a create too; a 500 without it is not', async () => {
    const clock = new FakeClock();
    const client = new KubeClient({ server: server.url, qps: 0, clock });
    try {
      const isCreate = (r: { method: string; path: string }) => r.method === 'POST' && r.path.endsWith('/configmaps');
      const notYet = 'the request has been made before all known HTTP paths have been installed, please try again';
      server.failNext(isCreate, 503, status(503, 'ServiceUnavailable', notYet), { 'retry-after': '5' });
      const before = server.requests.length;
      const created = client.create(ConfigMaps, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'after-503', namespace: 'default' },
      });
      await waitFor(() => clock.pending() === 1, 'retry sleep');
      await clock.advance(5000);
      assert.equal((await created).metadata.name, 'after-503');
      assert.equal(server.requests.length - before, 2);

      server.failNext(isCreate, 500, status(500, 'InternalError', 'no hint'));
      await assert.rejects(
        client.create(ConfigMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-500', namespace: 'default' } }),
        /no hint/,
      );
    } finally {
      await client.close();
    }
  });
});

describe('kubeconfig', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kruise-client-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('token user against an http server', async () => {
    const server = await new FakeApiServer().start();
    const file = path.join(dir, 'token.yaml');
    fs.writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "${server.url}", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: sekret, as: impersonated}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`,
    );
    const client = fromKubeconfigFile(file, { userAgent: 'kruise-test' });
    try {
      await assert.rejects(client.get(Pods, 'x', { namespace: 'default' }), isNotFound);
      const h = server.requests.at(-1)!.headers;
      assert.equal(h.authorization, 'Bearer sekret');
      assert.equal(h['impersonate-user'], 'impersonated');
      assert.equal(h['user-agent'], 'kruise-test');
    } finally {
      await client.close();
      await server.close();
    }
  });

  test('client certificate auth with ECDSA P-256 certificates from *-data fields', async () => {
    const pki = await makePki();
    const srv = https.createServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.caCert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'Namespace',
            apiVersion: 'v1',
            metadata: { name: String(peer.subject.CN), annotations: { path: req.url! } },
          }),
        );
      },
    );
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const file = path.join(dir, 'certs.yaml');
    fs.writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:${port}
    certificate-authority-data: ${b64(pki.caCert)}
users:
- name: admin
  user:
    client-certificate-data: ${b64(pki.clientCert)}
    client-key-data: ${b64(pki.clientKey)}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`,
    );
    const client = fromKubeconfigFile(file);
    try {
      const ns = await client.get(Namespaces, 'kube-system');
      assert.equal(ns.metadata.name, 'admin', 'server saw our client certificate');
      assert.equal(ns.metadata.annotations?.path, '/api/v1/namespaces/kube-system');
    } finally {
      await client.close();
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
    }
  });
});

async function makePki() {
  const ca = await createCA('test-ca');
  const server = await issueCert(ca, { commonName: 'kube-apiserver', ipAddresses: ['127.0.0.1'], server: true });
  const client = await issueCert(ca, { commonName: 'admin', organizations: ['system:masters'], server: false, client: true });
  return { caCert: ca.certPem, serverCert: server.certPem, serverKey: server.keyPem, clientCert: client.certPem, clientKey: client.keyPem };
}
