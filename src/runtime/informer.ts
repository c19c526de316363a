// Shared informers: one reflector per (resource type, namespace, selectors) keeps an indexed,
// read-only cache and fans events out to any number of handlers, each with its own unbounded buffer.

import { realClock, type Clock, type Timer } from '../util/clock.ts';
import type { Selector } from '../util/labelselector.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { resourceTypeKey, type ResourceType } from './resources.ts';
import { logger } from './log.ts';
import { Reflector, type BackoffOptions, type ListerWatcher, type ReflectorStore, type RuntimeLogger } from './reflector.ts';

/** A delete noticed only by its absence from a relist: obj is the last state the cache knew. */
export class DeletedFinalStateUnknown<T extends KubeObject> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

/** The object a delete notification is about, whether or not it came as a tombstone. */
export function unwrapDeleted<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

// ---------------------------------------------------------------------------------------------
// Read-only objects

/**
 * Cached objects are shared by every reader, who must copy before changing one. Tests prove they do:
 * with KRUISE_CACHE_MUTATION_DETECTOR=true (`./run.sh test` sets it, like Kubernetes'
 * KUBE_CACHE_MUTATION_DETECTOR in its e2e runs) every cached object is deep-frozen, so a write to
 * one throws where it happens. In production freezing would only cost time: it triples the ingest
 * of a list (≈60 µs a pod; seconds of start-up at 50k pods, docs/benchmarks.md).
 */
export const freezeCachedObjects = process.env.KRUISE_CACHE_MUTATION_DETECTOR === 'true';
const cached = <T>(obj: T): T => (freezeCachedObjects ? deepFreeze(obj) : obj);

/** Freezes obj and everything reachable from it; cached objects are shared by every reader. */
export function deepFreeze<T>(obj: T): T {
  if (obj === null || typeof obj !== 'object' || Object.isFrozen(obj)) return obj;
  Object.freeze(obj);
  for (const v of Object.values(obj)) deepFreeze(v);
  return obj;
}

// ---------------------------------------------------------------------------------------------
// Indexer

export type IndexFunc<T extends KubeObject> = (obj: T) => string[];

export const NamespaceIndex = 'namespace';
export const OwnerUIDIndex = 'ownerUID';
export const NodeNameIndex = 'nodeName';

const builtinIndexers: Record<string, IndexFunc<KubeObject>> = {
  [NamespaceIndex]: (obj) => (obj.metadata.namespace ? [obj.metadata.namespace] : []),
  [OwnerUIDIndex]: (obj) => {
    const owner = obj.metadata.ownerReferences?.find((r) => r.controller);
    return owner ? [owner.uid] : [];
  },
  [NodeNameIndex]: (obj) => {
    const nodeName = (obj as { spec?: { nodeName?: unknown } }).spec?.nodeName;
    return typeof nodeName === 'string' && nodeName ? [nodeName] : [];
  },
};

/** Objects by key, plus named secondary indexes (index value → keys). */
export class Indexer<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly funcs = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexers({ ...(builtinIndexers as Record<string, IndexFunc<T>>), ...indexers });
  }

  hasIndexer(name: string): boolean {
    return this.funcs.has(name);
  }

  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.funcs.has(name)) throw new Error(`indexer ${name} already exists`);
      this.funcs.set(name, fn);
      this.indices.set(name, new Map());
      for (const [key, obj] of this.items) this.indexOne(name, fn, key, obj);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  keys(): IterableIterator<string> {
    return this.items.keys();
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  get size(): number {
    return this.items.size;
  }

  set(key: string, obj: T): void {
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.funcs) this.indexOne(name, fn, key, obj);
  }

  delete(key: string): void {
    const old = this.items.get(key);
    if (!old) return;
    this.unindex(key, old);
    this.items.delete(key);
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no indexer named ${indexName}`);
    const keys = index.get(value);
    if (!keys) return [];
    return [...keys].map((k) => this.items.get(k)!);
  }

  private indexOne(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const index = this.indices.get(name)!;
    for (const value of fn(obj)) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.funcs) {
      const index = this.indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) index.delete(value);
      }
    }
  }
}

/** Anything that matches labels, typically a Selector from util/labelselector.ts. */
export type LabelMatcher = Pick<Selector, 'matches'>;

export interface Lister<T extends KubeObject> {
  /** Cluster-scoped: get(name); namespaced: get(namespace, name). */
  get(name: string): T | undefined;
  get(namespace: string, name: string): T | undefined;
  /** All objects, or those of one namespace, optionally filtered by a label selector. */
  list(namespace?: string, selector?: LabelMatcher): T[];
  byIndex(indexName: string, value: string): T[];
}

function makeLister<T extends KubeObject>(indexer: Indexer<T>): Lister<T> {
  return {
    get(a: string, b?: string): T | undefined {
      return indexer.get(b === undefined || a === '' ? (b ?? a) : `${a}/${b}`);
    },
    list(namespace?: string, selector?: LabelMatcher): T[] {
      const objs = namespace ? indexer.byIndex(NamespaceIndex, namespace) : [...indexer.values()];
      return selector ? objs.filter((o) => selector.matches(o.metadata.labels)) : objs;
    },
    byIndex: (indexName, value) => indexer.byIndex(indexName, value),
  };
}

// ---------------------------------------------------------------------------------------------
// Handlers

export interface EventHandler<T extends KubeObject> {
  onAdd?(obj: T, isInitialList: boolean): void | Promise<void>;
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

export interface HandlerOptions {
  /**
   * Re-deliver every cached object as onUpdate(obj, obj) this often; 0 never. Min 1 s. Default: the
   * informer's (its factory's resyncPeriodMs), else never.
   */
  resyncPeriodMs?: number;
}

export interface HandlerRegistration {
  /** The handler has been given (and has finished handling) the whole initial list. */
  hasSynced(): boolean;
  remove(): void;
}

type Notification<T extends KubeObject> =
  | { kind: 'add'; obj: T; initial: boolean }
  | { kind: 'update'; old: T; obj: T }
  | { kind: 'delete'; obj: T | DeletedFinalStateUnknown<T> }
  | { kind: 'synced' };

const minResyncPeriodMs = 1000;
/** A long run of synchronous handler calls yields to I/O this often. */
const yieldEvery = 256;

/** One handler with its own unbounded FIFO, drained serially, so a slow handler delays only itself. */
class Listener<T extends KubeObject> {
  private buf: (Notification<T> | undefined)[] = [];
  private head = 0;
  private draining = false;
  synced = false;
  stopped = false;
  nextResyncAt = Infinity;

  constructor(
    readonly handler: EventHandler<T>,
    readonly resyncPeriodMs: number,
    private readonly log: RuntimeLogger,
    private readonly resource: string,
  ) {}

  push(n: Notification<T>): void {
    if (this.stopped) return;
    this.buf.push(n);
    if (!this.draining) {
      this.draining = true;
      // Start after the current cache update has finished, never inside it.
      setImmediate(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    let sinceYield = 0;
    while (this.head < this.buf.length && !this.stopped) {
      const n = this.buf[this.head]!;
      this.buf[this.head++] = undefined;
      if (this.head >= 1024 && this.head * 2 >= this.buf.length) {
        this.buf = this.buf.slice(this.head);
        this.head = 0;
      }
      try {
        const r = this.dispatch(n);
        if (r) {
          await r;
          sinceYield = 0;
        } else if (++sinceYield >= yieldEvery) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          sinceYield = 0;
        }
      } catch (err) {
        this.log.error({ resource: this.resource, event: n.kind, err }, 'event handler failed');
      }
    }
    this.draining = false;
  }

  private dispatch(n: Notification<T>): void | Promise<void> {
    switch (n.kind) {
      case 'add':
        return this.handler.onAdd?.(n.obj, n.initial);
      case 'update':
        return this.handler.onUpdate?.(n.old, n.obj);
      case 'delete':
        return this.handler.onDelete?.(n.obj);
      case 'synced':
        this.synced = true;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// SharedIndexInformer

export interface ReflectorTuning {
  pageSize?: number;
  minWatchTimeoutSeconds?: number;
  inactivityTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
}

export interface InformerOptions<T extends KubeObject> {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Record<string, IndexFunc<T>>;
  clock?: Clock;
  random?: () => number;
  logger?: RuntimeLogger;
  reflector?: ReflectorTuning;
  /** Resync period of handlers registered without one (HandlerOptions.resyncPeriodMs). */
  defaultResyncPeriodMs?: number;
}

export class SharedIndexInformer<T extends KubeObject> {
  readonly lister: Lister<T>;
  private readonly indexer: Indexer<T>;
  private readonly listeners = new Set<Listener<T>>();
  private readonly reflector: Reflector<T>;
  private readonly clock: Clock;
  private readonly log: RuntimeLogger;
  private synced = false;
  private started = false;
  private stopped = false;
  private syncWaiters: (() => void)[] = [];
  /** The newest relist() not yet answered. */
  private relisting: Promise<boolean> | undefined;
  private resyncTimer: Timer | undefined;
  private readonly defaultResyncPeriodMs: number;

  constructor(
    client: ListerWatcher,
    readonly type: ResourceType,
    opts: InformerOptions<T> = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger ?? logger;
    this.defaultResyncPeriodMs = opts.defaultResyncPeriodMs ?? 0;
    this.indexer = new Indexer<T>(opts.indexers);
    this.lister = makeLister(this.indexer);
    const store: ReflectorStore<T> = {
      replace: (items) => this.replace(items),
      add: (obj) => this.upsert(obj),
      update: (obj) => this.upsert(obj),
      delete: (obj) => this.remove(obj),
    };
    this.reflector = new Reflector<T>({
      ...opts.reflector,
      client,
      type,
      store,
      namespace: opts.namespace,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      clock: this.clock,
      random: opts.random,
      logger: this.log,
    });
  }

  /** Lists, then watches until the signal aborts; resolves once stopped. Runs at most once. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error(`informer for ${this.type.resource} already started`);
    this.started = true;
    try {
      await this.reflector.run(signal);
    } finally {
      this.stopped = true;
      this.resyncTimer?.cancel();
      for (const l of this.listeners) l.stopped = true;
      for (const wake of this.syncWaiters) wake();
      this.syncWaiters = [];
    }
  }

  isStarted(): boolean {
    return this.started;
  }

  /** The cache holds the complete initial list. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves true once synced, false if the signal aborts (or the informer stops) first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted || this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== wake);
        resolve(false);
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.synced);
      };
      this.syncWaiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion();
  }

  /**
   * Lists again and replaces the cache atomically: readers keep the old contents until the new list
   * is in, handlers get the difference (adds, updates, deletes as DeletedFinalStateUnknown).
   * Resolves true once a list begun after this call is in, false if the informer stops first.
   */
  relist(): Promise<boolean> {
    const answered = this.reflector.relist();
    const pending: Promise<boolean> = answered.finally(() => {
      if (this.relisting === pending) this.relisting = undefined;
    });
    this.relisting = pending;
    return answered;
  }

  /** A relist() has been asked for and its list is not in yet. */
  isRelisting(): boolean {
    return this.relisting !== undefined;
  }

  /**
   * Like waitForSync, and then until every relist() asked for so far is in: resolves true once the
   * cache holds a list made after the last relist request.
   */
  async waitForRelisted(signal?: AbortSignal): Promise<boolean> {
    if (!(await this.waitForSync(signal))) return false;
    while (this.relisting) {
      if (!(await untilAborted(this.relisting, signal))) return false;
    }
    return true;
  }

  hasIndexer(name: string): boolean {
    return this.indexer.hasIndexer(name);
  }

  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.indexer.addIndexers(indexers);
  }

  /**
   * Registers a handler. Added after the initial list, it first gets every cached object as
   * onAdd(obj, true), like the handlers that were there from the start.
   */
  addEventHandler(handler: EventHandler<T>, opts: HandlerOptions = {}): HandlerRegistration {
    const requested = opts.resyncPeriodMs ?? this.defaultResyncPeriodMs;
    const period = requested ? Math.max(minResyncPeriodMs, requested) : 0;
    const listener = new Listener<T>(handler, period, this.log, this.type.resource);
    this.listeners.add(listener);
    if (this.synced) {
      for (const obj of this.indexer.values()) listener.push({ kind: 'add', obj, initial: true });
      listener.push({ kind: 'synced' });
      this.scheduleResync(listener);
    }
    return {
      hasSynced: () => listener.synced,
      remove: () => {
        listener.stopped = true;
        this.listeners.delete(listener);
      },
    };
  }

  // --- store side (fed by the reflector, which has dropped managedFields already) -----------------

  private upsert(raw: T): void {
    const obj = cached(raw);
    const key = objectKey(obj);
    const old = this.indexer.get(key);
    this.indexer.set(key, obj);
    this.distribute(old ? { kind: 'update', old, obj } : { kind: 'add', obj, initial: false });
  }

  private remove(raw: T): void {
    const key = objectKey(raw);
    if (!this.indexer.get(key)) return;
    this.indexer.delete(key);
    this.distribute({ kind: 'delete', obj: cached(raw) });
  }

  private replace(items: T[]): void {
    const initial = !this.synced;
    const fresh = new Map<string, T>();
    for (const raw of items) {
      const obj = cached(raw);
      fresh.set(objectKey(obj), obj);
    }
    const gone: [string, T][] = [];
    for (const [key, old] of this.indexer.entries()) {
      if (!fresh.has(key)) gone.push([key, old]);
    }
    for (const [key, obj] of fresh) {
      const old = this.indexer.get(key);
      if (!old) {
        this.indexer.set(key, obj);
        this.distribute({ kind: 'add', obj, initial });
      } else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        this.indexer.set(key, obj);
        this.distribute({ kind: 'update', old, obj });
      }
    }
    for (const [key, old] of gone) {
      this.indexer.delete(key);
      this.distribute({ kind: 'delete', obj: new DeletedFinalStateUnknown(key, old) });
    }
    if (initial) {
      this.synced = true;
      this.distribute({ kind: 'synced' });
      for (const wake of this.syncWaiters) wake();
      this.syncWaiters = [];
      for (const l of this.listeners) this.scheduleResync(l);
    }
  }

  private distribute(n: Notification<T>): void {
    for (const l of this.listeners) l.push(n);
  }

  // --- resync ----------------------------------------------------------------------------------

  private scheduleResync(listener: Listener<T>): void {
    if (!listener.resyncPeriodMs || this.stopped) return;
    listener.nextResyncAt = this.clock.now() + listener.resyncPeriodMs;
    this.armResyncTimer();
  }

  private armResyncTimer(): void {
    this.resyncTimer?.cancel();
    this.resyncTimer = undefined;
    let next = Infinity;
    for (const l of this.listeners) next = Math.min(next, l.nextResyncAt);
    if (next === Infinity || this.stopped) return;
    this.resyncTimer = this.clock.setTimer(next - this.clock.now(), () => this.resync());
  }

  private resync(): void {
    const now = this.clock.now();
    for (const l of this.listeners) {
      if (l.nextResyncAt > now) continue;
      for (const obj of this.indexer.values()) l.push({ kind: 'update', old: obj, obj });
      l.nextResyncAt = now + l.resyncPeriodMs;
    }
    this.armResyncTimer();
  }
}

/** promise's value, or false once signal aborts first. */
function untilAborted(promise: Promise<boolean>, signal?: AbortSignal): Promise<boolean> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

/** What a reader of a shared informer may do with it (controllers, webhooks): never run or stop it. */
export type Informer<T extends KubeObject> = Pick<
  SharedIndexInformer<T>,
  'type' | 'lister' | 'hasSynced' | 'waitForSync' | 'addEventHandler' | 'addIndexers' | 'lastSyncResourceVersion'
>;

/** Where controllers get their informers: the process's factory, or one leadership term's scope of it. */
export interface InformerSource {
  informerFor<T extends KubeObject>(type: ResourceType, selector?: InformerSelector): Informer<T>;
  syncedInformerFor<T extends KubeObject>(type: ResourceType, selector?: InformerSelector, timeoutMs?: number): Promise<Informer<T>>;
}

/**
 * One user's view of a shared informer (InformerScope): handlers registered through it are removed
 * when the scope closes, and it counts as synced only while no relist is pending (a new leadership
 * term never acts on a cache that may have missed the gap before the relist at the end of the last).
 */
class ScopedInformer<T extends KubeObject> implements Informer<T> {
  constructor(
    private readonly informer: SharedIndexInformer<T>,
    private readonly scope: InformerScope,
  ) {}

  get type(): ResourceType {
    return this.informer.type;
  }

  get lister(): Lister<T> {
    return this.informer.lister;
  }

  hasSynced(): boolean {
    return this.informer.hasSynced() && !this.informer.isRelisting();
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return this.informer.waitForRelisted(signal);
  }

  lastSyncResourceVersion(): string {
    return this.informer.lastSyncResourceVersion();
  }

  addEventHandler(handler: EventHandler<T>, opts?: HandlerOptions): HandlerRegistration {
    return this.scope.track(() => this.informer.addEventHandler(handler, opts));
  }

  /** An index of a name already there was added by an earlier term running the same code: kept. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.informer.addIndexers(Object.fromEntries(Object.entries(indexers).filter(([name]) => !this.informer.hasIndexer(name))));
  }
}

/**
 * The informers one leadership term's controllers use, taken from the process's factory (one cache
 * and one watch per resource type and selector, shared with the webhooks and with every other term).
 * close() removes every handler registered through it; the informers keep running.
 */
export class InformerScope implements InformerSource {
  private readonly views = new Map<SharedIndexInformer<KubeObject>, ScopedInformer<KubeObject>>();
  private readonly registrations = new Set<HandlerRegistration>();
  private closed = false;

  constructor(
    private readonly factory: SharedInformerFactory,
    private readonly clock?: Clock,
  ) {}

  informerFor<T extends KubeObject>(type: ResourceType, selector: InformerSelector = {}): Informer<T> {
    const informer = this.factory.informerFor<KubeObject>(type, selector);
    let view = this.views.get(informer);
    if (!view) this.views.set(informer, (view = new ScopedInformer(informer, this)));
    return view as unknown as Informer<T>;
  }

  async syncedInformerFor<T extends KubeObject>(
    type: ResourceType,
    selector: InformerSelector = {},
    timeoutMs?: number,
  ): Promise<Informer<T>> {
    const view = this.informerFor<T>(type, selector);
    if (!(await waitForCacheSync([view], { timeoutMs, clock: this.clock }))) {
      throw new Error(`the cache of ${resourceName(type)} stopped before it synced`);
    }
    return view;
  }

  /** True once every informer this scope handed out so far is synced (and relisted, if asked). */
  waitForCacheSync(signal?: AbortSignal, timeoutMs?: number): Promise<boolean> {
    return waitForCacheSync([...this.views.values()], { signal, timeoutMs, clock: this.clock });
  }

  /** Handlers registered through the scope and not yet removed. */
  handlerCount(): number {
    return this.registrations.size;
  }

  /** Removes every handler registered through the scope; later registrations are removed at once. */
  close(): void {
    this.closed = true;
    for (const registration of this.registrations) registration.remove();
  }

  /** @internal Registers through register() and keeps the registration until close() or remove(). */
  track(register: () => HandlerRegistration): HandlerRegistration {
    const inner = register();
    const registration: HandlerRegistration = {
      hasSynced: () => inner.hasSynced(),
      remove: () => {
        inner.remove();
        this.registrations.delete(registration);
      },
    };
    if (this.closed) inner.remove();
    else this.registrations.add(registration);
    return registration;
  }
}

// ---------------------------------------------------------------------------------------------
// SharedInformerFactory

export interface InformerSelector {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface FactoryOptions {
  clock?: Clock;
  random?: () => number;
  logger?: RuntimeLogger;
  reflector?: ReflectorTuning;
  /**
   * Resync period of every handler registered without one of its own (--sync-period): each cached
   * object is re-delivered as onUpdate(obj, obj) this often, so every object is reconciled
   * periodically even when nothing changes. 0 or unset: never.
   */
  resyncPeriodMs?: number;
}

/** Caches that did not sync in time; the message names their resources (start-up fails with it). */
export class CacheSyncTimeoutError extends Error {
  constructor(
    readonly resources: readonly string[],
    timeoutMs: number,
  ) {
    super(`timed out after ${timeoutMs}ms waiting for the cache of ${resources.join(', ')} to sync`);
    this.name = 'CacheSyncTimeoutError';
  }
}

/** What waitForCacheSync needs of an informer. */
export interface SyncableCache {
  readonly type: ResourceType;
  waitForSync(signal?: AbortSignal): Promise<boolean>;
  hasSynced(): boolean;
}

/**
 * Resolves true once every cache has synced, false if the signal aborts first; rejects with a
 * CacheSyncTimeoutError naming the caches still unsynced after timeoutMs (when given and > 0).
 */
export async function waitForCacheSync(
  caches: readonly SyncableCache[],
  opts: { signal?: AbortSignal; timeoutMs?: number; clock?: Clock } = {},
): Promise<boolean> {
  if (caches.every((c) => c.hasSynced())) return true;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop.abort();
  let timedOut = false;
  const timer =
    opts.timeoutMs && opts.timeoutMs > 0
      ? (opts.clock ?? realClock).setTimer(opts.timeoutMs, () => {
          timedOut = true;
          stop.abort();
        })
      : undefined;
  try {
    const synced = await Promise.all(caches.map((c) => c.waitForSync(stop.signal)));
    if (synced.every(Boolean)) return true;
    if (timedOut)
      throw new CacheSyncTimeoutError(
        caches.filter((c) => !c.hasSynced()).map((c) => resourceName(c.type)),
        opts.timeoutMs!,
      );
    return false;
  } finally {
    timer?.cancel();
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/** `pods`, `clonesets.apps.kruise.io`: how a cache is named in errors. */
const resourceName = (t: ResourceType) => (t.group ? `${t.resource}.${t.group}` : t.resource);

/** Hands out one shared informer per (resource type, namespace, selectors). */
export class SharedInformerFactory implements InformerSource {
  private readonly informers = new Map<string, SharedIndexInformer<KubeObject>>();
  private readonly running: Promise<void>[] = [];
  private signal: AbortSignal | undefined;

  constructor(
    private readonly client: ListerWatcher,
    private readonly opts: FactoryOptions = {},
  ) {}

  /**
   * The informer for type (created on first request). Once the factory has started, new informers
   * start right away. Custom indexers are added with informer.addIndexers.
   */
  informerFor<T extends KubeObject>(type: ResourceType, selector: InformerSelector = {}): SharedIndexInformer<T> {
    const id = [resourceTypeKey(type), selector.namespace ?? '', selector.labelSelector ?? '', selector.fieldSelector ?? ''].join('|');
    let informer = this.informers.get(id);
    if (!informer) {
      const { resyncPeriodMs, ...opts } = this.opts;
      informer = new SharedIndexInformer<KubeObject>(this.client, type, { ...opts, ...selector, defaultResyncPeriodMs: resyncPeriodMs });
      this.informers.set(id, informer);
      if (this.signal) this.runOne(informer, this.signal);
    }
    // One informer per resource type and selector, shared by every caller: the caller names the
    // object type the API serves for that resource (the cache cannot know it).
    return informer as unknown as SharedIndexInformer<T>;
  }

  /** Starts every informer created so far, and any created later, until the signal aborts. */
  start(signal: AbortSignal): void {
    if (this.signal) throw new Error('informer factory already started');
    this.signal = signal;
    for (const informer of this.informers.values()) this.runOne(informer, signal);
  }

  /**
   * True once every informer created so far has synced; false if the signal aborts first. With a
   * timeout, rejects with a CacheSyncTimeoutError naming the informers not synced by then.
   */
  waitForCacheSync(signal?: AbortSignal, timeoutMs?: number): Promise<boolean> {
    return waitForCacheSync([...this.informers.values()], { signal, timeoutMs, clock: this.opts.clock });
  }

  /**
   * The informer for type once its cache has synced: for informers a controller needs only for
   * some objects, created (and started) on first use, never read before their initial list is in.
   * Rejects with a CacheSyncTimeoutError after timeoutMs.
   */
  async syncedInformerFor<T extends KubeObject>(
    type: ResourceType,
    selector: InformerSelector = {},
    timeoutMs?: number,
  ): Promise<SharedIndexInformer<T>> {
    const informer = this.informerFor<T>(type, selector);
    if (!(await waitForCacheSync([informer], { timeoutMs, clock: this.opts.clock }))) {
      throw new Error(`the cache of ${resourceName(type)} stopped before it synced`);
    }
    return informer;
  }

  /** A view for one user (a leadership term) whose handlers can all be removed at once. */
  scope(): InformerScope {
    return new InformerScope(this, this.opts.clock);
  }

  /**
   * Relists every informer created so far (SharedIndexInformer.relist). Resolves true once all have
   * (false if one stopped first).
   */
  async relist(): Promise<boolean> {
    const answers = await Promise.all([...this.informers.values()].map((informer) => informer.relist()));
    return answers.every(Boolean);
  }

  /** Resolves when every started informer has stopped (after the start signal aborted). */
  async whenStopped(): Promise<void> {
    await Promise.all(this.running);
  }

  private runOne(informer: SharedIndexInformer<KubeObject>, signal: AbortSignal): void {
    this.running.push(informer.run(signal));
  }
}
