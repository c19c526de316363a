// One Advanced StatefulSet reconcile as a pure plan (behaviour spec §4.3, upstream
// updateStatefulSet): revisions, replica slots and condemned pods, processReplica in ascending
// ordinal, processCondemned in descending ordinal, then the rolling update, status and history.
// OrderedReady (monotonic) stops the round at the first pod it has to wait for; Parallel goes on,
// bounded by scaleStrategy.maxUnavailable while scaling.

import type { StatefulSet, StatefulSetStatus } from '../../apis/apps/statefulset.ts';
import { LIFECYCLE_STATE_LABEL, LIFECYCLE_TIMESTAMP_ANNOTATION, LifecycleState, SPECIFIED_DELETE_LABEL } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { OwnerReference } from '../../apis/core-objects.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { compareQuantity, tryParseQuantity } from '../../apis/quantity.ts';
import { metaTime } from '../../util/clock.ts';
import { checkInPlaceUpdateCompleted, planInPlaceUpdate } from '../../util/inplaceupdate.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from '../../util/intstr.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { getPodLifecycleState, isPodHooked, planLifecycleTransition, type LifecycleTransition } from '../../util/lifecycle.ts';
import {
  chooseUpdateRevision,
  newTemplateRevision,
  revisionsToTruncate as truncateHistory,
  templateFromRevision,
  type ControllerRevision,
} from '../../util/revision-data.ts';
import { inPlaceHookStep, refreshPodState } from '../../util/workload-lifecycle.ts';
import { ordinalOf, replicasOf, replicasRange, slotPods } from './ordinals.ts';
import {
  claimName,
  claimsFor,
  identityLabels,
  isFailedOrSucceeded,
  isHealthy,
  isPodAtRevision,
  isRunningAndAvailable,
  isRunningAndReady,
  isTerminating,
  newPod,
  podName,
  secondsUntilAvailable,
  setName,
  type Pod,
} from './pods.ts';
import { isCurrentRevisionNeeded, sortPodsToUpdate } from './update.ts';
import type { InPlaceUpdateAction, LabelPatch, PodCreation, PodRefresh } from '../plan-types.ts';

export interface PlanInput {
  set: StatefulSet;
  /** ControllerRevisions owned by the set. */
  revisions: readonly ControllerRevision[];
  /** Pods owned by the set (claimed), active or not. */
  pods: readonly Pod[];
  /** PVCs of the set's namespace named `<vct>-<set>-<ordinal>`. */
  pvcs: readonly PersistentVolumeClaim[];
  /** Milliseconds since the epoch. */
  now: number;
  features: FeatureGates;
}

export interface PvcOwnerUpdate {
  pvc: string;
  resourceVersion?: string;
  ownerReferences: OwnerReference[];
}

export interface PlanEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface StatefulSetPlan {
  newRevision?: ControllerRevision;
  /** An older equal revision brought back as the update revision (rollback): its new number. */
  revisionUpdate?: { name: string; revision: number };
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  /** OrderedReady: at most one; Parallel: in slow-start batches. */
  createPods: PodCreation[];
  /** Missing claims of Pending pods (a user deleted one). */
  createPVCs: PersistentVolumeClaim[];
  deletePods: string[];
  pvcOwnerUpdates: PvcOwnerUpdate[];
  /** volumeClaimUpdateStrategy OnPodRollingUpdate: claims whose storage request grows to the template's. */
  pvcResizes: Array<{ pvc: string; storage: string }>;
  labelPatches: LabelPatch[];
  lifecycleTransitions: LifecycleTransition[];
  refreshes: PodRefresh[];
  inPlaceUpdates: InPlaceUpdateAction[];
  events: PlanEvent[];
  status: StatefulSetStatus;
  statusChanged: boolean;
  revisionsToDelete: string[];
  requeueAfterMs?: number;
  /** FailedUpdatePod (e.g. InPlaceOnly and the change cannot be made in place). */
  updateError?: string;
  /** Whether creations run one at a time (OrderedReady). */
  monotonic: boolean;
}

const DEFAULT_HISTORY_LIMIT = 10;

/** Upstream StatefulSet revisions: reuse an equal one (the newest, or bump an older one: rollback). */
export function chooseRevisions(set: StatefulSet, revisions: readonly ControllerRevision[]) {
  const owner = { apiVersion: set.apiVersion, kind: 'StatefulSet', metadata: set.metadata, template: set.spec?.template };
  const { update, collisionCount, newRevision, renumbered } = chooseUpdateRevision(revisions, set.status?.collisionCount ?? 0, (n, c) =>
    newTemplateRevision(owner, n, c),
  );
  const revisionUpdate: StatefulSetPlan['revisionUpdate'] = renumbered && {
    name: renumbered.metadata.name ?? '',
    revision: update.revision,
  };
  const current = revisions.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
  return { current, update, collisionCount, newRevision, revisionUpdate };
}

/** max(1, roundDown(v against replicas)); undefined stays undefined (unlimited). */
export function scaledMaxUnavailable(v: IntOrString | undefined, replicas: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  return Math.max(1, getScaledValueFromIntOrPercent(v, replicas, false));
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

export function planStatefulSet(input: PlanInput): StatefulSetPlan {
  const { set, features, now: nowMs } = input;
  const now = metaTime(nowMs);
  const name = setName(set);
  const replicas = replicasOf(set);
  const monotonic = (set.spec?.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
  const rolling = set.spec?.updateStrategy?.rollingUpdate;
  const minReadySeconds = rolling?.minReadySeconds ?? 0;
  const lifecycle = set.spec?.lifecycle;

  const rev = chooseRevisions(set, input.revisions);
  const updateName = rev.update.metadata.name ?? '';
  const currentName = rev.current.metadata.name ?? '';
  const allRevisions = rev.newRevision ? [...input.revisions, rev.newRevision] : input.revisions;

  const plan: StatefulSetPlan = {
    newRevision: rev.newRevision,
    revisionUpdate: rev.revisionUpdate,
    currentRevision: currentName,
    updateRevision: updateName,
    collisionCount: rev.collisionCount,
    createPods: [],
    createPVCs: [],
    deletePods: [],
    pvcOwnerUpdates: [],
    pvcResizes: [],
    labelPatches: [],
    lifecycleTransitions: [],
    refreshes: [],
    inPlaceUpdates: [],
    events: [],
    status: undefined as unknown as StatefulSetStatus,
    statusChanged: false,
    revisionsToDelete: [],
    monotonic,
  };
  const requeue = (seconds: number | undefined) => {
    const ms = (seconds ?? 0) * 1000;
    if (ms > 0) plan.requeueAfterMs = plan.requeueAfterMs === undefined ? ms : Math.min(plan.requeueAfterMs, ms);
  };

  const range = replicasRange(set, features);
  const { slots: existing, condemned } = slotPods(name, range, input.pods);
  const pvcByName = new Map(input.pvcs.map((p) => [p.metadata?.name ?? '', p]));
  const retention = features.StatefulSetAutoDeletePVC;
  const setRefForNewClaims: OwnerReference[] =
    retention && set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete'
      ? [{ apiVersion: set.apiVersion ?? 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name, uid: set.metadata?.uid ?? '' }]
      : [];

  // 2. every missing, non-reserved slot gets the pod it should have
  const created = new Set<number>(); // slot indexes whose pod exists
  const slots: Array<Pod | undefined> = [...existing];
  existing.forEach((p, i) => p && created.add(i));
  for (let ord = range.start; ord < range.end; ord++) {
    const i = ord - range.start;
    if (range.reserved.has(ord) || slots[i]) continue;
    const useCurrent = isCurrentRevisionNeeded(set, updateName, ord, range.start, slots);
    const r = useCurrent ? rev.current : rev.update;
    slots[i] = newPod(set, templateFromRevision(r), r.metadata.name ?? '', ord, { now, features });
  }

  // 3. the first unhealthy pod, replicas ascending then condemned descending
  const firstUnhealthy = [...slots.filter((p): p is Pod => !!p), ...condemned].find((p) => !isHealthy(p));

  // refresh in-place progress and lifecycle of every existing pod
  let lifecycleChanged = false;
  for (const p of [...slots.filter((p, i): p is Pod => !!p && created.has(i)), ...condemned]) {
    if (isTerminating(p) || isFailedOrSucceeded(p)) continue;
    const { refresh, transition } = refreshPodState(lifecycle, p, updateName, now, isPodAtRevision);
    if (refresh.pod || refresh.conditions)
      plan.refreshes.push({ pod: podName(p), updatedPod: refresh.pod, conditions: refresh.conditions });
    requeue(refresh.delaySeconds);
    if (transition) {
      plan.lifecycleTransitions.push(transition);
      if (transition.stateChanged) lifecycleChanged = true;
    }
  }

  const deleteOrPrepare = (p: Pod): 'deleted' | 'preparing' | 'waiting' => {
    const hook = lifecycle?.preDelete;
    if (hook && isPodHooked(hook, p)) {
      if (getPodLifecycleState(p) === LifecycleState.PreparingDelete) return 'waiting';
      const t = planLifecycleTransition(p, LifecycleState.PreparingDelete, { now, markPodNotReady: !!hook.markPodNotReady });
      if (t) plan.lifecycleTransitions.push(t);
      return 'preparing';
    }
    plan.deletePods.push(podName(p));
    return 'deleted';
  };

  const status = computeStatus(set, input.pods, currentName, updateName, rev.collisionCount, input.pvcs, minReadySeconds, nowMs, features);

  if (!set.metadata?.deletionTimestamp) {
    const stopped = processReplicas();
    if (!stopped) {
      if (retention) fixCondemnedClaims();
      const waiting = processCondemned();
      if (!waiting && (set.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'OnDelete' && !lifecycleChanged) rollingUpdate();
    }
  }

  // 9. status
  if (
    (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
    status.updatedReplicas === status.replicas &&
    status.readyReplicas === status.replicas
  ) {
    status.currentRevision = status.updateRevision;
    status.currentReplicas = status.updatedReplicas;
  }
  if (plan.updateError) {
    status.conditions = withCondition(status.conditions, {
      type: 'FailedUpdatePod',
      status: 'True',
      reason: 'FailedUpdatePod',
      message: plan.updateError,
      lastTransitionTime: now,
    });
  }
  plan.status = status;
  plan.statusChanged = JSON.stringify(normaliseStatus(status)) !== JSON.stringify(normaliseStatus(set.status));
  plan.revisionsToDelete = revisionsToTruncate(set, input.pods, allRevisions, currentName, updateName);
  return plan;

  // ------------------------------------------------------------------------------------------

  /** 5. processReplica for each slot; true when the round must stop here (monotonic wait). */
  function processReplicas(): boolean {
    let scaleBudget = monotonic ? undefined : scaledMaxUnavailable(set.spec?.scaleStrategy?.maxUnavailable, replicas);
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
          requeue(1);
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
        requeue(secondsUntilAvailable(p, minReadySeconds, nowMs));
        if (monotonic) return true;
        if (consume()) return false;
        continue;
      }
      const want = identityLabels(set, ord, features);
      const missing = Object.fromEntries(Object.entries(want).filter(([k, v]) => p.metadata.labels?.[k] !== v));
      if (Object.keys(missing).length) plan.labelPatches.push({ pod: podName(p), labels: missing });
      if (retention) {
        for (const c of claimsFor(set, ord, [])) {
          const pvc = pvcByName.get(c.metadata?.name ?? '');
          const refs = pvc && retentionRefs(set, pvc, p, false);
          if (pvc && refs)
            plan.pvcOwnerUpdates.push({
              pvc: pvc.metadata?.name ?? '',
              resourceVersion: pvc.metadata?.resourceVersion,
              ownerReferences: refs,
            });
        }
      }
    }
    return false;
  }

  /** 6. claims of condemned pods follow the retention policy before the pods go. */
  function fixCondemnedClaims(): void {
    for (const p of condemned) {
      const ord = ordinalOf(name, podName(p));
      for (const t of set.spec?.volumeClaimTemplates ?? []) {
        const pvc = pvcByName.get(claimName(t.metadata?.name ?? '', name, ord));
        const refs = pvc && retentionRefs(set, pvc, p, true);
        if (pvc && refs)
          plan.pvcOwnerUpdates.push({
            pvc: pvc.metadata?.name ?? '',
            resourceVersion: pvc.metadata?.resourceVersion,
            ownerReferences: refs,
          });
      }
    }
  }

  /** 7. processCondemned, descending ordinal; true when a monotonic set waits. */
  function processCondemned(): boolean {
    for (const p of condemned) {
      if (isTerminating(p)) {
        if (monotonic) return true;
        continue;
      }
      if (monotonic && !isRunningAndReady(p) && p !== firstUnhealthy) return true;
      deleteOrPrepare(p);
      if (monotonic) return true;
    }
    return false;
  }

  /** 8. rollingUpdateStatefulsetPods. */
  function rollingUpdate(): void {
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
        requeue(secondsUntilAvailable(p, minReadySeconds, nowMs));
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
      if (!isTerminating(p) && !plan.deletePods.includes(podName(p))) deleteOrPrepare(p);
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
          const oldRev = allRevisions.find((r) => isPodAtRevision(p, r.metadata.name ?? ''));
          const target = rev.update;
          const ip = planInPlaceUpdate(p, oldRev, target, {
            now,
            envFromMetadata: features.InPlaceUpdateEnvFromMetadata,
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
              requeue(ip.delaySeconds);
            }
          } else if (policy === 'InPlaceOnly') {
            plan.updateError = `find strategy is InPlaceOnly but Pod ${podName(p)} can not update in-place`;
            plan.events.push({ type: 'Warning', reason: 'FailedUpdatePodInPlace', message: plan.updateError });
            return;
          }
        }
        if (!inPlace && !plan.deletePods.includes(podName(p))) deleteOrPrepare(p);
      }
      unavailable.add(podName(p));
    }
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

/** Revisions to delete beyond revisionHistoryLimit (default 10). */
export function revisionsToTruncate(
  set: StatefulSet,
  pods: readonly Pod[],
  revisions: readonly ControllerRevision[],
  current: string,
  update: string,
): string[] {
  return truncateHistory(revisions, pods, current, update, set.spec?.revisionHistoryLimit ?? DEFAULT_HISTORY_LIMIT);
}
