// Whether a pod fits a node the way Kubernetes' DaemonSet controller judges it (k8s
// pkg/controller/daemon: Predicates = node name, required node affinity incl. nodeSelector, and
// NoSchedule/NoExecute taints against tolerations), plus the node-name affinity and default
// tolerations daemon pods carry; and the fuller check BroadcastJob makes (checkNodeFitness: the same
// plus `spec.unschedulable` and resource fit). Shared by every controller that places one pod per node.

import type { Affinity, NodeSelectorTerm, PodSpec, ResourceRequirements, Toleration } from '../apis/core.ts';
import { addQuantity, compareQuantity, tryParseQuantity, type Quantity } from '../apis/quantity.ts';
import type { Node, PodView } from '../apis/core-objects.ts';
import { newRequirement, requirementMatches, type Labels, type Operator } from './labelselector.ts';

export type Taint = NonNullable<NonNullable<Node['spec']>['taints']>[number];
type NodeSelectorRequirement = NonNullable<NodeSelectorTerm['matchExpressions']>[number];

/** The field a node-name affinity matches (metav1.ObjectNameField). */
export const NODE_NAME_FIELD = 'metadata.name';

const OPERATORS: Record<string, Operator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!', Gt: 'gt', Lt: 'lt' };

function requirementHolds(r: NodeSelectorRequirement, labels: Labels): boolean {
  const op = OPERATORS[r.operator];
  if (!op) return false;
  try {
    return requirementMatches(newRequirement(r.key, op, r.values ?? []), labels);
  } catch {
    // An invalid requirement makes its term match nothing (nodeaffinity.NewNodeSelector drops it).
    return false;
  }
}

/** A node selector term: all its requirements hold; a term without any matches nothing. */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: Pick<Node, 'metadata'>): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  if (!expressions.every((r) => requirementHolds(r, node.metadata.labels))) return false;
  // Only metadata.name is a supported field, and only with In / NotIn.
  return fields.every(
    (r) =>
      r.key === NODE_NAME_FIELD &&
      (r.operator === 'In' || r.operator === 'NotIn') &&
      requirementHolds(r, { [NODE_NAME_FIELD]: node.metadata.name ?? '' }),
  );
}

type PlacementSpec = Pick<PodSpec, 'nodeSelector' | 'affinity' | 'tolerations' | 'nodeName'>;

/** GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND (any required term). */
export function podMatchesNodeAffinity(spec: PlacementSpec | undefined, node: Pick<Node, 'metadata'>): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return required.nodeSelectorTerms.some((t) => nodeSelectorTermMatches(t, node));
}

/** v1.Toleration.ToleratesTaint. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** The first taint passing `filter` that no toleration tolerates (FindMatchingUntoleratedTaint). */
export function findUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  filter: (t: Taint) => boolean,
): Taint | undefined {
  return (taints ?? []).find((taint) => filter(taint) && !(tolerations ?? []).some((t) => toleratesTaint(t, taint)));
}

const NO_SCHEDULE = 'NoSchedule';
const NO_EXECUTE = 'NoExecute';

/**
 * util.AddOrUpdateDaemonPodTolerations: daemon pods tolerate not-ready/unreachable nodes
 * (NoExecute), node pressure and cordoned nodes (NoSchedule) — so `unschedulable` never keeps a
 * daemon pod away — and, with hostNetwork, an unavailable pod network.
 */
export function withDaemonPodTolerations(spec: Pick<PodSpec, 'tolerations' | 'hostNetwork'>): Toleration[] {
  const defaults: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: NO_EXECUTE },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: NO_EXECUTE },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: NO_SCHEDULE },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: NO_SCHEDULE },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: NO_SCHEDULE },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: NO_SCHEDULE },
  ];
  if (spec.hostNetwork) defaults.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: NO_SCHEDULE });
  const out = [...(spec.tolerations ?? [])];
  for (const d of defaults) {
    // AddOrUpdateTolerationInPodSpec: an identical toleration (same key, operator, value, effect) is kept once.
    const same = out.findIndex(
      (t) => t.key === d.key && (t.operator ?? 'Equal') === d.operator && (t.effect ?? '') === d.effect && !t.value,
    );
    if (same < 0) out.push(d);
  }
  return out;
}

export interface DaemonPlacement {
  /** A pod should run on the node (and be created when it has none). */
  shouldRun: boolean;
  /** A pod already on the node may stay (it tolerates the node's NoExecute taints). */
  shouldContinueRunning: boolean;
}

/** nodeShouldRunDaemonPod for a daemon pod template (default tolerations added). */
export function nodeShouldRunDaemonPod(spec: (PlacementSpec & Pick<PodSpec, 'hostNetwork'>) | undefined, node: Node): DaemonPlacement {
  const name = node.metadata.name ?? '';
  if (spec?.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinueRunning: false };
  if (!podMatchesNodeAffinity(spec, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = withDaemonPodTolerations(spec ?? {});
  const taints = node.spec?.taints;
  const blocking = findUntoleratedTaint(taints, tolerations, (t) => t.effect === NO_SCHEDULE || t.effect === NO_EXECUTE);
  if (!blocking) return { shouldRun: true, shouldContinueRunning: true };
  const evicting = findUntoleratedTaint(taints, tolerations, (t) => t.effect === NO_EXECUTE);
  return { shouldRun: false, shouldContinueRunning: !evicting };
}

/**
 * util.ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes exactly
 * "metadata.name In [node]" so the scheduler can only bind the pod to its node (the DaemonSet's
 * own affinity already matched that node).
 */
export function withNodeNameAffinity(affinity: Affinity | undefined, nodeName: string): Affinity {
  const term = { matchFields: [{ key: NODE_NAME_FIELD, operator: 'In', values: [nodeName] }] };
  return {
    ...affinity,
    nodeAffinity: {
      ...affinity?.nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] },
    },
  };
}

/**
 * util.GetTargetNodeName: spec.nodeName, else the single node a "metadata.name In [node]"
 * affinity names; undefined when neither says.
 */
export function targetNodeName(pod: PodView<never, 'nodeName' | 'affinity'>): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const f of term.matchFields ?? []) {
      if (f.key === NODE_NAME_FIELD && f.operator === 'In' && f.values?.length === 1) return f.values[0];
    }
  }
  return undefined;
}

type Requests = Map<string, Quantity>;

function addRequests(into: Requests, resources: ResourceRequirements | undefined): void {
  for (const [name, text] of Object.entries(resources?.requests ?? {})) {
    const q = tryParseQuantity(String(text));
    if (!q) continue;
    const had = into.get(name);
    into.set(name, had ? addQuantity(had, q) : q);
  }
}

function maxRequests(into: Requests, other: Requests): void {
  for (const [name, q] of other) {
    const had = into.get(name);
    if (!had || compareQuantity(q, had) > 0) into.set(name, q);
  }
}

/**
 * resourcehelper.PodRequests: the app containers' requests (with sidecar init containers, which
 * keep running) or, when larger, what an init container needs while the sidecars started before it
 * run. Pod overhead is set by RuntimeClass admission on created pods, never on a template.
 */
export function podRequests(spec: Pick<PodSpec, 'containers' | 'initContainers'> | undefined): Requests {
  const requests: Requests = new Map();
  for (const c of spec?.containers ?? []) addRequests(requests, c.resources);
  const sidecars: Requests = new Map();
  const initPeak: Requests = new Map();
  for (const c of spec?.initContainers ?? []) {
    const during: Requests = new Map(sidecars);
    addRequests(during, c.resources);
    if (c.restartPolicy === 'Always') {
      addRequests(requests, c.resources);
      addRequests(sidecars, c.resources);
    }
    maxRequests(initPeak, during);
  }
  maxRequests(requests, initPeak);
  return requests;
}

const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: NO_SCHEDULE };

/**
 * The scheduler's NodeResourcesFit filter against an empty node (upstream BroadcastJob builds its
 * NodeInfo from the node alone): the one pod must fit the node's allocatable pods, and each
 * non-zero request its allocatable amount. Returns the failure reasons, empty when it fits.
 */
export function insufficientResources(spec: Pick<PodSpec, 'containers' | 'initContainers'> | undefined, node: Node): string[] {
  const allocatable = node.status?.allocatable ?? {};
  const reasons: string[] = [];
  const allowedPods = tryParseQuantity(allocatable.pods ?? '0');
  if (!allowedPods || compareQuantity(allowedPods, { unscaled: 1n, exponent: 0, format: 'DecimalSI' }) < 0) reasons.push('Too many pods');
  for (const [name, request] of podRequests(spec)) {
    if (request.unscaled <= 0n) continue;
    const available = tryParseQuantity(allocatable[name] ?? '0') ?? { unscaled: 0n, exponent: 0, format: 'DecimalSI' };
    if (compareQuantity(request, available) > 0) reasons.push(`Insufficient ${name}`);
  }
  return reasons;
}

/**
 * BroadcastJob's checkNodeFitness: the reason a pod with this spec cannot run on the node, or
 * undefined when it can — node name, required node affinity and nodeSelector, untolerated
 * NoSchedule/NoExecute taints, `spec.unschedulable` (unless the unschedulable taint is tolerated),
 * resources.
 */
export function nodeFitFailure(spec: PodSpec | undefined, node: Node): string | undefined {
  const name = node.metadata.name ?? '';
  if (spec?.nodeName && spec.nodeName !== name) return "node(s) didn't match the requested node name";
  if (!podMatchesNodeAffinity(spec, node)) return "node(s) didn't match Pod's node affinity/selector";
  const taint = findUntoleratedTaint(node.spec?.taints, spec?.tolerations, (t) => t.effect === NO_SCHEDULE || t.effect === NO_EXECUTE);
  if (taint) return `node(s) had taint {${taint.key}: ${taint.value ?? ''}}, that the pod didn't tolerate`;
  if (node.spec?.unschedulable && !(spec?.tolerations ?? []).some((t) => toleratesTaint(t, UNSCHEDULABLE_TAINT)))
    return 'node(s) were unschedulable';
  const resources = insufficientResources(spec, node);
  return resources.length ? resources.join(', ') : undefined;
}
