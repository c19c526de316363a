// The container launch priority plan (spec §18.1, upstream pkg/controller/containerlaunchpriority):
// which step one ordered pod takes next — create its barrier ConfigMap, release the highest
// pending priority, or mark the pod complete — from the pod and its barrier.

import { CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION, ENV_CONTAINER_BARRIER } from '../../apis/constants.ts';
import type { ConfigMap, Pod } from '../../apis/core-objects.ts';

/** The priority a container waits for (from its barrier env's key `p_<n>`), if any. */
export function containerPriority(c: {
  env?: Array<{ name: string; valueFrom?: { configMapKeyRef?: { key: string } } }>;
}): number | undefined {
  const key = c.env?.find((e) => e.name === ENV_CONTAINER_BARRIER)?.valueFrom?.configMapKeyRef?.key;
  if (!key?.startsWith('p_')) return undefined;
  const n = Number(key.slice(2));
  return Number.isInteger(n) ? n : undefined;
}

/** findNextPriorities: the priorities of containers not ready yet, ascending. */
export function nextPriorities(pod: Pod): number[] {
  const ready = new Set((pod.status?.containerStatuses ?? []).filter((s) => s.ready).map((s) => s.name));
  const out: number[] = [];
  for (const c of pod.spec?.containers ?? []) {
    if (ready.has(c.name)) continue;
    const p = containerPriority(c);
    if (p !== undefined) out.push(p);
  }
  return out.sort((a, b) => a - b);
}

export type LaunchPriorityPlan =
  { action: 'none' } | { action: 'createBarrier' } | { action: 'release'; key: string; complete: boolean } | { action: 'complete' };

/** One step for a pod, given its barrier ConfigMap (undefined: not created yet). */
export function planLaunchPriority(pod: Pod, barrier: Pick<ConfigMap, 'data'> | undefined): LaunchPriorityPlan {
  if (pod.metadata.annotations?.[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION] === 'true') return { action: 'none' };
  if (pod.status?.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True')) return { action: 'none' };
  const next = nextPriorities(pod);
  if (!next.length && !barrier) return { action: 'none' };
  if (!barrier) return { action: 'createBarrier' };
  const has = (p: number) => barrier.data?.[`p_${p}`] !== undefined;
  if (!next.length || has(next[0]!)) return { action: 'complete' };
  const highest = next.at(-1)!;
  if (has(highest)) return highest === next[0] ? { action: 'complete' } : { action: 'none' };
  return { action: 'release', key: `p_${highest}`, complete: highest === next[0] };
}
