// One Advanced DaemonSet reconcile as a pure plan (behaviour spec §5.2; upstream
// daemonset_controller.go syncDaemonSet): revisions, in-place refreshes, `manage` (one pod per
// eligible node, failed-pod backoff, misscheduled pods, progressive creation, burstReplicas),
// then — when manage changed nothing — the rolling update (partition, selector, maxUnavailable or
// maxSurge, in place where possible), history clean-up and status.

import type { DaemonSet, DaemonSetStatus } from '../../apis/apps/daemonset.ts';
import {
  CONDITION_INPLACE_UPDATE_READY,
  CONTROLLER_REVISION_HASH_LABEL,
  LifecycleState,
  SPECIFIED_DELETE_LABEL,
} from '../../apis/constants.ts';
import type { Node, Pod } from '../../apis/core-objects.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { metaTime } from '../../util/clock.ts';
import { planImagePreDownload, type PreDownloadPlan } from '../../util/imagepredownload.ts';
import { canUpdateInPlace, planInPlaceRefresh, planInPlaceUpdate } from '../../util/inplaceupdate.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import {
  getCondition,
  getPodLifecycleState,
  isPodHooked,
  planLifecycleTransition,
  type LifecycleTransition,
} from '../../util/lifecycle.ts';
import {
  nodeShouldRunDaemonPod,
  targetNodeName,
  withDaemonPodTolerations,
  withNodeNameAffinity,
  type DaemonPlacement,
} from '../../util/nodefit.ts';
import { isPodAvailable, isPodReady, timeMillis } from '../../util/pod.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { chooseRevisions, daemonSetControllerRef, revisionHash, revisionsToTruncate } from './revisions.ts';
import type { InPlaceUpdateAction, PodRefresh } from '../podwrites.ts';
import { randomString } from '../../util/rand.ts';

/** Upstream BurstReplicas: pods created (and deleted) per reconcile unless spec.burstReplicas says. */
export const DEFAULT_BURST_REPLICAS = 250;

export interface PlanInput {
  daemonSet: DaemonSet;
  /** ControllerRevisions the DaemonSet owns. */
  revisions: readonly ControllerRevision[];
  /** Pods the DaemonSet owns (claimed), active or not. */
  pods: readonly Pod[];
  nodes: readonly Node[];
  /** Milliseconds since the epoch. */
  now: number;
  features: Pick<FeatureGates, 'DaemonSetPruneIneligibleNodes' | 'InPlaceUpdateEnvFromMetadata'>;
  /** Milliseconds a node's failed-pod backoff still runs, undefined when not backing off. */
  failedPodBackoff?: (node: string) => number | undefined;
  /** 5-character pod name suffixes (random by default, as the API server's generateName). */
  randomSuffix?: () => string;
  /**
   * Names of the ImagePullJobs this DaemonSet controls; given only when image pre-download is on
   * (gate PreDownloadImageForDaemonSetUpdate).
   */
  imagePullJobs?: readonly string[];
}

export interface DaemonSetPlan {
  newRevision?: ControllerRevision;
  revisionBump?: { name: string; revision: number };
  /** The update revision's hash (pod label value, status.updateRevision). */
  hash: string;
  /** status.collisionCount; absent until a name collision (upstream's nil). */
  collisionCount?: number;
  refreshes: PodRefresh[];
  /** Pods moved to PreparingDelete instead of being deleted (preDelete hook). */
  lifecycleTransitions: LifecycleTransition[];
  inPlaceUpdates: InPlaceUpdateAction[];
  /** Complete pods (with names) to create, in creation order. */
  createPods: Pod[];
  deletePods: string[];
  /** Nodes whose failed pod is deleted now: their backoff steps up. */
  failedPodNodes: string[];
  events: Array<{ type: 'Normal' | 'Warning'; reason: string; message: string }>;
  status: DaemonSetStatus;
  statusChanged: boolean;
  revisionsToDelete: string[];
  /** Image pre-download for the update revision's new images. */
  preDownload?: PreDownloadPlan;
  requeueAfterMs?: number;
}

const randomSuffix = () => randomString(5);

const podName = (p: Pod) => p.metadata.name ?? '';
const isPreDeleting = (p: Pod | undefined) => !!p && getPodLifecycleState(p) === LifecycleState.PreparingDelete;
const isNilOrPreDeleting = (p: Pod | undefined) => !p || isPreDeleting(p);
const isPodUpdated = (p: Pod, hash: string) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash;
const hasInPlaceGate = (p: Pod) => (p.spec?.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY);

/** isDaemonPodAvailable: available, and not in the middle of an in-place update. */
export function isDaemonPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodAvailable(pod, minReadySeconds, nowMs)) return false;
  if (!hasInPlaceGate(pod)) return true;
  const c = getCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  return !c || c.status === 'True';
}

/** podByCreationTimestampAndPhase: scheduled first, then oldest, then by name. */
export function compareDaemonPods(a: Pod, b: Pod): number {
  const sa = !!a.spec?.nodeName;
  const sb = !!b.spec?.nodeName;
  if (sa !== sb) return sa ? -1 : 1;
  const ta = timeMillis(a.metadata.creationTimestamp) ?? 0;
  const tb = timeMillis(b.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return podName(a) < podName(b) ? -1 : podName(a) > podName(b) ? 1 : 0;
}

/** Pods grouped by the node they are (or will be) bound to; pods naming no node are left out. */
export function nodeToDaemonPods(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const p of pods) {
    const node = targetNodeName(p);
    if (node === undefined) continue;
    const list = out.get(node);
    if (list) list.push(p);
    else out.set(node, [p]);
  }
  return out;
}

/**
 * GetNodesNeedingPods: without progressive creation every node, sorted; with it (scaleStrategy
 * .partitionedScaling) only the first `desired - newPods - partition` node names, in lexical order.
 */
export function getNodesNeedingPods(
  newPods: number,
  desired: number,
  partition: number,
  progressive: boolean,
  nodes: readonly string[],
): string[] {
  const sorted = [...nodes].sort();
  if (!progressive) return sorted;
  const p = Math.max(Math.min(partition, desired), 0);
  const maxCreate = Math.min(Math.max(desired - newPods - p, 0), sorted.length);
  return maxCreate > 0 ? sorted.slice(0, maxCreate) : [];
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

export const rollingUpdateOf = (ds: DaemonSet) =>
  (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' ? ds.spec?.updateStrategy?.rollingUpdate : undefined;

/** surgeCount / unavailableCount (roundUp), with upstream's fallback of one unavailable. */
export function updateBudgets(ds: DaemonSet, desired: number): { maxSurge: number; maxUnavailable: number } {
  const ru = rollingUpdateOf(ds);
  const maxSurge = ru?.maxSurge == null ? 0 : getScaledValueFromIntOrPercent(ru.maxSurge, desired, true);
  let maxUnavailable = ru?.maxUnavailable == null ? 0 : getScaledValueFromIntOrPercent(ru.maxUnavailable, desired, true);
  if (desired > 0 && maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

/** allowSurge: maxSurge scaled against one node is > 0. */
export const allowsSurge = (ds: DaemonSet) => {
  const ru = rollingUpdateOf(ds);
  return ru?.maxSurge != null && getScaledValueFromIntOrPercent(ru.maxSurge, 1, true) > 0;
};

/** partition as a node count: int, or percent rounded down against desiredNumberScheduled. */
export const partitionOf = (ds: DaemonSet, desired: number) => {
  const p = rollingUpdateOf(ds)?.partition;
  return p == null ? 0 : getScaledValueFromIntOrPercent(p, desired, false);
};

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

/** A new pod for `node` (NewPod + CreatePodTemplate + ReplaceDaemonSetPodNodeNameNodeAffinity). */
export function newDaemonPod(ds: DaemonSet, hash: string, node: string, name: string): Pod {
  const template = structuredClone(ds.spec?.template ?? {});
  const spec = { ...(template.spec ?? { containers: [] }) };
  spec.tolerations = withDaemonPodTolerations(spec);
  spec.affinity = withNodeNameAffinity(spec.affinity, node);
  if (
    rollingUpdateOf(ds)?.rollingUpdateType === 'InPlaceIfPossible' &&
    !(spec.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY)
  ) {
    spec.readinessGates = [...(spec.readinessGates ?? []), { conditionType: CONDITION_INPLACE_UPDATE_READY }];
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${ds.metadata?.name ?? ''}-`,
      namespace: ds.metadata?.namespace,
      labels: { ...(template.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ...(template.metadata?.finalizers?.length ? { finalizers: [...template.metadata.finalizers] } : {}),
      ownerReferences: [daemonSetControllerRef(ds)],
    },
    spec,
  };
}

interface ManageResult {
  nodesNeedingPods: string[];
  podsToDelete: string[];
  failedPodNodes: string[];
  backoffMs?: number;
  events: DaemonSetPlan['events'];
}

/** podsShouldBeOnNode for every node, plus unscheduled pods whose node is gone. */
function manage(
  ds: DaemonSet,
  hash: string,
  nodes: readonly Node[],
  placements: ReadonlyMap<string, DaemonPlacement>,
  byNode: ReadonlyMap<string, Pod[]>,
  nowMs: number,
  failedPodBackoff: PlanInput['failedPodBackoff'],
): ManageResult {
  const r: ManageResult = { nodesNeedingPods: [], podsToDelete: [], failedPodNodes: [], events: [] };
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  const surge = allowsSurge(ds);
  for (const node of nodes) {
    const name = node.metadata.name ?? '';
    const { shouldRun, shouldContinueRunning } = placements.get(name)!;
    const pods = byNode.get(name);
    if (shouldRun && !pods) {
      r.nodesNeedingPods.push(name);
    } else if (shouldContinueRunning) {
      const running: Pod[] = [];
      for (const p of pods ?? []) {
        if (p.metadata.deletionTimestamp) continue;
        if (p.status?.phase === 'Failed') {
          // Kubelet may keep rejecting the pod: recreate it no faster than the node's backoff.
          const wait = failedPodBackoff?.(name);
          if (wait !== undefined) {
            r.backoffMs = r.backoffMs === undefined ? wait : Math.min(r.backoffMs, wait);
            continue;
          }
          r.failedPodNodes.push(name);
          r.events.push({
            type: 'Warning',
            reason: 'FailedDaemonPod',
            message: `Found failed daemon pod ${ds.metadata?.namespace}/${podName(p)} on node ${name}, will try to kill it`,
          });
          r.podsToDelete.push(podName(p));
        } else if (p.status?.phase === 'Succeeded' || p.metadata.labels?.[SPECIFIED_DELETE_LABEL] !== undefined) {
          r.podsToDelete.push(podName(p));
        } else if (isPreDeleting(p)) {
          // PreparingDelete: deleted once the preDelete hook lets go; until then it holds the node.
          if (!isPodHooked(ds.spec?.lifecycle?.preDelete, p)) r.podsToDelete.push(podName(p));
        } else {
          running.push(p);
        }
      }
      running.sort(compareDaemonPods);
      if (!surge) {
        for (const p of running.slice(1)) r.podsToDelete.push(podName(p));
      } else {
        // Two pods only while the oldest new one is not yet available and the oldest old one is ready.
        let oldestNew: Pod | undefined;
        let oldestOld: Pod | undefined;
        for (const p of running) {
          if (isPodUpdated(p, hash) && !oldestNew) oldestNew = p;
          else if (!isPodUpdated(p, hash) && !oldestOld) oldestOld = p;
          else r.podsToDelete.push(podName(p));
        }
        if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isDaemonPodAvailable(oldestNew, minReadySeconds, nowMs))) {
          r.podsToDelete.push(podName(oldestOld));
        }
      }
    } else if (pods) {
      for (const p of pods) if (!p.metadata.deletionTimestamp) r.podsToDelete.push(podName(p));
    }
  }
  // Pods bound (by affinity) to a node that no longer exists never schedule: delete them.
  for (const [node, pods] of byNode) {
    if (placements.has(node)) continue;
    for (const p of pods) if (!p.spec?.nodeName && !p.metadata.deletionTimestamp) r.podsToDelete.push(podName(p));
  }
  return r;
}

interface UpdateResult {
  podsToDelete: string[];
  nodesNeedingPods: string[];
  inPlace: InPlaceUpdateAction[];
}

function rollingUpdate(
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
    revisionValue: revisionHash,
    now: metaTime(input.now),
  });
  if (!plan) return undefined;
  return { pod: podName(pod), revision: revisionHash(current), updatedPod: plan.pod, conditions: plan.conditions };
}

/** updateDaemonSetStatus over the observed pods. */
export function computeStatus(
  ds: DaemonSet,
  hash: string,
  collisionCount: number | undefined,
  nodes: readonly Node[],
  placements: ReadonlyMap<string, DaemonPlacement>,
  byNode: ReadonlyMap<string, Pod[]>,
  nowMs: number,
): { status: DaemonSetStatus; changed: boolean; requeueAfterMs?: number } {
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  let nextAvailableMs: number | undefined;
  for (const node of nodes) {
    const name = node.metadata.name ?? '';
    const pods = byNode.get(name) ?? [];
    if (!placements.get(name)?.shouldRun) {
      if (pods.length > 0) misscheduled++;
      continue;
    }
    desired++;
    if (pods.length === 0) continue;
    current++;
    const pod = [...pods].sort(compareDaemonPods)[0];
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReadySeconds, nowMs)) available++;
      else {
        const readySince = timeMillis(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime) ?? nowMs;
        const wait = readySince + minReadySeconds * 1000 - nowMs;
        if (wait > 0) nextAvailableMs = nextAvailableMs === undefined ? wait : Math.min(nextAvailableMs, wait);
      }
    }
    if (isPodUpdated(pod, hash)) updated++;
  }
  const prev = ds.status;
  const status: DaemonSetStatus = {
    ...prev,
    observedGeneration: ds.metadata?.generation ?? prev?.observedGeneration,
    desiredNumberScheduled: desired,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: desired - available,
    updateRevision: hash,
    ...(collisionCount === undefined ? {} : { collisionCount }),
  };
  const changed =
    !prev ||
    prev.desiredNumberScheduled !== desired ||
    prev.currentNumberScheduled !== current ||
    prev.numberMisscheduled !== misscheduled ||
    prev.numberReady !== ready ||
    prev.updatedNumberScheduled !== updated ||
    (prev.numberAvailable ?? 0) !== available ||
    (prev.numberUnavailable ?? 0) !== desired - available ||
    (prev.observedGeneration ?? 0) < (ds.metadata?.generation ?? 0) ||
    prev.updateRevision !== hash ||
    (prev.collisionCount ?? undefined) !== collisionCount;
  return { status, changed, requeueAfterMs: nextAvailableMs };
}

export function planDaemonSet(input: PlanInput): DaemonSetPlan {
  const ds = input.daemonSet;
  const rev = chooseRevisions(ds, input.revisions);
  const { hash } = rev;
  const plan: DaemonSetPlan = {
    newRevision: rev.newRevision,
    revisionBump: rev.revisionBump,
    hash,
    collisionCount: rev.collisionCount,
    refreshes: [],
    lifecycleTransitions: [],
    inPlaceUpdates: [],
    createPods: [],
    deletePods: [],
    failedPodNodes: [],
    events: [],
    status: undefined as unknown as DaemonSetStatus,
    statusChanged: false,
    revisionsToDelete: [],
  };
  const requeue = (ms: number | undefined) => {
    if (ms !== undefined && ms > 0) plan.requeueAfterMs = plan.requeueAfterMs === undefined ? ms : Math.min(plan.requeueAfterMs, ms);
  };

  const templateSpec = ds.spec?.template?.spec;
  const placements = new Map(input.nodes.map((n) => [n.metadata.name ?? '', nodeShouldRunDaemonPod(templateSpec, n)]));
  const byNode = nodeToDaemonPods(input.pods);

  if (input.imagePullJobs && !ds.metadata?.deletionTimestamp) {
    plan.preDownload = preDownloadFor(ds, rev.current, rev.old, input.pods, input.imagePullJobs, input.features);
  }

  if (!ds.metadata?.deletionTimestamp) {
    // In-place updates in flight: finish grace periods, next container batches, InPlaceUpdateReady.
    const now = metaTime(input.now);
    for (const p of input.pods) {
      if (p.metadata.deletionTimestamp || !hasInPlaceGate(p)) continue;
      const r = planInPlaceRefresh(p, { now, isPodAtRevision: (pod, revision) => isPodUpdated(pod, revision) });
      if (r.pod || r.conditions) plan.refreshes.push({ pod: podName(p), updatedPod: r.pod, conditions: r.conditions });
      if (r.delaySeconds) requeue(r.delaySeconds * 1000);
    }

    const m = manage(ds, hash, input.nodes, placements, byNode, input.now, input.failedPodBackoff);
    plan.events.push(...m.events);
    plan.failedPodNodes = m.failedPodNodes;
    requeue(m.backoffMs);
    const ru = rollingUpdateOf(ds);
    const nodesNeedingPods = getNodesNeedingPods(
      ds.status?.updatedNumberScheduled ?? 0,
      ds.status?.desiredNumberScheduled ?? 0,
      ru?.partition == null ? 0 : partitionOf(ds, ds.status?.desiredNumberScheduled ?? 0),
      ds.spec?.scaleStrategy?.partitionedScaling === true,
      m.nodesNeedingPods,
    );
    const burst = getScaledValueFromIntOrPercent(
      ds.spec?.burstReplicas ?? DEFAULT_BURST_REPLICAS,
      ds.status?.desiredNumberScheduled ?? 0,
      false,
    );
    let creates = nodesNeedingPods.slice(0, burst);
    let deletes = m.podsToDelete.slice(0, burst);

    // DaemonSetPruneIneligibleNodes: pods on nodes the DaemonSet no longer wants leave at once and
    // do not count against the update budget.
    const pruned = new Set<string>();
    if (input.features.DaemonSetPruneIneligibleNodes && ru && !ru.paused) {
      for (const [node, pods] of byNode) {
        if (!placements.has(node) || placements.get(node)!.shouldRun) continue;
        pruned.add(node);
        for (const p of pods) if (!p.metadata.deletionTimestamp && !deletes.includes(podName(p))) deletes.push(podName(p));
      }
    }

    // Upstream rolls only when manage left its expectations satisfied, i.e. wrote nothing.
    if (creates.length === 0 && deletes.length === 0 && ru && !ru.paused) {
      const u = rollingUpdate(input, hash, rev.current, rev.old, placements, byNode, pruned);
      creates = u.nodesNeedingPods.slice(0, burst);
      deletes = u.podsToDelete.slice(0, burst);
      plan.inPlaceUpdates = u.inPlace;
    }

    const suffix = input.randomSuffix ?? randomSuffix;
    const taken = new Set(input.pods.map(podName));
    for (const node of creates) {
      let name: string;
      do name = `${ds.metadata?.name ?? ''}-${suffix()}`;
      while (taken.has(name));
      taken.add(name);
      plan.createPods.push(newDaemonPod(ds, hash, node, name));
    }
    const podsByName = new Map(input.pods.map((p) => [podName(p), p]));
    const preDelete = ds.spec?.lifecycle?.preDelete;
    for (const name of deletes) {
      const pod = podsByName.get(name);
      if (pod && preDelete && isPodHooked(preDelete, pod)) {
        // The hook's owner lets the pod go by removing its labels / finalizers.
        const t = planLifecycleTransition(pod, LifecycleState.PreparingDelete, { now, markPodNotReady: preDelete.markPodNotReady });
        if (t) plan.lifecycleTransitions.push(t);
        continue;
      }
      plan.deletePods.push(name);
    }
  }

  const podHashes = new Set(input.pods.map((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? ''));
  plan.revisionsToDelete = revisionsToTruncate(ds, rev.old, podHashes);
  const s = computeStatus(ds, hash, rev.collisionCount, input.nodes, placements, byNode, input.now);
  plan.status = s.status;
  plan.statusChanged = s.changed;
  requeue(s.requeueAfterMs);
  return plan;
}

/**
 * Image pre-download (gate PreDownloadImageForDaemonSetUpdate, spec §5.2 / §12.4): the nodes still
 * running an older revision pull the update revision's new images ahead of an in-place rollout.
 * The revision compared against is the newest one that live pods still run.
 */
function preDownloadFor(
  ds: DaemonSet,
  update: ControllerRevision,
  old: readonly ControllerRevision[],
  pods: readonly Pod[],
  jobs: readonly string[],
  features: PlanInput['features'],
): PreDownloadPlan {
  const live = new Set(pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]));
  const current = [...old].sort((a, b) => b.revision - a.revision).find((r) => live.has(revisionHash(r))) ?? update;
  const desired = ds.status?.desiredNumberScheduled ?? 0;
  const ru = rollingUpdateOf(ds);
  const hash = revisionHash(update);
  return planImagePreDownload({
    owner: {
      apiVersion: ds.apiVersion ?? 'apps.kruise.io/v1beta1',
      kind: 'DaemonSet',
      name: ds.metadata?.name ?? '',
      uid: ds.metadata?.uid ?? '',
      namespace: ds.metadata?.namespace ?? '',
      annotations: ds.metadata?.annotations,
    },
    current,
    update,
    replicas: desired,
    partition: partitionOf(ds, desired),
    maxUnavailable: getScaledValueFromIntOrPercent(ru?.maxUnavailable ?? 1, desired, false),
    recreate: ru?.rollingUpdateType !== 'InPlaceIfPossible',
    canUpdateInPlace: canUpdateInPlace(current, update, { envFromMetadata: features.InPlaceUpdateEnvFromMetadata }),
    selector: ds.spec?.selector ?? {},
    templateLabels: ds.spec?.template?.metadata?.labels,
    pullSecrets: (ds.spec?.template?.spec?.imagePullSecrets ?? []).map((s) => s.name ?? '').filter(Boolean),
    updatedReadyReplicas: ds.status?.updateRevision === hash ? ds.status.updatedNumberScheduled : 0,
    ownedJobs: [...jobs],
  });
}
