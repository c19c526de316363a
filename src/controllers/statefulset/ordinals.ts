// Advanced StatefulSet ordinals (behaviour spec §4.2, upstream getStatefulSetReplicasRange,
// reserveOrdinals parsing): which ordinals hold replicas, and which pods are condemned.

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { Pod } from '../../apis/core-objects.ts';

const RANGE = /^(\d+)-(\d+)$/;

/** reserveOrdinals as a set: ints ≥ 0 and "a-b" ranges (inclusive); anything else is ignored (the webhook rejects it). */
export function reservedOrdinals(set: StatefulSet): Set<number> {
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

export const replicasOf = (set: StatefulSet): number => set.spec?.replicas ?? 1;

/** spec.ordinals.start under gate StatefulSetStartOrdinal, else 0. */
export function startOrdinal(set: StatefulSet, features: Pick<FeatureGates, 'StatefulSetStartOrdinal'>): number {
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
export function replicasRange(set: StatefulSet, features: Pick<FeatureGates, 'StatefulSetStartOrdinal'>): OrdinalRange {
  const start = startOrdinal(set, features);
  const reserved = reservedOrdinals(set);
  const replicas = replicasOf(set);
  let end = start;
  for (let found = 0; found < replicas; end++) if (!reserved.has(end)) found++;
  return { start, end, reserved };
}

/** The ordinal of a pod named `<set>-<ordinal>`, or -1. */
export function ordinalOf(setName: string, podName: string): number {
  if (!podName.startsWith(`${setName}-`)) return -1;
  const rest = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

export const inRange = (r: OrdinalRange, ordinal: number): boolean => ordinal >= r.start && ordinal < r.end && !r.reserved.has(ordinal);

export const podNameFor = (setName: string, ordinal: number): string => `${setName}-${ordinal}`;

/** Pods split into replica slots (index = ordinal - start) and condemned pods (descending ordinal). */
export function slotPods(setName: string, range: OrdinalRange, pods: readonly Pod[]): { slots: Array<Pod | undefined>; condemned: Pod[] } {
  const slots: Array<Pod | undefined> = new Array(range.end - range.start).fill(undefined);
  const condemned: Pod[] = [];
  for (const p of pods) {
    const ord = ordinalOf(setName, p.metadata.name ?? '');
    if (ord < 0) continue;
    if (inRange(range, ord)) slots[ord - range.start] = p;
    else condemned.push(p);
  }
  condemned.sort((a, b) => ordinalOf(setName, b.metadata.name ?? '') - ordinalOf(setName, a.metadata.name ?? ''));
  return { slots, condemned };
}
