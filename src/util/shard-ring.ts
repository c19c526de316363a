// The sharded manager's assignment (docs/sharding.md): the label names, the shard id a replica's
// identity becomes, and the consistent-hash ring that maps a workload to one live shard. Pure: every
// replica computing the ring from the same shard Leases gets the same answer.

import { createHash } from 'node:crypto';

/** Points each shard owns on the ring: enough for an even spread over a few shards. */
export const TOKENS_PER_SHARD = 100;

/**
 * The label names of one ring (the manager's --leader-election-id). Under `shard.kruise.io/`: the
 * project's domain, and a prefix OpenKruise v1.8.2 never reads or writes, so the labels are inert
 * after a hand-back; the ring's name in the key lets two managers shard one cluster independently.
 */
export interface ShardLabels {
  /** On shard Leases: the ring they belong to. */
  ring: 'shard.kruise.io/ring';
  /** On workloads and what they own: the shard id reconciling them. */
  shard: string;
  /** On a workload being moved: `true` until its shard lets go of it. */
  drain: string;
  /**
   * Annotation on a moved workload: JSON `{resource: resourceVersion}`, how far the receiving shard's
   * caches must have come before it reconciles the workload (its children were relabelled first).
   */
  children: string;
}

export function shardLabels(ring: string): ShardLabels {
  return {
    ring: 'shard.kruise.io/ring',
    shard: `shard.kruise.io/${ring}`,
    drain: `drain.shard.kruise.io/${ring}`,
    children: `children.shard.kruise.io/${ring}`,
  };
}

/** The Lease a shard renews: `<ring>-shard-<shard id>`. */
export const shardLeaseName = (ring: string, shardId: string): string => `${ring}-shard-${shardId}`;

/**
 * A replica's identity (`<hostname>_<random>`, or a pod name) as a shard id: a DNS label, so it is
 * both a label value and part of the Lease's name. Distinct identities stay distinct (a hash of the
 * original is kept whenever characters had to change or the name was cut).
 */
export function shardIdFor(identity: string): string {
  const cleaned = identity
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (cleaned === identity && cleaned.length <= 40) return cleaned;
  const suffix = createHash('sha256').update(identity).digest('hex').slice(0, 8);
  return `${cleaned.slice(0, 31).replace(/-+$/, '')}-${suffix}`.replace(/^-/, '');
}

/**
 * The hash key of a workload: group, kind, namespace and name — never the uid, unknown before the
 * object exists. What a workload owns takes its workload's key, never one of its own.
 */
export const workloadKey = (group: string, kind: string, namespace: string, name: string): string =>
  `${group}/${kind}/${namespace}/${name}`;

const point = (s: string): bigint => createHash('sha256').update(s).digest().readBigUInt64BE(0);

/** A consistent-hash ring over shard ids: adding or removing one shard moves ≈ 1/n of the keys. */
export class ShardRing {
  private readonly points: ReadonlyArray<{ at: bigint; shard: string }>;
  readonly shards: readonly string[];

  constructor(shards: Iterable<string>) {
    this.shards = [...new Set(shards)].sort();
    const points: Array<{ at: bigint; shard: string }> = [];
    for (const shard of this.shards) for (let i = 0; i < TOKENS_PER_SHARD; i++) points.push({ at: point(`${shard}#${i}`), shard });
    // Ties (never seen with 64-bit points, but possible) go by shard id, so every replica agrees.
    this.points = points.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.shard < b.shard ? -1 : 1));
  }

  /** The shard a key belongs to: the first point at or after its hash, wrapping; undefined on an empty ring. */
  shardFor(key: string): string | undefined {
    if (this.points.length === 0) return undefined;
    const at = point(key);
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.points[mid]!.at < at) lo = mid + 1;
      else hi = mid;
    }
    return this.points[lo === this.points.length ? 0 : lo]!.shard;
  }
}

/**
 * Whether resourceVersion `a` is at or past `b`. Resource versions are etcd revisions (decimal,
 * ordered across every resource of a cluster); an empty or non-numeric one is never past anything.
 */
export function resourceVersionAtLeast(a: string, b: string): boolean {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) >= BigInt(b);
}
