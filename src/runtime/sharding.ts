// A shard's side of the sharded manager (docs/sharding.md): the informers its sharded controllers
// read (only the objects labelled with its shard — on watches of their own, or on the leader's
// caches while this replica has them; a workload held back until the caches of what it owns have
// caught up with its move), the client that labels what they create, and the drain handshake that
// lets go of a workload the sharder moves elsewhere.

import type { KubeObject } from '../apis/core-objects.ts';
import { realClock, type Clock, type Timer } from '../util/clock.ts';
import { parseSelector } from '../util/labelselector.ts';
import { resourceVersionAtLeast, type ShardLabels } from '../util/shard-ring.ts';
import type { KubeClient } from './client.ts';
import { PatchType } from './client.ts';
import { Controller } from './controller.ts';
import type { Informer, InformerSelector, InformerSource } from './informer-factory.ts';
import { waitForCacheSync } from './informer-factory.ts';
import type { EventHandler, HandlerOptions, HandlerRegistration } from './informer.ts';
import type { Logger } from './log.ts';
import type { ResourceType } from './resources.ts';
import { unwrapDeleted, type LabelMatcher, type Lister } from './store.ts';

/** How often a workload held back for its children's caches is looked at again. */
export const CATCH_UP_POLL_MS = 50;

export interface ShardScope {
  labels: ShardLabels;
  shardId: string;
  /** The sharded workloads' resources: only this shard's, not draining, and held back until caught up. */
  workloads: readonly ResourceType[];
  /** What the workloads own (pods, PVCs, revisions): only this shard's. */
  children: readonly ResourceType[];
}

const sameResource = (a: ResourceType, b: ResourceType) => a.resource === b.resource && a.group === b.group;
const withSelector = (selector: InformerSelector, extra: string): InformerSelector => ({
  ...selector,
  labelSelector: selector.labelSelector ? `${selector.labelSelector},${extra}` : extra,
});

/** The selector of this shard's objects: its workloads without the drain label, or their children. */
export function shardSelector(scope: ShardScope, kind: 'workload' | 'child' | 'draining'): string {
  const own = `${scope.labels.shard}=${scope.shardId}`;
  if (kind === 'workload') return `${own},!${scope.labels.drain}`;
  if (kind === 'draining') return `${own},${scope.labels.drain}`;
  return own;
}

/** Whether an informer's selector is one of this shard's (its watches of its own objects). */
export function isShardSelected(scope: ShardScope, selector: InformerSelector): boolean {
  return !!selector.labelSelector?.split(',').includes(`${scope.labels.shard}=${scope.shardId}`);
}

async function syncedFrom<T extends KubeObject>(
  source: InformerSource,
  type: ResourceType,
  selector: InformerSelector | undefined,
  timeoutMs: number | undefined,
  clock: Clock,
): Promise<Informer<T>> {
  const informer = source.informerFor<T>(type, selector);
  if (!(await waitForCacheSync([informer], { timeoutMs, clock }))) {
    throw new Error(`the cache of ${type.resource} stopped before it synced`);
  }
  return informer;
}

/**
 * The informers of a shard's controllers: the sharded resources through the shard's selectors (the
 * API server filters, or — on the leader's caches — a FilteredInformer; either way the controllers
 * see this shard's part only), everything else as it is.
 */
export class ShardInformers implements InformerSource {
  private readonly childInformers = new Map<string, Informer<KubeObject>>();

  constructor(
    private readonly inner: InformerSource,
    private readonly scope: ShardScope,
    private readonly clock: Clock = realClock,
  ) {}

  informerFor<T extends KubeObject>(type: ResourceType, selector: InformerSelector = {}): Informer<T> {
    if (this.scope.workloads.some((w) => sameResource(w, type))) {
      const informer = this.inner.informerFor<T>(type, withSelector(selector, shardSelector(this.scope, 'workload')));
      return new CaughtUpInformer(informer, (obj) => this.caughtUp(obj), this.clock);
    }
    if (this.scope.children.some((c) => sameResource(c, type))) {
      const informer = this.inner.informerFor<T>(type, withSelector(selector, shardSelector(this.scope, 'child')));
      this.childInformers.set(type.resource, informer as unknown as Informer<KubeObject>);
      return informer;
    }
    return this.inner.informerFor<T>(type, selector);
  }

  syncedInformerFor<T extends KubeObject>(type: ResourceType, selector?: InformerSelector, timeoutMs?: number): Promise<Informer<T>> {
    return syncedFrom(this, type, selector, timeoutMs, this.clock);
  }

  /**
   * Whether this shard's caches of a workload's children have come as far as the sharder's
   * relabelling of them (the workload's children annotation); true without one.
   */
  caughtUp(obj: KubeObject): boolean {
    const raw = obj.metadata.annotations?.[this.scope.labels.children];
    if (!raw) return true;
    let versions: Record<string, unknown>;
    try {
      versions = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return true;
    }
    for (const [resource, rv] of Object.entries(versions)) {
      const informer = this.childInformers.get(resource);
      if (informer && typeof rv === 'string' && !resourceVersionAtLeast(informer.lastSyncResourceVersion(), rv)) return false;
    }
    return true;
  }
}

/**
 * An informer's objects that `visible` accepts: its lister shows only those; the rest (sync, indexers)
 * is the inner informer's. Subclasses say what its handlers see.
 */
abstract class VisibleInformer<T extends KubeObject> implements Informer<T> {
  readonly lister: Lister<T>;

  constructor(
    protected readonly inner: Informer<T>,
    protected readonly visible: (obj: T) => boolean,
  ) {
    const show = (obj: T | undefined) => (obj && visible(obj) ? obj : undefined);
    const lister = inner.lister;
    this.lister = {
      get: ((a: string, b?: string) => show(b === undefined ? lister.get(a) : lister.get(a, b))) as Lister<T>['get'],
      list: (namespace, selector) => lister.list(namespace, selector).filter(visible),
      byIndex: (name, value) => lister.byIndex(name, value).filter(visible),
    };
  }

  get type(): ResourceType {
    return this.inner.type;
  }

  hasSynced(): boolean {
    return this.inner.hasSynced();
  }

  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return this.inner.waitForSync(signal);
  }

  lastSyncResourceVersion(): string {
    return this.inner.lastSyncResourceVersion();
  }

  addIndexers(indexers: Parameters<Informer<T>['addIndexers']>[0]): void {
    this.inner.addIndexers(indexers);
  }

  abstract addEventHandler(handler: EventHandler<T>, opts?: HandlerOptions): HandlerRegistration;
}

/**
 * A workload informer whose readers do not see a workload until its children's caches have caught
 * up: its lister hides it, and its handlers get its add once it is visible.
 */
class CaughtUpInformer<T extends KubeObject> extends VisibleInformer<T> {
  constructor(
    inner: Informer<T>,
    visible: (obj: T) => boolean,
    private readonly clock: Clock,
  ) {
    super(inner, visible);
  }

  addEventHandler(handler: EventHandler<T>, opts?: HandlerOptions): HandlerRegistration {
    const held = new Map<string, T>();
    let timer: Timer | undefined;
    const keyOf = (obj: T) => `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
    const release = () => {
      timer = undefined;
      for (const [key, obj] of held) {
        if (!this.visible(obj)) continue;
        held.delete(key);
        void handler.onAdd?.(obj, false);
      }
      if (held.size) timer = this.clock.setTimer(CATCH_UP_POLL_MS, release);
    };
    const hold = (obj: T) => {
      held.set(keyOf(obj), obj);
      timer ??= this.clock.setTimer(CATCH_UP_POLL_MS, release);
    };
    const registration = this.inner.addEventHandler(
      {
        onAdd: (obj, initial) => (this.visible(obj) ? handler.onAdd?.(obj, initial) : hold(obj)),
        onUpdate: (old, obj) => {
          if (!this.visible(obj)) return hold(obj);
          if (held.delete(keyOf(obj))) return handler.onAdd?.(obj, false);
          return handler.onUpdate?.(old, obj);
        },
        onDelete: (obj) => {
          if ('metadata' in obj) held.delete(keyOf(obj));
          return handler.onDelete?.(obj);
        },
      },
      opts,
    );
    return {
      hasSynced: () => registration.hasSynced(),
      remove: () => {
        timer?.cancel();
        held.clear();
        registration.remove();
      },
    };
  }
}

/**
 * Label-selected informers of `types` served from the source's unselected ones, filtered here: on a
 * replica that holds every pod anyway (the leader's caches), a shard's selected watches would hold
 * its part a second time. Other requests pass through.
 */
export class FilteringInformers implements InformerSource {
  constructor(
    private readonly inner: InformerSource,
    private readonly types: readonly ResourceType[],
    private readonly clock: Clock = realClock,
  ) {}

  informerFor<T extends KubeObject>(type: ResourceType, selector: InformerSelector = {}): Informer<T> {
    const { labelSelector, ...unselected } = selector;
    if (!labelSelector || !this.types.some((t) => sameResource(t, type))) return this.inner.informerFor<T>(type, selector);
    return new FilteredInformer(this.inner.informerFor<T>(type, unselected), parseSelector(labelSelector));
  }

  syncedInformerFor<T extends KubeObject>(type: ResourceType, selector?: InformerSelector, timeoutMs?: number): Promise<Informer<T>> {
    return syncedFrom(this, type, selector, timeoutMs, this.clock);
  }
}

/**
 * An informer's objects that a label selector matches, as a selected watch would give them: the
 * lister shows only those, and the handlers see an object whose labels change into the selector as
 * an add and out of it as a delete (of its last matching state, as the API server's watch sends it).
 */
export class FilteredInformer<T extends KubeObject> extends VisibleInformer<T> {
  constructor(inner: Informer<T>, selector: LabelMatcher) {
    super(inner, (obj) => selector.matches(obj.metadata.labels));
  }

  addEventHandler(handler: EventHandler<T>, opts?: HandlerOptions): HandlerRegistration {
    const matches = this.visible;
    return this.inner.addEventHandler(
      {
        onAdd: (obj, initial) => (matches(obj) ? handler.onAdd?.(obj, initial) : undefined),
        onUpdate: (old, obj) => {
          const was = matches(old);
          if (matches(obj)) return was ? handler.onUpdate?.(old, obj) : handler.onAdd?.(obj, false);
          return was ? handler.onDelete?.(old) : undefined;
        },
        onDelete: (obj) => (matches(unwrapDeleted(obj)) ? handler.onDelete?.(obj) : undefined),
      },
      opts,
    );
  }
}

/** A client whose creations carry `labels` (a shard's controllers label what they create with their shard). */
export function labellingCreates(client: KubeClient, labels: Record<string, string>): KubeClient {
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'create') {
        return <T extends KubeObject>(type: ResourceType, obj: T, opts?: Parameters<KubeClient['create']>[2]) =>
          target.create<T>(type, { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, ...labels } } }, opts);
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export interface DrainedWorkload {
  type: ResourceType;
  /** The shard's informer of these workloads (ShardInformers: draining ones leave it). */
  informer: Informer<KubeObject>;
  /** Whether the workload's controller is in a round of this key (`namespace/name`). */
  busy(key: string): boolean;
}

/**
 * The shard's half of the drain handshake: for each of its workloads the sharder marked with the
 * drain label, once the workload has left the controller's cache and no round of it is in flight,
 * one patch removes the shard and drain labels (at the resourceVersion seen: a conflict means it
 * changed, and it is looked at again). From then on nothing of it is reconciled here.
 */
export class ShardDrainer {
  private readonly controller: Controller;
  private readonly draining = new Map<string, { workload: DrainedWorkload; informer: Informer<KubeObject> }>();

  constructor(
    private readonly opts: {
      client: KubeClient;
      informers: InformerSource;
      scope: ShardScope;
      workloads: readonly DrainedWorkload[];
      logger: Logger;
    },
  ) {
    this.controller = new Controller({ name: 'shard-drain', reconcile: (key) => this.reconcile(key), logger: opts.logger });
    for (const workload of opts.workloads) {
      const informer = opts.informers.informerFor<KubeObject>(workload.type, { labelSelector: shardSelector(opts.scope, 'draining') });
      this.draining.set(workload.type.resource, { workload, informer });
      const enqueue = (obj: KubeObject) =>
        this.controller.queue.add(`${workload.type.resource}|${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`);
      informer.addEventHandler({ onAdd: enqueue, onUpdate: (_, obj) => enqueue(obj) });
    }
  }

  run(signal: AbortSignal): Promise<void> {
    return this.controller.runAfterSync(
      signal,
      [...this.draining.values()].map((d) => d.informer),
    );
  }

  private async reconcile(queued: string): Promise<{ requeueAfterMs?: number }> {
    const [resource, key] = queued.split('|') as [string, string];
    const entry = this.draining.get(resource)!;
    const [namespace, name] = key.split('/') as [string, string];
    const obj = namespace ? entry.informer.lister.get(namespace, name) : entry.informer.lister.get(name);
    if (!obj) return {};
    // Still in the controller's cache, or a round of it in flight: not yet.
    const inCache = namespace ? entry.workload.informer.lister.get(namespace, name) : entry.workload.informer.lister.get(name);
    if (inCache || entry.workload.busy(key)) return { requeueAfterMs: CATCH_UP_POLL_MS };
    const { labels } = this.opts.scope;
    await this.opts.client.patch(
      entry.workload.type,
      name,
      { metadata: { resourceVersion: obj.metadata.resourceVersion, labels: { [labels.shard]: null, [labels.drain]: null } } },
      { namespace: namespace || undefined, patchType: PatchType.Merge },
    );
    this.opts.logger.info({ object: key }, 'drained: workload handed back to the sharder');
    return {};
  }
}
