// The status of an Advanced StatefulSet round (upstream computeReplicaStatus and the end of
// updateStatefulSetStatus): replica counts by revision and readiness, claim compatibility
// (gate StatefulSetAutoResizePVCGate), the current revision once the update is complete, and
// FailedUpdatePod.

import type { StatefulSet, StatefulSetStatus } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { compareQuantity, tryParseQuantity } from '../../apis/quantity.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
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

/** computeReplicaStatus over every pod the set owns (replicas and condemned). */
export function computeStatus(
  set: StatefulSet,
  pods: readonly Pod[],
  currentRevision: string,
  updateRevision: string,
  collisionCount: number,
  pvcs: readonly PersistentVolumeClaim[],
  minReadySeconds: number,
  nowMs: number,
  features: FeatureGates,
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
  if (features.StatefulSetAutoResizePVCGate && (set.spec?.volumeClaimTemplates?.length ?? 0) > 0) {
    status.volumeClaims = volumeClaimStatus(set, pods, pvcs);
  }
  return status;
}

/** Per template: pods whose claim holds at least the template's storage request (and of those, the ready ones). */
function volumeClaimStatus(
  set: StatefulSet,
  pods: readonly Pod[],
  pvcs: readonly PersistentVolumeClaim[],
): StatefulSetStatus['volumeClaims'] {
  const name = setName(set);
  const byName = new Map(pvcs.map((p) => [p.metadata?.name ?? '', p]));
  const storageOf = (x: unknown) => (x === undefined ? undefined : tryParseQuantity(String(x)));
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => {
    const vct = t.metadata?.name ?? '';
    const want = storageOf(t.spec?.resources?.requests?.storage);
    let compatibleReplicas = 0;
    let compatibleReadyReplicas = 0;
    for (const p of pods) {
      const ord = ordinalOf(name, podName(p));
      if (ord < 0 || isTerminating(p)) continue;
      const pvc = byName.get(claimName(vct, name, ord));
      const have = storageOf(pvc?.status?.capacity?.storage ?? pvc?.spec?.resources?.requests?.storage);
      if (!pvc || (want && (!have || compareQuantity(have, want) < 0))) continue;
      compatibleReplicas++;
      if (isRunningAndReady(p)) compatibleReadyReplicas++;
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
