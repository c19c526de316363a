// Kubernetes Events (events.k8s.io/v1) as client-go's tools/events broadcaster writes them.
//
// Aggregation: events with the same (regarding, related, reason, action, reportingController,
// reportingInstance, type) are "isomorphic". The first is created; the first repeat turns it into a
// series (count 2) and patches it at once; further repeats only bump the cached count, which is
// written by the periodic tick (every refreshInterval) and when the series ends (no repeat for
// finishTime). A singleton not repeated within finishTime leaves the cache, so a later occurrence
// starts a new Event.
//
// Recording never throws into the caller and never blocks it: writes happen in the background,
// failures are logged, and a per-object token bucket (client-go's spam filter: burst 25, one token
// per 5 minutes) drops floods from one object before they reach the API server.

import type { Event as KubeEvent, EventType, ObjectReference, KubeObject } from '../apis/core-objects.ts';
import { realClock, type Clock, type Timer } from '../util/clock.ts';
import { formatMicroTime } from './leaderelection.ts';
import { isNotFound, isAlreadyExists, isNamespaceTerminating, StatusError } from './errors.ts';
import { logger as rootLogger, type Logger } from './log.ts';
import type { EventSink } from './event-sink.ts';

/** What controllers record through. */
export interface EventRecorder {
  /**
   * Records that `action` was taken on (or failed for) `regarding`, for the stated reason. `note`
   * is the human-readable message (cut to 1 kB). Never throws.
   */
  event(
    regarding: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject | ObjectReference,
  ): void;
}

export const REPORTING_CONTROLLER = 'kruise-manager';

export interface EventRecorderOptions {
  sink: EventSink;
  /** This process, e.g. kruise-manager-<pod name>; at most 128 characters. */
  reportingInstance: string;
  reportingController?: string;
  clock?: Clock;
  logger?: Logger;
  /** A series with no repeat for this long is finished; default 6 min (client-go finishTime). */
  finishTime?: number;
  /** How often growing series counts are written and finished series dropped; default 30 s. */
  refreshInterval?: number;
  /** Isomorphic-event cache bound; the least recently seen entry is evicted. Default 4096. */
  maxCacheSize?: number;
  /** Per-object spam filter: burst and ms per token. Default 25 and 5 min (client-go record). */
  spamBurst?: number;
  spamRefillMs?: number;
  /** Writes that fail for want of the server are retried this often, retryDelay apart. Default 12 × 10 s. */
  maxTries?: number;
  retryDelay?: number;
  /** Writes in flight or waiting; further events are dropped. Default 1000 (client-go maxQueuedEvents). */
  maxQueued?: number;
}

const NOTE_LIMIT = 1024;
const FIELD_LIMIT = 128;

interface CacheEntry {
  event: KubeEvent;
  /** When this key was last recorded (ms). */
  lastSeen: number;
  /** The series count changed since it was last written. */
  dirty: boolean;
}

interface Bucket {
  tokens: number;
  updated: number;
}

export class KubeEventRecorder implements EventRecorder {
  private readonly sink: EventSink;
  private readonly reportingInstance: string;
  private readonly reportingController: string;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly finishTime: number;
  private readonly refreshInterval: number;
  private readonly maxCacheSize: number;
  private readonly spamBurst: number;
  private readonly spamRefillMs: number;
  private readonly maxTries: number;
  private readonly retryDelay: number;
  private readonly maxQueued: number;

  private readonly cache = new Map<string, CacheEntry>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: Timer | undefined;
  private closed = false;
  private seq = 0;

  constructor(opts: EventRecorderOptions) {
    this.sink = opts.sink;
    this.reportingInstance = opts.reportingInstance.slice(0, FIELD_LIMIT);
    this.reportingController = opts.reportingController ?? REPORTING_CONTROLLER;
    this.clock = opts.clock ?? realClock;
    this.log = (opts.logger ?? rootLogger).child({ component: 'events' });
    this.finishTime = opts.finishTime ?? 6 * 60_000;
    this.refreshInterval = opts.refreshInterval ?? 30_000;
    this.maxCacheSize = opts.maxCacheSize ?? 4096;
    this.spamBurst = opts.spamBurst ?? 25;
    this.spamRefillMs = opts.spamRefillMs ?? 5 * 60_000;
    this.maxTries = opts.maxTries ?? 12;
    this.retryDelay = opts.retryDelay ?? 10_000;
    this.maxQueued = opts.maxQueued ?? 1000;
  }

  event(
    regarding: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject | ObjectReference,
  ): void {
    try {
      this.record(regarding, type, reason, action, note, related);
    } catch (err) {
      this.log.error({ err, reason }, 'failed to record event');
    }
  }

  /** Resolves when every write started so far has finished (or given up). */
  async flush(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** Writes pending series counts, waits for in-flight writes and stops the tick; later events are dropped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.timer?.cancel();
    this.timer = undefined;
    for (const entry of this.cache.values()) if (entry.dirty) this.writeSeries(entry);
    this.closed = true;
    await this.flush();
  }

  /** Number of isomorphic-event keys remembered. */
  cacheSize(): number {
    return this.cache.size;
  }

  private record(
    regardingIn: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    relatedIn?: KubeObject | ObjectReference,
  ): void {
    if (this.closed) return;
    const regarding = toReference(regardingIn);
    const related = relatedIn ? toReference(relatedIn) : undefined;
    if (type !== 'Normal' && type !== 'Warning') {
      this.log.error({ type, reason }, 'unsupported event type, dropping event');
      return;
    }
    if (!reason) {
      this.log.error({ regarding }, 'event without reason, dropping event');
      return;
    }
    // events.k8s.io/v1 requires an action; the reason is the closest stand-in when a caller has none.
    action ||= reason;
    if (!this.allow(regarding)) {
      this.log.debug({ regarding, reason }, 'event dropped by the per-object spam filter');
      return;
    }
    const now = this.clock.now();
    const key = isomorphicKey(regarding, related, reason, action, this.reportingController, this.reportingInstance, type);
    const cached = this.cache.get(key);
    if (cached && now - cached.lastSeen < this.finishTime) {
      this.touch(key, cached, now);
      const series = cached.event.series;
      if (series) {
        series.count++;
        series.lastObservedTime = formatMicroTime(now);
        cached.dirty = true;
        this.schedule();
        return;
      }
      cached.event.series = { count: 2, lastObservedTime: formatMicroTime(now) };
      this.writeSeries(cached);
      this.schedule();
      return;
    }
    // A finished series still owes the API server its final count.
    if (cached?.dirty) this.writeSeries(cached);
    const event = this.newEvent(regarding, related, type, reason, action, note, now);
    const entry: CacheEntry = { event, lastSeen: now, dirty: false };
    this.touch(key, entry, now);
    this.track(async () => {
      const created = await this.withRetries(() => this.sink.create(structuredClone(event)), `create event ${event.metadata.name}`);
      // Later series patches address the Event by the name the server stored.
      if (created?.metadata?.name) event.metadata.name = created.metadata.name;
    });
    this.schedule();
  }

  private newEvent(
    regarding: ObjectReference,
    related: ObjectReference | undefined,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    now: number,
  ): KubeEvent {
    // Events of cluster-scoped objects live in "default", as client-go puts them.
    const namespace = regarding.namespace || 'default';
    // Names are DNS subdomains of at most 253 characters; the suffix takes up to 17.
    const base = (regarding.name || 'event').slice(0, 236);
    const name = `${base}.${(BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`;
    const event: KubeEvent = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: formatMicroTime(now),
      reportingController: this.reportingController,
      reportingInstance: this.reportingInstance,
      action: truncate(action, FIELD_LIMIT),
      reason: truncate(reason, FIELD_LIMIT),
      regarding,
      note: truncate(note, NOTE_LIMIT),
      type,
    };
    if (related) event.related = related;
    return event;
  }

  private writeSeries(entry: CacheEntry): void {
    entry.dirty = false;
    const event = structuredClone(entry.event);
    const series = event.series!;
    this.track(async () => {
      await this.withRetries(async () => {
        try {
          return await this.sink.patchSeries(event, series);
        } catch (err) {
          // The Event may have expired (TTL) or been deleted: record it afresh, series included.
          if (!isNotFound(err)) throw err;
          const fresh = structuredClone(event);
          delete fresh.metadata.resourceVersion;
          return this.sink.create(fresh);
        }
      }, `update event series ${event.metadata.name}`);
    });
  }

  /** Runs a write with client-go's policy: API rejections are final, transport failures retried. */
  private async withRetries<T>(write: () => Promise<T>, what: string): Promise<T | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        if (err instanceof StatusError) {
          // As client-go: an Event that exists already, or whose namespace is being deleted (or
          // gone: NotFound on create), is not worth an error line per event.
          if (isAlreadyExists(err) || isNamespaceTerminating(err) || isNotFound(err))
            this.log.debug({ err }, `${what}: rejected, not retried`);
          else this.log.error({ err }, `${what} failed`);
          return undefined;
        }
        if (attempt >= this.maxTries || this.closed) {
          this.log.error({ err, attempts: attempt }, `${what} failed, giving up`);
          return undefined;
        }
        this.log.warn({ err, attempt }, `${what} failed, retrying`);
        await this.clock.sleep(this.retryDelay * (attempt === 1 ? Math.random() : 1));
      }
    }
  }

  private track(work: () => Promise<void>): void {
    if (this.inFlight.size >= this.maxQueued) {
      this.log.error('too many event writes pending, dropping event');
      return;
    }
    const p: Promise<void> = work()
      .catch((err) => this.log.error({ err }, 'event write failed'))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Token bucket per regarding object. */
  private allow(ref: ObjectReference): boolean {
    const key = `${ref.apiVersion}/${ref.kind}/${ref.namespace}/${ref.name}/${ref.uid}`;
    const now = this.clock.now();
    let b = this.buckets.get(key);
    if (!b) b = { tokens: this.spamBurst, updated: now };
    else {
      b.tokens = Math.min(this.spamBurst, b.tokens + (now - b.updated) / this.spamRefillMs);
      b.updated = now;
      this.buckets.delete(key);
    }
    this.buckets.set(key, b);
    if (this.buckets.size > this.maxCacheSize) this.buckets.delete(this.buckets.keys().next().value!);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Marks key most recently used and bounds the cache. */
  private touch(key: string, entry: CacheEntry, now: number): void {
    entry.lastSeen = now;
    this.cache.delete(key);
    this.cache.set(key, entry);
    while (this.cache.size > this.maxCacheSize) {
      const [oldestKey, oldest] = this.cache.entries().next().value!;
      if (oldest.dirty) this.writeSeries(oldest);
      this.cache.delete(oldestKey);
    }
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = this.clock.setTimer(this.refreshInterval, () => {
      this.timer = undefined;
      this.tick();
    });
  }

  /** Writes grown series, finishes quiet ones and forgets quiet singletons. */
  private tick(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.cache) {
      const quiet = now - entry.lastSeen >= this.finishTime;
      if (entry.dirty) this.writeSeries(entry);
      if (quiet) this.cache.delete(key);
    }
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.updated) / this.spamRefillMs >= this.spamBurst) this.buckets.delete(key);
    }
    if (this.cache.size) this.schedule();
  }
}

/** An ObjectReference for an object or a reference (copied, without unknown fields). */
export function toReference(o: KubeObject | ObjectReference): ObjectReference {
  const ref: ObjectReference = {};
  if ('metadata' in o && o.metadata) {
    const m = o.metadata;
    Object.assign(ref, {
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
    });
  } else {
    const r = o as ObjectReference;
    Object.assign(ref, {
      apiVersion: r.apiVersion,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      uid: r.uid,
      resourceVersion: r.resourceVersion,
      fieldPath: r.fieldPath,
    });
  }
  for (const k of Object.keys(ref) as (keyof ObjectReference)[]) if (!ref[k]) delete ref[k];
  return ref;
}

function refKey(r: ObjectReference | undefined): string {
  if (!r) return '';
  return [r.apiVersion, r.kind, r.namespace, r.name, r.uid, r.fieldPath].map((v) => v ?? '').join('\u0000');
}

function isomorphicKey(regarding: ObjectReference, related: ObjectReference | undefined, ...rest: string[]): string {
  return [refKey(regarding), refKey(related), ...rest].join('\u0001');
}

function truncate(s: string, limit: number): string {
  if (Buffer.byteLength(s) <= limit) return s;
  let out = s.slice(0, limit);
  while (Buffer.byteLength(out) > limit) out = out.slice(0, -1);
  return out;
}
