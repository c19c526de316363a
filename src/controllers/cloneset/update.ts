// CloneSet Update phase (behaviour spec §3.7): refresh pod states (lifecycle, in-place progress),
// then pick which pods move to the target revision — in place where possible, otherwise by
// marking them specified-delete so that Scale replaces them.

import type { CloneSet } from '../../apis/apps/cloneset.ts';
import { sortByPriority, sortByScatter } from '../../util/updatesort.ts';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  LIFECYCLE_STATE_LABEL,
  LIFECYCLE_TIMESTAMP_ANNOTATION,
  LifecycleState,
  POD_TEMPLATE_HASH_LABEL,
  SPECIFIED_DELETE_LABEL,
} from '../../apis/constants.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { getInPlaceUpdateGrace, planInPlaceUpdate } from '../../util/inplaceupdate.ts';
import { getPodLifecycleState, type LifecycleTransition } from '../../util/lifecycle.ts';
import { inPlaceHookStep, refreshPodState } from '../../util/workload-lifecycle.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { compareActivePods } from '../../util/pod.ts';
import { shortHash } from '../../util/revision.ts';
import { canVolumeClaimTemplatesUpdateInPlace, type ControllerRevision } from '../../util/revision-data.ts';
import { calculateDiffsWithExpectation, EMPTY_DIFFS, type ExpectationDiffs } from './diff.ts';
import { isPodAtRevision, isPodAvailable, minReadySecondsOf, podName } from './pods.ts';
import { revisionLabelValue } from './scale.ts';
import { metaTime } from '../../util/clock.ts';
import type { InPlaceUpdateAction, LabelPatch, PodRefresh } from '../plan-types.ts';

export interface UpdatePlan {
  diffs: ExpectationDiffs;
  refreshes: PodRefresh[];
  lifecycleTransitions: LifecycleTransition[];
  /** specified-delete (recreate) and pod-template-hash back-fill patches. */
  labelPatches: LabelPatch[];
  inPlaceUpdates: InPlaceUpdateAction[];
  /** Event reasons with messages, in order. */
  events: Array<{ type: 'Normal' | 'Warning'; reason: string; message: string }>;
  requeueAfterMs?: number;
  error?: string;
}

export interface UpdateInput {
  cloneSet: CloneSet;
  revisions: readonly ControllerRevision[];
  currentRevision: ControllerRevision;
  updateRevision: ControllerRevision;
  pods: readonly Pod[];
  nowMs: number;
  features: FeatureGates;
  /** PodUnavailableBudget verdict for an UPDATE (gate PodUnavailableBudgetUpdateGate). */
  pubAllowsUpdate?: (pod: Pod) => boolean;
}

// ---------------------------------------------------------------------------------------------
// Ordering

/** SortUpdateIndexes: ActivePods order, priority, scatter, then PreparingUpdate pods first. */
export function sortUpdateIndexes(cs: CloneSet, pods: readonly Pod[], indexes: number[]): number[] {
  const rolling = cs.spec?.updateStrategy?.rollingUpdate;
  let out = [...indexes].sort((a, b) => compareActivePods(pods[a], pods[b]) || 0);
  out = sortByPriority(rolling?.priorityStrategy, pods, out);
  out = sortByScatter(rolling?.scatterStrategy, pods, out);
  const preparing = (i: number) => getPodLifecycleState(pods[i]) === LifecycleState.PreparingUpdate;
  return [...out.filter(preparing), ...out.filter((i) => !preparing(i))];
}

/** limitUpdateIndexes: at most |updateNum|, keeping unavailable pods within updateMaxUnavailable. */
export function limitUpdateIndexes(
  cs: CloneSet,
  diffs: ExpectationDiffs,
  indexes: number[],
  pods: readonly Pod[],
  targetRevision: string,
  nowMs: number,
): number[] {
  const minReady = minReadySecondsOf(cs);
  const candidates = indexes.slice(0, Math.abs(diffs.updateNum));
  let unavailable = 0;
  let targetUnavailable = 0;
  for (const p of pods) {
    if (isPodAvailable(p, minReady, nowMs)) continue;
    unavailable++;
    if (isPodAtRevision(p, targetRevision)) targetUnavailable++;
  }
  let canUpdate = 0;
  for (const i of candidates) {
    if (targetUnavailable + canUpdate >= diffs.updateMaxUnavailable) break;
    if (isPodAvailable(pods[i], minReady, nowMs)) {
      if (unavailable >= diffs.updateMaxUnavailable) break;
      unavailable++;
    }
    canUpdate++;
  }
  return candidates.slice(0, canUpdate);
}

// ---------------------------------------------------------------------------------------------

function writeRevisionLabels(features: FeatureGates) {
  return (pod: Pod, revision: string) => {
    pod.metadata.labels = {
      ...pod.metadata.labels,
      [CONTROLLER_REVISION_HASH_LABEL]: revisionLabelValue(revision, features),
      [POD_TEMPLATE_HASH_LABEL]: shortHash(revision),
    };
  };
}

/** refreshPodState: in-place progress plus the lifecycle transition it allows. */
function refreshPod(cs: CloneSet, pod: Pod, updateRevision: string, now: string) {
  return refreshPodState(cs.spec?.lifecycle, pod, updateRevision, now, isPodAtRevision);
}

type PodUpdateOutcome =
  | { kind: 'transition'; transition?: LifecycleTransition }
  | { kind: 'wait' }
  | { kind: 'inPlace'; action: InPlaceUpdateAction; delaySeconds: number }
  | { kind: 'recreate'; patch?: LabelPatch }
  | { kind: 'error'; message: string };

function updatePod(input: UpdateInput, pod: Pod, target: ControllerRevision, now: string): PodUpdateOutcome {
  const { cloneSet: cs, features } = input;
  const rolling = cs.spec?.updateStrategy?.rollingUpdate;
  const policy = rolling?.podUpdatePolicy ?? 'ReCreate';
  if (policy === 'InPlaceIfPossible' || policy === 'InPlaceOnly') {
    const oldRev = input.revisions.find((r) => isPodAtRevision(pod, r.metadata.name ?? ''));
    const vctAllows =
      !features.RecreatePodWhenChangeVCTInCloneSetGate ||
      policy === 'InPlaceOnly' ||
      !oldRev ||
      canVolumeClaimTemplatesUpdateInPlace(oldRev, target);
    const plan = vctAllows
      ? planInPlaceUpdate(pod, oldRev, target, {
          now,
          envFromMetadata: features.InPlaceUpdateEnvFromMetadata,
          verticalScaling: features.InPlaceWorkloadVerticalScaling,
          gracePeriodSeconds: rolling?.inPlaceUpdateStrategy?.gracePeriodSeconds,
          writeRevision: writeRevisionLabels(features),
          mutate: (p) => {
            p.metadata.labels![LIFECYCLE_STATE_LABEL] = LifecycleState.Updating;
            p.metadata.annotations![LIFECYCLE_TIMESTAMP_ANNOTATION] = now;
          },
        })
      : undefined;
    if (plan) {
      const step = inPlaceHookStep(cs.spec?.lifecycle?.inPlaceUpdate, pod, now);
      if (step.kind !== 'proceed') return step;
      return {
        kind: 'inPlace',
        action: { pod: podName(pod), revision: target.metadata.name ?? '', updatedPod: plan.pod, conditions: plan.conditions },
        delaySeconds: plan.delaySeconds,
      };
    }
    if (policy === 'InPlaceOnly') {
      return { kind: 'error', message: `find Pod ${podName(pod)} update strategy is InPlaceOnly but can not update in-place` };
    }
  }
  const patched = pod.metadata.labels?.[SPECIFIED_DELETE_LABEL] === 'true';
  return { kind: 'recreate', patch: patched ? undefined : { pod: podName(pod), labels: { [SPECIFIED_DELETE_LABEL]: 'true' } } };
}

/** The Update phase of one reconcile (run only when Scale changed nothing). */
export function planUpdate(input: UpdateInput): UpdatePlan {
  const { cloneSet: cs, pods, nowMs, features } = input;
  const now = metaTime(nowMs);
  const updateName = input.updateRevision.metadata.name ?? '';
  const currentName = input.currentRevision.metadata.name ?? '';
  const plan: UpdatePlan = {
    diffs: { ...EMPTY_DIFFS },
    refreshes: [],
    lifecycleTransitions: [],
    labelPatches: [],
    inPlaceUpdates: [],
    events: [],
  };
  const requeue = (seconds: number) => {
    const ms = seconds * 1000;
    if (ms > 0) plan.requeueAfterMs = plan.requeueAfterMs === undefined ? ms : Math.min(plan.requeueAfterMs, ms);
  };

  // 1. refresh every pod; a lifecycle change or hash back-fill ends the round
  let modified = false;
  for (const pod of pods) {
    const { refresh, transition } = refreshPod(cs, pod, updateName, now);
    if (refresh.pod || refresh.conditions)
      plan.refreshes.push({ pod: podName(pod), updatedPod: refresh.pod, conditions: refresh.conditions });
    requeue(refresh.delaySeconds ?? 0);
    if (transition) {
      plan.lifecycleTransitions.push(transition);
      if (transition.stateChanged) modified = true;
    }
    if (!pod.metadata.labels || !Object.hasOwn(pod.metadata.labels, POD_TEMPLATE_HASH_LABEL)) {
      plan.labelPatches.push({
        pod: podName(pod),
        labels: { [POD_TEMPLATE_HASH_LABEL]: shortHash(pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '') },
      });
      modified = true;
    }
  }
  if (modified) return plan;

  // 2. nothing to roll
  if (cs.spec?.updateStrategy?.type === 'OnDelete' || cs.spec?.updateStrategy?.rollingUpdate?.paused) return plan;

  // 3. how many, towards which revision
  const diffs = calculateDiffsWithExpectation(cs, pods, currentName, updateName, { nowMs, features });
  plan.diffs = diffs;
  if (diffs.updateNum === 0) return plan;
  const target = diffs.updateNum > 0 ? input.updateRevision : input.currentRevision;

  // 4. candidates
  const waiting: number[] = [];
  pods.forEach((pod, i) => {
    const atUpdate = isPodAtRevision(pod, updateName);
    if (diffs.updateNum > 0 ? atUpdate : !atUpdate) return;
    const state = getPodLifecycleState(pod);
    if (state === LifecycleState.PreparingDelete) return;
    if (state !== LifecycleState.Updated && getInPlaceUpdateGrace(pod) !== undefined) return;
    waiting.push(i);
  });

  // 5–6. order and limit
  const chosen = limitUpdateIndexes(cs, diffs, sortUpdateIndexes(cs, pods, waiting), pods, target.metadata.name ?? '', nowMs);

  // 7. update
  for (const i of chosen) {
    const pod = pods[i];
    if (features.PodUnavailableBudgetUpdateGate && input.pubAllowsUpdate && !input.pubAllowsUpdate(pod)) {
      requeue(1);
      break;
    }
    const outcome = updatePod(input, pod, target, now);
    if (outcome.kind === 'error') {
      plan.error = outcome.message;
      break;
    }
    if (outcome.kind === 'transition' && outcome.transition) plan.lifecycleTransitions.push(outcome.transition);
    if (outcome.kind === 'inPlace') {
      plan.inPlaceUpdates.push(outcome.action);
      plan.events.push({
        type: 'Normal',
        reason: 'SuccessfulUpdatePodInPlace',
        message: `successfully update pod ${podName(pod)} in-place(revision ${target.metadata.name})`,
      });
      requeue(outcome.delaySeconds);
    }
    if (outcome.kind === 'recreate') {
      if (outcome.patch) plan.labelPatches.push(outcome.patch);
      plan.events.push({
        type: 'Normal',
        reason: 'SuccessfulUpdatePodReCreate',
        message: `successfully patch pod ${podName(pod)} specified-delete for update(revision ${target.metadata.name})`,
      });
    }
  }
  return plan;
}
