// The write step every controller's executor shares. Writes carry the resourceVersion they were
// computed from, so a concurrent writer (the daemon, another controller, a user) turns ours into a
// 409 instead of being overwritten: the round ends and the key is looked at again shortly, from the
// newer object. A 404 means the object went away meanwhile: the round ends with nothing left to do.
import type { KubeClient } from './client.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { isConflict, isNotFound } from './errors.ts';
import type { ResourceType } from './resources.ts';
import type { ReconcileResult } from './controller.ts';
import type { ResourceVersionExpectations } from './expectations.ts';

/** How soon a round that lost a write race looks again. */
export const CONFLICT_REQUEUE_MS = 1000;

/** How the round ends after a write lost a race (409) or found its object gone (404); undefined for any other error. */
export function writeRaceResult(err: unknown): ReconcileResult | undefined {
  if (isConflict(err)) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
  if (isNotFound(err)) return {};
  return undefined;
}

/** Runs the writes of one round, ending it on a 409 (requeue) or 404 (done); other errors propagate. */
export async function applyWrites(write: () => Promise<ReconcileResult>): Promise<ReconcileResult> {
  try {
    return await write();
  } catch (err) {
    const ended = writeRaceResult(err);
    if (ended) return ended;
    throw err;
  }
}

export interface StatusWrite<T> {
  /** The stored object, when the write went through. */
  written?: T;
  /** Set when the round must end here (409: requeue; 404: done): return it from reconcile. */
  ended?: ReconcileResult;
}

/**
 * Stores a new status (PUT …/status with the resourceVersion read) and expects the written
 * resourceVersion in the cache. `status` undefined means unchanged: nothing is written.
 */
export async function writeStatus<T extends KubeObject & { status?: unknown }>(
  client: Pick<KubeClient, 'updateStatus'>,
  resource: ResourceType,
  obj: T,
  status: T['status'] | undefined,
  expectations?: ResourceVersionExpectations,
): Promise<StatusWrite<T>> {
  if (status === undefined) return {};
  try {
    const written = await client.updateStatus<T>(resource, { ...obj, status });
    expectations?.expect(written);
    return { written };
  } catch (err) {
    const ended = writeRaceResult(err);
    if (ended) return { ended };
    throw err;
  }
}
