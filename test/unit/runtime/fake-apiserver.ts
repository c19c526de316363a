// A small in-memory API server over plain HTTP, just real enough for the client, reflector and
// informer tests: lists with pagination and resourceVersions, NDJSON watch streams (with bookmarks,
// 410 ERROR events, clean and abrupt closes) and CRUD with optimistic concurrency.

import { parseSelector } from '../../../src/util/labelselector.ts';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { before, after } from 'node:test';
import { KubeClient } from '../../../src/runtime/client.ts';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

type Obj = { apiVersion?: string; kind?: string; metadata: Record<string, any>; [k: string]: any };

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Watcher {
  resource: string;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  bookmarks: boolean;
  res: http.ServerResponse;
}

interface StoredEvent {
  resource: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
}

interface Injected {
  match: (r: RecordedRequest) => boolean;
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export function status(code: number, reason: string, message: string): Obj {
  return { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', code, reason, message };
}

const clone = <T>(v: T): T => structuredClone(v);

/** Polls cond (real time) until it holds. */
export async function waitFor(cond: () => boolean, what = 'condition', ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export class FakeApiServer {
  url = '';
  rv = 100;
  readonly requests: RecordedRequest[] = [];
  /** Watchers get no live events while muted (simulates a partition that hides changes). */
  muted = false;
  /** Too-old watches get HTTP 410 instead of an in-stream ERROR event. */
  goneAsHttpStatus = false;
  /** Pods whose eviction is refused with 429, as if a PodDisruptionBudget blocked it. */
  readonly evictionBlocked = new Set<string>();
  /** Requests with a continue token answer 410 Expired. */
  expireContinueTokens = false;
  /** Lists answer everything in one response whatever the limit, as the watch cache does at resourceVersion "0". */
  ignoreLimit = false;
  /** Every request is answered 503, as by a load balancer in front of a stopped API server (see outage()). */
  private unavailable = false;

  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly objects = new Map<string, Map<string, Obj>>();
  private readonly discovery = new Map<string, unknown>();
  private readonly events: (StoredEvent & { rv: number })[] = [];
  private compactedRV = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly injected: Injected[] = [];
  private readonly held: Array<{ match: (r: RecordedRequest) => boolean; waiting: Array<() => void>; released: boolean }> = [];
  private uidSeq = 0;

  constructor() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c) => (body += c));
      req.on('end', () => this.handle(req, res, body));
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  // --- test controls ---------------------------------------------------------------------------

  /** Creates or replaces an object directly, emitting the watch event. `resource` is `group/version/plural`. */
  put(resource: string, obj: Obj): Obj {
    const store = this.store(resource);
    const key = keyOf(obj);
    const existing = store.get(key);
    const o = clone(obj);
    o.metadata.uid ??= existing?.metadata.uid ?? `uid-${++this.uidSeq}`;
    o.metadata.resourceVersion = String(++this.rv);
    store.set(key, o);
    this.emit({ resource, type: existing ? 'MODIFIED' : 'ADDED', object: o });
    return o;
  }

  remove(resource: string, namespace: string | undefined, name: string): void {
    const store = this.store(resource);
    const key = namespace ? `${namespace}/${name}` : name;
    const o = store.get(key);
    if (!o) throw new Error(`no ${key}`);
    store.delete(key);
    const final = clone(o);
    final.metadata.resourceVersion = String(++this.rv);
    this.emit({ resource, type: 'DELETED', object: final });
  }

  getObject(resource: string, key: string): Obj | undefined {
    return this.store(resource).get(key);
  }

  /** Forget history: watches from older resourceVersions now get 410. */
  compact(): void {
    this.compactedRV = this.rv;
    this.events.length = 0;
  }

  bookmark(): void {
    this.rv++;
    for (const w of this.watchers) {
      if (w.bookmarks)
        this.write(w, { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } } });
    }
  }

  /** Writes raw bytes to every watch stream. */
  writeRaw(data: string | Uint8Array): void {
    for (const w of this.watchers) w.res.write(data);
  }

  sendWatchError(code: number, reason: string, message: string): void {
    for (const w of this.watchers) this.write(w, { type: 'ERROR', object: status(code, reason, message) });
  }

  /** Ends every watch cleanly, as the server does at timeoutSeconds. */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** Kills every watch connection mid-stream. */
  dropWatches(): void {
    for (const w of this.watchers) w.res.socket?.destroy();
    this.watchers.clear();
  }

  /** Starts (true) or ends (false) an outage: open watches are cut and every request gets 503. */
  outage(on: boolean): void {
    this.unavailable = on;
    if (on) this.dropWatches();
  }

  /** Open watch streams, optionally only those on one namespace. */
  watcherCount(namespace?: string): number {
    return [...this.watchers].filter((w) => namespace === undefined || w.namespace === namespace).length;
  }

  /** One line per open watch stream: its resource, namespace and selectors. */
  openWatches(): string[] {
    return [...this.watchers].map((w) => [w.resource, w.namespace ?? '*', w.labelSelector ?? '', w.fieldSelector ?? ''].join(' ').trim());
  }

  /** Serves a discovery document at /apis/<groupVersion> (/api/<version> for the core group). */
  serveDiscovery(groupVersion: string, resources: Array<{ name: string; namespaced: boolean; kind: string }>): void {
    const path = groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
    this.discovery.set(path, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources });
  }

  /** Answers the next request matching `match` with the given status and body. */
  failNext(match: (r: RecordedRequest) => boolean, code: number, body: unknown, headers: Record<string, string> = {}): void {
    this.injected.push({ match, status: code, body, headers });
  }

  /** Holds back the answers to requests matching `match` (recorded on arrival) until the returned function is called. */
  hold(match: (r: RecordedRequest) => boolean): () => void {
    const h = { match, waiting: [] as Array<() => void>, released: false };
    this.held.push(h);
    return () => {
      h.released = true;
      for (const answer of h.waiting.splice(0)) answer();
    };
  }

  watchRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.query.get('watch') === 'true');
  }

  listRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'GET' && r.query.get('watch') !== 'true');
  }

  // --- HTTP ------------------------------------------------------------------------------------

  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
    const url = new URL(req.url!, 'http://x');
    const rec: RecordedRequest = { method: req.method!, path: url.pathname, query: url.searchParams, headers: req.headers, body };
    this.requests.push(rec);
    const held = this.held.find((h) => !h.released && h.match(rec));
    if (held) return void held.waiting.push(() => this.answer(req, res, rec, url));
    this.answer(req, res, rec, url);
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse, rec: RecordedRequest, url: URL): void {
    if (this.unavailable) return this.reply(res, 503, status(503, 'ServiceUnavailable', 'the API server is down'));
    const inj = this.injected.findIndex((i) => i.match(rec));
    if (inj >= 0) {
      const [i] = this.injected.splice(inj, 1);
      const text = typeof i!.body === 'string' ? i!.body : JSON.stringify(i!.body);
      res.writeHead(i!.status, { 'content-type': 'application/json', ...i!.headers }).end(text);
      return;
    }
    const discovery = req.method === 'GET' ? this.discovery.get(url.pathname.replace(/\/+$/, '')) : undefined;
    if (discovery) return this.reply(res, 200, discovery);
    const route = parsePath(url.pathname);
    if (!route) return this.reply(res, 404, status(404, 'NotFound', `no route ${url.pathname}`));
    try {
      this.route(rec, route, res);
    } catch (err) {
      this.reply(res, 500, status(500, 'InternalError', String(err)));
    }
  }

  private route(rec: RecordedRequest, r: Route, res: http.ServerResponse): void {
    const store = this.store(r.resource);
    const q = rec.query;
    if (!r.name) {
      if (rec.method === 'GET' && q.get('watch') === 'true') return this.watch(r, q, res);
      if (rec.method === 'GET') return this.list(r, q, res);
      if (rec.method === 'POST') return this.create(r, rec, res);
      if (rec.method === 'DELETE') {
        const victims = this.select(r.resource, r.namespace, q.get('labelSelector'), q.get('fieldSelector'));
        for (const o of victims) this.remove(r.resource, o.metadata.namespace, o.metadata.name);
        return this.reply(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: victims });
      }
      return this.reply(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
    }
    const key = r.namespace ? `${r.namespace}/${r.name}` : r.name;
    const existing = store.get(key);
    if (r.sub === 'eviction' && rec.method === 'POST') {
      if (!existing) return this.reply(res, 404, status(404, 'NotFound', `pods "${r.name}" not found`));
      if (this.evictionBlocked.has(r.name)) {
        return this.reply(res, 429, status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget."));
      }
      this.remove(r.resource, r.namespace, r.name);
      return this.reply(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' });
    }
    if (!existing) return this.reply(res, 404, status(404, 'NotFound', `${r.resourceName} "${r.name}" not found`));
    switch (rec.method) {
      case 'GET':
        if (r.sub === 'scale') return this.reply(res, 200, scaleOf(existing));
        return this.reply(res, 200, existing);
      case 'PUT': {
        const obj = JSON.parse(rec.body) as Obj;
        const rv = obj.metadata.resourceVersion;
        if (rv && rv !== existing.metadata.resourceVersion) {
          return this.reply(
            res,
            409,
            status(
              409,
              'Conflict',
              `Operation cannot be fulfilled on ${r.resourceName} "${r.name}": the object has been modified; please apply your changes to the latest version and try again`,
            ),
          );
        }
        let next: Obj;
        if (r.sub === 'status') next = { ...clone(existing), status: obj.status };
        else if (r.sub === 'scale') next = { ...clone(existing), spec: { ...existing.spec, replicas: obj.spec?.replicas } };
        else next = { ...obj, status: existing.status, metadata: { ...obj.metadata, uid: existing.metadata.uid } };
        const stored = this.put(r.resource, next);
        return this.reply(res, 200, r.sub === 'scale' ? scaleOf(stored) : stored);
      }
      case 'PATCH': {
        const ct = String(rec.headers['content-type']);
        const patch = JSON.parse(rec.body);
        // metadata.uid and metadata.resourceVersion in a merge patch are preconditions, as on a real API server.
        const pre = ct === 'application/json-patch+json' ? {} : (patch?.metadata ?? {});
        if (
          (pre.uid && pre.uid !== existing.metadata.uid) ||
          (pre.resourceVersion && pre.resourceVersion !== existing.metadata.resourceVersion)
        ) {
          return this.reply(
            res,
            409,
            status(
              409,
              'Conflict',
              `Operation cannot be fulfilled on ${r.resourceName} "${r.name}": the object has been modified; please apply your changes to the latest version and try again`,
            ),
          );
        }
        let next: Obj;
        if (ct === 'application/json-patch+json') {
          const patched = applyJsonPatch(clone(existing), patch);
          // A failed test operation, as the real API server answers it: no details.
          if (!patched)
            return this.reply(res, 422, status(422, 'Invalid', 'the server rejected our request due to an error in our request'));
          next = patched;
        } else next = mergePatch(clone(existing), patch) as Obj;
        return this.reply(res, 200, this.put(r.resource, next));
      }
      case 'DELETE': {
        const opts = rec.body ? JSON.parse(rec.body) : {};
        const pre = opts.preconditions ?? {};
        if (
          (pre.uid && pre.uid !== existing.metadata.uid) ||
          (pre.resourceVersion && pre.resourceVersion !== existing.metadata.resourceVersion)
        ) {
          return this.reply(res, 409, status(409, 'Conflict', `Precondition failed for ${r.resourceName} "${r.name}"`));
        }
        if (existing.metadata.finalizers?.length) {
          const terminating = clone(existing);
          terminating.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
          return this.reply(res, 200, this.put(r.resource, terminating));
        }
        this.remove(r.resource, r.namespace, r.name);
        return this.reply(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: r.name } });
      }
    }
    this.reply(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
  }

  private create(r: Route, rec: RecordedRequest, res: http.ServerResponse): void {
    const obj = JSON.parse(rec.body) as Obj;
    if (r.namespace) obj.metadata.namespace = r.namespace;
    if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = `${obj.metadata.generateName}${++this.uidSeq}`;
    if (!obj.metadata.name) return this.reply(res, 422, status(422, 'Invalid', 'metadata.name: Required value'));
    if (this.store(r.resource).has(keyOf(obj))) {
      return this.reply(res, 409, status(409, 'AlreadyExists', `${r.resourceName} "${obj.metadata.name}" already exists`));
    }
    obj.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    this.reply(res, 201, this.put(r.resource, obj));
  }

  private list(r: Route, q: URLSearchParams, res: http.ServerResponse): void {
    const cont = q.get('continue');
    if (cont && this.expireContinueTokens) {
      return this.reply(
        res,
        410,
        status(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.'),
      );
    }
    let after = '';
    let listRV = String(this.rv);
    if (cont) ({ after, rv: listRV } = JSON.parse(Buffer.from(cont, 'base64url').toString()));
    let items = this.select(r.resource, r.namespace, q.get('labelSelector'), q.get('fieldSelector')).filter((o) => keyOf(o) > after);
    const limit = this.ignoreLimit ? 0 : Number(q.get('limit') ?? 0);
    let next: string | undefined;
    if (limit > 0 && items.length > limit) {
      items = items.slice(0, limit);
      next = Buffer.from(JSON.stringify({ after: keyOf(items[items.length - 1]!), rv: listRV })).toString('base64url');
    }
    // Like the real server, items of a built-in list carry no apiVersion/kind.
    const bare = items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    this.reply(res, 200, { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: listRV, continue: next }, items: bare });
  }

  private watch(r: Route, q: URLSearchParams, res: http.ServerResponse): void {
    const rvParam = q.get('resourceVersion') ?? '';
    const from = rvParam === '' || rvParam === '0' ? undefined : Number(rvParam);
    if (from !== undefined && from < this.compactedRV && this.goneAsHttpStatus) {
      return this.reply(res, 410, status(410, 'Expired', `too old resource version: ${from} (${this.compactedRV})`));
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const w: Watcher = {
      resource: r.resource,
      namespace: r.namespace,
      labelSelector: q.get('labelSelector') ?? undefined,
      fieldSelector: q.get('fieldSelector') ?? undefined,
      bookmarks: q.get('allowWatchBookmarks') === 'true',
      res,
    };
    if (from !== undefined && from < this.compactedRV) {
      this.write(w, { type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from} (${this.compactedRV})`) });
      res.end();
      return;
    }
    if (from === undefined) {
      for (const o of this.select(r.resource, r.namespace, w.labelSelector ?? null, w.fieldSelector ?? null)) {
        this.write(w, { type: 'ADDED', object: o });
      }
    } else {
      for (const e of this.events) if (e.rv > from && this.matches(w, e)) this.write(w, { type: e.type, object: e.object });
    }
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    if (timeout > 0) {
      const t = setTimeout(() => {
        this.watchers.delete(w);
        res.end();
      }, timeout * 1000);
      t.unref();
      res.on('close', () => clearTimeout(t));
    }
  }

  // --- helpers ---------------------------------------------------------------------------------

  private emit(e: StoredEvent): void {
    this.events.push({ ...e, rv: this.rv });
    if (this.muted) return;
    for (const w of this.watchers) if (this.matches(w, e)) this.write(w, { type: e.type, object: e.object });
  }

  private matches(w: Watcher, e: StoredEvent): boolean {
    return w.resource === e.resource && selects(e.object, w.namespace, w.labelSelector ?? null, w.fieldSelector ?? null);
  }

  private write(w: Watcher, ev: unknown): void {
    w.res.write(JSON.stringify(ev) + '\n');
  }

  private select(resource: string, ns: string | undefined, labels: string | null, fields: string | null): Obj[] {
    return [...this.store(resource).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => o)
      .filter((o) => selects(o, ns, labels, fields));
  }

  private store(resource: string): Map<string, Obj> {
    let s = this.objects.get(resource);
    if (!s) this.objects.set(resource, (s = new Map()));
    return s;
  }

  private reply(res: http.ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
}

interface Route {
  resource: string;
  resourceName: string;
  namespace?: string;
  name?: string;
  sub?: string;
}

function parsePath(pathname: string): Route | undefined {
  const seg = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (seg[0] === 'api' && seg.length >= 3) [group, version, rest] = ['', seg[1]!, seg.slice(2)];
  else if (seg[0] === 'apis' && seg.length >= 4) [group, version, rest] = [seg[1]!, seg[2]!, seg.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resourceName, name, sub] = rest;
  return { resource: `${group}/${version}/${resourceName}`, resourceName: resourceName!, namespace, name, sub };
}

function keyOf(o: Obj): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

function selects(o: Obj, ns: string | undefined, labels: string | null, fields: string | null): boolean {
  if (ns && o.metadata.namespace !== ns) return false;
  if (labels && !parseSelector(labels).matches(o.metadata.labels ?? {})) return false;
  for (const term of (fields ?? '').split(',').filter(Boolean)) {
    const [k, v] = term.split('=');
    const actual =
      k === 'metadata.name'
        ? o.metadata.name
        : k === 'metadata.namespace'
          ? o.metadata.namespace
          : k === 'spec.nodeName'
            ? o.spec?.nodeName
            : undefined;
    if (actual !== v) return false;
  }
  return true;
}

function scaleOf(o: Obj): Obj {
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion },
    spec: { replicas: o.spec?.replicas ?? 0 },
    status: { replicas: o.status?.replicas ?? 0 },
  };
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** `target` patched, or undefined when a test operation fails. */
function applyJsonPatch(target: Obj, ops: { op: string; path: string; value?: unknown }[]): Obj | undefined {
  for (const { op, path, value } of ops) {
    const parts = path
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop()!;
    let parent: any = target;
    for (const p of parts) parent = parent[p];
    if (op === 'test') {
      if (JSON.stringify(parent?.[last]) !== JSON.stringify(value)) return undefined;
    } else if (op === 'add' || op === 'replace') parent[last] = value;
    else if (op === 'remove') delete parent[last];
    else throw new Error(`unsupported op ${op}`);
  }
  return target;
}

/**
 * Registers before/after hooks in the calling suite: a fresh fake API server and an unthrottled
 * client of it, handed to bind once started, both closed after the suite.
 */
export function useFakeApiServer(bind: (server: FakeApiServer, client: KubeClient) => void): void {
  let server: FakeApiServer;
  let client: KubeClient;
  before(async () => {
    server = await new FakeApiServer().start();
    client = new KubeClient({ server: server.url, qps: 0 });
    bind(server, client);
  });
  after(async () => {
    await client.close();
    await server.close();
  });
}

/** A temporary directory holding a kubeconfig for the fake API server (a manager's cert dir too). */
export function fakeKubeconfig(server: FakeApiServer, prefix = 'kruise-fake-'): { dir: string; kubeconfig: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'fake',
      clusters: [{ name: 'fake', cluster: { server: server.url } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'u' } }],
    }),
  );
  return { dir, kubeconfig };
}
