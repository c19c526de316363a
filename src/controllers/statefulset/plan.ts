// One Advanced StatefulSet reconcile as a pure plan (behaviour spec §4.3, upstream
// updateStatefulSet): revisions, replica slots and condemned pods, then its phases along upstream's
// seams — replicas and condemned pods (replicas.ts: processReplica in ascending ordinal,
// processCondemned in descending ordinal), the rolling update (update.ts), status (status.ts) and
// history. OrderedReady (monotonic) stops the round at the first pod it has to wait for; Parallel
// goes on, bounded by scaleStrategy.maxUnavailable while scaling.

import type { StatefulSet, StatefulSetStatus } from '../../apis/apps/statefulset.ts';
import { LifecycleState } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { metaTime } from '../../util/clock.ts';
import { getPodLifecycleState, isPodHooked, planLifecycleTransition } from '../../util/lifecycle.ts';
import {
  chooseUpdateRevision,
  newTemplateRevision,
  revisionsToTruncate as truncateHistory,
  templateFromRevision,
  type ControllerRevision,
} from '../../util/revision-data.ts';
import { refreshPodState } from '../../util/workload-lifecycle.ts';
import { replicasOf, replicasRange, slotPods } from './ordinals.ts';
import { isFailedOrSucceeded, isPodAtRevision, isTerminating, newPod, podName, setName, type Pod } from './pods.ts';
import { fixCondemnedClaims, processCondemned, processReplicas } from './replicas.ts';
import type { Round } from './round.ts';
import { computeStatus, settleStatus } from './status.ts';
import { isCurrentRevisionNeeded, rollingUpdate } from './update.ts';
import type { StatefulSetPlan } from './types.ts';

export type { StatefulSetPlan, PvcOwnerUpdate, PlanEvent } from './types.ts';

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

export function planStatefulSet(input: PlanInput): StatefulSetPlan {
  const { set, features, now: nowMs } = input;
  const now = metaTime(nowMs);
  const name = setName(set);
  const lifecycle = set.spec?.lifecycle;

  const rev = chooseRevisions(set, input.revisions);
  const updateName = rev.update.metadata.name ?? '';
  const currentName = rev.current.metadata.name ?? '';
  const monotonic = (set.spec?.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
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

  // every missing, non-reserved slot gets the pod it should have
  const range = replicasRange(set, features);
  const { slots, condemned } = slotPods(name, range, input.pods);
  const created = new Set<number>(); // slot indexes whose pod exists
  slots.forEach((p, i) => p && created.add(i));
  for (let ord = range.start; ord < range.end; ord++) {
    const i = ord - range.start;
    if (range.reserved.has(ord) || slots[i]) continue;
    const useCurrent = isCurrentRevisionNeeded(set, updateName, ord, range.start, slots);
    const r = useCurrent ? rev.current : rev.update;
    slots[i] = newPod(set, templateFromRevision(r), r.metadata.name ?? '', ord, { now, features });
  }

  const round: Round = {
    set,
    features,
    nowMs,
    now,
    name,
    replicas: replicasOf(set),
    monotonic,
    minReadySeconds: set.spec?.updateStrategy?.rollingUpdate?.minReadySeconds ?? 0,
    range,
    slots,
    created,
    condemned,
    pvcByName: new Map(input.pvcs.map((p) => [p.metadata?.name ?? '', p])),
    updateRevision: rev.update,
    revisions: rev.newRevision ? [...input.revisions, rev.newRevision] : input.revisions,
    plan,
    requeue(seconds) {
      const ms = (seconds ?? 0) * 1000;
      if (ms > 0) plan.requeueAfterMs = plan.requeueAfterMs === undefined ? ms : Math.min(plan.requeueAfterMs, ms);
    },
    deleteOrPrepare(p) {
      const hook = lifecycle?.preDelete;
      if (hook && isPodHooked(hook, p)) {
        if (getPodLifecycleState(p) === LifecycleState.PreparingDelete) return 'waiting';
        const t = planLifecycleTransition(p, LifecycleState.PreparingDelete, { now, markPodNotReady: !!hook.markPodNotReady });
        if (t) plan.lifecycleTransitions.push(t);
        return 'preparing';
      }
      plan.deletePods.push(podName(p));
      return 'deleted';
    },
  };

  // refresh in-place progress and lifecycle of every existing pod
  let lifecycleChanged = false;
  for (const p of [...slots.filter((p, i): p is Pod => !!p && created.has(i)), ...condemned]) {
    if (isTerminating(p) || isFailedOrSucceeded(p)) continue;
    const { refresh, transition } = refreshPodState(lifecycle, p, updateName, now, isPodAtRevision);
    if (refresh.pod || refresh.conditions)
      plan.refreshes.push({ pod: podName(p), updatedPod: refresh.pod, conditions: refresh.conditions });
    round.requeue(refresh.delaySeconds);
    if (transition) {
      plan.lifecycleTransitions.push(transition);
      if (transition.stateChanged) lifecycleChanged = true;
    }
  }

  const status = computeStatus(
    set,
    input.pods,
    currentName,
    updateName,
    rev.collisionCount,
    slots,
    input.pvcs,
    round.minReadySeconds,
    nowMs,
  );

  if (!set.metadata?.deletionTimestamp) {
    const stopped = processReplicas(round);
    if (!stopped) {
      if (features.StatefulSetAutoDeletePVC) fixCondemnedClaims(round);
      const waiting = processCondemned(round);
      if (!waiting && (set.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'OnDelete' && !lifecycleChanged) rollingUpdate(round);
    }
  }

  const settled = settleStatus(set, status, plan.updateError, now);
  plan.status = settled.status;
  plan.statusChanged = settled.changed;
  plan.revisionsToDelete = revisionsToTruncate(set, input.pods, round.revisions, currentName, updateName);
  return plan;
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
