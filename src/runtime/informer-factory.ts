// The process's shared informers (client-go's SharedInformerFactory): one informer per resource type
// and selector, what a reader may do with one (Informer), a leadership term's scope of them, and
// waiting for caches to sync.

import { realClock, type Clock } from '../util/clock.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { resourceTypeKey, type ResourceType } from './resources.ts';
import type { ListerWatcher, RuntimeLogger } from './reflector.ts';
import type { IndexFunc, Lister } from './store.ts';
import { SharedIndexInformer, type EventHandler, type HandlerOptions, type HandlerRegistration, type ReflectorTuning } from './informer.ts';

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
  private readonly informers = new Map<string, { informer: SharedIndexInformer<KubeObject>; selector: InformerSelector }>();
  /** Each started informer's own stop, so that one can be stopped alone (stopInformers). */
  private readonly stops = new Map<SharedIndexInformer<KubeObject>, AbortController>();
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
    let informer = this.informers.get(id)?.informer;
    if (!informer) {
      const { resyncPeriodMs, ...opts } = this.opts;
      informer = new SharedIndexInformer<KubeObject>(this.client, type, { ...opts, ...selector, defaultResyncPeriodMs: resyncPeriodMs });
      this.informers.set(id, { informer, selector });
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
    for (const { informer } of this.informers.values()) this.runOne(informer, signal);
  }

  /**
   * Stops and forgets the informers whose resource type and selector `match` (a cache no reader will
   * use again: its memory and its watch are given back); a later informerFor of the same builds a new
   * one. Their readers must have removed their handlers first. Returns how many were stopped.
   */
  stopInformers(match: (type: ResourceType, selector: InformerSelector) => boolean): number {
    let stopped = 0;
    for (const [id, { informer, selector }] of this.informers) {
      if (!match(informer.type, selector)) continue;
      this.informers.delete(id);
      this.stops.get(informer)?.abort();
      this.stops.delete(informer);
      stopped++;
    }
    return stopped;
  }

  /**
   * True once every informer created so far has synced; false if the signal aborts first. With a
   * timeout, rejects with a CacheSyncTimeoutError naming the informers not synced by then.
   */
  waitForCacheSync(signal?: AbortSignal, timeoutMs?: number): Promise<boolean> {
    return waitForCacheSync(
      [...this.informers.values()].map((i) => i.informer),
      { signal, timeoutMs, clock: this.opts.clock },
    );
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
    const answers = await Promise.all([...this.informers.values()].map(({ informer }) => informer.relist()));
    return answers.every(Boolean);
  }

  /** Resolves when every started informer has stopped (after the start signal aborted). */
  async whenStopped(): Promise<void> {
    await Promise.all(this.running);
  }

  private runOne(informer: SharedIndexInformer<KubeObject>, signal: AbortSignal): void {
    const stop = new AbortController();
    this.stops.set(informer, stop);
    this.running.push(informer.run(AbortSignal.any([signal, stop.signal])));
  }
}
