// `rollout plan` for Advanced StatefulSet and Advanced DaemonSet: the controllers' own pure planners
// (planStatefulSet, planDaemonSet) run on the live objects, their plans told as a PlanReport. The
// planners say which pods go, not why; the reason given is read off the pod and the plan (a failed
// pod recreated, an ordinal outside the replicas, a specified delete, a rolling update, a node that
// no longer runs the daemon), never computed a second time.
import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import { CONTROLLER_REVISION_HASH_LABEL, SPECIFIED_DELETE_LABEL } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { Node, Pod } from '../../apis/core-objects.ts';
import { resolveFeatureGates } from '../../apis/features.ts';
import { planDaemonSet } from '../../controllers/daemonset/plan.ts';
import { isDaemonPodAvailable, partitionOf, rollingUpdateOf } from '../../controllers/daemonset/pods.ts';
import { updateBudgets } from '../../controllers/daemonset/update.ts';
import { inRange, ordinalOf, replicasOf, replicasRange } from '../../controllers/statefulset/ordinals.ts';
import { planStatefulSet } from '../../controllers/statefulset/plan.ts';
import { scaledMaxUnavailable } from '../../controllers/statefulset/replicas.ts';
import { isPodTerminal } from '../../util/pod.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { nodeShouldRunDaemonPod } from '../../util/nodefit.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { lifecycleRows, type PlannedRound, type PlanReport } from './plan.ts';

const podName = (p: Pod) => p.metadata.name ?? '';
const revisionOfPod = (p: Pod) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
const hasSpecifiedDelete = (p: Pod | undefined) => !!p?.metadata.labels && Object.hasOwn(p.metadata.labels, SPECIFIED_DELETE_LABEL);

/** The phase a plan acted in: update when any action rolls pods to the update revision. */
function phaseOf(r: Pick<PlanReport, 'creates' | 'deletes' | 'inPlaceUpdates' | 'lifecycle'>, updateDeletes: number): PlanReport['phase'] {
  if (r.inPlaceUpdates.length > 0 || updateDeletes > 0) return 'update';
  return r.creates.length || r.deletes.length || r.lifecycle.length ? 'scale' : 'none';
}

export const statefulSetPlanReport = (input: StatefulSetRoundInput): PlanReport => statefulSetRound(input).report;

export interface StatefulSetRoundInput {
  set: StatefulSet;
  pods: Pod[];
  pvcs: PersistentVolumeClaim[];
  revisions: ControllerRevision[];
  nowMs: number;
  featureGates?: string;
}

export function statefulSetRound(input: StatefulSetRoundInput): PlannedRound {
  const { set } = input;
  const features = resolveFeatureGates(input.featureGates ?? '');
  const plan = planStatefulSet({ set, revisions: input.revisions, pods: input.pods, pvcs: input.pvcs, now: input.nowMs, features });
  const name = set.metadata?.name ?? '';
  const replicas = replicasOf(set);
  const range = replicasRange(set, features);
  const rolling = set.spec?.updateStrategy?.rollingUpdate;
  const byName = new Map(input.pods.map((p) => [podName(p), p]));
  const recreatedFailed = new Set(
    plan.events.filter((e) => e.reason === 'RecreatingFailedPod').map((e) => e.message.slice(e.message.lastIndexOf(' ') + 1)),
  );
  let updateDeletes = 0;
  const deletes = plan.deletePods.map((pod) => {
    const p = byName.get(pod);
    const ordinal = ordinalOf(name, pod);
    let reason: string;
    if (recreatedFailed.has(pod) || (p && isPodTerminal(p))) reason = `failed pod (${p?.status?.phase ?? 'Failed'}): recreated`;
    else if (!inRange(range, ordinal))
      reason = range.reserved.has(ordinal)
        ? `scale in: ordinal ${ordinal} is reserved`
        : `scale in: ordinal ${ordinal} outside the replicas`;
    else if (hasSpecifiedDelete(p)) reason = 'specified delete';
    else {
      updateDeletes++;
      reason = `rolling update: recreated at revision ${plan.updateRevision}`;
    }
    return { pod, reason, pvcs: [] };
  });
  const creates = new Map<string, string[]>();
  for (const c of plan.createPods) {
    const rev = revisionOfPod(c.pod);
    creates.set(rev, [...(creates.get(rev) ?? []), podName(c.pod)]);
  }
  const active = input.pods.filter((p) => !p.metadata.deletionTimestamp);
  const partition = Math.min(replicas, rolling?.partition ?? 0);
  const report: PlanReport = {
    kind: 'StatefulSet',
    name,
    namespace: set.metadata?.namespace ?? '',
    phase: 'none',
    revisions: { current: plan.currentRevision, update: plan.updateRevision, newRevision: !!plan.newRevision },
    replicas: { desired: replicas, pods: active.length },
    partition: {
      value: rolling?.partition ?? 0,
      oldRevisionPods: partition,
      expectedUpdated: replicas - partition,
      updatedNow: plan.status.updatedReplicas,
    },
    budget: {
      maxUnavailable: Math.max(1, getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? 1, replicas, false)),
      maxSurge: 0,
      unavailableNow: Math.max(0, active.length - (plan.status.availableReplicas ?? 0)),
      surgeInUse: 0,
    },
    creates: [...creates].map(([revision, pods]) => ({ revision, count: pods.length, pods })),
    deletes,
    inPlaceUpdates: plan.inPlaceUpdates.map((u) => ({ pod: u.pod, revision: u.revision })),
    recreateUpdates: [],
    lifecycle: lifecycleRows(plan.lifecycleTransitions),
    events: plan.events,
    paused: !!rolling?.paused,
  };
  report.phase = phaseOf(report, updateDeletes);
  // Parallel pod management scales within scaleStrategy.maxUnavailable.
  const scaleBudget = scaledMaxUnavailable(set.spec?.scaleStrategy?.maxUnavailable, replicas);
  if (set.spec?.podManagementPolicy === 'Parallel' && scaleBudget !== undefined && report.phase === 'scale') {
    report.budget.maxUnavailable = scaleBudget;
  }
  return {
    report,
    writes: {
      newRevision: plan.newRevision,
      revisionUpdate: plan.revisionUpdate,
      creates: plan.createPods,
      deletes: plan.deletePods,
      labelPatches: plan.labelPatches,
      inPlaceUpdates: plan.inPlaceUpdates,
      refreshes: plan.refreshes,
      lifecycleTransitions: plan.lifecycleTransitions,
      status: plan.status,
      requeueAfterMs: plan.requeueAfterMs,
    },
  };
}

export const daemonSetPlanReport = (input: DaemonSetRoundInput): PlanReport => daemonSetRound(input).report;

export interface DaemonSetRoundInput {
  daemonSet: DaemonSet;
  pods: Pod[];
  nodes: Node[];
  revisions: ControllerRevision[];
  nowMs: number;
  featureGates?: string;
  /** Suffixes of new pods' names (default new1-, new2-, …: the API server's are random). */
  randomSuffix?: () => string;
}

export function daemonSetRound(input: DaemonSetRoundInput): PlannedRound {
  const ds = input.daemonSet;
  const features = resolveFeatureGates(input.featureGates ?? '');
  let created = 0;
  const plan = planDaemonSet({
    daemonSet: ds,
    revisions: input.revisions,
    pods: input.pods,
    nodes: input.nodes,
    now: input.nowMs,
    features,
    randomSuffix: input.randomSuffix ?? (() => `new${++created}`.padEnd(5, '-')),
  });
  const hash = plan.hash;
  const desired = plan.status.desiredNumberScheduled ?? 0;
  const nodesByName = new Map(input.nodes.map((n) => [n.metadata.name ?? '', n]));
  const byName = new Map(input.pods.map((p) => [podName(p), p]));
  const active = input.pods.filter((p) => !p.metadata.deletionTimestamp);
  const perNode = new Map<string, number>();
  for (const p of active) if (p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
  let updateDeletes = 0;
  const deletes = plan.deletePods.map((pod) => {
    const p = byName.get(pod);
    const nodeName = p?.spec?.nodeName ?? '';
    const node = nodesByName.get(nodeName);
    let reason: string;
    if (p && isPodTerminal(p)) reason = `failed pod (${p.status?.phase}): recreated`;
    else if (!node || !nodeShouldRunDaemonPod(ds.spec?.template?.spec, node).shouldRun)
      reason = `node ${nodeName || '(none)'} no longer runs the daemon`;
    else if (p && revisionOfPod(p) !== hash) {
      updateDeletes++;
      reason =
        (perNode.get(nodeName) ?? 0) > 1
          ? `rolling update: old pod replaced by the surge pod on ${nodeName}`
          : `rolling update: recreated at revision ${hash}`;
    } else reason = `more than one daemon pod on ${nodeName}`;
    return { pod, reason, pvcs: [] };
  });
  const creates = new Map<string, string[]>();
  for (const p of plan.createPods) {
    const rev = revisionOfPod(p);
    creates.set(rev, [...(creates.get(rev) ?? []), nodeOfNewPod(p)]);
  }
  const oldHashes = new Map<string, number>();
  for (const p of active) if (revisionOfPod(p) !== hash) oldHashes.set(revisionOfPod(p), (oldHashes.get(revisionOfPod(p)) ?? 0) + 1);
  const current = [...oldHashes].sort((a, b) => b[1] - a[1])[0]?.[0] ?? hash;
  const { maxSurge, maxUnavailable } = updateBudgets(ds, desired);
  const partition = Math.min(desired, partitionOf(ds, desired));
  const available = active.filter((p) => isDaemonPodAvailable(p, ds.spec?.minReadySeconds ?? 0, input.nowMs)).length;
  const report: PlanReport = {
    kind: 'DaemonSet',
    name: ds.metadata?.name ?? '',
    namespace: ds.metadata?.namespace ?? '',
    phase: 'none',
    revisions: { current, update: hash, newRevision: !!plan.newRevision },
    replicas: { desired, pods: active.length },
    partition: {
      value: rollingUpdateOf(ds)?.partition ?? 0,
      oldRevisionPods: partition,
      expectedUpdated: desired - partition,
      updatedNow: plan.status.updatedNumberScheduled ?? 0,
    },
    budget: {
      maxUnavailable,
      maxSurge,
      unavailableNow: Math.max(0, desired - available),
      surgeInUse: [...perNode.values()].filter((n) => n > 1).length,
    },
    creates: [...creates].map(([revision, nodes]) => ({ revision, count: nodes.length, nodes })),
    deletes,
    inPlaceUpdates: plan.inPlaceUpdates.map((u) => ({ pod: u.pod, revision: u.revision })),
    recreateUpdates: [],
    lifecycle: lifecycleRows(plan.lifecycleTransitions),
    events: plan.events,
    paused: !!rollingUpdateOf(ds)?.paused,
  };
  report.phase = phaseOf(report, updateDeletes);
  return {
    report,
    writes: {
      newRevision: plan.newRevision,
      revisionUpdate: plan.revisionBump,
      creates: plan.createPods.map((pod) => ({ pod, pvcs: [] })),
      deletes: plan.deletePods,
      labelPatches: [],
      inPlaceUpdates: plan.inPlaceUpdates,
      refreshes: plan.refreshes,
      lifecycleTransitions: plan.lifecycleTransitions,
      status: plan.status,
      requeueAfterMs: plan.requeueAfterMs,
    },
  };
}

/** The node a new daemon pod is pinned to (its required node affinity on metadata.name). */
export function nodeOfNewPod(p: Pod): string {
  const terms = p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms) for (const f of t.matchFields ?? []) if (f.key === 'metadata.name' && f.values?.[0]) return f.values[0];
  return '';
}
