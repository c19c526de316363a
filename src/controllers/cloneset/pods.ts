// CloneSet's view of its pods: readiness and availability (with lifecycle and the
// InPlaceUpdateReady gate), specified deletion, revision membership.

import type { CloneSet } from '../../apis/apps/cloneset.ts';
import {
  CONDITION_INPLACE_UPDATE_READY,
  CONTROLLER_REVISION_HASH_LABEL,
  LifecycleState,
  SPECIFIED_DELETE_LABEL,
} from '../../apis/constants.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { getCondition, getPodLifecycleState } from '../../util/lifecycle.ts';
import { isPodAvailable as isPodReadyFor } from '../../util/pod.ts';
import { equalToRevisionHash } from '../../util/revision.ts';

export type { Pod };

export const replicasOf = (cs: CloneSet): number => cs.spec?.replicas ?? 1;
export const minReadySecondsOf = (cs: CloneSet): number => cs.spec?.minReadySeconds ?? 0;
export const podName = (pod: Pod): string => pod.metadata.name ?? '';

/** Running, ready for minReadySeconds, and not held by an unfinished in-place update. */
export function isPodUpdateReady(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (pod.status?.phase !== 'Running' || !isPodReadyFor(pod, minReadySeconds, nowMs)) return false;
  const c = getCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  return !c || c.status === 'True';
}

/** CloneSet availability: lifecycle state unset or Normal, and update-ready for minReadySeconds. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  const state = getPodLifecycleState(pod);
  if (state !== '' && state !== LifecycleState.Normal) return false;
  return isPodUpdateReady(pod, minReadySeconds, nowMs);
}

/** The "ready" that deletion limits use: available with minReadySeconds 0. */
export const isPodReady = (pod: Pod, nowMs: number): boolean => isPodAvailable(pod, 0, nowMs);

export function isSpecifiedDelete(cs: CloneSet, pod: Pod): boolean {
  if (pod.metadata.labels && Object.hasOwn(pod.metadata.labels, SPECIFIED_DELETE_LABEL)) return true;
  return (cs.spec?.scaleStrategy?.podsToDelete ?? []).includes(podName(pod));
}

export function isPodAtRevision(pod: Pod, revision: string): boolean {
  return equalToRevisionHash(pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL], revision);
}

/** revision.IsPodUpdate: under PreparingUpdateAsUpdate a PreparingUpdate pod counts as updated. */
export function isPodUpdate(pod: Pod, updateRevision: string, features: Pick<FeatureGates, 'PreparingUpdateAsUpdate'>): boolean {
  if (features.PreparingUpdateAsUpdate && getPodLifecycleState(pod) === LifecycleState.PreparingUpdate) return true;
  return isPodAtRevision(pod, updateRevision);
}

export function groupUpdated(pods: readonly Pod[], updateRevision: string): { updated: Pod[]; notUpdated: Pod[] } {
  const updated: Pod[] = [];
  const notUpdated: Pod[] = [];
  for (const p of pods) (isPodAtRevision(p, updateRevision) ? updated : notUpdated).push(p);
  return { updated, notUpdated };
}
