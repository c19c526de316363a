// The sharder's decisions (docs/sharding.md), pure: which shards are alive from their Leases and
// what the sharder has seen of them, and for one workload whether to assign, move or drain it.

import { resourceVersionAtLeast, type ShardRing } from '../../util/shard-ring.ts';

/** At most this many workloads are draining at once: a joining shard takes its share over several passes. */
export const MAX_CONCURRENT_DRAINS = 50;

/** A dead shard's Lease is deleted this long after the sharder found it dead. */
export const DEAD_LEASE_RETENTION_MS = 60_000;

/**
 * ready: renewed by its shard within the lease duration; expired: its shard's renewals stopped (as
 * the sharder's clock sees it) but the Lease is still in the shard's name — its shard may still
 * write; dead: the Lease is no longer its shard's (released, or taken over by the sharder).
 */
export type ShardState = 'ready' | 'expired' | 'dead';

/** A shard Lease as the sharder sees it. */
export interface ShardLeaseView {
  /** The shard id (the Lease's name after `<ring>-shard-`). */
  shard: string;
  holderIdentity: string;
  resourceVersion: string;
  /** When the sharder first saw the Lease at this resourceVersion (its own clock, ms). */
  observedAt: number;
}

export interface ShardStatesPlan {
  states: Map<string, ShardState>;
  /** Expired Leases the sharder takes over (a compare-and-swap: a shard renewing meanwhile stays alive). */
  takeOver: string[];
  /** Dead Leases old enough to delete. */
  remove: string[];
  /** When the next Lease would expire or become deletable, if any. */
  requeueAfterMs?: number;
}

/**
 * The state of each shard: a Lease held by its own shard and unchanged for the lease duration has
 * expired (judged on the sharder's clock from when it saw it change, never from the holder's
 * renewTime: clock skew between replicas does not matter, as in leader election).
 */
export function planShardStates(leases: readonly ShardLeaseView[], now: number, leaseDurationMs: number): ShardStatesPlan {
  const plan: ShardStatesPlan = { states: new Map(), takeOver: [], remove: [] };
  const wake = (ms: number) => (plan.requeueAfterMs = Math.min(plan.requeueAfterMs ?? Infinity, Math.max(ms, 1)));
  for (const lease of leases) {
    const age = now - lease.observedAt;
    if (lease.holderIdentity !== lease.shard) {
      plan.states.set(lease.shard, 'dead');
      if (age >= DEAD_LEASE_RETENTION_MS) plan.remove.push(lease.shard);
      else wake(DEAD_LEASE_RETENTION_MS - age);
    } else if (age >= leaseDurationMs) {
      plan.states.set(lease.shard, 'expired');
      plan.takeOver.push(lease.shard);
    } else {
      plan.states.set(lease.shard, 'ready');
      wake(leaseDurationMs - age);
    }
  }
  return plan;
}

/** An object a workload owns (pod, PVC, revision) as the sharder sees it. */
export interface ShardChild {
  /** The resource (`pods`, `persistentvolumeclaims`, `controllerrevisions`). */
  resource: string;
  name: string;
  /** Its shard label, if any. */
  shard?: string;
}

export interface ShardWorkload {
  /** The ring's hash key (workloadKey). */
  key: string;
  shard?: string;
  draining: boolean;
}

export type SharderDecision =
  /** Nothing to do (in place, or waiting: no live shard, a shard expiring, a drain not yet acknowledged, too many drains). */
  | { action: 'none'; reason: string }
  /** Label the children, then the workload, with `shard` (and clear the drain label). */
  | { action: 'assign'; shard: string; children: ShardChild[] }
  /** Label stray children of a workload in place. */
  | { action: 'label-children'; shard: string; children: ShardChild[] }
  /** Ask the workload's shard to let go of it. */
  | { action: 'drain' }
  /** The ring wants it where it is after all: take the drain label off. */
  | { action: 'undrain'; children: ShardChild[]; shard: string };

/**
 * What to do with one workload. Children are always labelled before their workload, so the shard
 * receiving a workload has (or is catching up on) everything it owns before it reconciles it.
 */
export function planSharder(
  workload: ShardWorkload,
  children: readonly ShardChild[],
  ring: ShardRing,
  states: ReadonlyMap<string, ShardState>,
  drainsInFlight: number,
): SharderDecision {
  const target = ring.shardFor(workload.key);
  if (!target) return { action: 'none', reason: 'no ready shard' };
  const strays = (shard: string) => children.filter((c) => c.shard !== shard);
  const current = workload.shard;
  if (!current) return { action: 'assign', shard: target, children: strays(target) };
  const state = states.get(current) ?? 'dead';
  // Its shard can no longer write (its Lease is not its own): no handshake to wait for.
  if (state === 'dead') return { action: 'assign', shard: target, children: strays(target) };
  if (state === 'expired') return { action: 'none', reason: `shard ${current} expired; its Lease is taken over first` };
  if (current === target) {
    if (workload.draining) return { action: 'undrain', shard: current, children: strays(current) };
    const stray = strays(current);
    return stray.length ? { action: 'label-children', shard: current, children: stray } : { action: 'none', reason: 'in place' };
  }
  if (workload.draining) return { action: 'none', reason: `waiting for shard ${current} to let go` };
  if (drainsInFlight >= MAX_CONCURRENT_DRAINS) return { action: 'none', reason: 'too many workloads draining' };
  return { action: 'drain' };
}

/**
 * The annotation a moved workload carries: for each resource whose children were relabelled, the
 * newest resourceVersion of those writes. The receiving shard holds the workload back until its
 * cache of that resource has seen that far (shardCaughtUp).
 */
export function childResourceVersions(written: ReadonlyArray<{ resource: string; resourceVersion: string }>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { resource, resourceVersion } of written) {
    const seen = out[resource];
    if (!seen || !resourceVersionAtLeast(seen, resourceVersion)) out[resource] = resourceVersion;
  }
  return out;
}
