// Shared informers: one reflector per (resource type, namespace, selectors) keeps an indexed,
// read-only cache and fans events out to any number of handlers, each with its own unbounded buffer.

import { realClock, type Clock, type Timer } from '../util/clock.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import type { ResourceType } from './resources.ts';
import { logger } from './log.ts';
import { Reflector, type BackoffOptions, type ListerWatcher, type ReflectorStore, type RuntimeLogger } from './reflector.ts';
import { DeletedFinalStateUnknown, Indexer, cached, makeLister, objectKey, type IndexFunc, type Lister } from './store.ts';

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
