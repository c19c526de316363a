// One CloneSet reconcile as a pure plan (behaviour spec §3.3): revisions, PVC clean-up, Scale,
// then (if Scale changed nothing) Update, status, podsToDelete truncation and history pruning.
// The executor applies the plan in field order: newRevision / revisionUpdate first, then PVCs,
// pod writes, creations and deletions, then status and spec.

import type { CloneSet, CloneSetStatus } from '../../apis/apps/cloneset.ts';
import { CLONESET_INSTANCE_ID_LABEL, CLONESET_VCT_HASH_ANNOTATION, SPECIFIED_DELETE_LABEL } from '../../apis/constants.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import { planWorkloadImagePreDownload, type PreDownloadPlan } from '../../util/imagepredownload.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import type { Labels } from '../../util/labelselector.ts';
import type { LifecycleTransition } from '../../util/lifecycle.ts';
import { byPodName, isPodActive } from '../../util/pod.ts';
import {
  chooseUpdateRevision,
  newCloneSetRevision,
  revisionsToTruncate as truncateHistory,
  templateFromRevision,
  volumeClaimTemplatesHash,
  type ControllerRevision,
} from '../../util/revision-data.ts';
import { DEFAULT_MAX_UNAVAILABLE, EMPTY_DIFFS, type ExpectationDiffs } from './diff.ts';
import { podName, replicasOf, type Pod } from './pods.ts';
import { planScale, type PodCreation, type PodDeletion, type ScaleInput, type ScalePlan } from './scale.ts';
import { computeStatus } from './status.ts';
import { planUpdate } from './update.ts';
import type { InPlaceUpdateAction, LabelPatch, PodRefresh } from '../plan-types.ts';

export interface PlanInput {
  cloneSet: CloneSet;
  /** ControllerRevisions selected by the CloneSet. */
  revisions: readonly ControllerRevision[];
  /** All pods owned by the CloneSet, active or not. */
  pods: readonly Pod[];
  /** All PVCs owned by the CloneSet. */
  pvcs: readonly PersistentVolumeClaim[];
  /** Milliseconds since the epoch. */
  now: number;
  features: FeatureGates;
  /** 5-character instance ids (random by default). */
  randomId?: () => string;
  scalingExcludePreparingDelete?: boolean;
  nodeLabels?: (node: string) => Labels | undefined;
  pubAllowsUpdate?: (pod: Pod) => boolean;
  /**
   * Names of the ImagePullJobs this CloneSet controls; given only when image pre-download is on
   * (gate PreDownloadImageForInPlaceUpdate).
   */
  imagePullJobs?: readonly string[];
}

export interface CloneSetPlan {
  /** Revision to create before anything else. */
  newRevision?: ControllerRevision;
  /** Older equal revision brought back as the update revision (rollback): new number, VCT hash. */
  revisionUpdate?: { name: string; revision: number; annotations: Record<string, string> };
  updateRevision: string;
  currentRevision: string;
  collisionCount: number;
  /** PVCs without an active pod: handed to their inactive pod, or deleted. */
  pvcReown: Array<{ pvc: string; pod: string }>;
  pvcDeletes: string[];
  /**
   * The arithmetic of the round (scale diffs, or the update's when Scale changed nothing):
   * kubectl kruise rollout plan prints it as the budget used and left.
   */
  diffs: ExpectationDiffs;
  /** Which phase acted: Scale (creations/deletions) or Update (Scale had nothing to do). */
  phase: 'scale' | 'update' | 'none';
  createPods: PodCreation[];
  deletePods: PodDeletion[];
  lifecycleTransitions: LifecycleTransition[];
  refreshes: PodRefresh[];
  inPlaceUpdates: InPlaceUpdateAction[];
  labelPatches: LabelPatch[];
  events: Array<{ type: 'Normal' | 'Warning'; reason: string; message: string }>;
  status: CloneSetStatus;
  statusChanged: boolean;
  /** New spec.scaleStrategy.podsToDelete when names of gone pods should be dropped. */
  podsToDelete?: string[];
  revisionsToDelete: string[];
  /** Image pre-download for the next in-place update (jobs to create/delete, revision label). */
  preDownload?: PreDownloadPlan;
  requeueAfterMs?: number;
}

const DEFAULT_HISTORY_LIMIT = 10;

interface RevisionChoice {
  current: ControllerRevision;
  update: ControllerRevision;
  collisionCount: number;
  newRevision?: ControllerRevision;
  revisionUpdate?: CloneSetPlan['revisionUpdate'];
}

/** Step 6 of doReconcile: find or make the update revision; the current one follows status. */
export function chooseRevisions(cs: CloneSet, revisions: readonly ControllerRevision[]): RevisionChoice {
  const choice = chooseUpdateRevision(revisions, cs.status?.collisionCount ?? 0, (n, c) => newCloneSetRevision(cs, n, c));
  let { update } = choice;
  let revisionUpdate: CloneSetPlan['revisionUpdate'];
  if (choice.renumbered) {
    // Brought back: it also takes the current volumeClaimTemplates hash.
    const annotations = { ...choice.renumbered.metadata.annotations };
    annotations[CLONESET_VCT_HASH_ANNOTATION] = volumeClaimTemplatesHash(cs.spec?.volumeClaimTemplates);
    revisionUpdate = { name: choice.renumbered.metadata.name ?? '', revision: update.revision, annotations };
    update = { ...update, metadata: { ...update.metadata, annotations } };
  }
  const current = revisions.find((r) => r.metadata.name === cs.status?.currentRevision) ?? update;
  return { current, update, collisionCount: choice.collisionCount, newRevision: choice.newRevision, revisionUpdate };
}

/** cleanupPVCs (enablePVCReuse=false): keep PVCs of active pods; others follow their inactive pod or go. */
export function cleanupPVCs(active: readonly Pod[], inactive: readonly Pod[], pvcs: readonly PersistentVolumeClaim[]) {
  const idOf = (o: { metadata?: { labels?: Record<string, string> } }) => o.metadata?.labels?.[CLONESET_INSTANCE_ID_LABEL] ?? '';
  const activeIds = new Set(active.map(idOf).filter((id) => id !== ''));
  const inactiveById = new Map(inactive.filter((p) => idOf(p) !== '').map((p) => [idOf(p), p]));
  const kept: PersistentVolumeClaim[] = [];
  const reown: Array<{ pvc: string; pod: string }> = [];
  const deletes: string[] = [];
  for (const pvc of pvcs) {
    const id = idOf(pvc);
    if (activeIds.has(id)) kept.push(pvc);
    else if (inactiveById.has(id)) reown.push({ pvc: pvc.metadata?.name ?? '', pod: podName(inactiveById.get(id)!) });
    else deletes.push(pvc.metadata?.name ?? '');
  }
  return { kept, reown, deletes };
}

/** Revisions to delete beyond revisionHistoryLimit (default 10). */
export function revisionsToTruncate(
  cs: CloneSet,
  pods: readonly Pod[],
  revisions: readonly ControllerRevision[],
  current: string,
  update: string,
): string[] {
  return truncateHistory(revisions, pods, current, update, cs.spec?.revisionHistoryLimit ?? DEFAULT_HISTORY_LIMIT);
}

export function planCloneSet(input: PlanInput): CloneSetPlan {
  const { cloneSet: cs, features, now } = input;
  // Name order first: ties in the deletion and update orders go by name, not by cache order.
  const pods = byPodName(input.pods);
  const active = pods.filter(isPodActive);
  const inactive = pods.filter((p) => !isPodActive(p));

  let pvcs = [...input.pvcs];
  let pvcReown: CloneSetPlan['pvcReown'] = [];
  let pvcDeletes: string[] = [];
  if (!cs.spec?.scaleStrategy?.enablePVCReuse) {
    const c = cleanupPVCs(active, inactive, pvcs);
    pvcs = c.kept;
    pvcReown = c.reown;
    pvcDeletes = c.deletes;
  }

  const rev = chooseRevisions(cs, input.revisions);
  const allRevisions = rev.newRevision
    ? [...input.revisions, rev.newRevision]
    : input.revisions.map((r) => (r.metadata.name === rev.update.metadata.name ? rev.update : r));
  const updateName = rev.update.metadata.name ?? '';
  const currentName = rev.current.metadata.name ?? '';

  const plan: CloneSetPlan = {
    newRevision: rev.newRevision,
    revisionUpdate: rev.revisionUpdate,
    updateRevision: updateName,
    currentRevision: currentName,
    collisionCount: rev.collisionCount,
    pvcReown,
    pvcDeletes,
    diffs: EMPTY_DIFFS,
    phase: 'none',
    createPods: [],
    deletePods: [],
    lifecycleTransitions: [],
    refreshes: [],
    inPlaceUpdates: [],
    labelPatches: [],
    events: [],
    // Filled in by computeStatus below, before the plan is returned.
    status: undefined as unknown as CloneSetStatus,
    statusChanged: false,
    revisionsToDelete: [],
  };
  const requeue = (ms: number | undefined) => {
    if (ms !== undefined && ms > 0) plan.requeueAfterMs = plan.requeueAfterMs === undefined ? ms : Math.min(plan.requeueAfterMs, ms);
  };

  if (input.imagePullJobs && !cs.metadata?.deletionTimestamp) {
    plan.preDownload = preDownloadFor(cs, rev.current, rev.update, input.imagePullJobs, features);
  }

  let updateError: string | undefined;
  if (!cs.metadata?.deletionTimestamp) {
    const scaleInput: ScaleInput = {
      cloneSet: cs,
      currentRevision: { name: currentName, template: templateFromRevision(rev.current) },
      updateRevision: { name: updateName, template: templateFromRevision(rev.update) },
      pods: active,
      pvcs,
      nowMs: now,
      features,
      randomId: input.randomId,
      scalingExcludePreparingDelete: input.scalingExcludePreparingDelete,
      nodeLabels: input.nodeLabels,
    };
    const scale = planScale(scaleInput);
    plan.diffs = scale.diffs;
    plan.phase = 'scale';
    plan.createPods = scale.createPods;
    plan.deletePods = scale.deletePods;
    plan.lifecycleTransitions.push(...scale.lifecycleTransitions);
    if (scale.scaleUpLimited) plan.events.push({ type: 'Warning', reason: 'ScaleUpLimited', message: scale.scaleUpLimited });
    if (!scale.modified) {
      const update = planUpdate({
        cloneSet: cs,
        revisions: allRevisions,
        currentRevision: rev.current,
        updateRevision: rev.update,
        pods: active,
        nowMs: now,
        features,
        pubAllowsUpdate: input.pubAllowsUpdate,
      });
      plan.diffs = update.diffs;
      plan.phase = 'update';
      plan.refreshes = update.refreshes;
      plan.inPlaceUpdates = update.inPlaceUpdates;
      plan.labelPatches = update.labelPatches;
      if (update.inPlaceUpdates.length === 0) {
        const recreated = recreateAtOnce(update.labelPatches, (pods) => planScale({ ...scaleInput, pods }), active);
        if (recreated) {
          plan.deletePods = recreated.deletePods;
          plan.labelPatches = recreated.labelPatches;
        }
      }
      plan.lifecycleTransitions.push(...update.lifecycleTransitions);
      plan.events.push(...update.events);
      updateError = update.error;
      requeue(update.requeueAfterMs);
    }
  }

  const status = computeStatus({
    cloneSet: cs,
    pods: active,
    currentRevision: currentName,
    updateRevision: updateName,
    collisionCount: rev.collisionCount,
    nowMs: now,
    updateError,
  });
  plan.status = status.status;
  plan.statusChanged = status.changed;
  requeue(status.requeueAfterMs);

  const toDelete = cs.spec?.scaleStrategy?.podsToDelete ?? [];
  if (toDelete.length > 0) {
    const existing = new Set(active.map(podName));
    const kept = toDelete.filter((n) => existing.has(n));
    if (kept.length !== toDelete.length) plan.podsToDelete = kept;
  }
  plan.revisionsToDelete = revisionsToTruncate(cs, active, allRevisions, currentName, updateName);
  return plan;
}

/**
 * A ReCreate update marks its pods specified-delete, and upstream's next round (Scale, once the
 * cache shows the labels) deletes them: two writes per pod, a round trip apart. Here the Scale
 * phase runs again at once on the pods as they will be once marked, and the pods it would delete
 * are deleted in this round, unmarked: one write each instead of two; one it holds back (beyond
 * the ready-deletion budget) keeps its mark. It applies only when that second Scale does nothing
 * but delete pods this round marked: any other step it would take (a preDelete hook's
 * PreparingDelete, surge creations) leaves the round as upstream's, every mark written and Scale
 * acting next round. Every pod still gets its SuccessfulUpdatePodReCreate event.
 */
export function recreateAtOnce(
  labelPatches: readonly LabelPatch[],
  scaleOf: (pods: readonly Pod[]) => ScalePlan,
  active: readonly Pod[],
): { deletePods: PodDeletion[]; labelPatches: LabelPatch[] } | undefined {
  const marked = new Set(labelPatches.filter((l) => l.labels[SPECIFIED_DELETE_LABEL] === 'true').map((l) => l.pod));
  if (marked.size === 0) return undefined;
  const asMarked = active.map((p) =>
    marked.has(podName(p)) ? { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, [SPECIFIED_DELETE_LABEL]: 'true' } } } : p,
  );
  const next = scaleOf(asMarked);
  if (next.createPods.length || next.lifecycleTransitions.length || next.deletePods.length === 0) return undefined;
  if (!next.deletePods.every((d) => marked.has(d.pod))) return undefined;
  const deleted = new Set(next.deletePods.map((d) => d.pod));
  return {
    deletePods: next.deletePods.map((d) => ({ ...d, reason: RECREATE_DELETE_REASON })),
    labelPatches: labelPatches.filter((l) => !deleted.has(l.pod)),
  };
}

/** The reason of a deletion recreateAtOnce moved into the round that chose the pod. */
export const RECREATE_DELETE_REASON = 'recreate for update (deleted in the round that chose it, without the specified-delete mark)';

/** Step 7 of doReconcile: pre-pull the update revision's new images (spec §12.4). */
function preDownloadFor(
  cs: CloneSet,
  current: ControllerRevision,
  update: ControllerRevision,
  jobs: readonly string[],
  features: FeatureGates,
): PreDownloadPlan {
  const replicas = replicasOf(cs);
  const rolling = cs.spec?.updateStrategy?.rollingUpdate;
  const inPlace = rolling?.inPlaceUpdateStrategy;
  const updateName = update.metadata.name ?? '';
  return planWorkloadImagePreDownload({
    kind: 'CloneSet',
    workload: cs,
    current,
    update,
    rollout: {
      replicas,
      partition: getScaledValueFromIntOrPercent(rolling?.partition ?? 0, replicas, true),
      maxUnavailable: getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE, replicas, false),
      recreate: (rolling?.podUpdatePolicy ?? 'ReCreate') === 'ReCreate',
      updatedReadyReplicas: cs.status?.updateRevision === updateName ? (cs.status.updatedReadyReplicas ?? 0) : 0,
      minUpdatedReadyPods: inPlace?.imagePreDownloadMinUpdatedReadyPods,
      parallelism: inPlace?.imagePreDownloadParallelism,
      timeoutSeconds: inPlace?.imagePreDownloadTimeoutSeconds,
    },
    ownedJobs: jobs,
    envFromMetadata: features.InPlaceUpdateEnvFromMetadata,
    verticalScaling: features.InPlaceWorkloadVerticalScaling,
  });
}
