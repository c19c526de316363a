// The WorkloadSpread planner (spec §10; upstream pkg/controller/workloadspread): from the
// WorkloadSpread, its workload's pods and replicas, the nodes and the time, one round's plan —
//   - pods grouped by version (versionedSubsetStatuses) and subset (the matched-workloadspread
//     annotation; a pod without one is matched late by its node, else goes to the fake subset);
//   - per subset replicas and missingReplicas (maxReplicas scaled against the workload's replicas,
//     minus active pods, minus live creatingPods, plus live deletingPods; -1 = unlimited), with
//     creatingPods older than 30 s / deletingPods older than 15 s dropped (a Warning each);
//   - controller.kubernetes.io/pod-deletion-cost so the workload's scale-down follows subset order
//     (CloneSet, Deployment, ReplicaSet);
//   - adaptive rescheduling: pods pending unschedulable longer than rescheduleCriticalSeconds mark
//     their subset Schedulable=False and are deleted (to be recreated elsewhere); the subset is
//     tried again 300 s after it was marked.
// Pure: no API calls, no clock reads.

import { isDeepStrictEqual } from 'node:util';
import type { WorkloadSpreadStatus } from '../../apis/apps/workloadspread.ts';
import { MATCHED_WORKLOADSPREAD_ANNOTATION, POD_DELETION_COST_ANNOTATION } from '../../apis/constants.ts';
import type { Node, Pod } from '../../apis/core-objects.ts';
import { UNSPECIFIED_CONDITION_REASON } from '../../apis/conversion/workloadspread.ts';
import { metaTime } from '../../util/clock.ts';
import { findUntoleratedTaint, nodeSelectorTermMatches } from '../../util/nodefit.ts';
import { activePodsLess, comparatorFromLess, isPodActive, timeMillis } from '../../util/pod.ts';
import { strategicMergePod } from '../../util/strategicmerge.ts';
import {
  CREATE_POD_TIMEOUT_MS,
  DELETE_POD_TIMEOUT_MS,
  FAKE_SUBSET_NAME,
  IGNORE_PATCH_EXISTING_PODS_ANNOTATION,
  MAX_SCHEDULED_FAILED_DURATION_MS,
  POD_DELETION_COST_NEGATIVE,
  POD_DELETION_COST_POSITIVE,
  SUBSET_SCHEDULABLE,
  formatMatchedWorkloadSpread,
  matchedWorkloadSpreadOf,
  podVersion,
  subsetCondition,
  subsetMaxReplicas,
  type SpreadView,
  type SubsetCondition,
  type SubsetSpec,
  type SubsetStatus,
} from '../../util/workloadspread.ts';

export interface SpreadInputs {
  ws: SpreadView & { metadata: NonNullable<SpreadView['metadata']> };
  /** The workload's pods selected by targetFilter. */
  pods: readonly Pod[];
  workloadReplicas: number;
  /** The workload's current version (pods of other versions drain from the last subset first). */
  latestVersion: string;
  /** Whether the target honours pod-deletion-cost (CloneSet, Deployment, ReplicaSet). */
  deletionCost: boolean;
  node(name: string): Node | undefined;
  now: number;
}

export interface PodPatch {
  name: string;
  /** Annotations (and, for a late match, the subset patch's labels) to merge into the pod. */
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> };
}

export interface SpreadEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface SpreadPlan {
  /** The new status; undefined when unchanged. */
  status?: WorkloadSpreadStatus;
  podPatches: PodPatch[];
  /** Pods stuck unschedulable past rescheduleCriticalSeconds, deleted so they are recreated elsewhere. */
  podsToDelete: string[];
  events: SpreadEvent[];
  /** When the next round is due (an entry or a pending pod times out, a subset recovers). */
  requeueAfterMs?: number;
}

type PodMap = Map<string, Pod[]>;
const MAX_INT32 = 2147483647;

class Round {
  readonly events: SpreadEvent[] = [];
  private nextCheck: number | undefined;
  constructor(readonly inputs: SpreadInputs) {}
  /** A check due now (ms 0: a deadline that is not yet past) is looked at in the next millisecond:
   * a round that ended without one would wait for an unrelated event (seen in CI: two pods left
   * unschedulable because the requeue fired exactly at their deadline). */
  checkIn(ms: number): void {
    const wait = Math.max(1, ms);
    if (this.nextCheck === undefined || wait < this.nextCheck) this.nextCheck = wait;
  }
  get requeueAfterMs() {
    return this.nextCheck;
  }
}

function maxReplicasOr(subset: SubsetSpec, replicas: number, unlimited: number): number {
  try {
    const v = subsetMaxReplicas(subset.maxReplicas, replicas);
    return v < 0 ? unlimited : v;
  } catch {
    return unlimited;
  }
}

/** The pod's annotated subset of this WorkloadSpread, if it names an existing one. */
function annotatedSubset(ws: SpreadView, pod: Pod): string | undefined {
  const m = matchedWorkloadSpreadOf(pod);
  if (!m || m.name !== ws.metadata?.name || !m.subset) return undefined;
  return m.subset;
}

/** matchesSubset: required term (ANDed with the pod's own) and taints; score = preferred*100 + patch-already-applied*10 + room. */
function subsetScore(pod: Pod, node: Node, subset: SubsetSpec, missing: number): number {
  const tolerations = [...(pod.spec?.tolerations ?? []), ...(subset.tolerations ?? [])];
  if (findUntoleratedTaint(node.spec?.taints, tolerations, () => true)) return -1;
  if (subset.requiredNodeSelector) {
    const own = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const req = subset.requiredNodeSelector;
    const terms = own.length
      ? own.map((t) => ({
          matchExpressions: [...(t.matchExpressions ?? []), ...(req.matchExpressions ?? [])],
          matchFields: [...(t.matchFields ?? []), ...(req.matchFields ?? [])],
        }))
      : [req];
    if (!terms.some((t) => nodeSelectorTermMatches(t, node))) return -1;
  }
  const preferred = (subset.preferredNodeSelector ?? []).reduce(
    (sum, t) => sum + (nodeSelectorTermMatches(t.preference, node) ? t.weight : 0),
    0,
  );
  let patched = 0;
  if (subset.patch && Object.keys(subset.patch).length) {
    const after = strategicMergePod(pod, subset.patch);
    after.metadata.annotations = pod.metadata.annotations;
    patched = isDeepStrictEqual(after, pod) ? 1 : 0;
  }
  return preferred * 100 + patched * 10 + (missing > 0 ? 1 : 0);
}

/** groupPodBySubset for one version's pods; late matches produce pod patches. */
function groupBySubset(round: Round, pods: readonly Pod[], patches: PodPatch[]): PodMap {
  const { ws, workloadReplicas } = round.inputs;
  const map: PodMap = new Map([[FAKE_SUBSET_NAME, []]]);
  const missing = new Map<string, number>();
  for (const s of ws.spec.subsets) {
    map.set(s.name, []);
    missing.set(s.name, maxReplicasOr(s, workloadReplicas, MAX_INT32));
  }
  for (const pod of pods) {
    const subset = annotatedSubset(ws, pod);
    if (subset && missing.has(subset)) missing.set(subset, missing.get(subset)! - 1);
  }
  for (const pod of pods) {
    let subset = annotatedSubset(ws, pod);
    if (!subset) subset = lateMatch(round, pod, missing, patches);
    (map.get(subset ?? FAKE_SUBSET_NAME) ?? map.get(FAKE_SUBSET_NAME)!).push(pod);
  }
  return map;
}

/** getAndUpdateSuitableSubsetName: a scheduled pod without the annotation joins the best-fitting subset of its node. */
function lateMatch(round: Round, pod: Pod, missing: Map<string, number>, patches: PodPatch[]): string | undefined {
  const nodeName = pod.spec?.nodeName;
  const node = nodeName ? round.inputs.node(nodeName) : undefined;
  if (!node) return undefined;
  const { ws } = round.inputs;
  let best: SubsetSpec | undefined;
  let bestScore = -1;
  for (const s of ws.spec.subsets) {
    const score = subsetScore(pod, node, s, missing.get(s.name) ?? 0);
    if (score > bestScore) {
      best = s;
      bestScore = score;
    }
  }
  if (!best) return undefined;
  const metadata: PodPatch['metadata'] = {};
  const patchMeta = (best.patch as { metadata?: PodPatch['metadata'] } | undefined)?.metadata;
  if (patchMeta && ws.metadata.annotations?.[IGNORE_PATCH_EXISTING_PODS_ANNOTATION]?.toLowerCase() !== 'true') {
    if (patchMeta.labels) metadata.labels = { ...patchMeta.labels };
    if (patchMeta.annotations) metadata.annotations = { ...patchMeta.annotations };
  }
  metadata.annotations = {
    ...metadata.annotations,
    [MATCHED_WORKLOADSPREAD_ANNOTATION]: formatMatchedWorkloadSpread({ name: ws.metadata.name ?? '', subset: best.name }),
  };
  patches.push({ name: pod.metadata.name ?? '', metadata });
  missing.set(best.name, (missing.get(best.name) ?? 0) - 1);
  return best.name;
}

/**
 * v1.8.2 gives the Schedulable condition no reason or message (later upstream versions name one); the
 * v1beta1 condition requires a reason, so it carries the stand-in v1alpha1 reads as none.
 */
function newCondition(status: 'True' | 'False', now: number): SubsetCondition {
  return { type: SUBSET_SCHEDULABLE, status, reason: UNSPECIFIED_CONDITION_REASON, message: '', lastTransitionTime: metaTime(now) };
}

/** setWorkloadSpreadSubsetCondition: same status and reason keeps the old one; same status keeps its transition time. */
function setCondition(status: SubsetStatus, cond: SubsetCondition): void {
  const cur = subsetCondition(status, cond.type);
  if (cur && cur.status === cond.status && cur.reason === cond.reason) return;
  const next = cur && cur.status === cond.status ? { ...cond, lastTransitionTime: cur.lastTransitionTime } : cond;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== cond.type), next];
}

/** Pending, not being deleted, not bound, and marked Unschedulable by the scheduler. */
export function isPendingUnschedulable(pod: Pod): boolean {
  if (pod.metadata.deletionTimestamp || pod.status?.phase !== 'Pending' || pod.spec?.nodeName) return false;
  return !!pod.status.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
}

/** PodUnscheduledTimeout: pending unschedulable, created longer than the critical time ago. */
function unscheduledTimeout(round: Round, pod: Pod, criticalMs: number): boolean {
  if (!isPendingUnschedulable(pod)) return false;
  const due = (timeMillis(pod.metadata.creationTimestamp) ?? round.inputs.now) + criticalMs;
  if (due < round.inputs.now) return true;
  round.checkIn(due - round.inputs.now);
  return false;
}

/** rescheduleSubset: the subset's Schedulable condition; returns the pods to delete. */
function reschedule(
  round: Round,
  pods: readonly Pod[],
  status: SubsetStatus,
  old: SubsetStatus | undefined,
  criticalMs: number,
  report: boolean,
): Pod[] {
  const { now, ws } = round.inputs;
  const failed = pods.filter((p) => unscheduledTimeout(round, p, criticalMs));
  const oldCond = subsetCondition(old, SUBSET_SCHEDULABLE);
  if (oldCond) status.conditions = [{ ...oldCond }];
  if (failed.length) {
    setCondition(status, newCondition('False', now));
  } else if (!oldCond) {
    setCondition(status, newCondition('True', now));
  } else if (oldCond.status === 'False') {
    const recoverAt = (timeMillis(oldCond.lastTransitionTime) ?? now) + MAX_SCHEDULED_FAILED_DURATION_MS;
    if (recoverAt < now) {
      if (report)
        round.events.push({
          type: 'Normal',
          reason: 'RecoverSchedulable',
          message: `Subset ${status.name} of WorkloadSpread ${ws.metadata.namespace}/${ws.metadata.name} is recovered from unschedulable to schedulable`,
        });
      setCondition(status, newCondition('True', now));
    } else {
      round.checkIn(recoverAt - now);
    }
  }
  return failed;
}

/**
 * Whether a creatingPods / deletingPods entry the webhook recorded is still within its timeout
 * (looked at again when it runs out); one that ran out is reported (CreatePodFailed / DeletePodFailed).
 */
function stillExpected(round: Round, pod: string, since: string, what: 'created' | 'deleted', report: boolean): boolean {
  const { now, ws } = round.inputs;
  const expires = (timeMillis(since) ?? now) + (what === 'created' ? CREATE_POD_TIMEOUT_MS : DELETE_POD_TIMEOUT_MS);
  if (expires >= now) {
    round.checkIn(expires - now);
    return true;
  }
  if (report)
    round.events.push({
      type: 'Warning',
      reason: what === 'created' ? 'CreatePodFailed' : 'DeletePodFailed',
      message: `Pod ${ws.metadata.namespace}/${pod} was expected to be ${what} but it wasn't`,
    });
  return false;
}

/** calculateWorkloadSpreadSubsetStatus for one subset. */
function subsetStatus(
  round: Round,
  subset: SubsetSpec,
  pods: readonly Pod[],
  old: SubsetStatus | undefined,
  report: boolean,
): SubsetStatus {
  const { workloadReplicas } = round.inputs;
  const max = maxReplicasOr(subset, workloadReplicas, -1);
  const out: SubsetStatus = { name: subset.name, replicas: 0, missingReplicas: max };
  const creating = new Map(Object.entries(old?.creatingPods ?? {}));
  const deleting = old?.deletingPods ?? {};
  const keptDeleting: Record<string, string> = {};
  let active = 0;
  for (const pod of pods) {
    creating.delete(matchedWorkloadSpreadOf(pod)?.uid || (pod.metadata.name ?? ''));
    if (!isPodActive(pod)) continue;
    active++;
    if (out.missingReplicas > 0) out.missingReplicas--;
    const name = pod.metadata.name ?? '';
    const since = deleting[name];
    if (since !== undefined && stillExpected(round, name, since, 'deleted', report)) {
      keptDeleting[name] = since;
      if (out.missingReplicas < max) out.missingReplicas++;
    }
  }
  out.replicas = active;
  const keptCreating: Record<string, string> = {};
  for (const [id, since] of creating) {
    if (stillExpected(round, id, since, 'created', report)) {
      keptCreating[id] = since;
      if (out.missingReplicas > 0) out.missingReplicas--;
    }
  }
  if (Object.keys(keptCreating).length) out.creatingPods = keptCreating;
  if (Object.keys(keptDeleting).length) out.deletingPods = keptDeleting;
  return out;
}

/** calculateWorkloadSpreadSubsetStatuses: every subset, with the Schedulable condition under Adaptive. */
function subsetStatuses(
  round: Round,
  old: readonly SubsetStatus[] | undefined,
  podMap: PodMap | undefined,
  report: boolean,
): { statuses: SubsetStatus[]; failed: Pod[] } {
  const { ws } = round.inputs;
  const strategy = ws.spec.scheduleStrategy;
  const criticalSeconds = strategy?.type === 'Adaptive' ? (strategy.adaptive?.rescheduleCriticalSeconds ?? 0) : 0;
  const oldByName = new Map((old ?? []).map((s) => [s.name, s]));
  const failed: Pod[] = [];
  const statuses = ws.spec.subsets.map((subset, i) => {
    const pods = podMap?.get(subset.name) ?? [];
    const status = subsetStatus(round, subset, pods, oldByName.get(subset.name), report);
    if (criticalSeconds > 0) {
      if (i !== ws.spec.subsets.length - 1) {
        failed.push(...reschedule(round, pods, status, oldByName.get(subset.name), criticalSeconds * 1000, report));
      } else {
        const oldCond = subsetCondition(oldByName.get(subset.name), SUBSET_SCHEDULABLE);
        if (oldCond) status.conditions = [{ ...oldCond }];
        setCondition(status, newCondition('True', round.inputs.now));
      }
    }
    return status;
  });
  return { statuses, failed };
}

/** syncSubsetPodDeletionCost: pods within maxReplicas get 100*(N-i), the surplus (weakest first) -100*(i+1). */
function deletionCosts(round: Round, podMap: PodMap, reverse: boolean, patches: Map<string, string>): void {
  const { ws, workloadReplicas } = round.inputs;
  const n = ws.spec.subsets.length;
  const set = (pods: readonly Pod[], cost: number) => {
    for (const p of pods) {
      const cur = p.metadata.annotations?.[POD_DELETION_COST_ANNOTATION];
      const value = String(cost);
      if (cur === value || (cur === undefined && value === '0')) continue;
      patches.set(p.metadata.name ?? '', value);
    }
  };
  const sync = (subset: SubsetSpec | undefined, index: number, pods: readonly Pod[]) => {
    const active = pods.filter((p) => isPodActive(p));
    let positive: Pod[] = [];
    let negative: Pod[] = [];
    if (!subset) negative = active;
    else if (subset.maxReplicas === undefined) positive = active;
    else {
      let max: number;
      try {
        max = subsetMaxReplicas(subset.maxReplicas, workloadReplicas);
      } catch {
        return;
      }
      if (max < 0) return;
      if (active.length <= max) positive = active;
      else {
        const sorted = [...active].sort(comparatorFromLess(activePodsLess));
        negative = sorted.slice(0, active.length - max);
        positive = sorted.slice(active.length - max);
      }
    }
    set(positive, POD_DELETION_COST_POSITIVE * (n - index));
    set(negative, POD_DELETION_COST_NEGATIVE * (index + 1));
  };
  ws.spec.subsets.forEach((s, i) => sync(s, reverse ? n - i - 1 : i, podMap.get(s.name) ?? []));
  const fake = podMap.get(FAKE_SUBSET_NAME) ?? [];
  if (fake.length) sync(undefined, n, fake);
}

function isEmpty(statuses: readonly SubsetStatus[]): boolean {
  return statuses.every((s) => s.replicas === 0 && !Object.keys(s.creatingPods ?? {}).length && !Object.keys(s.deletingPods ?? {}).length);
}

export function planWorkloadSpread(inputs: SpreadInputs): SpreadPlan {
  const round = new Round(inputs);
  const { ws, pods } = inputs;
  const lateMatches: PodPatch[] = [];

  const byVersion = new Map<string, Pod[]>();
  for (const p of pods) {
    const v = podVersion(p);
    byVersion.set(v, [...(byVersion.get(v) ?? []), p]);
  }
  const versioned = new Map<string, PodMap>();
  const all: PodMap = new Map();
  for (const [version, vpods] of byVersion) {
    const map = groupBySubset(round, vpods, lateMatches);
    versioned.set(version, map);
    for (const [subset, ps] of map) all.set(subset, [...(all.get(subset) ?? []), ...ps]);
  }

  const costs = new Map<string, string>();
  if (inputs.deletionCost) for (const [version, map] of versioned) deletionCosts(round, map, version !== inputs.latestVersion, costs);

  const old = ws.status ?? {};
  const { statuses, failed } = subsetStatuses(round, old.subsetStatuses, all, true);
  const versionedStatuses: Record<string, SubsetStatus[]> = {};
  for (const [version, map] of versioned)
    versionedStatuses[version] = subsetStatuses(round, old.versionedSubsetStatuses?.[version], map, false).statuses;
  for (const [version, prev] of Object.entries(old.versionedSubsetStatuses ?? {})) {
    if (versioned.has(version)) continue;
    const kept = subsetStatuses(round, prev, undefined, false).statuses;
    if (!isEmpty(kept)) versionedStatuses[version] = kept;
  }
  const status: WorkloadSpreadStatus = {
    observedGeneration: ws.metadata.generation ?? 0,
    subsetStatuses: statuses,
    versionedSubsetStatuses: versionedStatuses,
  };

  const patches = new Map<string, PodPatch>();
  for (const p of lateMatches) patches.set(p.name, p);
  for (const [name, cost] of costs) {
    const p = patches.get(name) ?? { name, metadata: {} };
    p.metadata.annotations = { ...p.metadata.annotations, [POD_DELETION_COST_ANNOTATION]: cost };
    patches.set(name, p);
  }
  return {
    status: isDeepStrictEqual(normalize(status), normalize(old)) ? undefined : status,
    podPatches: [...patches.values()],
    podsToDelete: failed.map((p) => p.metadata.name ?? ''),
    events: round.events,
    requeueAfterMs: round.requeueAfterMs,
  };
}

/** Status as compared: absent and empty collections alike (the API server drops neither, Go omits both). */
function normalize(status: WorkloadSpreadStatus): unknown {
  const subset = (s: SubsetStatus) => ({
    name: s.name,
    replicas: s.replicas,
    missingReplicas: s.missingReplicas,
    conditions: s.conditions?.length ? s.conditions : undefined,
    creatingPods: Object.keys(s.creatingPods ?? {}).length ? s.creatingPods : undefined,
    deletingPods: Object.keys(s.deletingPods ?? {}).length ? s.deletingPods : undefined,
  });
  return {
    observedGeneration: status.observedGeneration ?? 0,
    subsetStatuses: (status.subsetStatuses ?? []).map(subset),
    versionedSubsetStatuses: Object.fromEntries(Object.entries(status.versionedSubsetStatuses ?? {}).map(([k, v]) => [k, v.map(subset)])),
  };
}
