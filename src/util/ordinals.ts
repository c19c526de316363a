// Which ordinals of a StatefulSet (apps/v1 or Advanced) hold replicas (behaviour spec §4.2, upstream
// getStatefulSetReplicasRange, reserveOrdinals parsing): shared by the Advanced StatefulSet
// controller and PersistentPodState, which forgets the pods scaled away.
import type { StatefulSet } from '../apis/apps/statefulset.ts';
import type { FeatureGates } from '../apis/features.ts';

/** The fields read: apps/v1 StatefulSets have no reserveOrdinals. */
export type OrdinalsView = { spec?: Pick<NonNullable<StatefulSet['spec']>, 'replicas' | 'reserveOrdinals' | 'ordinals'> };

const RANGE = /^(\d+)-(\d+)$/;

/** reserveOrdinals as a set: ints ≥ 0 and "a-b" ranges (inclusive); anything else is ignored (the webhook rejects it). */
export function reservedOrdinals(set: OrdinalsView): Set<number> {
  const out = new Set<number>();
  for (const r of set.spec?.reserveOrdinals ?? []) {
    if (typeof r === 'number') {
      if (Number.isInteger(r) && r >= 0) out.add(r);
      continue;
    }
    const m = RANGE.exec(r);
    if (m) {
      const [a, b] = [Number(m[1]), Number(m[2])];
      for (let i = Math.min(a, b); i <= Math.max(a, b); i++) out.add(i);
    } else if (/^\d+$/.test(r)) out.add(Number(r));
  }
  return out;
}

export const replicasOf = (set: OrdinalsView): number => set.spec?.replicas ?? 1;

/** spec.ordinals.start under gate StatefulSetStartOrdinal, else 0. */
export function startOrdinal(set: OrdinalsView, features: Pick<FeatureGates, 'StatefulSetStartOrdinal'>): number {
  return features.StatefulSetStartOrdinal ? (set.spec?.ordinals?.start ?? 0) : 0;
}

export interface OrdinalRange {
  /** First ordinal (inclusive). */
  start: number;
  /** End (exclusive): `replicas` non-reserved ordinals lie in [start, end). */
  end: number;
  reserved: Set<number>;
}

/** getStatefulSetReplicasRange: walk from start counting non-reserved ordinals until replicas are found. */
export function replicasRange(set: OrdinalsView, features: Pick<FeatureGates, 'StatefulSetStartOrdinal'>): OrdinalRange {
  const start = startOrdinal(set, features);
  const reserved = reservedOrdinals(set);
  const replicas = replicasOf(set);
  let end = start;
  for (let found = 0; found < replicas; end++) if (!reserved.has(end)) found++;
  return { start, end, reserved };
}

export const inRange = (r: OrdinalRange, ordinal: number): boolean => ordinal >= r.start && ordinal < r.end && !r.reserved.has(ordinal);
