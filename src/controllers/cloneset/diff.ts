// calculateDiffsWithExpectation (behaviour spec §3.4): how many pods to create, delete and update,
// at which revision, within maxSurge / maxUnavailable / partition.

import type { CloneSet } from '../../apis/apps/cloneset.ts';
import { CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL, LifecycleState } from '../../apis/constants.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { getPodLifecycleState } from '../../util/lifecycle.ts';
import { calculatePartitionReplicas, getScaledValueFromIntOrPercent, type IntOrString } from '../../util/intstr.ts';
import { isPodAtRevision, isPodAvailable, isSpecifiedDelete, minReadySecondsOf, replicasOf, type Pod } from './pods.ts';

export interface ExpectationDiffs {
  /** Pods to create (≥ 0). */
  scaleUpNum: number;
  /** Of those, how many should be at the current (old) revision; may exceed scaleUpNum. */
  scaleUpNumOldRevision: number;
  /** Pods to delete beyond those already specified for deletion (≥ 0). */
  scaleDownNum: number;
  scaleDownNumOldRevision: number;
  /** Creations allowed now (scaleStrategy.maxUnavailable). */
  scaleUpLimit: number;
  /** Ready pods that may be deleted now (updateStrategy.maxUnavailable). */
  deleteReadyLimit: number;
  useSurge: number;
  useSurgeOldRevision: number;
  /** >0: pods to move to the update revision; <0: pods to roll back to the current revision. */
  updateNum: number;
  updateMaxUnavailable: number;
}

export const EMPTY_DIFFS: ExpectationDiffs = Object.freeze({
  scaleUpNum: 0,
  scaleUpNumOldRevision: 0,
  scaleDownNum: 0,
  scaleDownNumOldRevision: 0,
  scaleUpLimit: 0,
  deleteReadyLimit: 0,
  useSurge: 0,
  useSurgeOldRevision: 0,
  updateNum: 0,
  updateMaxUnavailable: 0,
});

export const DEFAULT_MAX_UNAVAILABLE = '20%';
const MAX_INT32 = 2147483647;

export interface DiffOptions {
  nowMs: number;
  features: Pick<FeatureGates, 'CloneSetPartitionRollback'>;
  /** Scale passes revision.IsPodUpdate; update leaves it unset (pure revision comparison). */
  isPodUpdate?: (pod: Pod, updateRevision: string) => boolean;
  /** kruise-manager flag --cloneset-scaling-exclude-preparing-delete. */
  scalingExcludePreparingDelete?: boolean;
}

// Upstream ignores parse errors here (the webhook rejects bad values); 0 is what Go gets then.
function scaled(v: IntOrString | undefined, total: number, roundUp: boolean): number {
  try {
    return getScaledValueFromIntOrPercent(v, total, roundUp);
  } catch {
    return 0;
  }
}

function partitionOf(cs: CloneSet, replicas: number): number {
  try {
    return calculatePartitionReplicas(cs.spec?.updateStrategy?.rollingUpdate?.partition, replicas);
  } catch {
    return 0;
  }
}

export function shouldScalingExcludePreparingDelete(cs: CloneSet, flag = false): boolean {
  return (
    !!cs.spec?.scaleStrategy?.excludePreparingDelete ||
    flag ||
    cs.metadata?.labels?.[CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL] === 'true'
  );
}

const abs = Math.abs;
const oppositeSigns = (a: number, b: number) => (a > 0 && b < 0) || (a < 0 && b > 0);

export function calculateDiffsWithExpectation(
  cs: CloneSet,
  pods: readonly Pod[],
  currentRevision: string,
  updateRevision: string,
  opts: DiffOptions,
): ExpectationDiffs {
  const res: ExpectationDiffs = { ...EMPTY_DIFFS };
  const replicas = replicasOf(cs);
  const rolling = cs.spec?.updateStrategy?.rollingUpdate;
  const partition = partitionOf(cs, replicas);
  let maxSurge = rolling?.maxSurge !== undefined ? scaled(rolling.maxSurge, replicas, true) : 0;
  if (rolling?.paused) maxSurge = 0;
  const maxUnavailable = scaled(rolling?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE, replicas, maxSurge === 0);
  const scaleMaxUnavailable = scaled(cs.spec?.scaleStrategy?.maxUnavailable ?? MAX_INT32, replicas, true);
  const isUpdate = opts.isPodUpdate ?? isPodAtRevision;
  const minReady = minReadySecondsOf(cs);

  const n = {
    newCount: 0,
    newActive: 0,
    oldCount: 0,
    oldActive: 0,
    unavailNew: 0,
    unavailOld: 0,
    toDelNew: 0,
    toDelOld: 0,
    preDelNew: 0,
    preDelOld: 0,
  };
  for (const p of pods) {
    const isNew = isUpdate(p, updateRevision);
    if (isNew) n.newCount++;
    else n.oldCount++;
    if (getPodLifecycleState(p) === LifecycleState.PreparingDelete) {
      if (isNew) n.preDelNew++;
      else n.preDelOld++;
      continue;
    }
    if (isNew) n.newActive++;
    else n.oldActive++;
    if (isSpecifiedDelete(cs, p)) {
      if (isNew) n.toDelNew++;
      else n.toDelOld++;
    } else if (!isPodAvailable(p, minReady, opts.nowMs)) {
      if (isNew) n.unavailNew++;
      else n.unavailOld++;
    }
  }

  let updateOldDiff = n.oldActive - partition;
  let updateNewDiff = n.newActive - (replicas - partition);
  const totalUnavailable = n.preDelNew + n.preDelOld + n.unavailNew + n.unavailOld;
  if (updateRevision === currentRevision || !opts.features.CloneSetPartitionRollback) {
    updateOldDiff = Math.max(updateOldDiff, 0);
    updateNewDiff = Math.min(updateNewDiff, 0);
  }

  if (maxSurge > 0) {
    let scaleSurge = 0;
    let scaleOldRevisionSurge = 0;
    const toDelete = n.toDelNew + n.toDelOld;
    if (toDelete > 0) {
      scaleSurge = Math.min(Math.max(totalUnavailable + toDelete - maxUnavailable, 0), toDelete);
      if (scaleSurge > n.toDelNew) scaleOldRevisionSurge = scaleSurge - n.toDelNew;
    }
    let updateSurge = 0;
    let updateOldRevisionSurge = 0;
    if (oppositeSigns(updateOldDiff, updateNewDiff)) {
      if (abs(updateOldDiff) <= abs(updateNewDiff)) {
        updateSurge = abs(updateOldDiff);
        if (updateOldDiff < 0) updateOldRevisionSurge = updateSurge;
      } else {
        updateSurge = abs(updateNewDiff);
        if (updateNewDiff > 0) updateOldRevisionSurge = updateSurge;
      }
    }
    // Scale and update never happen in the same round, so only the larger need is served.
    if (scaleSurge >= updateSurge) {
      res.useSurge = Math.min(maxSurge, scaleSurge);
      res.useSurgeOldRevision = Math.min(res.useSurge, scaleOldRevisionSurge);
    } else {
      res.useSurge = Math.min(maxSurge, updateSurge);
      res.useSurgeOldRevision = Math.min(res.useSurge, updateOldRevisionSurge);
    }
  }

  let currentTotal = pods.length;
  let currentTotalOld = n.oldCount;
  if (shouldScalingExcludePreparingDelete(cs, opts.scalingExcludePreparingDelete)) {
    currentTotal -= n.preDelOld + n.preDelNew;
    currentTotalOld -= n.preDelOld;
  }
  const expectedTotal = replicas + res.useSurge;
  const expectedTotalOld = partition + res.useSurgeOldRevision;

  if (expectedTotal - currentTotal > 0) {
    res.scaleUpNum = expectedTotal - currentTotal;
    res.scaleUpNumOldRevision = Math.max(expectedTotalOld - currentTotalOld, 0);
    res.scaleUpLimit = Math.min(res.scaleUpNum, Math.max(scaleMaxUnavailable - totalUnavailable, 0));
  }
  const down = currentTotal - n.toDelOld - n.toDelNew - expectedTotal;
  if (down > 0) {
    res.scaleDownNum = down;
    res.scaleDownNumOldRevision = Math.max(currentTotalOld - n.toDelOld - expectedTotalOld, 0);
  }
  if (n.toDelNew > 0 || n.toDelOld > 0 || res.scaleDownNum > 0) {
    res.deleteReadyLimit = Math.max(maxUnavailable + (pods.length - replicas) - totalUnavailable, 0);
  }

  res.updateNum = abs(updateOldDiff) <= abs(updateNewDiff) ? updateOldDiff : -updateNewDiff;
  if (res.updateNum === 0) res.updateNum = 0; // never -0
  if (res.updateNum !== 0) res.updateMaxUnavailable = maxUnavailable + pods.length - replicas;
  return res;
}
