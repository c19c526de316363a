// `kubectl kruise rollout plan`: the report of what a controller's next reconcile would do, made
// from the controller's own pure planner. This file: the report's shape, the previewed change
// (--set image=…, --partition, --replicas, --pods-to-delete), the CloneSet report (planCloneSet)
// and the text rendering; plan-advanced.ts: Advanced StatefulSet and DaemonSet; plan-command.ts:
// the command that gathers the live objects.
import type { CloneSet } from '../../apis/apps/cloneset.ts';
import { SPECIFIED_DELETE_LABEL } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { resolveFeatureGates } from '../../apis/features.ts';
import { planCloneSet, RECREATE_DELETE_REASON, type CloneSetPlan } from '../../controllers/cloneset/plan.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from '../../util/intstr.ts';
import type { Labels } from '../../util/labelselector.ts';
import type { LifecycleTransition } from '../../util/lifecycle.ts';
import type { InPlaceUpdateAction, LabelPatch, PodCreation, PodRefresh } from '../../controllers/plan-types.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { CliError, table } from './session.ts';

export interface PlanOverrides {
  /** container=image, or a bare image for every container. */
  images?: string[];
  partition?: IntOrString;
  replicas?: number;
  podsToDelete?: string[];
}

export const intOrPercent = (v: string): IntOrString => (/^\d+$/.test(v) ? Number(v) : v);

/** The workload fields a previewed change touches (CloneSet, Advanced StatefulSet and DaemonSet share them). */
interface Previewable {
  metadata?: { name?: string };
  kind?: string;
  spec?: {
    replicas?: number;
    template?: {
      spec?: { containers?: Array<{ name: string; image?: string }>; initContainers?: Array<{ name: string; image?: string }> };
    };
    updateStrategy?: { rollingUpdate?: { partition?: IntOrString } };
    scaleStrategy?: { podsToDelete?: string[] };
  };
}

/** The workload as it would be after the previewed change (the live object when there is none). */
export function applyOverrides<W extends object>(workload: W, o: PlanOverrides, kind = 'CloneSet'): W {
  const next = structuredClone(workload);
  const previewed = next as Previewable;
  const spec = (previewed.spec ??= {});
  for (const set of o.images ?? []) {
    const eq = set.indexOf('=');
    const [container, image] = eq < 0 ? ['*', set] : [set.slice(0, eq), set.slice(eq + 1)];
    const containers = [...(spec.template?.spec?.initContainers ?? []), ...(spec.template?.spec?.containers ?? [])];
    const matched = containers.filter((c) => container === '*' || c.name === container);
    if (matched.length === 0) throw new CliError(`unable to find container named "${container}" in ${kind} ${previewed.metadata?.name}`);
    for (const c of matched) c.image = image;
  }
  if (o.partition !== undefined) {
    spec.updateStrategy = { ...spec.updateStrategy, rollingUpdate: { ...spec.updateStrategy?.rollingUpdate, partition: o.partition } };
  }
  if (o.replicas !== undefined) {
    if (kind === 'DaemonSet') throw new CliError('--replicas does not apply to an Advanced DaemonSet (one pod per eligible node)');
    spec.replicas = o.replicas;
  }
  if (o.podsToDelete?.length) {
    if (kind !== 'CloneSet') throw new CliError('--pods-to-delete applies to a CloneSet only (spec.scaleStrategy.podsToDelete)');
    spec.scaleStrategy = {
      ...spec.scaleStrategy,
      podsToDelete: [...new Set([...(spec.scaleStrategy?.podsToDelete ?? []), ...o.podsToDelete])],
    };
  }
  return next;
}

/** One reconcile's plan, whichever planner made it (the shape `-o json` prints). */
export interface PlanReport {
  /** CloneSet, StatefulSet (Advanced) or DaemonSet (Advanced). */
  kind: string;
  name: string;
  namespace: string;
  /** scale: pods created or deleted for the replica count or nodes; update: the rolling update acts. */
  phase: 'scale' | 'update' | 'none';
  revisions: { current: string; update: string; newRevision: boolean };
  /** desired: replicas (a DaemonSet: the nodes that should run it); pods: active pods now. */
  replicas: { desired: number; pods: number };
  partition: { value: IntOrString; oldRevisionPods: number; expectedUpdated: number; updatedNow: number };
  budget: {
    maxUnavailable: number;
    maxSurge: number;
    unavailableNow: number;
    surgeInUse: number;
    /** CloneSet only: the planner's limits. */
    deleteReadyLimit?: number;
    scaleUpLimit?: number;
    updateMaxUnavailable?: number;
  };
  /** CloneSet only: the planner's own diff numbers. */
  arithmetic?: CloneSetPlan['diffs'];
  /** Pods created per revision; pods: their names (Advanced StatefulSet), nodes: where (Advanced DaemonSet). */
  creates: Array<{ revision: string; count: number; pods?: string[]; nodes?: string[] }>;
  deletes: Array<{ pod: string; reason: string; pvcs: string[] }>;
  inPlaceUpdates: Array<{ pod: string; revision: string }>;
  /** Pods a ReCreate update replaces: marked specified-delete for the next round, or deleted in this one. */
  recreateUpdates: Array<{ pod: string; deletedNow?: boolean }>;
  lifecycle: Array<{ pod: string; to: string }>;
  events: Array<{ type: string; reason: string; message: string }>;
  paused: boolean;
}

/**
 * What one planned reconcile writes to pods, claims and revisions, as the executor would:
 * `rollout plan` replays it on its copy of the objects to tell the whole rollout (plan-rollout.ts).
 */
export interface PlannedWrites {
  newRevision?: ControllerRevision;
  /** An older equal revision brought back as the update revision (rollback): its new number. */
  revisionUpdate?: { name: string; revision: number };
  creates: PodCreation[];
  deletes: string[];
  labelPatches: LabelPatch[];
  inPlaceUpdates: InPlaceUpdateAction[];
  refreshes: PodRefresh[];
  lifecycleTransitions: LifecycleTransition[];
  /** The workload's new status. */
  status: object;
  /** The planner asked to be called back (an in-place grace period, minReadySeconds). */
  requeueAfterMs?: number;
}

/** One reconcile of a controller's planner: the report and the writes behind it. */
export interface PlannedRound {
  report: PlanReport;
  writes: PlannedWrites;
}

/** Plan and report, in one pure step (the command only gathers the objects). */
export const planReport = (input: CloneSetRoundInput): PlanReport => cloneSetRound(input).report;

export interface CloneSetRoundInput {
  cloneSet: CloneSet;
  pods: Pod[];
  pvcs: PersistentVolumeClaim[];
  revisions: ControllerRevision[];
  nowMs: number;
  featureGates?: string;
  nodeLabels?: (node: string) => Labels | undefined;
  /** Names of new pods (default new1-, new2-, …: the API server's are random). */
  randomId?: () => string;
}

export function cloneSetRound(input: CloneSetRoundInput): PlannedRound {
  const cs = input.cloneSet;
  const features = resolveFeatureGates(input.featureGates ?? '');
  let created = 0;
  const plan = planCloneSet({
    cloneSet: cs,
    revisions: input.revisions,
    pods: input.pods,
    pvcs: input.pvcs,
    now: input.nowMs,
    features,
    randomId: input.randomId ?? (() => `new${++created}`.padEnd(5, '-')),
    nodeLabels: input.nodeLabels,
  });
  const replicas = cs.spec?.replicas ?? 1;
  const rolling = cs.spec?.updateStrategy?.rollingUpdate;
  const partitionValue = rolling?.partition ?? 0;
  const oldRevisionPods = Math.min(replicas, getScaledValueFromIntOrPercent(partitionValue, replicas, true));
  const creates = new Map<string, number>();
  for (const c of plan.createPods) creates.set(c.revision, (creates.get(c.revision) ?? 0) + 1);
  const active = input.pods.filter((p) => !p.metadata.deletionTimestamp);
  const report: PlanReport = {
    kind: 'CloneSet',
    name: cs.metadata?.name ?? '',
    namespace: cs.metadata?.namespace ?? '',
    phase: plan.phase,
    revisions: { current: plan.currentRevision, update: plan.updateRevision, newRevision: !!plan.newRevision },
    replicas: { desired: replicas, pods: active.length },
    partition: {
      value: partitionValue,
      oldRevisionPods,
      expectedUpdated: replicas - oldRevisionPods,
      updatedNow: plan.status.updatedReplicas,
    },
    budget: {
      maxUnavailable: getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? '20%', replicas, false),
      maxSurge: getScaledValueFromIntOrPercent(rolling?.maxSurge ?? 0, replicas, true),
      unavailableNow: Math.max(0, active.length - plan.status.availableReplicas),
      surgeInUse: plan.diffs.useSurge,
      deleteReadyLimit: plan.diffs.deleteReadyLimit,
      scaleUpLimit: plan.diffs.scaleUpLimit,
      updateMaxUnavailable: plan.diffs.updateMaxUnavailable,
    },
    arithmetic: plan.diffs,
    creates: [...creates].map(([revision, count]) => ({ revision, count })),
    deletes: plan.deletePods
      .filter((d) => d.reason !== RECREATE_DELETE_REASON)
      .map((d) => ({ pod: d.pod, reason: d.reason, pvcs: d.pvcs })),
    inPlaceUpdates: plan.inPlaceUpdates.map((u) => ({ pod: u.pod, revision: u.revision })),
    recreateUpdates: [
      ...plan.deletePods.filter((d) => d.reason === RECREATE_DELETE_REASON).map((d) => ({ pod: d.pod, deletedNow: true })),
      ...plan.labelPatches.filter((p) => p.labels[SPECIFIED_DELETE_LABEL] === 'true').map((p) => ({ pod: p.pod })),
    ],
    lifecycle: lifecycleRows(plan.lifecycleTransitions),
    events: plan.events,
    paused: !!rolling?.paused,
  };
  const writes: PlannedWrites = {
    newRevision: plan.newRevision,
    revisionUpdate: plan.revisionUpdate,
    creates: plan.createPods,
    deletes: plan.deletePods.map((d) => d.pod),
    labelPatches: plan.labelPatches,
    inPlaceUpdates: plan.inPlaceUpdates,
    refreshes: plan.refreshes,
    lifecycleTransitions: plan.lifecycleTransitions,
    status: plan.status,
    requeueAfterMs: plan.requeueAfterMs,
  };
  return { report, writes };
}

/** The lifecycle state changes of a plan, as report rows. */
export const lifecycleRows = (transitions: readonly LifecycleTransition[]) =>
  transitions.filter((t) => t.stateChanged).map((t) => ({ pod: t.pod, to: `${t.from || '(none)'} → ${t.to}` }));

const KIND_TITLES: Record<string, string> = { StatefulSet: 'Advanced StatefulSet', DaemonSet: 'Advanced DaemonSet' };

export function renderReport(r: PlanReport): string {
  const lines: string[] = [];
  const title = KIND_TITLES[r.kind] ?? r.kind;
  lines.push(`${title} ${r.namespace}/${r.name}: next reconcile (${r.phase === 'none' ? 'nothing to do' : `${r.phase} phase`})`);
  lines.push(
    `revisions: current ${r.revisions.current}, update ${r.revisions.update}${r.revisions.newRevision ? ' (new: the change creates it)' : ''}`,
  );
  lines.push(`${r.kind === 'DaemonSet' ? 'nodes: desired' : 'replicas: desired'} ${r.replicas.desired}, pods ${r.replicas.pods}`);
  lines.push(
    `partition: ${r.partition.value} → ${r.partition.oldRevisionPods} pods kept at old revisions; ` +
      `${r.replicas.desired} - ${r.partition.oldRevisionPods} = ${r.partition.expectedUpdated} expected at the update revision, ${r.partition.updatedNow} now`,
  );
  lines.push(
    `budget: maxUnavailable ${r.budget.maxUnavailable} (${Math.min(r.budget.unavailableNow, r.budget.maxUnavailable)} in use, ` +
      `${Math.max(0, r.budget.maxUnavailable - r.budget.unavailableNow)} left), maxSurge ${r.budget.maxSurge} (${r.budget.surgeInUse} in use)`,
  );
  const d = r.arithmetic;
  if (d) {
    lines.push(
      `arithmetic: scaleUp ${d.scaleUpNum} (limit ${d.scaleUpLimit}), scaleDown ${d.scaleDownNum} (old revision ${d.scaleDownNumOldRevision}), ` +
        `deleteReadyLimit ${d.deleteReadyLimit}, update ${d.updateNum} (maxUnavailable left ${d.updateMaxUnavailable})`,
    );
  }
  if (r.paused) lines.push('paused: updates wait until `kubectl kruise rollout resume`');
  const rows: string[][] = [];
  for (const c of r.creates) {
    const where = c.pods ?? c.nodes?.map((n) => `on ${n}`);
    if (where) for (const w of where) rows.push(['create', w, `revision ${c.revision}`]);
    else rows.push(['create', `${c.count} pod(s)`, `revision ${c.revision}`]);
  }
  for (const x of r.deletes) rows.push(['delete', x.pod, x.reason]);
  for (const u of r.inPlaceUpdates) rows.push(['update in place', u.pod, `to revision ${u.revision}`]);
  for (const u of r.recreateUpdates) {
    rows.push([
      'recreate',
      u.pod,
      u.deletedNow ? 'deleted now; replaced next round' : 'marked specified-delete; deleted and replaced next round',
    ]);
  }
  for (const l of r.lifecycle) rows.push(['lifecycle', l.pod, l.to]);
  lines.push('');
  lines.push(rows.length ? table([['ACTION', 'POD', 'WHY'], ...rows]) : 'no pod is created, deleted or updated by the next reconcile');
  return lines.join('\n');
}
