// Fencing for writes only the leader may make. The elector learns that it lost the lease only when a
// renewal fails, so a leader that was frozen (SIGSTOP, a long GC pause, a suspended VM) still
// believes it leads for up to RenewDeadline after it resumes — long enough to overwrite what the
// new leader wrote. Before such a write, the writer re-reads the Lease from the API server.

import type { Lease } from '../apis/core-objects.ts';
import type { KubeClient } from './client.ts';
import { isNotFound } from './errors.ts';
import { Leases } from './resources.ts';

export interface LeaseRef {
  namespace: string;
  name: string;
}

/** A leader-only write was refused because this process no longer holds the lease. */
export class NotLeaseHolderError extends Error {
  override name = 'NotLeaseHolderError';
}

/**
 * Whether `identity` holds the Lease now: it is the holder and its last renewal is younger than the
 * lease duration by at least `marginMs` (so the write that follows lands before anyone else may
 * take over). Compares against this machine's clock, as the elector itself does.
 */
export async function leaseHeld(
  client: KubeClient,
  lease: LeaseRef,
  identity: string,
  now = Date.now(),
  marginMs = 2_000,
): Promise<boolean> {
  let current: Lease;
  try {
    current = await client.get<Lease>(Leases, lease.name, { namespace: lease.namespace });
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  const spec = current.spec ?? {};
  if (!identity || spec.holderIdentity !== identity) return false;
  const renewed = Date.parse(spec.renewTime ?? '');
  if (!Number.isFinite(renewed)) return false;
  return renewed + (spec.leaseDurationSeconds ?? 0) * 1_000 - marginMs > now;
}

/** A guard that throws NotLeaseHolderError unless `identity` holds the lease (see leaseHeld). */
export function leaseFence(client: KubeClient, lease: LeaseRef, identity: string): () => Promise<void> {
  return async () => {
    if (!(await leaseHeld(client, lease, identity))) {
      throw new NotLeaseHolderError(`not writing: lease ${lease.namespace}/${lease.name} is no longer held by ${identity}`);
    }
  };
}
