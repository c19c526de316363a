// The replica and condemned phases of an Advanced StatefulSet round (upstream processReplica in
// ascending ordinal, processCondemned in descending ordinal), and the claims' retention policy
// (gate StatefulSetAutoDeletePVC) applied along the way.

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { OwnerReference } from '../../apis/core-objects.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from '../../util/intstr.ts';
import { ordinalOf } from './ordinals.ts';
import {
  claimName,
  claimsFor,
  identityLabels,
  isFailedOrSucceeded,
  isHealthy,
  isRunningAndAvailable,
  isRunningAndReady,
  isTerminating,
  podName,
  secondsUntilAvailable,
  setName,
  type Pod,
} from './pods.ts';
import type { Round } from './round.ts';

/** max(1, roundDown(v against replicas)); undefined stays undefined (unlimited). */
export function scaledMaxUnavailable(v: IntOrString | undefined, replicas: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  return Math.max(1, getScaledValueFromIntOrPercent(v, replicas, false));
}

/** processReplica for each slot; true when the round must stop here (monotonic wait). */
export function processReplicas(round: Round): boolean {
  const { set, plan, slots, created, range, pvcByName, monotonic, features, minReadySeconds, nowMs, name } = round;
  const retention = features.StatefulSetAutoDeletePVC;
  const setRefForNewClaims: OwnerReference[] =
    retention && set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete'
      ? [{ apiVersion: set.apiVersion ?? 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name, uid: set.metadata?.uid ?? '' }]
      : [];
  let scaleBudget = monotonic ? undefined : scaledMaxUnavailable(set.spec?.scaleStrategy?.maxUnavailable, round.replicas);
  /** Spends one unit of scaleStrategy.maxUnavailable; true when it is used up. */
  const consume = () => scaleBudget !== undefined && --scaleBudget <= 0;
  for (let i = 0; i < slots.length; i++) {
    const p = slots[i];
    if (!p) continue;
    const ord = range.start + i;
    if (created.has(i) && isFailedOrSucceeded(p)) {
      if (!isTerminating(p)) {
        plan.deletePods.push(podName(p));
        plan.events.push({
          type: 'Normal',
          reason: 'RecreatingFailedPod',
          message: `StatefulSet ${set.metadata?.namespace}/${name} is recreating failed Pod ${podName(p)}`,
        });
      }
      if (monotonic) return true;
      if (consume()) return false;
      continue;
    }
    if (!created.has(i)) {
      const claims = claimsFor(set, ord, setRefForNewClaims);
      // A claim still owned by a former pod of this ordinal is about to be garbage collected.
      const stale = claims.some((c) =>
        pvcByName.get(c.metadata?.name ?? '')?.metadata?.ownerReferences?.some((r) => r.kind === 'Pod' && r.name === podName(p)),
      );
      if (stale) {
        round.requeue(1);
        if (monotonic) return true;
        continue;
      }
      plan.createPods.push({ pod: p, pvcs: claims.filter((c) => !pvcByName.has(c.metadata?.name ?? '')) });
      if (monotonic) return true;
      if (consume()) return false;
      continue;
    }
    if (p.status?.phase === 'Pending' || !p.status?.phase) {
      for (const c of claimsFor(set, ord, setRefForNewClaims)) if (!pvcByName.has(c.metadata?.name ?? '')) plan.createPVCs.push(c);
    }
    if (isTerminating(p)) {
      if (monotonic) return true;
      if (consume()) return false;
      continue;
    }
    if (!isRunningAndAvailable(p, minReadySeconds, nowMs)) {
      round.requeue(secondsUntilAvailable(p, minReadySeconds, nowMs));
      if (monotonic) return true;
      if (consume()) return false;
      continue;
    }
    const want = identityLabels(set, ord, features);
    const missing = Object.fromEntries(Object.entries(want).filter(([k, v]) => p.metadata.labels?.[k] !== v));
    if (Object.keys(missing).length) plan.labelPatches.push({ pod: podName(p), labels: missing });
    if (retention) {
      for (const c of claimsFor(set, ord, [])) updateClaimOwners(round, pvcByName.get(c.metadata?.name ?? ''), p, false);
    }
  }
  return false;
}

/** Claims of condemned pods follow the retention policy before the pods go. */
export function fixCondemnedClaims(round: Round): void {
  const { set, name, pvcByName } = round;
  for (const p of round.condemned) {
    const ord = ordinalOf(name, podName(p));
    for (const t of set.spec?.volumeClaimTemplates ?? []) {
      updateClaimOwners(round, pvcByName.get(claimName(t.metadata?.name ?? '', name, ord)), p, true);
    }
  }
}

/** processCondemned, descending ordinal; true when a monotonic set waits. */
export function processCondemned(round: Round): boolean {
  const { slots, condemned, monotonic } = round;
  // The first unhealthy pod, replicas ascending then condemned descending.
  const firstUnhealthy = [...slots.filter((p): p is Pod => !!p), ...condemned].find((p) => !isHealthy(p));
  for (const p of condemned) {
    if (isTerminating(p)) {
      if (monotonic) return true;
      continue;
    }
    if (monotonic && !isRunningAndReady(p) && p !== firstUnhealthy) return true;
    round.deleteOrPrepare(p);
    if (monotonic) return true;
  }
  return false;
}

function updateClaimOwners(round: Round, pvc: PersistentVolumeClaim | undefined, pod: Pod, condemned: boolean): void {
  const refs = pvc && retentionRefs(round.set, pvc, pod, condemned);
  if (!pvc || !refs) return;
  round.plan.pvcOwnerUpdates.push({ pvc: pvc.metadata?.name ?? '', resourceVersion: pvc.metadata?.resourceVersion, ownerReferences: refs });
}

/**
 * PVC retention (gate StatefulSetAutoDeletePVC): whenDeleted=Delete ⇒ a reference to the set;
 * whenScaled=Delete ⇒ a reference to the pod while its ordinal is condemned. Other references
 * (and a controller reference to the set a user wrote) stay. Undefined when nothing changes.
 */
function retentionRefs(set: StatefulSet, pvc: PersistentVolumeClaim, pod: Pod, condemned: boolean): OwnerReference[] | undefined {
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy;
  const uid = set.metadata?.uid ?? '';
  const refs = pvc.metadata?.ownerReferences ?? [];
  const isSetRef = (r: OwnerReference) => r.kind === 'StatefulSet' && r.uid === uid && !r.controller;
  const isPodRef = (r: OwnerReference) => r.kind === 'Pod' && r.name === podName(pod);
  const out = refs.filter((r) => !isSetRef(r) && !isPodRef(r));
  const controlled = refs.some((r) => r.kind === 'StatefulSet' && r.uid === uid && r.controller);
  if (policy?.whenDeleted === 'Delete' && !controlled) {
    out.push(
      refs.find(isSetRef) ?? { apiVersion: set.apiVersion ?? 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: setName(set), uid },
    );
  }
  if (condemned && policy?.whenScaled === 'Delete' && pod.metadata.uid) {
    out.push({ apiVersion: 'v1', kind: 'Pod', name: podName(pod), uid: pod.metadata.uid });
  }
  const key = (l: OwnerReference[]) => JSON.stringify(l.map((r) => `${r.kind}/${r.uid}`).sort());
  return key(out) === key(refs) ? undefined : out;
}
