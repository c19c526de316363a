// The rolling-update phase of an Advanced DaemonSet round (upstream rollingUpdate): the nodes to
// update (partition, selector), within maxUnavailable or maxSurge, in place where possible.

import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { planInPlaceUpdate } from '../../util/inplaceupdate.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import type { DaemonPlacement } from '../../util/nodefit.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import type { InPlaceUpdateAction } from '../plan-types.ts';
import type { PlanInput } from './types.ts';
import {
  hasInPlaceGate,
  isDaemonPodAvailable,
  isNilOrPreDeleting,
  isPodUpdated,
  isPreDeleting,
  partitionOf,
  podName,
  rollingUpdateOf,
} from './pods.ts';
import { revisionHash } from './revisions.ts';

/** surgeCount / unavailableCount (roundUp), with upstream's fallback of one unavailable. */
export function updateBudgets(ds: DaemonSet, desired: number): { maxSurge: number; maxUnavailable: number } {
  const ru = rollingUpdateOf(ds);
  const maxSurge = ru?.maxSurge == null ? 0 : getScaledValueFromIntOrPercent(ru.maxSurge, desired, true);
  let maxUnavailable = ru?.maxUnavailable == null ? 0 : getScaledValueFromIntOrPercent(ru.maxUnavailable, desired, true);
  if (desired > 0 && maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

/** findUpdatedPodsOnNode: at most one new and one old live pod, else ok = false. */
export function findUpdatedPodsOnNode(pods: readonly Pod[] | undefined, hash: string): { newPod?: Pod; oldPod?: Pod; ok: boolean } {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const p of pods ?? []) {
    if (p.metadata.deletionTimestamp) continue;
    if (isPodUpdated(p, hash)) {
      if (newPod) return { ok: false };
      newPod = p;
    } else {
      if (oldPod) return { ok: false };
      oldPod = p;
    }
  }
  return { newPod, oldPod, ok: true };
}

/**
 * filterDaemonPodsNodeToUpdate: node names in reverse lexical order, updated nodes first, then
 * nodes whose old pod is gone or pre-deleting, then those the rolling-update selector picks (or
 * all the rest without a selector); at most `nodes - partition` of them.
 */
export function filterDaemonPodsNodeToUpdate(
  ds: DaemonSet,
  hash: string,
  nodeToPods: ReadonlyMap<string, readonly Pod[] | undefined>,
  nodeLabels: (node: string) => Record<string, string> | undefined,
  partition: number,
): string[] {
  const selectorSpec = rollingUpdateOf(ds)?.selector;
  const selector = selectorSpec ? labelSelectorAsSelector(selectorSpec) : undefined;
  const all = [...nodeToPods.keys()].sort().reverse();
  const updated: string[] = [];
  const updating: string[] = [];
  const selected: string[] = [];
  const rest: string[] = [];
  for (const node of all) {
    const { newPod, oldPod, ok } = findUpdatedPodsOnNode(nodeToPods.get(node), hash);
    if (!ok || newPod) updated.push(node);
    else if (isNilOrPreDeleting(oldPod)) updating.push(node);
    else if (selector && selector.matches(nodeLabels(node))) selected.push(node);
    else rest.push(node);
  }
  const sorted = [...updated, ...updating, ...(selector ? selected : rest)];
  const maxUpdate = all.length - partition;
  return maxUpdate <= 0 ? [] : sorted.slice(0, maxUpdate);
}

export interface UpdateResult {
  podsToDelete: string[];
  nodesNeedingPods: string[];
  inPlace: InPlaceUpdateAction[];
}

export function rollingUpdate(
  input: PlanInput,
  hash: string,
  current: ControllerRevision,
  old: readonly ControllerRevision[],
  placements: ReadonlyMap<string, DaemonPlacement>,
  byNode: ReadonlyMap<string, Pod[]>,
  pruned: ReadonlySet<string>,
): UpdateResult {
  const ds = input.daemonSet;
  const out: UpdateResult = { podsToDelete: [], nodesNeedingPods: [], inPlace: [] };
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  const labelsByNode = new Map(input.nodes.map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}]));

  // updatedDesiredNodeCounts: every desired node takes part, with or without a pod.
  const nodeToPods = new Map<string, Pod[] | undefined>();
  for (const [node, pods] of byNode) if (labelsByNode.has(node) && !pruned.has(node)) nodeToPods.set(node, pods);
  let desired = 0;
  for (const [node, p] of placements) {
    if (!p.shouldRun) continue;
    desired++;
    if (!nodeToPods.has(node)) nodeToPods.set(node, undefined);
  }
  const { maxSurge, maxUnavailable } = updateBudgets(ds, desired);
  const candidates = filterDaemonPodsNodeToUpdate(ds, hash, nodeToPods, (n) => labelsByNode.get(n), partitionOf(ds, desired));
  const available = (p: Pod) => isDaemonPodAvailable(p, minReadySeconds, input.now);

  if (maxSurge === 0) {
    let numUnavailable = 0;
    const allowedReplacements: Pod[] = [];
    const toReplace: Pod[] = [];
    for (const node of candidates) {
      const { newPod, oldPod, ok } = findUpdatedPodsOnNode(nodeToPods.get(node), hash);
      if (!ok || isNilOrPreDeleting(oldPod) === isNilOrPreDeleting(newPod)) {
        // Excess, missing or both pods: manage sorts the node out; it counts as unavailable.
        numUnavailable++;
      } else if (newPod) {
        if (!available(newPod)) numUnavailable++;
        if (isPreDeleting(newPod)) numUnavailable++;
      } else if (!available(oldPod!)) {
        allowedReplacements.push(oldPod!);
      } else if (numUnavailable < maxUnavailable) {
        toReplace.push(oldPod!);
      }
    }
    const remaining = Math.min(Math.max(maxUnavailable - numUnavailable, 0), toReplace.length);
    const chosen = [...allowedReplacements, ...toReplace.slice(0, remaining)];
    if (rollingUpdateOf(ds)?.rollingUpdateType === 'InPlaceIfPossible') {
      for (const pod of chosen) {
        const action = inPlaceUpdateOf(pod, current, old, input);
        if (action) out.inPlace.push(action);
        else out.podsToDelete.push(podName(pod));
      }
    } else {
      out.podsToDelete.push(...chosen.map(podName));
    }
    return out;
  }

  let numSurge = 0;
  const allowedNewNodes: string[] = [];
  const candidateNewNodes: string[] = [];
  for (const node of candidates) {
    const { newPod, oldPod, ok } = findUpdatedPodsOnNode(nodeToPods.get(node), hash);
    if (!ok) {
      numSurge++;
    } else if (isNilOrPreDeleting(oldPod)) {
      // nothing to do: manage creates the pod
    } else if (!newPod) {
      if (!available(oldPod!)) allowedNewNodes.push(node);
      else if (numSurge < maxSurge) candidateNewNodes.push(node);
    } else if (!available(newPod) || isPreDeleting(newPod)) {
      numSurge++;
    } else {
      out.podsToDelete.push(podName(oldPod!));
    }
  }
  const remaining = Math.min(Math.max(maxSurge - numSurge, 0), candidateNewNodes.length);
  out.nodesNeedingPods.push(...allowedNewNodes, ...candidateNewNodes.slice(0, remaining));
  return out;
}

/** In place when the pod carries the gate and only images / metadata changed since its revision. */
function inPlaceUpdateOf(
  pod: Pod,
  current: ControllerRevision,
  old: readonly ControllerRevision[],
  input: PlanInput,
): InPlaceUpdateAction | undefined {
  if (!hasInPlaceGate(pod)) return undefined;
  const podHash = pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
  const from = old.find((r) => revisionHash(r) === podHash);
  if (!from) return undefined;
  const plan = planInPlaceUpdate(pod, from, current, {
    envFromMetadata: input.features.InPlaceUpdateEnvFromMetadata,
    verticalScaling: input.features.InPlaceWorkloadVerticalScaling,
    revisionValue: revisionHash,
    now: metaTime(input.now),
  });
  if (!plan) return undefined;
  return { pod: podName(pod), revision: revisionHash(current), updatedPod: plan.pod, conditions: plan.conditions };
}
