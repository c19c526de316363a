// Taking PodUnavailableBudget for a pod operation, atomically (spec §16 step 3;
// pubcontrol.PodUnavailableBudgetValidatePod). Used by the pod webhook (DELETE, EVICT, UPDATE,
// RESIZE) and by the workload controllers before an in-place update.
//
// The budget is never overspent because every decrement is a status write carrying the
// resourceVersion it was computed from: two writers (two requests, two replicas, the PUB
// controller) cannot both succeed from the same version; the loser re-reads from the API server and
// decides again. Inside one process, requests for the same budget are also serialised and each
// starts from the newest version this process has seen (the informer's or its own last write), so
// a burst of concurrent evictions does not turn into a burst of conflicts.
import type { Pod } from '../apis/core-objects.ts';
import type { PubOperation } from '../apis/policy/podunavailablebudget.ts';
import { realClock, type Clock } from '../util/clock.ts';
import { pubExemption, relatedPubName, takePubBudget, type StoredPub } from '../util/pub.ts';
import { isConflict, isNotFound } from './errors.ts';

/** Where a guard reads and writes budgets. */
export interface PubStore {
  /** From the informer cache. */
  cached(namespace: string, name: string): Promise<StoredPub | undefined>;
  /** From the API server (after a conflict). */
  fetch(namespace: string, name: string): Promise<StoredPub | undefined>;
  /** PUT …/status with the object's resourceVersion; a 409 when someone wrote first. */
  writeStatus(pub: StoredPub): Promise<StoredPub>;
}

export type PubDecision =
  | { allowed: true; /** Why no budget was needed, when none was taken. */ exempt?: string; pub?: string }
  | { allowed: false; message: string; pub: string };

export interface PubBudgetGuardOptions {
  store: PubStore;
  /** Gate InPlacePodVerticalScaling: off ⇒ a protected UPDATE covers RESIZE. */
  inPlacePodVerticalScaling: boolean;
  clock?: Clock;
  /** Attempts of the read-decide-write round before giving up on conflicts (upstream ConflictRetry: 4). */
  attempts?: number;
  /** Pause between attempts (upstream: 500 ms ± 10 %). */
  retryDelayMs?: number;
  /** Called when a pod operation is refused (upstream's PubPreventPodDeletion event). */
  onDenied?: (pod: Pod, pubName: string) => void;
}

const resourceVersionNumber = (p: StoredPub | undefined) => Number(p?.metadata.resourceVersion ?? 0) || 0;

export class PubBudgetGuard {
  private readonly locks = new Map<string, Promise<void>>();
  /** The newest version of each budget this process wrote (upstream's GlobalCache). */
  private readonly written = new Map<string, StoredPub>();
  private readonly clock: Clock;

  constructor(private readonly opts: PubBudgetGuardOptions) {
    this.clock = opts.clock ?? realClock;
  }

  /**
   * Decides whether the pod may undergo the operation, taking one unit of its budget when it must
   * (not for dry runs: they are judged but write nothing).
   */
  async admit(pod: Pod, operation: PubOperation, dryRun: boolean): Promise<PubDecision> {
    const pubName = relatedPubName(pod);
    if (!pubName) return { allowed: true, exempt: 'pod has no related PodUnavailableBudget' };
    const namespace = pod.metadata.namespace ?? 'default';
    const podName = pod.metadata.name ?? '';
    const key = `${namespace}/${pubName}`;
    const cachedPub = await this.opts.store.cached(namespace, pubName);
    const pub = cachedPub && this.newest(key, cachedPub);
    const exempt = pubExemption(pod, pub, operation, this.opts.inPlacePodVerticalScaling);
    if (exempt) return { allowed: true, exempt, pub: pubName };
    const attempts = this.opts.attempts ?? 4;
    let refresh = false;
    let lastConflict = '';
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await this.clock.sleep(jittered(this.opts.retryDelayMs ?? 500));
      const outcome = await this.exclusive(key, async (): Promise<PubDecision | 'conflict'> => {
        const cached = refresh ? undefined : await this.opts.store.cached(namespace, pubName);
        const current = refresh ? await this.opts.store.fetch(namespace, pubName) : cached && this.newest(key, cached);
        if (!current) return { allowed: true, exempt: 'no PodUnavailableBudget', pub: pubName };
        // Another request may have recorded this pod meanwhile.
        const againExempt = pubExemption(pod, current, operation, this.opts.inPlacePodVerticalScaling);
        if (againExempt) return { allowed: true, exempt: againExempt, pub: pubName };
        const taken = takePubBudget(current, podName, operation, new Date(this.clock.now()));
        if (taken.denied) {
          this.opts.onDenied?.(pod, pubName);
          return { allowed: false, message: taken.denied, pub: pubName };
        }
        if (dryRun) return { allowed: true, pub: pubName };
        try {
          const stored = await this.opts.store.writeStatus({ ...current, status: taken.status });
          this.remember(key, stored);
          return { allowed: true, pub: pubName };
        } catch (err) {
          if (isNotFound(err)) return { allowed: true, exempt: 'no PodUnavailableBudget', pub: pubName };
          if (!isConflict(err)) throw err;
          lastConflict = (err as Error).message;
          return 'conflict';
        }
      });
      if (outcome !== 'conflict') return outcome;
      refresh = true;
    }
    return { allowed: false, message: lastConflict || `couldn't update PodUnavailableBudget ${pubName} due to conflicts`, pub: pubName };
  }

  /** Records a budget status written elsewhere in this process (the PUB controller), so admissions start from it. */
  remember(key: string, pub: StoredPub): void {
    if (resourceVersionNumber(pub) >= resourceVersionNumber(this.written.get(key))) this.written.set(key, pub);
  }

  /** Forgets a deleted budget. */
  forget(key: string): void {
    this.written.delete(key);
  }

  /** The newer of a cached copy and this process's last write (compared by resourceVersion, as upstream). */
  newest(key: string, cached: StoredPub): StoredPub {
    const mine = this.written.get(key);
    return mine && resourceVersionNumber(mine) > resourceVersionNumber(cached) ? mine : cached;
  }

  /** Runs fn after every earlier call for the same budget (namespace/name) has finished: a keyed mutex. */
  async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    this.locks.set(key, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(key) === tail) this.locks.delete(key);
    }
  }
}

function jittered(ms: number): number {
  return ms * (1 + Math.random() * 0.1);
}
