// Expectations bridge the gap between "we wrote it" and "the informer cache shows it" (Kruise
// pkg/util/expectations). A controller records what it expects before writing, event handlers
// observe what arrives, and reconcile waits (requeueing) while anything is still outstanding.
//
// Each tracker remembers when an entry was first found unsatisfied; an entry unsatisfied for longer
// than `timeout` is reported as timed out and passed to `onTimeout` (the hook for a leakage
// counter such as Kruise's CloneSet scale-expectation leakage metric). What to do about a timeout
// (log, delete, requeue) is the controller's decision.

import type { ObjectMeta } from '../apis/core-objects.ts';
import { realClock, type Clock } from '../util/clock.ts';
import type { Logger } from './log.ts';

/** Kruise --expectation-timeout default. */
export const DefaultExpectationTimeout = 5 * 60_000;

export interface ExpectationOptions {
  clock?: Clock;
  /** ms; default 5 min. */
  timeout?: number;
  /** Called each time a check finds an entry unsatisfied for >= timeout. */
  onTimeout?: (key: string, unsatisfiedMs: number) => void;
}

export interface Satisfaction {
  satisfied: boolean;
  /** ms since the entry was first found unsatisfied (0 when satisfied). */
  unsatisfiedDuration: number;
  timedOut: boolean;
}

/** One expectation a reconcile waits for; `satisfied` is only asked when the checks before it pass. */
export interface ExpectationCheck {
  /** What is awaited, for the log ("scale", "NodeImage resourceVersion"). */
  what: string;
  satisfied(): Satisfaction & { dirty?: unknown };
  /** Forgets the expectation once it has timed out. */
  drop(): void;
  /** The tracker's timeout, ms. */
  timeoutMs: number;
  /** Look again after this long instead of when the expectation would time out. */
  waitMs?: number;
  detail?: Record<string, unknown>;
}

/**
 * The gate every controller passes before planning: how long to wait while an expectation is
 * unsatisfied (the cache is behind our own writes), or undefined to go on. One still unsatisfied
 * past its timeout is logged and dropped, and the reconcile goes on from the cache as it is: a lost
 * watch event must not stall the object.
 */
export function expectationGate(checks: Iterable<ExpectationCheck>, log: Logger): number | undefined {
  for (const c of checks) {
    const s = c.satisfied();
    if (s.satisfied) continue;
    if (!s.timedOut) return c.waitMs ?? Math.max(1, c.timeoutMs - s.unsatisfiedDuration);
    const dirty = s.dirty === undefined ? {} : { dirty: s.dirty };
    log.warn({ ...c.detail, ...dirty, overTimeMs: s.unsatisfiedDuration }, `${c.what} expectation unsatisfied overtime; dropping it`);
    c.drop();
  }
  return undefined;
}

/** The object fields expectations read; any Kubernetes object fits. */
export interface ObjectMetaLike {
  metadata?: Pick<ObjectMeta, 'namespace' | 'name' | 'uid' | 'resourceVersion'>;
}

/** Shared timeout bookkeeping. */
class Tracker {
  protected readonly clock: Clock;
  readonly timeout: number;
  private readonly onTimeout?: (key: string, unsatisfiedMs: number) => void;

  constructor(options: ExpectationOptions) {
    this.clock = options.clock ?? realClock;
    this.timeout = options.timeout ?? DefaultExpectationTimeout;
    this.onTimeout = options.onTimeout;
  }

  protected unsatisfied(key: string, entry: { firstUnsatisfied?: number }): Satisfaction {
    const now = this.clock.now();
    entry.firstUnsatisfied ??= now;
    const unsatisfiedDuration = now - entry.firstUnsatisfied;
    const timedOut = unsatisfiedDuration >= this.timeout;
    if (timedOut) this.onTimeout?.(key, unsatisfiedDuration);
    return { satisfied: false, unsatisfiedDuration, timedOut };
  }
}

const satisfied: Satisfaction = Object.freeze({ satisfied: true, unsatisfiedDuration: 0, timedOut: false });

export type ScaleAction = 'create' | 'delete';

interface ScaleEntry {
  pending: Record<ScaleAction, Set<string>>;
  firstUnsatisfied?: number;
}

/** Per workload: names of children we created/deleted and have not yet seen the event for. */
export class ScaleExpectations extends Tracker {
  private readonly entries = new Map<string, ScaleEntry>();

  constructor(options: ExpectationOptions = {}) {
    super(options);
  }

  /** Call before sending the create/delete. */
  expectScale(controllerKey: string, action: ScaleAction, name: string): void {
    let entry = this.entries.get(controllerKey);
    if (!entry) {
      entry = { pending: { create: new Set(), delete: new Set() } };
      this.entries.set(controllerKey, entry);
    }
    entry.pending[action].add(name);
  }

  /** Call from the child's create/delete event handler. */
  observeScale(controllerKey: string, action: ScaleAction, name: string): void {
    const entry = this.entries.get(controllerKey);
    if (!entry) return;
    entry.pending[action].delete(name);
    if (isEmpty(entry)) this.entries.delete(controllerKey);
  }

  satisfiedExpectations(controllerKey: string): Satisfaction & { dirty: Record<ScaleAction, string[]> } {
    const entry = this.entries.get(controllerKey);
    if (!entry || isEmpty(entry)) {
      this.entries.delete(controllerKey);
      return { ...satisfied, dirty: { create: [], delete: [] } };
    }
    return {
      ...this.unsatisfied(controllerKey, entry),
      dirty: { create: [...entry.pending.create].sort(), delete: [...entry.pending.delete].sort() },
    };
  }

  getExpectations(controllerKey: string): Record<ScaleAction, Set<string>> | undefined {
    const entry = this.entries.get(controllerKey);
    if (!entry) return undefined;
    return { create: new Set(entry.pending.create), delete: new Set(entry.pending.delete) };
  }

  /** Call when the workload itself is deleted. */
  deleteExpectations(controllerKey: string): void {
    this.entries.delete(controllerKey);
  }

  /** The gate check for controllerKey; `onDrop` runs when it is dropped (e.g. a leakage counter). */
  check(controllerKey: string, what: string, onDrop?: () => void): ExpectationCheck {
    return {
      what,
      timeoutMs: this.timeout,
      satisfied: () => this.satisfiedExpectations(controllerKey),
      drop: () => {
        onDrop?.();
        this.deleteExpectations(controllerKey);
      },
    };
  }
}

function isEmpty(entry: ScaleEntry): boolean {
  return entry.pending.create.size === 0 && entry.pending.delete.size === 0;
}

interface UpdateEntry {
  revision: string;
  pending: Set<string>;
  firstUnsatisfied?: number;
}

/**
 * Per workload: pods we updated to `revision` whose cached copy does not show that revision yet.
 * `isAtRevision(pod, revision)` is Kruise's revisionAdapter.EqualToRevisionHash.
 */
export class UpdateExpectations<P extends ObjectMetaLike = ObjectMetaLike> extends Tracker {
  private readonly entries = new Map<string, UpdateEntry>();

  constructor(
    private readonly isAtRevision: (pod: P, revision: string) => boolean,
    options: ExpectationOptions = {},
  ) {
    super(options);
  }

  /** Expecting a new revision forgets whatever was expected for the previous one. */
  expectUpdated(controllerKey: string, revision: string, pod: P): void {
    let entry = this.entries.get(controllerKey);
    if (!entry || entry.revision !== revision) {
      entry = { revision, pending: new Set() };
      this.entries.set(controllerKey, entry);
    }
    entry.pending.add(objectKey(pod));
  }

  observeUpdated(controllerKey: string, revision: string, pod: P): void {
    const entry = this.entries.get(controllerKey);
    if (!entry) return;
    const key = objectKey(pod);
    if (entry.revision === revision && entry.pending.has(key) && this.isAtRevision(pod, revision)) {
      entry.pending.delete(key);
    }
    if (entry.revision !== revision || entry.pending.size === 0) this.entries.delete(controllerKey);
  }

  /** Stops waiting for one pod (it was deleted). */
  deleteObject(controllerKey: string, pod: P): void {
    this.entries.get(controllerKey)?.pending.delete(objectKey(pod));
  }

  /** Anything expected for another revision no longer matters, so it counts as satisfied. */
  satisfiedExpectations(controllerKey: string, revision: string): Satisfaction & { dirty: string[] } {
    const entry = this.entries.get(controllerKey);
    if (!entry) return { ...satisfied, dirty: [] };
    if (entry.revision !== revision || entry.pending.size === 0) {
      entry.firstUnsatisfied = undefined;
      return { ...satisfied, dirty: [] };
    }
    return { ...this.unsatisfied(controllerKey, entry), dirty: [...entry.pending].sort() };
  }

  deleteExpectations(controllerKey: string): void {
    this.entries.delete(controllerKey);
  }
}

interface VersionEntry {
  resourceVersion: string;
  firstUnsatisfied?: number;
}

/**
 * Per object UID: the highest resourceVersion we wrote. Until the cache shows at least that version
 * the cached object is stale and must not be acted on (used after in-place updates).
 */
export class ResourceVersionExpectations extends Tracker {
  private readonly entries = new Map<string, VersionEntry>();

  constructor(options: ExpectationOptions = {}) {
    super(options);
  }

  /** Call with the object returned by our write. */
  expect(obj: ObjectMetaLike): void {
    const uid = obj.metadata?.uid ?? '';
    const rv = obj.metadata?.resourceVersion ?? '';
    const entry = this.entries.get(uid);
    if (!entry) this.entries.set(uid, { resourceVersion: rv });
    else if (isResourceVersionNewer(entry.resourceVersion, rv)) entry.resourceVersion = rv;
  }

  /** Call from event handlers with the cached object. */
  observe(obj: ObjectMetaLike): void {
    const uid = obj.metadata?.uid ?? '';
    const entry = this.entries.get(uid);
    if (entry && isResourceVersionNewer(entry.resourceVersion, obj.metadata?.resourceVersion ?? '')) {
      this.entries.delete(uid);
    }
  }

  isSatisfied(obj: ObjectMetaLike): Satisfaction {
    const uid = obj.metadata?.uid ?? '';
    const entry = this.entries.get(uid);
    if (!entry) return satisfied;
    if (isResourceVersionNewer(entry.resourceVersion, obj.metadata?.resourceVersion ?? '')) {
      this.entries.delete(uid);
      return satisfied;
    }
    return this.unsatisfied(uid, entry);
  }

  delete(obj: ObjectMetaLike): void {
    this.entries.delete(obj.metadata?.uid ?? '');
  }

  /** The gate check for one object we wrote. */
  check(obj: ObjectMetaLike, what: string, waitMs?: number): ExpectationCheck {
    return new ObjectVersionCheck(this, obj, what, waitMs);
  }
}

/**
 * One object's gate check. A class rather than an object of closures: workload controllers build
 * one per pod every round, and most are answered by one map lookup.
 */
class ObjectVersionCheck implements ExpectationCheck {
  constructor(
    private readonly tracker: ResourceVersionExpectations,
    private readonly obj: ObjectMetaLike,
    readonly what: string,
    readonly waitMs: number | undefined,
  ) {}

  get timeoutMs(): number {
    return this.tracker.timeout;
  }

  get detail(): Record<string, unknown> {
    return { object: this.obj.metadata?.name };
  }

  satisfied(): Satisfaction {
    return this.tracker.isSatisfied(this.obj);
  }

  drop(): void {
    this.tracker.delete(this.obj);
  }
}

const decimal = /^\d+$/;

/**
 * Whether `candidate` is at least `expected`. resourceVersions are opaque to clients in general, but
 * on etcd-backed API servers they are decimal counters; an unusable expectation never blocks, and
 * an unusable candidate never satisfies (matching Kruise).
 */
export function isResourceVersionNewer(expected: string, candidate: string): boolean {
  if (!decimal.test(expected)) return true;
  if (!decimal.test(candidate)) return false;
  return BigInt(candidate) >= BigInt(expected);
}

function objectKey(obj: ObjectMetaLike): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
