// List-then-watch for one resource type, feeding a store. Never gives up: every failure is followed
// by an exponential, jittered backoff and another attempt, until the AbortSignal fires.

import { realClock, type Clock } from '../util/clock.ts';
import { logger } from './log.ts';
import { withoutManagedFields } from './list-reader.ts';
import type { ListOptions, ObjectList, WatchEvent, WatchOptions } from './client.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { StatusError, isGone, isTooManyRequests } from './errors.ts';
import type { ResourceType } from './resources.ts';

/** The part of a pino logger the informer layer uses (tests pass plain objects). */
export interface RuntimeLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Receives objects without metadata.managedFields: no cache reader needs them, and they are large. */
export interface ReflectorStore<T extends KubeObject> {
  /** The complete state as of resourceVersion; whatever the store holds beyond items is gone. */
  replace(items: T[], resourceVersion: string): void;
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
}

/** What the reflector needs from a client (KubeClient provides it). */
export interface ListerWatcher {
  list<T extends KubeObject>(type: ResourceType, opts: ListOptions): Promise<ObjectList<T>>;
  watch<T extends KubeObject>(type: ResourceType, opts: WatchOptions): AsyncIterable<WatchEvent<T>>;
}

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** Adds up to jitter × delay on top of each delay. */
  jitter: number;
  /** A failure this long after the previous backoff ended starts again from initialMs. */
  resetAfterMs: number;
}

export const defaultBackoff: BackoffOptions = {
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 1,
  resetAfterMs: 120_000,
};

export class Backoff {
  private current = 0;
  private lastEnd: number | undefined;

  constructor(
    private readonly opts: BackoffOptions,
    private readonly clock: Clock,
    private readonly random: () => number,
  ) {}

  /** The delay before the next attempt; each call without a healthy pause in between doubles it. */
  next(): number {
    const now = this.clock.now();
    if (this.lastEnd === undefined || now - this.lastEnd >= this.opts.resetAfterMs) {
      this.current = this.opts.initialMs;
    } else {
      this.current = Math.min(this.opts.maxMs, this.current * this.opts.factor);
    }
    // Jitter goes on top of the cap (as in client-go) so that many clients spread out even at the cap.
    const delay = this.current + this.random() * this.opts.jitter * this.current;
    this.lastEnd = now + delay;
    return delay;
  }
}

export interface ReflectorOptions<T extends KubeObject> {
  client: ListerWatcher;
  type: ResourceType;
  store: ReflectorStore<T>;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  clock?: Clock;
  /** In [0, 1); injectable for deterministic tests. */
  random?: () => number;
  /** Objects per list page (the API's limit); default 500, 0 lists everything in one response. */
  pageSize?: number;
  /** Watches are requested with timeoutSeconds random in [min, 2·min]; default 300. */
  minWatchTimeoutSeconds?: number;
  /**
   * A watch that delivers neither an event nor a bookmark for this long is restarted: it guards
   * against half-open connections. The API server sends bookmarks about once a minute. Default 150 s.
   */
  inactivityTimeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  logger?: RuntimeLogger;
  /** Called with every list or watch failure before backing off (metrics, tests). */
  onError?: (err: unknown) => void;
}

/**
 * Pages of one list asked for and not yet finished (listAndReplace): enough to keep the API server
 * busy while this thread parses, few enough that a list of large objects does not pile up.
 */
const PAGES_IN_FLIGHT = 4;

export class Reflector<T extends KubeObject> {
  private readonly client: ListerWatcher;
  private readonly type: ResourceType;
  private readonly store: ReflectorStore<T>;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly pageSize: number;
  private readonly minWatchTimeoutSeconds: number;
  private readonly inactivityTimeoutMs: number;
  private readonly backoff: Backoff;
  private readonly log: RuntimeLogger;
  private readonly selectors: { namespace?: string; labelSelector?: string; fieldSelector?: string };
  private readonly onError: ((err: unknown) => void) | undefined;
  private lastRV = '';
  /** A list has replaced the store: every list from now on is a consistent read. */
  private listed = false;
  /** The last list has not been followed by a watch that delivered anything yet. */
  private listUnwatched = false;
  /** That list was made at once after a 410, with no watch event since. */
  private relistedAtOnce = false;
  /** Watches refused in a row with 429 and a Retry-After. */
  private retryAfterStreak = 0;
  /** Relists asked for (relist()), and how many of them a completed list has answered. */
  private relistsRequested = 0;
  private relistsDone = 0;
  private relistWaiters: Array<{ upTo: number; resolve: (done: boolean) => void }> = [];
  /** Ends the running watch early so that the loop lists again (relist()). */
  private interruptWatch: AbortController | undefined;
  private stopped = false;

  constructor(opts: ReflectorOptions<T>) {
    this.client = opts.client;
    this.type = opts.type;
    this.store = opts.store;
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.pageSize = opts.pageSize ?? 500;
    this.minWatchTimeoutSeconds = opts.minWatchTimeoutSeconds ?? 300;
    this.inactivityTimeoutMs = opts.inactivityTimeoutMs ?? 150_000;
    this.backoff = new Backoff({ ...defaultBackoff, ...opts.backoff }, this.clock, this.random);
    this.log = opts.logger ?? logger;
    this.selectors = { namespace: opts.namespace, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
    this.onError = opts.onError;
  }

  /** The resourceVersion the next watch resumes from ('' before the first list). */
  lastSyncResourceVersion(): string {
    return this.lastRV;
  }

  /**
   * Lists again (a consistent read) and replaces the store with the answer, ending the running
   * watch. Resolves true once a list begun after this call has replaced the store, false if the
   * reflector stops first. Retries, with the usual backoff, until the API server answers.
   */
  relist(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    const upTo = ++this.relistsRequested;
    this.interruptWatch?.abort();
    return new Promise((resolve) => this.relistWaiters.push({ upTo, resolve }));
  }

  /** Runs until the signal aborts; resolves then. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      await this.loop(signal);
    } finally {
      this.stopped = true;
      for (const w of this.relistWaiters) w.resolve(false);
      this.relistWaiters = [];
    }
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList || this.relistsDone < this.relistsRequested) {
          await this.listAndReplace(signal);
          needList = false;
        }
        await this.watchOnce(signal);
      } catch (err) {
        if (signal.aborted) break;
        let delayMs: number | undefined;
        if (isGone(err)) {
          // Our resourceVersion has been compacted away: only a fresh list tells what we missed.
          // Refused right after its list, it means the API server rebuilt the resource's storage in
          // between (a CRD write: conversion settings at start-up) and started its watch cache past
          // our list, which a list now will not be: once, at once; a second time, after a backoff.
          if (!needList && this.listUnwatched && !this.relistedAtOnce) delayMs = 0;
          this.relistedAtOnce = delayMs === 0;
          needList = true;
          this.listUnwatched = false;
          this.log.info({ resource: this.type.resource, err: String(err) }, 'resourceVersion expired, relisting');
        } else {
          // "storage is (re)initializing": the API server is filling the watch cache of a storage it
          // just rebuilt and says when to come back; our resourceVersion is fine. Its word is taken
          // a few times in a row before the usual backoff.
          const retryAfter = isTooManyRequests(err) ? (err as StatusError).status.details?.retryAfterSeconds : undefined;
          if (!needList && retryAfter !== undefined && this.retryAfterStreak < 3) {
            this.retryAfterStreak++;
            delayMs = retryAfter * 1000;
          }
          this.log.warn({ resource: this.type.resource, err: String(err) }, needList ? 'list failed' : 'watch failed');
        }
        if (delayMs === undefined) this.retryAfterStreak = 0;
        this.onError?.(err);
        try {
          await this.clock.sleep(delayMs ?? this.backoff.next(), signal);
        } catch {
          break;
        }
      }
    }
  }

  private async listAndReplace(signal: AbortSignal): Promise<void> {
    // The first list is answered from the watch cache (resourceVersion "0", as client-go's
    // reflector asks): checked on Kubernetes v1.36.3, in one response whatever the limit, which the
    // API server encodes in one pass (50k pods: ~100 MB in 1.8 s, where 100 pages of 500 took 3 s
    // to serve) and which is parsed item by item as it arrives (KubeClient.list), never held whole.
    // Like client-go, it may be slightly behind etcd; the watch that follows catches up from its
    // resourceVersion. Every later list (after a 410, or relist(): the state after an outage) is a
    // paged consistent read (resourceVersion unset), served from the watch cache too (continue
    // pages included) after a cheap current-revision check against etcd. A server without a watch
    // cache pages either kind with limit; the continue tokens are followed the same way.
    // Ends a page read ahead that a failed list leaves in flight.
    const listDone = new AbortController();
    const base = { ...this.selectors, signal: AbortSignal.any([signal, listDone.signal]) };
    // The relists this list answers: those asked for before it began.
    const answers = this.relistsRequested;
    const resourceVersion = this.listed || answers > 0 ? undefined : '0';
    const items: T[] = [];
    const started = Date.now();
    const onItem = (item: KubeObject) => items.push(withoutManagedFields(item as T));
    let listRV: string;
    let cont: string | undefined;
    // Each page's request goes out as soon as the page before it has shown its continue token (it
    // precedes the items), so the API server encodes and sends pages while those before them are
    // still in transfer or being parsed here: at 20k pods and 500 a page, the difference between
    // 40 strictly sequential round trips and a pipeline of them. At most PAGES_IN_FLIGHT pages are
    // asked for and not yet finished; the token of the next is kept until one is, so memory stays
    // bounded by those pages.
    let inFlight = 0;
    let deferred: string | undefined;
    const readAhead = new Map<string, Promise<ObjectList<T>>>();
    const askAhead = (next: string) => {
      const page = request(next);
      // Awaited when its turn comes; until then a failure must not count as unhandled.
      page.catch(() => undefined);
      readAhead.set(next, page);
    };
    const request = (token: string | undefined): Promise<ObjectList<T>> => {
      inFlight++;
      return this.client.list<T>(this.type, {
        ...base,
        limit: this.pageSize || undefined,
        continue: token,
        // Never alongside a continue token (the token pins the snapshot).
        resourceVersion: token === undefined ? resourceVersion : undefined,
        withoutManagedFields: true,
        onItem,
        onContinue: (next) => {
          if (inFlight < PAGES_IN_FLIGHT) askAhead(next);
          else deferred = next;
        },
      });
    };
    try {
      let pending = request(undefined);
      for (;;) {
        const page = await pending;
        inFlight--;
        // Items not handed to onItem (a ListerWatcher may return them in the page instead).
        for (const item of page.items) onItem(item);
        listRV = page.metadata.resourceVersion ?? '';
        // A server may ignore limit and answer everything without a token (the watch cache does at
        // RV "0", and so may an aggregated API server): then this one page is the list.
        cont = page.metadata.continue || undefined;
        if (!cont) break;
        // Asked for early unless the token was not found in the page's start (then now).
        pending = readAhead.get(cont) ?? request(cont);
        readAhead.delete(cont);
        if (deferred !== undefined && inFlight < PAGES_IN_FLIGHT) {
          const next = deferred;
          deferred = undefined;
          askAhead(next);
        }
      }
    } catch (err) {
      listDone.abort();
      if (!isGone(err) || cont === undefined || signal.aborted) throw err;
      // The continue token expired (the snapshot it pins was compacted) between pages: the list
      // took longer than the compaction window, so paging again from scratch would likely expire
      // too. Like client-go's pager, read everything in one unpaged list instead: rare, and sure
      // to finish.
      this.log.info({ resource: this.type.resource, err: String(err) }, 'continue token expired, listing in one go');
      items.length = 0;
      const all = await this.client.list<T>(this.type, { ...this.selectors, signal, onItem });
      for (const item of all.items) onItem(item);
      listRV = all.metadata.resourceVersion ?? '';
    }
    this.store.replace(items, listRV);
    this.log.debug({ resource: this.type.resource, items: items.length, ms: Date.now() - started }, 'caches populated');
    this.listed = true;
    this.lastRV = listRV;
    this.listUnwatched = true;
    this.relistsDone = answers;
    const answered = this.relistWaiters.filter((w) => w.upTo <= answers);
    this.relistWaiters = this.relistWaiters.filter((w) => w.upTo > answers);
    for (const w of answered) w.resolve(true);
  }

  /**
   * One watch from lastRV. Returns when the server ends it cleanly (or it went silent); throws
   * StatusError for ERROR events (410 included) and whatever the transport throws.
   */
  private async watchOnce(signal: AbortSignal): Promise<void> {
    // Aborted by the caller, by us when the stream goes silent, or by relist().
    const idle = new AbortController();
    const interrupt = (this.interruptWatch = new AbortController());
    if (this.relistsDone < this.relistsRequested) return;
    const watchSignal = AbortSignal.any([signal, idle.signal, interrupt.signal]);
    let lastActivity = this.clock.now();
    let timer = this.clock.setTimer(this.inactivityTimeoutMs, check);
    const clock = this.clock;
    const limit = this.inactivityTimeoutMs;
    function check() {
      const quiet = clock.now() - lastActivity;
      if (quiet >= limit) idle.abort();
      else timer = clock.setTimer(limit - quiet, check);
    }

    const started = this.clock.now();
    let events = 0;
    const timeoutSeconds = Math.floor(this.minWatchTimeoutSeconds * (1 + this.random()));
    try {
      const stream = this.client.watch<T>(this.type, {
        ...this.selectors,
        resourceVersion: this.lastRV,
        allowWatchBookmarks: true,
        timeoutSeconds,
        withoutManagedFields: true,
        signal: watchSignal,
      });
      for await (const ev of stream) {
        lastActivity = this.clock.now();
        events++;
        this.handle(ev);
        this.listUnwatched = false;
        this.relistedAtOnce = false;
        this.retryAfterStreak = 0;
      }
    } catch (err) {
      if (interrupt.signal.aborted && !signal.aborted) return;
      if (idle.signal.aborted && !signal.aborted) {
        this.log.info({ resource: this.type.resource, idleMs: limit }, 'watch inactive, restarting');
        return;
      }
      throw err;
    } finally {
      timer.cancel();
      this.interruptWatch = undefined;
    }
    if (interrupt.signal.aborted) return;
    if (events === 0 && this.clock.now() - started < 1000) {
      // The server hung up at once without a word: something is wrong, don't spin on it.
      throw new Error('very short watch');
    }
  }

  private handle(ev: WatchEvent<T>): void {
    if (ev.type === 'ERROR') throw new StatusError(ev.object);
    const rv = ev.object.metadata?.resourceVersion;
    switch (ev.type) {
      case 'ADDED':
        this.store.add(withoutManagedFields(ev.object));
        break;
      case 'MODIFIED':
        this.store.update(withoutManagedFields(ev.object));
        break;
      case 'DELETED':
        this.store.delete(withoutManagedFields(ev.object));
        break;
      case 'BOOKMARK':
        break;
    }
    if (rv) this.lastRV = rv;
  }
}
