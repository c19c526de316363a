// Advanced StatefulSet ordinals (behaviour spec §4.2, upstream getStatefulSetReplicasRange,
// reserveOrdinals parsing): which ordinals hold replicas, and which pods are condemned.

import type { Pod } from '../../apis/core-objects.ts';
import { inRange, type OrdinalRange } from '../../util/ordinals.ts';

export { inRange, replicasOf, replicasRange, reservedOrdinals, startOrdinal, type OrdinalRange } from '../../util/ordinals.ts';

/** The ordinal of a pod named `<set>-<ordinal>`, or -1. */
export function ordinalOf(setName: string, podName: string): number {
  if (!podName.startsWith(`${setName}-`)) return -1;
  const rest = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

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
