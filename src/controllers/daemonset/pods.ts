// Advanced DaemonSet pods as every phase of a round reads them (lifecycle, revision, availability,
// the node they run on), and the rolling-update values of the spec the phases share.

import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import { CONDITION_INPLACE_UPDATE_READY, CONTROLLER_REVISION_HASH_LABEL, LifecycleState } from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { getCondition, getPodLifecycleState } from '../../util/lifecycle.ts';
import { targetNodeName } from '../../util/nodefit.ts';
import { isPodAvailable, timeMillis } from '../../util/pod.ts';

export const podName = (p: Pod) => p.metadata.name ?? '';
export const isPreDeleting = (p: Pod | undefined) => !!p && getPodLifecycleState(p) === LifecycleState.PreparingDelete;
export const isNilOrPreDeleting = (p: Pod | undefined) => !p || isPreDeleting(p);
export const isPodUpdated = (p: Pod, hash: string) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash;
export const hasInPlaceGate = (p: Pod) => (p.spec?.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY);

/** isDaemonPodAvailable: available, and not in the middle of an in-place update. */
export function isDaemonPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodAvailable(pod, minReadySeconds, nowMs)) return false;
  if (!hasInPlaceGate(pod)) return true;
  const c = getCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  return !c || c.status === 'True';
}

/** podByCreationTimestampAndPhase: scheduled first, then oldest, then by name. */
export function compareDaemonPods(a: Pod, b: Pod): number {
  const sa = !!a.spec?.nodeName;
  const sb = !!b.spec?.nodeName;
  if (sa !== sb) return sa ? -1 : 1;
  const ta = timeMillis(a.metadata.creationTimestamp) ?? 0;
  const tb = timeMillis(b.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return podName(a) < podName(b) ? -1 : podName(a) > podName(b) ? 1 : 0;
}

/** Pods grouped by the node they are (or will be) bound to; pods naming no node are left out. */
export function nodeToDaemonPods(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const p of pods) {
    const node = targetNodeName(p);
    if (node === undefined) continue;
    const list = out.get(node);
    if (list) list.push(p);
    else out.set(node, [p]);
  }
  return out;
}

export const rollingUpdateOf = (ds: DaemonSet) =>
  (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' ? ds.spec?.updateStrategy?.rollingUpdate : undefined;

/** allowSurge: maxSurge scaled against one node is > 0. */
export const allowsSurge = (ds: DaemonSet) => {
  const ru = rollingUpdateOf(ds);
  return ru?.maxSurge != null && getScaledValueFromIntOrPercent(ru.maxSurge, 1, true) > 0;
};

/** partition as a node count: int, or percent rounded down against desiredNumberScheduled. */
export const partitionOf = (ds: DaemonSet, desired: number) => {
  const p = rollingUpdateOf(ds)?.partition;
  return p == null ? 0 : getScaledValueFromIntOrPercent(p, desired, false);
};
