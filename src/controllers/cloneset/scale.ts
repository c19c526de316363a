// CloneSet Scale phase (behaviour spec §3.5, §3.6, §3.11): which pods to create (revision,
// instance id, PVCs), which to delete (specified, pre-deleted, scale-in) and in which order.
// A round stops at the first step that changes something, as upstream does.

import type { CloneSet } from '../../apis/apps/cloneset.ts';
import {
  CLONESET_INSTANCE_ID_LABEL,
  CONDITION_INPLACE_UPDATE_READY,
  CONTROLLER_REVISION_HASH_LABEL,
  LIFECYCLE_STATE_LABEL,
  LIFECYCLE_TIMESTAMP_ANNOTATION,
  LifecycleState,
  POD_TEMPLATE_HASH_LABEL,
} from '../../apis/constants.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { OwnerReference, PersistentVolumeClaim, PodTemplateSpec, Volume } from '../../apis/core.ts';
import { getPodLifecycleState, isPodHooked, planLifecycleTransition, type LifecycleTransition } from '../../util/lifecycle.ts';
import {
  compareActivePodsWithRanks,
  rankedOrderReason,
  sameNodeRanker,
  spreadConstraintsRanker,
  type RankedOrderOptions,
  type Ranker,
} from '../../util/pod.ts';
import type { Labels } from '../../util/labelselector.ts';
import { shortHash } from '../../util/revision.ts';
import { calculateDiffsWithExpectation, type ExpectationDiffs } from './diff.ts';
import {
  groupUpdated,
  isPodAvailable,
  isPodReady,
  isPodUpdate,
  isSpecifiedDelete,
  minReadySecondsOf,
  podName,
  replicasOf,
  type Pod,
} from './pods.ts';
import { metaTime } from '../../util/clock.ts';
import type { PodCreation as SharedPodCreation } from '../plan-types.ts';
import { randomString } from '../../util/rand.ts';

export const INSTANCE_ID_LENGTH = 5;

/** apimachinery rand.String: `length` characters from the vowel-free alphabet. */
export function randomInstanceId(length = INSTANCE_ID_LENGTH): string {
  return randomString(length);
}

/** A pod to create, at its revision; its claims (names that already exist left out) go first. */
export interface PodCreation extends SharedPodCreation {
  revision: string;
}

export interface PodDeletion {
  pod: string;
  /** Owned PVCs with the same instance id, deleted along with the pod. */
  pvcs: string[];
  /** Why this pod (shown by `kubectl kruise rollout plan`): specified delete, hook released, or the deletion-order rule. */
  reason: string;
}

export interface ScalePlan {
  diffs: ExpectationDiffs;
  createPods: PodCreation[];
  deletePods: PodDeletion[];
  lifecycleTransitions: LifecycleTransition[];
  /** Warning event ScaleUpLimited, with its message. */
  scaleUpLimited?: string;
  /** Whether this round changed anything (Update is then skipped). */
  modified: boolean;
}

export interface RevisionRef {
  name: string;
  template: PodTemplateSpec;
}

export interface ScaleInput {
  cloneSet: CloneSet;
  currentRevision: RevisionRef;
  updateRevision: RevisionRef;
  /** Active pods owned by the CloneSet. */
  pods: readonly Pod[];
  /** Owned PVCs still in use (after PVC clean-up). */
  pvcs: readonly PersistentVolumeClaim[];
  nowMs: number;
  features: FeatureGates;
  randomId?: () => string;
  scalingExcludePreparingDelete?: boolean;
  /** Node labels for topologySpreadConstraints ranking; undefined when the node is unknown. */
  nodeLabels?: (node: string) => Labels | undefined;
}

// ---------------------------------------------------------------------------------------------
// Creation

/** Ids of PVCs whose pod is gone (reused first, sorted), then fresh random ids; all sorted. */
export function availableInstanceIds(
  num: number,
  pods: readonly Pod[],
  pvcs: readonly PersistentVolumeClaim[],
  randomId: () => string,
): string[] {
  const existing = new Set<string>();
  const free = new Set<string>();
  for (const pvc of pvcs) {
    const id = pvc.metadata?.labels?.[CLONESET_INSTANCE_ID_LABEL];
    if (id) {
      existing.add(id);
      free.add(id);
    }
  }
  for (const pod of pods) {
    const id = pod.metadata.labels?.[CLONESET_INSTANCE_ID_LABEL];
    if (id) {
      existing.add(id);
      free.delete(id);
    }
  }
  const freeList = [...free].sort();
  const ids = new Set<string>();
  while (ids.size < num) {
    let id = freeList.shift();
    if (id === undefined) {
      do id = randomId();
      while (existing.has(id) || ids.has(id));
    }
    ids.add(id);
  }
  return [...ids].sort();
}

export function controllerRef(cs: CloneSet): OwnerReference {
  return {
    apiVersion: cs.apiVersion ?? 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    name: cs.metadata?.name ?? '',
    uid: cs.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The PVCs of one instance, keyed by template name, in template order. */
export function persistentVolumeClaimsFor(cs: CloneSet, instanceId: string): Array<[string, PersistentVolumeClaim]> {
  const csName = cs.metadata?.name ?? '';
  return (cs.spec?.volumeClaimTemplates ?? []).map((t) => {
    const tmplName = t.metadata?.name ?? '';
    const claim: PersistentVolumeClaim = structuredClone(t);
    claim.apiVersion = 'v1';
    claim.kind = 'PersistentVolumeClaim';
    claim.metadata = {
      ...claim.metadata,
      name: `${tmplName}-${csName}-${instanceId}`,
      namespace: cs.metadata?.namespace,
      labels: { ...claim.metadata?.labels, ...(cs.spec?.selector?.matchLabels ?? {}), [CLONESET_INSTANCE_ID_LABEL]: instanceId },
      ownerReferences: [controllerRef(cs)],
    };
    delete claim.status;
    return [tmplName, claim];
  });
}

/** Revision label value: the full revision name, or only its hash under CloneSetShortHash. */
export function revisionLabelValue(revision: string, features: Pick<FeatureGates, 'CloneSetShortHash'>): string {
  return features.CloneSetShortHash ? shortHash(revision) : revision;
}

/** A new pod of `revision` with the given instance id (NewVersionedPods). */
export function newVersionedPod(
  cs: CloneSet,
  template: PodTemplateSpec,
  revision: string,
  instanceId: string,
  features: Pick<FeatureGates, 'CloneSetShortHash'>,
  nowMs: number,
): { pod: Pod; pvcs: PersistentVolumeClaim[] } {
  const csName = cs.metadata?.name ?? '';
  const t = structuredClone(template);
  const claims = persistentVolumeClaimsFor(cs, instanceId);
  const claimVolumes: Volume[] = claims.map(([name, claim]) => ({
    name,
    persistentVolumeClaim: { claimName: claim.metadata!.name! },
  }));
  const claimNames = new Set(claims.map(([name]) => name));
  const spec = { ...(t.spec ?? { containers: [] }) };
  spec.volumes = [...claimVolumes, ...(spec.volumes ?? []).filter((v) => !claimNames.has(v.name))];
  if (spec.volumes.length === 0) delete spec.volumes;
  const gates = spec.readinessGates ?? [];
  if (!gates.some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY)) {
    spec.readinessGates = [...gates, { conditionType: CONDITION_INPLACE_UPDATE_READY }];
  }
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${csName}-${instanceId}`,
      generateName: `${csName}-`,
      namespace: cs.metadata?.namespace,
      labels: {
        ...(t.metadata?.labels ?? {}),
        [CONTROLLER_REVISION_HASH_LABEL]: revisionLabelValue(revision, features),
        [POD_TEMPLATE_HASH_LABEL]: shortHash(revision),
        [CLONESET_INSTANCE_ID_LABEL]: instanceId,
        [LIFECYCLE_STATE_LABEL]: LifecycleState.PreparingNormal,
      },
      annotations: { ...(t.metadata?.annotations ?? {}), [LIFECYCLE_TIMESTAMP_ANNOTATION]: metaTime(nowMs) },
      ...(t.metadata?.finalizers?.length ? { finalizers: [...t.metadata.finalizers] } : {}),
      ownerReferences: [controllerRef(cs)],
    },
    spec,
  };
  return { pod, pvcs: claims.map(([, c]) => c) };
}

// ---------------------------------------------------------------------------------------------
// Deletion

/** The ranker for deletion order: spread constraints when the template has them, else same-node. */
function rankerFor(cs: CloneSet, pods: readonly Pod[], nodeLabels?: (node: string) => Labels | undefined): Ranker {
  const constraints = (cs.spec?.template?.spec?.topologySpreadConstraints ?? [])
    .map((c) => ({ topologyKey: String((c as { topologyKey?: unknown }).topologyKey ?? '') }))
    .filter((c) => c.topologyKey !== '');
  if (constraints.length > 0) return spreadConstraintsRanker(pods, constraints, nodeLabels ?? (() => undefined));
  return sameNodeRanker(pods);
}

/** Pods sorted into deletion order (§3.6): first = deleted first. */
export function sortPodsForDeletion(
  cs: CloneSet,
  pods: readonly Pod[],
  nowMs: number,
  nodeLabels?: (node: string) => Labels | undefined,
): Pod[] {
  return [...pods].sort(compareActivePodsWithRanks(deletionOrderOptions(cs, pods, nowMs, nodeLabels)) as (a: Pod, b: Pod) => number);
}

function deletionOrderOptions(
  cs: CloneSet,
  pods: readonly Pod[],
  nowMs: number,
  nodeLabels?: (node: string) => Labels | undefined,
): RankedOrderOptions {
  const minReady = minReadySecondsOf(cs);
  return { rank: rankerFor(cs, pods, nodeLabels), isAvailable: (p) => isPodAvailable(p as Pod, minReady, nowMs) };
}

/** A pod chosen for scale-in, with the reason it goes before the pods that stay. */
export interface ChosenPod {
  pod: Pod;
  reason: string;
}

/** choosePodsToDelete: old-revision pods first as scaleDownNumOldRevision asks, ranked within each group. */
export function choosePodsToDelete(
  cs: CloneSet,
  total: number,
  oldRevisionDiff: number,
  notUpdated: readonly Pod[],
  updated: readonly Pod[],
  nowMs: number,
  nodeLabels?: (node: string) => Labels | undefined,
): ChosenPod[] {
  const choose = (group: readonly Pod[], n: number, label: string): ChosenPod[] => {
    if (n >= group.length) return group.map((pod) => ({ pod, reason: `scale in: ${label}, every one goes` }));
    const sorted = sortPodsForDeletion(cs, group, nowMs, nodeLabels);
    const firstKept = sorted[n];
    const opts = deletionOrderOptions(cs, group, nowMs, nodeLabels);
    return sorted.slice(0, n).map((pod) => ({
      pod,
      reason: `scale in: ${label}, ${rankedOrderReason(pod, firstKept, opts) ?? 'same rank'} than ${podName(firstKept)}`,
    }));
  };
  if (oldRevisionDiff >= total) return choose(notUpdated, total, 'old revision');
  if (oldRevisionDiff > 0) {
    return [...choose(notUpdated, oldRevisionDiff, 'old revision'), ...choose(updated, total - oldRevisionDiff, 'update revision')];
  }
  return choose(updated, total, 'update revision');
}

function pvcsOfInstance(pod: Pod, pvcs: readonly PersistentVolumeClaim[]): string[] {
  const id = pod.metadata.labels?.[CLONESET_INSTANCE_ID_LABEL] ?? '';
  return pvcs.filter((p) => (p.metadata?.labels?.[CLONESET_INSTANCE_ID_LABEL] ?? '') === id).map((p) => p.metadata?.name ?? '');
}

/**
 * deletePods: a pod the preDelete hook still holds goes to PreparingDelete instead (readiness may
 * be held too); others are deleted with their PVCs.
 */
function planDeletes(
  cs: CloneSet,
  pods: readonly Pod[],
  reasonOf: (pod: Pod) => string,
  pvcs: readonly PersistentVolumeClaim[],
  now: string,
): { deletes: PodDeletion[]; transitions: LifecycleTransition[]; modified: boolean } {
  const deletes: PodDeletion[] = [];
  const transitions: LifecycleTransition[] = [];
  let modified = false;
  const hook = cs.spec?.lifecycle?.preDelete;
  for (const pod of pods) {
    if (hook && isPodHooked(hook, pod)) {
      const t = planLifecycleTransition(pod, LifecycleState.PreparingDelete, { now, markPodNotReady: !!hook.markPodNotReady });
      if (t) {
        transitions.push(t);
        if (t.stateChanged) modified = true;
      }
      continue;
    }
    deletes.push({ pod: podName(pod), pvcs: pvcsOfInstance(pod, pvcs), reason: reasonOf(pod) });
    modified = true;
  }
  return { deletes, transitions, modified };
}

// ---------------------------------------------------------------------------------------------

/** The Scale phase of one reconcile. */
export function planScale(input: ScaleInput): ScalePlan {
  const { cloneSet: cs, pods, pvcs, nowMs, features } = input;
  const now = metaTime(nowMs);
  const plan: ScalePlan = {
    diffs: calculateDiffsWithExpectation(cs, pods, input.currentRevision.name, input.updateRevision.name, {
      nowMs,
      features,
      isPodUpdate: (p, r) => isPodUpdate(p, r, features),
      scalingExcludePreparingDelete: input.scalingExcludePreparingDelete,
    }),
    createPods: [],
    deletePods: [],
    lifecycleTransitions: [],
    modified: false,
  };

  // 1. planned deletions
  const specified = pods.filter((p) => isSpecifiedDelete(cs, p));
  const preDeleting = pods.filter((p) => getPodLifecycleState(p) === LifecycleState.PreparingDelete);
  const numToDelete = new Set([...specified, ...preDeleting].map(podName)).size;

  // 2. regret: bring PreparingDelete pods back when replicas grew again (not once held not-ready)
  if (!cs.spec?.lifecycle?.preDelete?.markPodNotReady) {
    let diff = replicasOf(cs) - pods.length + numToDelete;
    for (const pod of preDeleting) {
      if (diff <= 0) break;
      if (isSpecifiedDelete(cs, pod)) continue;
      const t = planLifecycleTransition(pod, LifecycleState.PreparingNormal, { now });
      if (t?.stateChanged) {
        plan.lifecycleTransitions.push(t);
        plan.modified = true;
      }
      diff--;
    }
    if (plan.modified) return plan;
  }

  const diffs = plan.diffs;
  if (diffs.scaleUpNum > diffs.scaleUpLimit) {
    plan.scaleUpLimited = `scaleUp is limited because of scaleStrategy.maxUnavailable, limit: ${diffs.scaleUpLimit}`;
  }

  // 3. scale out
  if (diffs.scaleUpNum > 0) {
    const ids = availableInstanceIds(diffs.scaleUpLimit, pods, pvcs, input.randomId ?? randomInstanceId);
    const existingPVCs = new Set(pvcs.map((p) => p.metadata?.name ?? ''));
    const currentCount = diffs.scaleUpLimit <= diffs.scaleUpNumOldRevision ? diffs.scaleUpLimit : diffs.scaleUpNumOldRevision;
    ids.forEach((id, i) => {
      const rev = i < currentCount ? input.currentRevision : input.updateRevision;
      const { pod, pvcs: claims } = newVersionedPod(cs, rev.template, rev.name, id, features, nowMs);
      plan.createPods.push({ pod, pvcs: claims.filter((c) => !existingPVCs.has(c.metadata?.name ?? '')), revision: rev.name });
    });
    plan.modified = plan.createPods.length > 0;
    return plan;
  }

  const apply = (r: ReturnType<typeof planDeletes>) => {
    plan.deletePods.push(...r.deletes);
    plan.lifecycleTransitions.push(...r.transitions);
    plan.modified ||= r.modified;
    return r.modified;
  };

  // 4. pods already in PreparingDelete whose hook was released
  if (preDeleting.length > 0 && apply(planDeletes(cs, preDeleting, () => 'preDelete hook released (PreparingDelete)', pvcs, now)))
    return plan;

  // 5. specified deletion: not-ready pods at once, ready ones within deleteReadyLimit
  let readyLimit = diffs.deleteReadyLimit;
  const preDeletingNames = new Set(preDeleting.map(podName));
  const toDelete = specified.filter((p) => !preDeletingNames.has(podName(p)));
  if (toDelete.length > 0) {
    const canDelete = toDelete.filter((p) => {
      if (!isPodReady(p, nowMs)) return true;
      if (readyLimit > 0) {
        readyLimit--;
        return true;
      }
      return false;
    });
    if (apply(planDeletes(cs, canDelete, () => 'specified delete (scaleStrategy.podsToDelete or specified-delete label)', pvcs, now)))
      return plan;
  }

  // 6. scale in, only once planned deletions are done
  if (diffs.scaleDownNum > 0 && numToDelete === 0) {
    const { updated, notUpdated } = groupUpdated(pods, input.updateRevision.name);
    const chosen = choosePodsToDelete(cs, diffs.scaleDownNum, diffs.scaleDownNumOldRevision, notUpdated, updated, nowMs, input.nodeLabels);
    const reasons = new Map(chosen.map((c) => [podName(c.pod), c.reason]));
    const deletable = chosen
      .map((c) => c.pod)
      .filter((p) => {
        if (!isPodReady(p, nowMs)) return true;
        if (readyLimit > 0) {
          readyLimit--;
          return true;
        }
        return false;
      });
    apply(planDeletes(cs, deletable, (p) => reasons.get(podName(p)) ?? 'scale in', pvcs, now));
  }
  return plan;
}
