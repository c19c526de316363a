// The status of an Advanced StatefulSet round (upstream computeReplicaStatus and the end of
// updateStatefulSetStatus): replica counts by revision and readiness, claim compatibility
// (status.volumeClaims), the current revision once the update is complete, and
// FailedUpdatePod.

import type { StatefulSet, StatefulSetStatus } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import { compareQuantity, tryParseQuantity } from '../../apis/quantity.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { claimCompatibleWithoutSize } from '../../util/pvc.ts';
import { ordinalOf } from './ordinals.ts';
import { claimName, isPodAtRevision, isRunningAndAvailable, isRunningAndReady, isTerminating, podName, setName, type Pod } from './pods.ts';

type Condition = NonNullable<StatefulSetStatus['conditions']>[number];

function withCondition(conditions: Condition[] | undefined, c: Condition): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  if (i >= 0) {
    if (list[i].status === c.status && list[i].message === c.message) return list;
    list[i] = c;
  } else list.push(c);
  return list;
}

function normaliseStatus(s: StatefulSetStatus | undefined): unknown {
  if (!s) return null;
  const { conditions, volumeClaims, ...rest } = s;
  return { ...rest, conditions: conditions ?? [], volumeClaims: volumeClaims ?? [] };
}

/** computeReplicaStatus over every pod the set owns (replicas and condemned); claims of the replica slots. */
export function computeStatus(
  set: StatefulSet,
  pods: readonly Pod[],
  currentRevision: string,
  updateRevision: string,
  collisionCount: number,
  replicaPods: ReadonlyArray<Pod | undefined>,
  pvcs: readonly PersistentVolumeClaim[],
  minReadySeconds: number,
  nowMs: number,
): StatefulSetStatus {
  const status: StatefulSetStatus = {
    observedGeneration: set.metadata?.generation,
    replicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    currentReplicas: 0,
    updatedReplicas: 0,
    updatedReadyReplicas: 0,
    updatedAvailableReplicas: 0,
    currentRevision,
    updateRevision,
    collisionCount,
    ...(set.status?.conditions?.length ? { conditions: set.status.conditions } : {}),
  };
  try {
    status.labelSelector = labelSelectorAsSelector(set.spec?.selector).toString();
  } catch {
    // a selector the webhook should have refused: leave the field out rather than fail the round
  }
  const name = setName(set);
  for (const p of pods) {
    if (ordinalOf(name, podName(p)) < 0) continue;
    status.replicas++;
    const ready = isRunningAndReady(p);
    const available = isRunningAndAvailable(p, minReadySeconds, nowMs);
    if (ready) status.readyReplicas++;
    if (available) status.availableReplicas++;
    if (isTerminating(p)) continue;
    if (isPodAtRevision(p, currentRevision)) status.currentReplicas++;
    if (isPodAtRevision(p, updateRevision)) {
      status.updatedReplicas++;
      if (ready) status.updatedReadyReplicas!++;
      if (available) status.updatedAvailableReplicas!++;
    }
  }
  if ((set.spec?.volumeClaimTemplates?.length ?? 0) > 0) status.volumeClaims = volumeClaimStatus(set, replicaPods, pvcs);
  return status;
}

const storageOf = (x: unknown) => tryParseQuantity(String(x ?? '0'));

/**
 * upstream updatePVCStatus, per template over the replica slots (pods to be created included,
 * condemned ones not; gate or not): a claim is compatible when its storage request holds the
 * template's, and ready when its capacity holds its own request. Missing and terminating claims,
 * and claims of another class or access modes, do not count.
 */
function volumeClaimStatus(
  set: StatefulSet,
  replicaPods: ReadonlyArray<Pod | undefined>,
  pvcs: readonly PersistentVolumeClaim[],
): StatefulSetStatus['volumeClaims'] {
  const name = setName(set);
  const byName = new Map(pvcs.map((p) => [p.metadata?.name ?? '', p]));
  const atLeast = (a: unknown, b: unknown) => {
    const [x, y] = [storageOf(a), storageOf(b)];
    return !!x && !!y && compareQuantity(x, y) >= 0;
  };
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => {
    const vct = t.metadata?.name ?? '';
    let compatibleReplicas = 0;
    let compatibleReadyReplicas = 0;
    for (const p of replicaPods) {
      if (!p) continue;
      const pvc = byName.get(claimName(vct, name, ordinalOf(name, podName(p))));
      if (!pvc || pvc.metadata?.deletionTimestamp || !claimCompatibleWithoutSize(pvc, t)) continue;
      const request = pvc.spec?.resources?.requests?.storage;
      if (!atLeast(request, t.spec?.resources?.requests?.storage)) continue;
      compatibleReplicas++;
      if (atLeast(pvc.status?.capacity?.storage, request)) compatibleReadyReplicas++;
    }
    return { volumeClaimName: vct, compatibleReplicas, compatibleReadyReplicas };
  });
}

/**
 * The round's status settled: the update revision becomes current once every replica runs it and
 * is ready (RollingUpdate), and an update error is FailedUpdatePod. Whether it differs from the set's.
 */
export function settleStatus(
  set: StatefulSet,
  status: StatefulSetStatus,
  updateError: string | undefined,
  now: string,
): { status: StatefulSetStatus; changed: boolean } {
  if (
    (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
    status.updatedReplicas === status.replicas &&
    status.readyReplicas === status.replicas
  ) {
    status.currentRevision = status.updateRevision;
    status.currentReplicas = status.updatedReplicas;
  }
  if (updateError) {
    status.conditions = withCondition(status.conditions, {
      type: 'FailedUpdatePod',
      status: 'True',
      reason: 'FailedUpdatePod',
      message: updateError,
      lastTransitionTime: now,
    });
  }
  return { status, changed: JSON.stringify(normaliseStatus(status)) !== JSON.stringify(normaliseStatus(set.status)) };
}
