// The controller work queue: client-go's dedup FIFO + delaying + rate-limiting queue, merged with
// controller-runtime's priority queue into one structure.
//
// Guarantees (client-go util/workqueue/queue.go):
// - a key is queued at most once however often it is added (dirty set);
// - a key is never handed to two workers at once: adds that arrive while it is processing are held
//   and the key is re-queued when the worker calls done();
// - a delayed key waits for its earliest requested time (adds only ever move it earlier);
// - among ready keys the highest priority goes first, FIFO (by when it became ready) within a
//   priority; a repeated add may raise a key's priority but never lower it.

import { realClock, type Clock, type Timer } from '../util/clock.ts';
import { noWorkqueueMetrics, workqueueMetrics, type WorkqueueMetrics } from './metrics.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimiter.ts';

/** Priority of events from an informer's initial list and of resyncs, so real changes go first. */
export const LowPriority = -100;

/** The delay loop wakes at least this often even with nothing due (client-go maxWait). */
const maxWait = 10_000;

export interface AddOptions {
  priority?: number;
}

export interface WorkItem {
  key: string;
  priority: number;
}

export interface WorkQueueOptions {
  /** Metrics label; unnamed queues report no metrics. */
  name?: string;
  clock?: Clock;
  rateLimiter?: RateLimiter;
}

interface Item {
  key: string;
  priority: number;
  readyAt: number;
  /** Has a live entry in the ready heap. */
  inReady: boolean;
  /** FIFO position among equal priorities, taken when the item became ready. */
  seq: number;
  queuedAt: number;
}

// Heaps use lazy deletion: raising a priority or moving readyAt pushes a fresh entry and the old
// one is recognised as stale (it no longer matches its item) when it reaches the top.
interface ReadyEntry {
  item: Item;
  priority: number;
  seq: number;
}

interface WaitEntry {
  item: Item;
  readyAt: number;
}

export class WorkQueue {
  readonly name: string | undefined;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter;
  private readonly metrics: WorkqueueMetrics;

  /** Keys that need processing (queued, waiting for their delay, or re-added while processing). */
  private readonly dirty = new Map<string, Item>();
  /** Keys handed to a worker and not yet done(), with their start time. */
  private readonly processing = new Map<string, number>();
  private readonly ready = new Heap<ReadyEntry>((a, b) => (a.priority !== b.priority ? a.priority > b.priority : a.seq < b.seq));
  private readonly waiting = new Heap<WaitEntry>((a, b) => a.readyAt < b.readyAt);
  private readyCount = 0;
  private nextSeq = 0;

  private getters: Array<(item: WorkItem | undefined) => void> = [];
  private drainWaiters: Array<() => void> = [];
  private timer: Timer | undefined;
  private timerAt = Infinity;
  private shutdown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = options.name
      ? workqueueMetrics({
          name: options.name,
          processingStarts: () => this.processing.values(),
          now: () => this.clock.now(),
        })
      : noWorkqueueMetrics;
  }

  /** Queues key now; ignored after shutdown. */
  add(key: string, options: AddOptions = {}): void {
    this.addAt(key, this.clock.now(), options.priority ?? 0);
  }

  /** Queues key once `delayMs` has passed (at once if <= 0). */
  addAfter(key: string, delayMs: number, options: AddOptions = {}): void {
    if (this.shutdown) return;
    this.metrics.retried();
    this.addAt(key, this.clock.now() + Math.max(0, delayMs), options.priority ?? 0);
  }

  /** Queues key after the rate limiter's backoff for it. */
  addRateLimited(key: string, options: AddOptions = {}): void {
    if (this.shutdown) return;
    this.addAfter(key, this.rateLimiter.when(key), options);
  }

  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** The next key to process, or undefined once the queue is shut down. */
  async get(): Promise<string | undefined> {
    return (await this.getWithPriority())?.key;
  }

  getWithPriority(): Promise<WorkItem | undefined> {
    // Unlike client-go's plain queue, keys still queued at shutdown are not handed out (as in
    // controller-runtime's priority queue): a stopping controller must not start new work.
    if (this.shutdown) return Promise.resolve(undefined);
    this.promoteDue();
    const item = this.popReady();
    if (item) return Promise.resolve(item);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks key finished; if it was added again meanwhile it is queued now. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics.finished(this.clock.now() - started);
    if (this.shutdown) {
      if (this.processing.size === 0) this.resolveDrainWaiters();
      return;
    }
    const item = this.dirty.get(key);
    // A later readyAt already has its wait entry; only a due key must be queued here.
    if (item && !item.inReady && item.readyAt <= this.clock.now()) this.markReady(item);
  }

  /** Number of keys ready to be handed out (excludes delayed and in-flight keys). */
  len(): number {
    this.promoteDue();
    return this.readyCount;
  }

  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  shuttingDown(): boolean {
    return this.shutdown;
  }

  /** Stops accepting and handing out keys; waiting get() calls resolve undefined. */
  shutDown(): void {
    if (this.shutdown) return;
    this.shutdown = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.metrics.close();
    const getters = this.getters;
    this.getters = [];
    for (const resolve of getters) resolve(undefined);
    if (this.processing.size === 0) this.resolveDrainWaiters();
  }

  /** shutDown(), then resolves once every in-flight key has been marked done(). */
  shutDownWithDrain(): Promise<void> {
    const drained = new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    this.shutDown();
    if (this.processing.size === 0) this.resolveDrainWaiters();
    return drained;
  }

  private addAt(key: string, readyAt: number, priority: number): void {
    if (this.shutdown) return;
    this.promoteDue();
    const now = this.clock.now();
    const existing = this.dirty.get(key);
    if (!existing) {
      const item: Item = { key, priority, readyAt, inReady: false, seq: 0, queuedAt: 0 };
      this.dirty.set(key, item);
      this.schedule(item, now);
      return;
    }
    if (priority > existing.priority) {
      existing.priority = priority;
      if (existing.inReady) this.ready.push({ item: existing, priority, seq: existing.seq });
    }
    if (readyAt < existing.readyAt && !existing.inReady) {
      existing.readyAt = readyAt;
      this.schedule(existing, now);
    }
  }

  /** Puts a not-yet-ready item where it belongs for its readyAt. */
  private schedule(item: Item, now: number): void {
    if (item.readyAt > now) {
      this.waiting.push({ item, readyAt: item.readyAt });
      this.armTimer(now);
    } else if (!this.processing.has(item.key)) {
      this.markReady(item);
    }
    // else: due but in flight; done() queues it.
  }

  private markReady(item: Item): void {
    item.inReady = true;
    item.seq = this.nextSeq++;
    item.queuedAt = this.clock.now();
    this.ready.push({ item, priority: item.priority, seq: item.seq });
    this.readyCount++;
    this.metrics.added();
    this.metrics.depth(this.readyCount);
    this.serveGetters();
  }

  private serveGetters(): void {
    while (this.getters.length > 0) {
      const item = this.popReady();
      if (!item) return;
      this.getters.shift()!(item);
    }
  }

  private popReady(): WorkItem | undefined {
    while (this.readyCount > 0) {
      const entry = this.ready.pop()!;
      const item = entry.item;
      if (this.dirty.get(item.key) !== item || !item.inReady || entry.priority !== item.priority) continue;
      item.inReady = false;
      // Whatever is left once nothing is ready is stale; dropping it keeps the heap from growing.
      if (--this.readyCount === 0) this.ready.clear();
      this.dirty.delete(item.key);
      const now = this.clock.now();
      this.processing.set(item.key, now);
      this.metrics.depth(this.readyCount);
      this.metrics.started(now - item.queuedAt);
      return { key: item.key, priority: item.priority };
    }
    return undefined;
  }

  private isLiveWait(entry: WaitEntry): boolean {
    const item = entry.item;
    return this.dirty.get(item.key) === item && !item.inReady && item.readyAt === entry.readyAt;
  }

  /** Moves every delayed key whose time has come into the ready heap and re-arms the timer. */
  private promoteDue(): void {
    if (this.shutdown) return;
    const now = this.clock.now();
    for (let top = this.waiting.peek(); top && top.readyAt <= now; top = this.waiting.peek()) {
      this.waiting.pop();
      // An in-flight key stays dirty with a past readyAt; done() queues it.
      if (this.isLiveWait(top) && !this.processing.has(top.item.key)) this.markReady(top.item);
    }
    this.armTimer(now);
  }

  private armTimer(now: number): void {
    while (this.waiting.size > 0 && !this.isLiveWait(this.waiting.peek()!)) this.waiting.pop();
    const next = this.waiting.peek();
    if (!next) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = Infinity;
      return;
    }
    const at = Math.min(next.readyAt, now + maxWait);
    if (this.timer && this.timerAt <= at) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.clock.setTimer(at - now, () => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.promoteDue();
    });
  }

  private resolveDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** A binary min-heap under `before`. */
class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  clear(): void {
    this.items.length = 0;
  }

  push(value: T): void {
    const a = this.items;
    a.push(value);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < a.length && this.before(a[l], a[best])) best = l;
        if (r < a.length && this.before(a[r], a[best])) best = r;
        if (best === i) break;
        [a[i], a[best]] = [a[best], a[i]];
        i = best;
      }
    }
    return top;
  }
}
