// Leader election over a coordination.k8s.io/v1 Lease (client-go tools/leaderelection).
//
// Safety rests on two rules:
// - a lease held by someone else is considered expired only when *we* have seen it unchanged for
//   leaseDuration, measured on our own clock from when we observed it; the holder's renewTime is
//   never compared with our clock, so clock skew between replicas does not matter;
// - every write is a compare-and-swap on resourceVersion, so two candidates cannot both win.

import { realClock, type Clock, type Timer } from '../util/clock.ts';
import { logger as rootLogger, type Logger } from './log.ts';
import { leaderElectionMasterStatus, leaderElectionSlowpath } from './metrics.ts';

/** client-go's JitterFactor: retries wait retryPeriod·[1, 2.2). */
export const JitterFactor = 1.2;

/**
 * The Lease spec fields leader election reads and writes. A Kubernetes-backed store maps them 1:1:
 *   holderIdentity       ↔ spec.holderIdentity ('' ↔ released; write '' or omit)
 *   leaseDurationSeconds ↔ spec.leaseDurationSeconds
 *   acquireTime          ↔ spec.acquireTime (MicroTime, RFC 3339 with 6 fractional digits)
 *   renewTime            ↔ spec.renewTime   (MicroTime)
 *   leaderTransitions    ↔ spec.leaseTransitions (the API field name differs; lease-store.ts maps it)
 */
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaderTransitions: number;
}

export interface StoredLease extends LeaseRecord {
  /** metadata.resourceVersion, for optimistic concurrency on update. */
  resourceVersion: string;
}

/**
 * One Lease object. Errors thrown for a lost compare-and-swap (create of an existing lease, update
 * with a stale resourceVersion) must carry `code === 409`; other failures may throw anything.
 * The signal aborts a call that outlives the renew deadline.
 */
export interface LeaseStore {
  /** The lease, or null if it does not exist. */
  get(signal?: AbortSignal): Promise<StoredLease | null>;
  /** Creates the lease; resolves to the new resourceVersion. */
  create(record: LeaseRecord, signal?: AbortSignal): Promise<string>;
  /** Replaces the lease spec if it is still at `resourceVersion`; resolves to the new one. */
  update(record: LeaseRecord, resourceVersion: string, signal?: AbortSignal): Promise<string>;
}

/**
 * Another candidate wrote the lease first: any 409, AlreadyExists from a create as well as Conflict
 * from an update (errors.ts's isConflict is the second alone).
 */
export function lostToAnotherWriter(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 409;
}

/** Kubernetes MicroTime: RFC 3339 UTC with microseconds, e.g. 2024-05-01T10:00:00.123000Z. */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface LeaderCallbacks {
  /** Leadership acquired; the signal aborts when it ends. May return a promise for the led work. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once when run() ends, whether or not we ever led (as client-go does). */
  onStoppedLeading(): void;
  /** The observed holder changed (also reported for ourselves). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectionConfig {
  store: LeaseStore;
  /** Unique per candidate, usually hostname + '_' + a random suffix. */
  identity: string;
  /** Lease name, used as the metrics label and in logs (e.g. 'kruise-manager'). */
  name: string;
  /** ms a non-leader waits after the last observed change before taking over; default 15 s. */
  leaseDuration?: number;
  /** ms the leader keeps retrying a failed renewal before giving up; default 10 s. */
  renewDeadline?: number;
  /** ms between attempts; default 2 s. */
  retryPeriod?: number;
  /** On cancellation, write an empty holder so a successor need not wait for expiry. */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  clock?: Clock;
  /** Source of jitter in [0, 1); injectable for tests. */
  random?: () => number;
  logger?: Logger;
}

export const DefaultLeaseDuration = 15_000;
export const DefaultRenewDeadline = 10_000;
export const DefaultRetryPeriod = 2_000;

/** Throws unless leaseDuration > renewDeadline > JitterFactor·retryPeriod, all positive. */
export function validateLeaderElectionConfig(config: LeaderElectionConfig): void {
  const leaseDuration = config.leaseDuration ?? DefaultLeaseDuration;
  const renewDeadline = config.renewDeadline ?? DefaultRenewDeadline;
  const retryPeriod = config.retryPeriod ?? DefaultRetryPeriod;
  if (leaseDuration <= renewDeadline) throw new Error('leaseDuration must be greater than renewDeadline');
  if (renewDeadline <= JitterFactor * retryPeriod) {
    throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor');
  }
  if (leaseDuration < 1000) throw new Error('leaseDuration must be at least 1s');
  if (retryPeriod < 1) throw new Error('retryPeriod must be greater than zero');
  if (!config.identity) throw new Error('identity must not be empty');
  if (!config.name) throw new Error('name must not be empty');
}

export class LeaderElector {
  private readonly store: LeaseStore;
  private readonly identity: string;
  private readonly name: string;
  private readonly leaseDuration: number;
  private readonly renewDeadline: number;
  private readonly retryPeriod: number;
  private readonly releaseOnCancel: boolean;
  private readonly callbacks: LeaderCallbacks;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: Logger;

  private observedRecord: LeaseRecord | undefined;
  private observedRaw = '';
  /** Local time at which observedRecord last changed (a record we wrote: when we sent it). */
  private observedTime = 0;
  /** resourceVersion from our latest read or write, for the next compare-and-swap. */
  private leaseVersion: string | undefined;
  private reportedLeader = '';
  private running = false;

  constructor(config: LeaderElectionConfig) {
    validateLeaderElectionConfig(config);
    this.store = config.store;
    this.identity = config.identity;
    this.name = config.name;
    this.leaseDuration = config.leaseDuration ?? DefaultLeaseDuration;
    this.renewDeadline = config.renewDeadline ?? DefaultRenewDeadline;
    this.retryPeriod = config.retryPeriod ?? DefaultRetryPeriod;
    this.releaseOnCancel = config.releaseOnCancel ?? false;
    this.callbacks = config.callbacks;
    this.clock = config.clock ?? realClock;
    this.random = config.random ?? Math.random;
    this.log = (config.logger ?? rootLogger).child({ lease: config.name, identity: config.identity });
  }

  /** Whether the last observed record names us as holder. */
  isLeader(): boolean {
    return this.observedRecord?.holderIdentity === this.identity;
  }

  /**
   * Whether this replica may still act as leader by its own clock: the last record it wrote or read
   * names it, no longer ago than the renew deadline (after which it gives leadership up anyway).
   * A process frozen past that (SIGSTOP, a long GC pause) answers false at once on waking, before its
   * next renewal attempt has failed, so a write fenced by it never comes from a stale leader.
   */
  holdsLease(): boolean {
    return this.isLeader() && this.clock.now() - this.observedTime < this.renewDeadline;
  }

  /** The last observed holder ('' if none). */
  getLeader(): string {
    return this.observedRecord?.holderIdentity ?? '';
  }

  /**
   * Campaigns until elected, leads until the lease is lost or `signal` aborts, then calls
   * onStoppedLeading. Resolves when all of that is over; rejects only if already running.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('LeaderElector.run is already running');
    this.running = true;
    try {
      if (!(await this.acquire(signal))) return;
      const leading = new AbortController();
      const stopLeading = () => leading.abort(signal.reason);
      signal.addEventListener('abort', stopLeading, { once: true });
      const led = this.startLeading(leading.signal);
      try {
        await this.renew(leading.signal);
      } finally {
        leading.abort();
        signal.removeEventListener('abort', stopLeading);
        leaderElectionMasterStatus.set({ name: this.name }, 0);
      }
      if (this.releaseOnCancel) {
        // Releasing while led work is still running would let a successor overlap with it.
        await led;
        await this.release();
      }
    } finally {
      this.running = false;
      this.invoke('onStoppedLeading', () => this.callbacks.onStoppedLeading());
    }
  }

  private startLeading(signal: AbortSignal): Promise<void> {
    return (async () => {
      try {
        await this.callbacks.onStartedLeading(signal);
      } catch (err) {
        this.log.error({ err }, 'onStartedLeading failed');
      }
    })();
  }

  /** Retries every jittered retryPeriod until we hold the lease; false if cancelled first. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('attempting to acquire leader lease');
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(signal);
      this.maybeReportTransition();
      if (ok) {
        this.log.info('successfully acquired lease');
        leaderElectionMasterStatus.set({ name: this.name }, 1);
        return true;
      }
      const wait = this.retryPeriod * (1 + this.random() * JitterFactor);
      if (!(await this.sleep(wait, signal))) return false;
    }
    return false;
  }

  /** Renews every retryPeriod; returns when a renewal misses renewDeadline or signal aborts. */
  private async renew(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const ok = await this.renewWithinDeadline(signal);
      this.maybeReportTransition();
      if (!ok) {
        if (!signal.aborted) this.log.info('failed to renew lease: leadership lost');
        return;
      }
      if (!(await this.sleep(this.retryPeriod, signal))) return;
    }
  }

  private async renewWithinDeadline(signal: AbortSignal): Promise<boolean> {
    const deadline = this.deadlineSignal(this.renewDeadline, signal);
    try {
      for (;;) {
        if (await this.tryAcquireOrRenew(deadline.signal)) return true;
        if (!(await this.sleep(this.retryPeriod, deadline.signal))) return false;
      }
    } finally {
      deadline.dispose();
    }
  }

  /** One attempt; never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return false;
    const now = this.clock.now();
    const stamp = formatMicroTime(now);
    const desired: LeaseRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.floor(this.leaseDuration / 1000),
      acquireTime: stamp,
      renewTime: stamp,
      leaderTransitions: 0,
    };

    // Fast path: as a valid leader, assume our last write is still current and skip the read.
    if (this.isLeader() && this.isLeaseValid(now) && this.observedRecord && this.leaseVersion) {
      const record = {
        ...desired,
        acquireTime: this.observedRecord.acquireTime,
        leaderTransitions: this.observedRecord.leaderTransitions,
      };
      try {
        this.setObserved(record, await abortable(this.store.update(record, this.leaseVersion, signal), signal), now);
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        this.log.warn({ err }, 'failed to update lease optimistically, falling back to slow path');
      }
    }

    let current: StoredLease | null;
    try {
      current = await abortable(this.store.get(signal), signal);
    } catch (err) {
      if (!signal.aborted) this.log.error({ err }, 'error retrieving lease');
      return false;
    }

    if (!current) {
      try {
        this.setObserved(desired, await abortable(this.store.create(desired, signal), signal), now);
        return true;
      } catch (err) {
        if (!signal.aborted) this.log.error({ err }, 'error initially creating lease');
        return false;
      }
    }

    const { resourceVersion, ...record } = current;
    this.leaseVersion = resourceVersion;
    // Only a change restarts the expiry clock; re-reading an unchanged lease must not.
    if (rawRecord(record) !== this.observedRaw) this.setObserved(record);

    if (record.holderIdentity && this.isLeaseValid(now) && !this.isLeader()) {
      this.log.debug({ holder: record.holderIdentity }, 'lease is held by another candidate and has not yet expired');
      return false;
    }

    if (this.isLeader()) {
      desired.acquireTime = record.acquireTime;
      desired.leaderTransitions = record.leaderTransitions;
      leaderElectionSlowpath.inc({ name: this.name });
    } else {
      desired.leaderTransitions = record.leaderTransitions + 1;
    }

    try {
      this.setObserved(desired, await abortable(this.store.update(desired, resourceVersion, signal), signal), now);
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      if (lostToAnotherWriter(err)) this.log.info('lease update conflicted: another candidate wrote it first');
      else this.log.error({ err }, 'failed to update lease');
      return false;
    }
  }

  /** Hands the lease back with a 1 s duration so the next candidate can take it almost at once. */
  private async release(): Promise<boolean> {
    if (!this.isLeader() || !this.observedRecord || !this.leaseVersion) return true;
    const stamp = formatMicroTime(this.clock.now());
    const record: LeaseRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: stamp,
      renewTime: stamp,
      leaderTransitions: this.observedRecord.leaderTransitions,
    };
    const deadline = this.deadlineSignal(this.renewDeadline);
    try {
      this.setObserved(record, await abortable(this.store.update(record, this.leaseVersion, deadline.signal), deadline.signal));
      this.log.info('released lease');
      return true;
    } catch (err) {
      this.log.error({ err }, 'failed to release lease');
      return false;
    } finally {
      deadline.dispose();
    }
  }

  private isLeaseValid(now: number): boolean {
    const seconds = this.observedRecord?.leaseDurationSeconds ?? 0;
    return this.observedTime + seconds * 1000 > now;
  }

  /**
   * `at`: for a record we wrote, when the write was sent — the API server took it no earlier, so no
   * other candidate can have seen it sooner, and our lease is judged from then. Taken from the answer's
   * arrival instead, a process frozen (SIGSTOP, a long pause) with a renewal in flight would, on
   * waking to its late answer, count a lease the sharder or a successor may already hold as fresh,
   * and its fenced writes (holdsLease) would go through.
   */
  private setObserved(record: LeaseRecord, resourceVersion?: string, at = this.clock.now()): void {
    this.observedRecord = record;
    this.observedRaw = rawRecord(record);
    this.observedTime = at;
    if (resourceVersion !== undefined) this.leaseVersion = resourceVersion;
  }

  private maybeReportTransition(): void {
    const holder = this.getLeader();
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const onNewLeader = this.callbacks.onNewLeader;
    if (!onNewLeader) return;
    // Asynchronous, like client-go's goroutine: a slow callback must not delay renewal.
    queueMicrotask(() => this.invoke('onNewLeader', () => onNewLeader(holder)));
  }

  private invoke(callback: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err, callback }, 'leader election callback failed');
    }
  }

  /** Resolves true after ms, or false as soon as signal aborts. */
  private async sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** A signal that aborts after ms (or when parent aborts); dispose() cancels the timer. */
  private deadlineSignal(ms: number, parent?: AbortSignal): { signal: AbortSignal; dispose(): void } {
    const controller = new AbortController();
    const timer: Timer = this.clock.setTimer(ms, () => controller.abort(new Error('deadline exceeded')));
    const onParentAbort = () => controller.abort(parent!.reason);
    if (parent?.aborted) controller.abort(parent.reason);
    else parent?.addEventListener('abort', onParentAbort, { once: true });
    return {
      signal: controller.signal,
      dispose() {
        timer.cancel();
        parent?.removeEventListener('abort', onParentAbort);
      },
    };
  }
}

function rawRecord(record: LeaseRecord): string {
  return JSON.stringify([
    record.holderIdentity,
    record.leaseDurationSeconds,
    record.acquireTime,
    record.renewTime,
    record.leaderTransitions,
  ]);
}

/** Settles with `promise`, or rejects when signal aborts first (for stores that ignore the signal). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
