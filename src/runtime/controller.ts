// A controller loop (controller-runtime pkg/internal/controller): N workers take keys from a
// WorkQueue, run reconcile, and the outcome decides the key's next visit:
//
//   outcome                          queue action
//   throws TerminalError             forget (no retry; counted as a terminal error)
//   throws anything else             addRateLimited (per-key exponential backoff)
//   returns {requeueAfterMs > 0}     forget + addAfter(requeueAfterMs)
//   returns anything else            forget
//
// A throw carries no result, so "error plus requeueAfterMs" always means backoff, as in
// controller-runtime where the result is ignored when an error is returned.
//
// Nothing a reconciler throws escapes a worker. Built-in programming errors (TypeError,
// ReferenceError, ...) and non-Error throws are JavaScript's equivalent of a Go panic: they are
// additionally counted in controller_runtime_reconcile_panics_total and retried like errors.

import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { realClock, type Clock } from '../util/clock.ts';
import { childLogger, logger as rootLogger, type Logger } from './log.ts';
import {
  activeWorkers,
  maxConcurrentReconciles,
  reconcileErrors,
  reconcilePanics,
  reconcileTime,
  reconcileTotal,
  terminalReconcileErrors,
} from './metrics.ts';
import type { RateLimiter } from './ratelimiter.ts';
import { WorkQueue, type WorkItem } from './workqueue.ts';

/** An error retrying cannot fix (e.g. an invalid spec): the key is dropped until its next event. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** True if err or anything in its cause chain is a TerminalError (like errors.Is). */
export function isTerminalError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 32; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}

const panicTypes = [TypeError, ReferenceError, RangeError, SyntaxError, EvalError, URIError];

/** Whether err is a programming error (or not an Error at all) rather than a failure to report. */
export function isPanic(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  // fetch reports network failures as TypeError('fetch failed', {cause}); those are ordinary errors.
  if (err instanceof TypeError && err.cause !== undefined) return false;
  return panicTypes.some((t) => err.constructor === t);
}

export interface ReconcileResult {
  /** > 0 re-runs the key after this many milliseconds, the way to poll for something no event announces. */
  requeueAfterMs?: number;
}

export interface ReconcileContext {
  /** Aborted when the controller stops; long operations should honour it. */
  signal: AbortSignal;
  log: Logger;
  reconcileID: string;
  /** Queue priority of this key (LowPriority for initial-list events). */
  priority: number;
}

export type Reconciler = (key: string, context: ReconcileContext) => Promise<ReconcileResult | void> | ReconcileResult | void;

export interface ControllerOptions {
  name: string;
  reconcile: Reconciler;
  /** Workers; default 1. One key is never reconciled by two workers at once regardless. */
  maxConcurrentReconciles?: number;
  clock?: Clock;
  /** Used for the queue the controller creates when `queue` is not given. */
  rateLimiter?: RateLimiter;
  queue?: WorkQueue;
  /**
   * The controller's logger, already naming it (`{controller: name}`): whoever builds a controller
   * (the manager, the daemon) binds that once, for the reconciles and for everything else the
   * controller logs. Default: the root logger with the name bound.
   */
  logger?: Logger;
}

type State = 'new' | 'running' | 'stopped';

export class Controller {
  readonly name: string;
  /** Event handlers add keys here. */
  readonly queue: WorkQueue;
  private readonly reconcile: Reconciler;
  private readonly workerCount: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly labels: { controller: string };
  private readonly stopSignal = new AbortController();
  private state: State = 'new';
  private workers: Promise<void>[] = [];
  private stopped: Promise<void> | undefined;

  constructor(options: ControllerOptions) {
    const workers = options.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new Error(`maxConcurrentReconciles must be a positive integer, got ${workers}`);
    }
    this.name = options.name;
    this.reconcile = options.reconcile;
    this.workerCount = workers;
    this.clock = options.clock ?? realClock;
    this.queue = options.queue ?? new WorkQueue({ name: options.name, clock: this.clock, rateLimiter: options.rateLimiter });
    this.log = options.logger ?? childLogger({ controller: options.name }, rootLogger);
    this.labels = { controller: options.name };
  }

  /** Starts the workers; keys added before start() are processed once it runs. */
  start(): void {
    if (this.state !== 'new') throw new Error(`controller ${this.name} was already started`);
    this.state = 'running';
    // Export every series at zero so rate() works from the first scrape.
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      reconcileTotal.inc({ ...this.labels, result }, 0);
    }
    reconcileErrors.inc(this.labels, 0);
    terminalReconcileErrors.inc(this.labels, 0);
    reconcilePanics.inc(this.labels, 0);
    activeWorkers.set(this.labels, 0);
    maxConcurrentReconciles.set(this.labels, this.workerCount);
    this.log.info({ workerCount: this.workerCount }, 'Starting workers');
    for (let i = 0; i < this.workerCount; i++) this.workers.push(this.worker());
  }

  /**
   * The life of a controller on the leader: wait until every informer it reads has synced (a
   * reconcile on a partial cache would act on missing objects), run the workers until `signal`
   * aborts, then stop. Returns early, without starting, when the signal aborts during the sync.
   */
  async runAfterSync(signal: AbortSignal, informers: ReadonlyArray<{ waitForSync(signal: AbortSignal): Promise<boolean> }>): Promise<void> {
    const synced = await Promise.all(informers.map((i) => i.waitForSync(signal)));
    if (!synced.every(Boolean)) return;
    this.start();
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    await this.stop();
  }

  /**
   * Stops handing out keys, aborts the reconcile signal, and resolves once in-flight reconciles
   * have returned. Keys still queued are dropped. Idempotent.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.state = 'stopped';
      this.log.info('Shutdown signal received, waiting for all workers to finish');
      this.stopSignal.abort(new Error(`controller ${this.name} stopping`));
      await this.queue.shutDownWithDrain();
      await Promise.all(this.workers);
      this.log.info('All workers finished');
    })();
    return this.stopped;
  }

  private async worker(): Promise<void> {
    for (;;) {
      // A turn of the event loop between rounds. A queued key is handed out at once (a resolved
      // promise), so rounds that finish without waiting on I/O — nothing to write, or writes the
      // rate limiter lets through — would otherwise run back to back, each controller's workers
      // after each other's, while webhook requests and watch events wait: at 200 pod creations/s
      // the pod webhook's p99 was the length of such a chain.
      await nextTurn();
      const item = await this.queue.getWithPriority();
      if (!item) return;
      activeWorkers.inc(this.labels);
      try {
        await this.reconcileHandler(item);
      } catch (err) {
        // reconcileHandler catches reconciler failures itself; this guards against bugs in the
        // bookkeeping (metrics, logging) so the worker keeps running.
        this.log.error({ err, object: item.key }, 'controller worker failed');
      } finally {
        activeWorkers.dec(this.labels);
        this.queue.done(item.key);
      }
    }
  }

  private async reconcileHandler({ key, priority }: WorkItem): Promise<void> {
    const reconcileID = randomUUID();
    const log = childLogger({ object: key, reconcileID }, this.log);
    const started = this.clock.now();
    let result: ReconcileResult | void;
    try {
      result = await this.reconcile(key, { signal: this.stopSignal.signal, log, reconcileID, priority });
    } catch (err) {
      reconcileTime.observe(this.labels, (this.clock.now() - started) / 1000);
      if (isPanic(err)) {
        reconcilePanics.inc(this.labels);
        log.error({ err }, 'Observed a panic in reconciler');
      }
      if (isTerminalError(err)) {
        terminalReconcileErrors.inc(this.labels);
        this.queue.forget(key);
      } else {
        this.queue.addRateLimited(key, { priority });
      }
      reconcileErrors.inc(this.labels);
      reconcileTotal.inc({ ...this.labels, result: 'error' });
      log.error({ err }, 'Reconciler error');
      return;
    }
    reconcileTime.observe(this.labels, (this.clock.now() - started) / 1000);
    const requeueAfterMs = result?.requeueAfterMs ?? 0;
    this.queue.forget(key);
    if (requeueAfterMs > 0) {
      this.queue.addAfter(key, requeueAfterMs, { priority });
      reconcileTotal.inc({ ...this.labels, result: 'requeue_after' });
      log.debug({ requeueAfterMs }, 'Reconcile done, requeueing after');
    } else {
      reconcileTotal.inc({ ...this.labels, result: 'success' });
      log.debug('Reconcile successful');
    }
  }
}
