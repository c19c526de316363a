// Pod predicates and orderings shared by the workload controllers: activity, readiness and
// availability (Kubernetes pkg/api/v1/pod and pkg/controller), the Kubernetes ActivePods order and
// Kruise's deletion order with pod-deletion-cost and rankers (CloneSet pod_sorter.go).
//
// The functions take a view of the one Pod (src/apis/core-objects.ts) naming the fields they read.

import { CONTROLLER_REVISION_HASH_LABEL, POD_DELETION_COST_ANNOTATION } from '../apis/constants.ts';
import type { ContainerStatus, PodCondition, PodView } from '../apis/core-objects.ts';
import type { Labels } from './labelselector.ts';
import { equalToRevisionHash } from './revision.ts';

export type Timestamp = Date | string | null | undefined;

/** The parts of a pod the predicates and orderings read. */
export type PodFacts = PodView<
  'name' | 'uid' | 'labels' | 'annotations' | 'creationTimestamp' | 'deletionTimestamp',
  'nodeName' | 'initContainers',
  'phase' | 'conditions' | 'containerStatuses' | 'initContainerStatuses'
>;

const GO_ZERO_TIME_MS = -62135596800000; // 0001-01-01T00:00:00Z, Go's time.Time{}

/** Milliseconds since the epoch, or undefined for an unset (Go zero) time. */
export function timeMillis(t: Timestamp): number | undefined {
  if (t === null || t === undefined || t === '') return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) || ms === GO_ZERO_TIME_MS ? undefined : ms;
}

export function isPodTerminal(pod: PodFacts): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Not finished and not being deleted (controller.IsPodActive). */
export function isPodActive(pod: PodFacts): boolean {
  return !isPodTerminal(pod) && !pod.metadata?.deletionTimestamp;
}

/** Being deleted but not yet finished (controller.IsPodTerminating). */
export function isPodTerminating(pod: PodFacts): boolean {
  return !isPodTerminal(pod) && !!pod.metadata?.deletionTimestamp;
}

/** The first `Ready` condition, whatever its status. */
export function getPodReadyCondition(pod: PodFacts): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

export function isPodReady(pod: PodFacts): boolean {
  return getPodReadyCondition(pod)?.status === 'True';
}

/** Phase Running and condition Ready (upstream util.IsRunningAndReady). */
export function isRunningAndReady(pod: PodFacts): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

/** When a ready pod became ready; undefined when not ready or the time is unset. */
export function podReadyTime(pod: PodFacts): number | undefined {
  if (!isPodReady(pod)) return undefined;
  const c = pod.status?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True');
  return timeMillis(c?.lastTransitionTime);
}

/** Ready, and (unless minReadySeconds is 0) ready for at least minReadySeconds as of nowMs. */
export function isPodAvailable(pod: PodFacts, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds === 0) return true;
  const since = timeMillis(getPodReadyCondition(pod)?.lastTransitionTime);
  return since !== undefined && since + minReadySeconds * 1000 <= nowMs;
}

/** The pod's revision label (`controller-revision-hash` unless another key is given), or "". */
export function getPodRevision(pod: PodFacts, labelKey: string = CONTROLLER_REVISION_HASH_LABEL): string {
  return pod.metadata?.labels?.[labelKey] ?? '';
}

/** Whether the pod was created from revisionName (full name or short-hash match). */
export function isPodAtRevision(pod: PodFacts, revisionName: string, labelKey: string = CONTROLLER_REVISION_HASH_LABEL): boolean {
  return equalToRevisionHash(getPodRevision(pod, labelKey), revisionName);
}

/** Canonical int32 text only: "+10", "008", "1.0" and out-of-range values all give 0. */
export function parsePodDeletionCost(value: string | undefined): number {
  if (value === undefined || !/^(-\d+|0|[1-9]\d*)$/.test(value)) return 0;
  const n = Number(value);
  return n < -2147483648 || n > 2147483647 ? 0 : n === 0 ? 0 : n;
}

export function getPodDeletionCost(pod: PodFacts): number {
  return parsePodDeletionCost(pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION]);
}

// ---------------------------------------------------------------------------------------------
// Orderings. "Less" = comes first = preferred for deletion / least valuable.

export type Less = (a: PodFacts, b: PodFacts) => boolean;

/** Array.prototype.sort comparator from a Less function. */
export function comparatorFromLess(less: Less): (a: PodFacts, b: PodFacts) => number {
  return (a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0);
}

// Phases outside this table (Succeeded, Failed, unset) rank with Pending, as in Go's map lookup.
const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
function phaseOrdinal(pod: PodFacts): number {
  const phase = pod.status?.phase ?? '';
  return Object.hasOwn(PHASE_ORDINAL, phase) ? PHASE_ORDINAL[phase] : 0;
}

/** Unset time counts as later than any set time. */
function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

const maxRestarts = (statuses: readonly ContainerStatus[] | null | undefined, include: (name: string) => boolean = () => true) =>
  (statuses ?? []).reduce((m, c) => (include(c.name) ? Math.max(m, c.restartCount) : m), 0);

function sidecarRestarts(pod: PodFacts): number {
  const sidecars = new Set((pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  return maxRestarts(pod.status?.initContainerStatuses, (name) => sidecars.has(name));
}

/** Rules 1–2 of both orderings (node assignment, then phase); undefined on a tie. */
function lessByPlacementPhase(a: PodFacts, b: PodFacts): boolean | undefined {
  return placementLess(a, b) ?? phaseLess(a, b);
}

function lessByReadyTime(a: PodFacts, b: PodFacts): boolean | undefined {
  if (isPodReady(a) && isPodReady(b)) {
    const ra = podReadyTime(a);
    const rb = podReadyTime(b);
    if (ra !== rb) return afterOrZero(ra, rb);
  }
  return undefined;
}

function lessByCreation(a: PodFacts, b: PodFacts): boolean {
  const ca = timeMillis(a.metadata?.creationTimestamp);
  const cb = timeMillis(b.metadata?.creationTimestamp);
  return ca !== cb && afterOrZero(ca, cb);
}

/**
 * Kubernetes controller.ActivePods.Less: unassigned < assigned; Pending < Unknown < Running;
 * not ready < ready; ready more recently < ready longer; more restarts (then more sidecar
 * restarts) < fewer; newer (or unset) creation < older.
 */
export function activePodsLess(a: PodFacts, b: PodFacts): boolean {
  const placed = lessByPlacementPhase(a, b);
  if (placed !== undefined) return placed;
  if (isPodReady(a) !== isPodReady(b)) return !isPodReady(a);
  const ready = lessByReadyTime(a, b);
  if (ready !== undefined) return ready;
  const ra = maxRestarts(a.status?.containerStatuses);
  const rb = maxRestarts(b.status?.containerStatuses);
  if (ra !== rb) return ra > rb;
  const sa = sidecarRestarts(a);
  const sb = sidecarRestarts(b);
  if (sa !== sb) return sa > sb;
  return lessByCreation(a, b);
}

export const compareActivePods = comparatorFromLess(activePodsLess);

/**
 * Pods in name order. Every ordering above leaves pods that tie on all of its rules in the order
 * they were given, and a controller is given its informer cache's order, which no one can see: a
 * planner that sorts its pods by name first picks among ties by name, so `rollout plan` (the same
 * planner on a listed copy) names the very pods the controller then picks. Upstream accepts any
 * order among ties.
 */
export function byPodName<P extends PodFacts>(pods: readonly P[]): P[] {
  return [...pods].sort((a, b) => {
    const na = a.metadata?.name ?? '';
    const nb = b.metadata?.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/** A pod's rank; higher ranks are deleted first. */
export type Ranker = (pod: PodFacts) => number;

export interface RankedOrderOptions {
  rank?: Ranker;
  /** Workload-specific availability (CloneSet: lifecycle state plus minReadySeconds). */
  isAvailable?: (pod: PodFacts) => boolean;
}

/** One rule of an ordering: decides a < b (true/false) or ties (undefined); named for `rollout plan`. */
interface OrderRule {
  reason: string;
  less(a: PodFacts, b: PodFacts): boolean | undefined;
}

function placementLess(a: PodFacts, b: PodFacts): boolean | undefined {
  const na = a.spec?.nodeName ?? '';
  const nb = b.spec?.nodeName ?? '';
  return na !== nb && (na === '' || nb === '') ? na === '' : undefined;
}

function phaseLess(a: PodFacts, b: PodFacts): boolean | undefined {
  const pa = phaseOrdinal(a);
  const pb = phaseOrdinal(b);
  return pa !== pb ? pa < pb : undefined;
}

/**
 * Kruise ActivePodsWithRanks.Less, the CloneSet deletion order: unassigned < assigned;
 * Pending < Unknown < Running; not available < available; not ready < ready; lower
 * pod-deletion-cost < higher; higher rank < lower; ready more recently < longer; more restarts <
 * fewer; newer (or unset) creation < older.
 */
function rankedRules(opts: RankedOrderOptions): OrderRule[] {
  const { isAvailable, rank } = opts;
  const differ = <T>(x: T, y: T, less: (x: T, y: T) => boolean) => (x !== y ? less(x, y) : undefined);
  return [
    { reason: 'not scheduled', less: placementLess },
    { reason: 'earlier phase (Pending < Unknown < Running)', less: phaseLess },
    ...(isAvailable
      ? [{ reason: 'not available', less: (a: PodFacts, b: PodFacts) => differ(isAvailable(a), isAvailable(b), (x) => !x) }]
      : []),
    { reason: 'not ready', less: (a, b) => differ(isPodReady(a), isPodReady(b), (x) => !x) },
    { reason: 'lower pod-deletion-cost', less: (a, b) => differ(getPodDeletionCost(a), getPodDeletionCost(b), (x, y) => x < y) },
    {
      reason: 'higher rank (more pods on its node or topology domain)',
      less: (a, b) => differ(rank?.(a) ?? 0, rank?.(b) ?? 0, (x, y) => x > y),
    },
    { reason: 'ready more recently', less: lessByReadyTime },
    // Kruise compares regular containers only (no sidecar tie-break here).
    {
      reason: 'more container restarts',
      less: (a, b) => differ(maxRestarts(a.status?.containerStatuses), maxRestarts(b.status?.containerStatuses), (x, y) => x > y),
    },
    { reason: 'created more recently', less: lessByCreation },
  ];
}

function decide(rules: readonly OrderRule[], a: PodFacts, b: PodFacts): { less: boolean; reason: string } | undefined {
  for (const rule of rules) {
    const less = rule.less(a, b);
    if (less !== undefined) return { less, reason: rule.reason };
  }
  return undefined;
}

export function activePodsWithRanksLess(a: PodFacts, b: PodFacts, opts: RankedOrderOptions = {}): boolean {
  return decide(rankedRules(opts), a, b)?.less ?? false;
}

export function compareActivePodsWithRanks(opts: RankedOrderOptions = {}): (a: PodFacts, b: PodFacts) => number {
  const rules = rankedRules(opts);
  return comparatorFromLess((a, b) => decide(rules, a, b)?.less ?? false);
}

/** The rule of the CloneSet deletion order that puts a before b, or undefined when it does not. */
export function rankedOrderReason(a: PodFacts, b: PodFacts, opts: RankedOrderOptions = {}): string | undefined {
  const d = decide(rankedRules(opts), a, b);
  return d?.less ? d.reason : undefined;
}

const uidOf = (pod: PodFacts) => pod.metadata?.uid ?? '';

function groupByNode(pods: readonly PodFacts[], include: (node: string) => boolean = () => true): Map<string, PodFacts[]> {
  const byNode = new Map<string, PodFacts[]>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName ?? '';
    if (node === '' || !include(node)) continue;
    const list = byNode.get(node);
    if (list) list.push(pod);
    else byNode.set(node, [pod]);
  }
  return byNode;
}

/**
 * SameNodeRanker: on every node holding several pods, all but the most valuable one get rank
 * n-i (n = pods on the node minus one, i = position in ActivePods order), so the weakest pod on the
 * most crowded node goes first. Pods are identified by UID.
 */
export function sameNodeRanker(pods: readonly PodFacts[]): Ranker {
  const ranks = new Map<string, number>();
  for (const onNode of groupByNode(pods).values()) {
    if (onNode.length <= 1) continue;
    const ranked = [...onNode].sort(compareActivePodsWithRanks()).slice(0, -1);
    ranked.forEach((pod, i) => ranks.set(uidOf(pod), ranked.length - i));
  }
  return (pod) => ranks.get(uidOf(pod)) ?? 0;
}

export interface PodSpreadConstraint {
  topologyKey: string;
  /** Only these topology values take part (all when empty). */
  limitedValues?: string[];
}

const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/**
 * SpreadConstraintsRanker, used when the template has topologySpreadConstraints. For each
 * constraint, pods are grouped by their node's value of topologyKey; within a group they are
 * ordered (by ActivePods order refined with SameNodeRanker unless the key is the hostname) and
 * get (groupSize - i) * ln(groups + 2) added to their rank. nodeLabels returns undefined for a
 * node that cannot be read; pods there, or on nodes without the key, get no rank from it.
 */
export function spreadConstraintsRanker(
  pods: readonly PodFacts[],
  constraints: readonly PodSpreadConstraint[],
  nodeLabels: (nodeName: string) => Labels | undefined,
): Ranker {
  const labelsByNode = new Map<string, Labels>();
  const podsOnNode = groupByNode(pods, (node) => {
    if (!labelsByNode.has(node)) {
      const labels = nodeLabels(node);
      if (labels === undefined) return false;
      labelsByNode.set(node, labels);
    }
    return true;
  });
  const sameNode = sameNodeRanker(pods);
  const ranks = new Map<string, number>();
  for (const constraint of constraints) {
    const limited = constraint.limitedValues?.length ? new Set(constraint.limitedValues) : undefined;
    const topologies = new Map<string, PodFacts[]>();
    for (const [node, onNode] of podsOnNode) {
      const labels = labelsByNode.get(node);
      if (!labels || !Object.hasOwn(labels, constraint.topologyKey)) continue;
      const value = labels[constraint.topologyKey];
      if (limited && !limited.has(value)) continue;
      topologies.set(value, [...(topologies.get(value) ?? []), ...onNode]);
    }
    const order = compareActivePodsWithRanks({ rank: constraint.topologyKey === HOSTNAME_LABEL ? undefined : sameNode });
    const weight = Math.log(topologies.size + 2);
    for (const inTopology of topologies.values()) {
      inTopology.sort(order);
      inTopology.forEach((pod, i) => ranks.set(uidOf(pod), (ranks.get(uidOf(pod)) ?? 0) + (inTopology.length - i) * weight));
    }
  }
  return (pod) => ranks.get(uidOf(pod)) ?? 0;
}
