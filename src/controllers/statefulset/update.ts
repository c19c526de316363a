// The rolling-update phase of an Advanced StatefulSet round (behaviour spec §4.3, upstream
// rollingUpdateStatefulsetPods) and its arithmetic: which revision a new pod gets
// (isCurrentRevisionNeeded), in which order pods are updated (sortPodsToUpdate), and which claims
// grow first (volumeClaimUpdateStrategy OnPodRollingUpdate).

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import { LIFECYCLE_STATE_LABEL, LIFECYCLE_TIMESTAMP_ANNOTATION, LifecycleState, SPECIFIED_DELETE_LABEL } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { compareQuantity, tryParseQuantity } from '../../apis/quantity.ts';
import { checkInPlaceUpdateCompleted, planInPlaceUpdate } from '../../util/inplaceupdate.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { getPodLifecycleState } from '../../util/lifecycle.ts';
import { sortByPriority } from '../../util/updatesort.ts';
import { inPlaceHookStep } from '../../util/workload-lifecycle.ts';
import {
  claimName,
  isHealthy,
  isPodAtRevision,
  isRunningAndAvailable,
  isTerminating,
  podName,
  secondsUntilAvailable,
  setName,
  type Pod,
} from './pods.ts';
import type { Round } from './round.ts';

type RollingUpdate = NonNullable<NonNullable<StatefulSet['spec']>['updateStrategy']>['rollingUpdate'];

/** isCurrentRevisionNeeded: whether the new pod of `ordinal` is created at the current revision. */
export function isCurrentRevisionNeeded(
  set: StatefulSet,
  updateRevision: string,
  ordinal: number,
  start: number,
  slots: ReadonlyArray<Pod | undefined>,
): boolean {
  if ((set.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return false;
  const rolling = set.spec?.updateStrategy?.rollingUpdate;
  if (!rolling) return ordinal < start + (set.status?.currentReplicas ?? 0);
  const partition = rolling.partition ?? 0;
  if (!rolling.unorderedUpdate) {
    let before = 0;
    for (let i = 0; i < ordinal - start; i++) if (slots[i]) before++;
    return before + 1 <= partition;
  }
  let notUpdated = 0;
  slots.forEach((p, i) => {
    if (p && i !== ordinal - start && !isPodAtRevision(p, updateRevision)) notUpdated++;
  });
  return notUpdated < partition;
}

/**
 * sortPodsToUpdate: the slot indexes to update, in order. Without unorderedUpdate the highest
 * ordinals first down to the partition; with it, pods already updated (or terminating) first,
 * then the others by priority, at most replicas - partition of them.
 */
export function sortPodsToUpdate(
  rolling: RollingUpdate,
  updateRevision: string,
  replicas: number,
  slots: ReadonlyArray<Pod | undefined>,
  features: Pick<FeatureGates, 'PreparingUpdateAsUpdate'>,
): number[] {
  const updateMin = rolling?.partition ?? 0;
  const maxUpdate = replicas - updateMin;
  if (maxUpdate <= 0) return [];
  if (!rolling?.unorderedUpdate) {
    const out: number[] = [];
    for (let i = slots.length - 1; i >= updateMin && out.length < maxUpdate; i--) if (slots[i]) out.push(i);
    return out;
  }
  const updated: number[] = [];
  const waitUpdate: number[] = [];
  for (let i = slots.length - 1; i >= 0; i--) {
    const p = slots[i];
    if (!p) continue;
    const counted =
      isTerminating(p) ||
      isPodAtRevision(p, updateRevision) ||
      (features.PreparingUpdateAsUpdate && getPodLifecycleState(p) === LifecycleState.PreparingUpdate);
    (counted ? updated : waitUpdate).push(i);
  }
  const prioritised = sortByPriority(rolling.unorderedUpdate.priorityStrategy, slots as Pod[], waitUpdate);
  return [...updated, ...prioritised].slice(0, maxUpdate);
}

/**
 * rollingUpdateStatefulsetPods: specified-delete pods first, then the pods sortPodsToUpdate
 * orders, within maxUnavailable; in place where the policy and the change allow it.
 */
export function rollingUpdate(round: Round): void {
  const { set, features, plan, slots, created, range, pvcByName, replicas, minReadySeconds, nowMs, now } = round;
  const rolling = set.spec?.updateStrategy?.rollingUpdate;
  const lifecycle = set.spec?.lifecycle;
  const updateName = round.updateRevision.metadata.name ?? '';
  if (rolling?.paused) return;
  const maxUnavailable = Math.max(1, getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? 1, replicas, false));
  const resizeClaims = features.StatefulSetAutoResizePVCGate && set.spec?.volumeClaimUpdateStrategy?.type === 'OnPodRollingUpdate';
  const claimState = (i: number) => (resizeClaims ? claimsToResize(set, range.start + i, pvcByName) : { grow: [], resizing: false });
  const unavailable = new Set<string>();
  slots.forEach((p, i) => {
    if (!p) return;
    const claims = claimState(i);
    if (!created.has(i) || !isHealthy(p) || checkInPlaceUpdateCompleted(p) !== undefined) unavailable.add(podName(p));
    else if (claims.resizing) unavailable.add(podName(p));
    else if (!isRunningAndAvailable(p, minReadySeconds, nowMs)) {
      unavailable.add(podName(p));
      round.requeue(secondsUntilAvailable(p, minReadySeconds, nowMs));
    }
  });

  // specified-delete pods go first, outside the partition, within maxUnavailable
  const specified = new Set<string>();
  for (let i = slots.length - 1; i >= 0; i--) {
    const p = slots[i];
    if (!p || !created.has(i) || !p.metadata.labels || !Object.hasOwn(p.metadata.labels, SPECIFIED_DELETE_LABEL)) continue;
    if (unavailable.size >= maxUnavailable && !unavailable.has(podName(p))) continue;
    unavailable.add(podName(p));
    specified.add(podName(p));
    if (!isTerminating(p) && !plan.deletePods.includes(podName(p))) round.deleteOrPrepare(p);
  }

  const policy = rolling?.podUpdatePolicy ?? 'ReCreate';
  for (const i of sortPodsToUpdate(rolling, updateName, replicas, slots, features)) {
    const p = slots[i]!;
    const claims = claimState(i);
    const claimsCompatible = claims.grow.length === 0 && !claims.resizing;
    if (!created.has(i) || (isPodAtRevision(p, updateName) && claimsCompatible)) continue;
    if (unavailable.size >= maxUnavailable && !unavailable.has(podName(p))) break;
    if (!claimsCompatible) {
      // OnPodRollingUpdate: grow the pod's claims first; the pod is updated once they are resized.
      plan.pvcResizes.push(...claims.grow);
      unavailable.add(podName(p));
      continue;
    }
    if (isPodAtRevision(p, updateName)) continue;
    if (!specified.has(podName(p)) && !isTerminating(p)) {
      let inPlace = false;
      if (policy !== 'ReCreate') {
        const oldRev = round.revisions.find((r) => isPodAtRevision(p, r.metadata.name ?? ''));
        const target = round.updateRevision;
        const ip = planInPlaceUpdate(p, oldRev, target, {
          now,
          envFromMetadata: features.InPlaceUpdateEnvFromMetadata,
          verticalScaling: features.InPlaceWorkloadVerticalScaling,
          gracePeriodSeconds: rolling?.inPlaceUpdateStrategy?.gracePeriodSeconds,
          mutate: (clone) => {
            clone.metadata.labels = { ...clone.metadata.labels, [LIFECYCLE_STATE_LABEL]: LifecycleState.Updating };
            clone.metadata.annotations = { ...clone.metadata.annotations, [LIFECYCLE_TIMESTAMP_ANNOTATION]: now };
          },
        });
        if (ip) {
          inPlace = true;
          const step = inPlaceHookStep(lifecycle?.inPlaceUpdate, p, now);
          if (step.kind === 'error') {
            plan.updateError = step.message;
            return;
          }
          if (step.kind === 'transition' && step.transition) plan.lifecycleTransitions.push(step.transition);
          if (step.kind === 'proceed') {
            plan.inPlaceUpdates.push({ pod: podName(p), revision: updateName, updatedPod: ip.pod, conditions: ip.conditions });
            plan.events.push({
              type: 'Normal',
              reason: 'SuccessfulUpdatePodInPlace',
              message: `successfully update pod ${podName(p)} in-place(revision ${updateName})`,
            });
            round.requeue(ip.delaySeconds);
          }
        } else if (policy === 'InPlaceOnly') {
          plan.updateError = `find strategy is InPlaceOnly but Pod ${podName(p)} can not update in-place`;
          plan.events.push({ type: 'Warning', reason: 'FailedUpdatePodInPlace', message: plan.updateError });
          return;
        }
      }
      if (!inPlace && !plan.deletePods.includes(podName(p))) round.deleteOrPrepare(p);
    }
    unavailable.add(podName(p));
  }
}

/**
 * OnPodRollingUpdate: the claims of `ordinal` whose storage request is below the template's (to
 * grow), and whether one has been grown but its capacity does not show it yet.
 */
export function claimsToResize(
  set: StatefulSet,
  ordinal: number,
  pvcs: ReadonlyMap<string, PersistentVolumeClaim>,
): { grow: Array<{ pvc: string; storage: string }>; resizing: boolean } {
  const grow: Array<{ pvc: string; storage: string }> = [];
  let resizing = false;
  for (const t of set.spec?.volumeClaimTemplates ?? []) {
    const want = t.spec?.resources?.requests?.storage;
    const wantQ = want === undefined ? undefined : tryParseQuantity(String(want));
    const pvc = pvcs.get(claimName(t.metadata?.name ?? '', setName(set), ordinal));
    if (!wantQ || !pvc) continue;
    const requested = tryParseQuantity(String(pvc.spec?.resources?.requests?.storage ?? '0'));
    if (!requested || compareQuantity(requested, wantQ) < 0) {
      grow.push({ pvc: pvc.metadata?.name ?? '', storage: String(want) });
      continue;
    }
    const capacity = tryParseQuantity(String(pvc.status?.capacity?.storage ?? '0'));
    if (!capacity || compareQuantity(capacity, wantQ) < 0) resizing = true;
  }
  return { grow, resizing };
}
