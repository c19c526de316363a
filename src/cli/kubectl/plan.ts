// `kubectl kruise rollout plan cloneset/NAME`: what the CloneSet controller's next reconcile would
// do, computed by the controller's own pure planner (planCloneSet, src/controllers/cloneset/)
// against the live CloneSet, pods, PVCs and ControllerRevisions — with --set image=…,
// --partition, --replicas, --pods-to-delete previewing a change before it is applied.
import { Command } from 'commander';
import type { CloneSet } from '../../apis/apps/cloneset.ts';
import { SPECIFIED_DELETE_LABEL } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { resolveFeatureGates } from '../../apis/features.ts';
import { planCloneSet, type CloneSetPlan } from '../../controllers/cloneset/plan.ts';
import { ControllerRevisions, Nodes, PersistentVolumeClaims, Pods, type KubeObject } from '../../runtime/client.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from '../../util/intstr.ts';
import type { Labels } from '../../util/labelselector.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { CliError, getTarget, parseOutput, parseTarget, printData, table, write, type Session } from './session.ts';
import { withSession } from './program.ts';

export interface PlanOverrides {
  /** container=image, or a bare image for every container. */
  images?: string[];
  partition?: IntOrString;
  replicas?: number;
  podsToDelete?: string[];
}

const intOrPercent = (v: string): IntOrString => (/^\d+$/.test(v) ? Number(v) : v);

/** The CloneSet as it would be after the previewed change (the live object when there is none). */
export function applyOverrides(cs: CloneSet, o: PlanOverrides): CloneSet {
  const next = structuredClone(cs);
  const spec = next.spec!;
  for (const set of o.images ?? []) {
    const eq = set.indexOf('=');
    const [container, image] = eq < 0 ? ['*', set] : [set.slice(0, eq), set.slice(eq + 1)];
    const containers = [...(spec.template?.spec?.initContainers ?? []), ...(spec.template?.spec?.containers ?? [])];
    const matched = containers.filter((c) => container === '*' || c.name === container);
    if (matched.length === 0) throw new CliError(`unable to find container named "${container}" in CloneSet ${cs.metadata?.name}`);
    for (const c of matched) c.image = image;
  }
  if (o.partition !== undefined || o.replicas !== undefined) {
    spec.updateStrategy = { ...spec.updateStrategy };
    if (o.partition !== undefined) spec.updateStrategy.rollingUpdate = { ...spec.updateStrategy.rollingUpdate, partition: o.partition };
  }
  if (o.replicas !== undefined) spec.replicas = o.replicas;
  if (o.podsToDelete?.length) {
    spec.scaleStrategy = {
      ...spec.scaleStrategy,
      podsToDelete: [...new Set([...(spec.scaleStrategy?.podsToDelete ?? []), ...o.podsToDelete])],
    };
  }
  return next;
}

export interface PlanReport {
  cloneSet: string;
  namespace: string;
  phase: CloneSetPlan['phase'];
  revisions: { current: string; update: string; newRevision: boolean };
  replicas: { desired: number; pods: number };
  partition: { value: IntOrString; oldRevisionPods: number; expectedUpdated: number; updatedNow: number };
  budget: {
    maxUnavailable: number;
    maxSurge: number;
    unavailableNow: number;
    deleteReadyLimit: number;
    scaleUpLimit: number;
    updateMaxUnavailable: number;
  };
  arithmetic: CloneSetPlan['diffs'];
  creates: Array<{ revision: string; count: number }>;
  deletes: Array<{ pod: string; reason: string; pvcs: string[] }>;
  inPlaceUpdates: Array<{ pod: string; revision: string }>;
  recreateUpdates: Array<{ pod: string }>;
  lifecycle: Array<{ pod: string; to: string }>;
  events: CloneSetPlan['events'];
  paused: boolean;
}

/** Plan and report, in one pure step (the command only gathers the objects). */
export function planReport(input: {
  cloneSet: CloneSet;
  pods: Pod[];
  pvcs: PersistentVolumeClaim[];
  revisions: ControllerRevision[];
  nowMs: number;
  featureGates?: string;
  nodeLabels?: (node: string) => Labels | undefined;
}): PlanReport {
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
    randomId: () => `new${++created}`.padEnd(5, '-'),
    nodeLabels: input.nodeLabels,
  });
  const replicas = cs.spec?.replicas ?? 1;
  const rolling = cs.spec?.updateStrategy?.rollingUpdate;
  const partitionValue = rolling?.partition ?? 0;
  const oldRevisionPods = Math.min(replicas, getScaledValueFromIntOrPercent(partitionValue, replicas, true));
  const creates = new Map<string, number>();
  for (const c of plan.createPods) creates.set(c.revision, (creates.get(c.revision) ?? 0) + 1);
  const active = input.pods.filter((p) => !p.metadata.deletionTimestamp);
  return {
    cloneSet: cs.metadata?.name ?? '',
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
      deleteReadyLimit: plan.diffs.deleteReadyLimit,
      scaleUpLimit: plan.diffs.scaleUpLimit,
      updateMaxUnavailable: plan.diffs.updateMaxUnavailable,
    },
    arithmetic: plan.diffs,
    creates: [...creates].map(([revision, count]) => ({ revision, count })),
    deletes: plan.deletePods.map((d) => ({ pod: d.pod, reason: d.reason, pvcs: d.pvcs })),
    inPlaceUpdates: plan.inPlaceUpdates.map((u) => ({ pod: u.pod, revision: u.revision })),
    recreateUpdates: plan.labelPatches.filter((p) => p.labels[SPECIFIED_DELETE_LABEL] === 'true').map((p) => ({ pod: p.pod })),
    lifecycle: plan.lifecycleTransitions.filter((t) => t.stateChanged).map((t) => ({ pod: t.pod, to: `${t.from || '(none)'} → ${t.to}` })),
    events: plan.events,
    paused: !!rolling?.paused,
  };
}

export function renderReport(r: PlanReport): string {
  const lines: string[] = [];
  lines.push(`CloneSet ${r.namespace}/${r.cloneSet}: next reconcile (${r.phase === 'none' ? 'nothing to do' : `${r.phase} phase`})`);
  lines.push(
    `revisions: current ${r.revisions.current}, update ${r.revisions.update}${r.revisions.newRevision ? ' (new: the change creates it)' : ''}`,
  );
  lines.push(`replicas: desired ${r.replicas.desired}, pods ${r.replicas.pods}`);
  lines.push(
    `partition: ${r.partition.value} → ${r.partition.oldRevisionPods} pods kept at old revisions; ` +
      `${r.replicas.desired} - ${r.partition.oldRevisionPods} = ${r.partition.expectedUpdated} expected at the update revision, ${r.partition.updatedNow} now`,
  );
  const d = r.arithmetic;
  lines.push(
    `budget: maxUnavailable ${r.budget.maxUnavailable} (${Math.min(r.budget.unavailableNow, r.budget.maxUnavailable)} in use, ` +
      `${Math.max(0, r.budget.maxUnavailable - r.budget.unavailableNow)} left), maxSurge ${r.budget.maxSurge} (${d.useSurge} in use)`,
  );
  lines.push(
    `arithmetic: scaleUp ${d.scaleUpNum} (limit ${d.scaleUpLimit}), scaleDown ${d.scaleDownNum} (old revision ${d.scaleDownNumOldRevision}), ` +
      `deleteReadyLimit ${d.deleteReadyLimit}, update ${d.updateNum} (maxUnavailable left ${d.updateMaxUnavailable})`,
  );
  if (r.paused) lines.push('paused: updates wait until `kubectl kruise rollout resume`');
  const rows: string[][] = [];
  for (const c of r.creates) rows.push(['create', `${c.count} pod(s)`, `revision ${c.revision}`]);
  for (const x of r.deletes) rows.push(['delete', x.pod, x.reason]);
  for (const u of r.inPlaceUpdates) rows.push(['update in place', u.pod, `to revision ${u.revision}`]);
  for (const u of r.recreateUpdates) rows.push(['recreate', u.pod, 'marked specified-delete; deleted and replaced next round']);
  for (const l of r.lifecycle) rows.push(['lifecycle', l.pod, l.to]);
  lines.push('');
  lines.push(rows.length ? table([['ACTION', 'POD', 'WHY'], ...rows]) : 'no pod is created, deleted or updated by the next reconcile');
  return lines.join('\n');
}

const owned = (uid: string | undefined) => (o: KubeObject) =>
  o.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid) ?? false;

async function gather(session: Session, cs: CloneSet & KubeObject) {
  const namespace = cs.metadata.namespace;
  const isOwned = owned(cs.metadata.uid);
  const [pods, pvcs, revisions] = await Promise.all([
    session.client.list<Pod>(Pods, { namespace }),
    session.client.list<PersistentVolumeClaim & KubeObject>(PersistentVolumeClaims, { namespace }),
    session.client.list<ControllerRevision>(ControllerRevisions, { namespace }),
  ]);
  let nodeLabels: ((node: string) => Labels | undefined) | undefined;
  if ((cs.spec?.template?.spec?.topologySpreadConstraints?.length ?? 0) > 0) {
    const nodes = await session.client.list<KubeObject>(Nodes);
    const byName = new Map(nodes.items.map((n) => [n.metadata.name, n.metadata.labels]));
    nodeLabels = (node) => byName.get(node);
  }
  return {
    pods: pods.items.filter(isOwned),
    pvcs: pvcs.items.filter((p) => isOwned(p) && !p.metadata.deletionTimestamp),
    revisions: revisions.items.filter(isOwned),
    nodeLabels,
  };
}

export function planCommand(): Command {
  return new Command('plan')
    .description(
      "dry-run the CloneSet controller's own planner against the live objects: the pods the next reconcile creates, deletes (and why), updates in place or recreates, the budget and the partition arithmetic",
    )
    .argument('<resource...>', 'cloneset/NAME')
    .option('--set <container=image>', 'preview an image change (container=image, or image for every container); repeatable', collect, [])
    .option('--partition <n>', 'preview a partition (number or percent)')
    .option('--replicas <n>', 'preview a replica count')
    .option('--pods-to-delete <p1,p2>', 'preview adding pods to scaleStrategy.podsToDelete')
    .option('--feature-gates <gates>', "the manager's --feature-gates, when they change the plan (e.g. PreparingUpdateAsUpdate=true)", '')
    .option('-o, --output <format>', 'json|yaml: the plan for scripts')
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const target = parseTarget(args);
        if (target.type.kind !== 'CloneSet')
          throw new CliError(`rollout plan supports CloneSet only (got ${target.type.kind} ${target.name})`);
        const output = parseOutput(opts.output);
        const images = (opts.set as string[]).map((s) => (s.startsWith('image=') ? s.slice('image='.length) : s));
        const live = await getTarget<CloneSet & KubeObject>(session, target);
        const cloneSet = applyOverrides(live, {
          images,
          partition: opts.partition === undefined ? undefined : intOrPercent(String(opts.partition)),
          replicas: opts.replicas === undefined ? undefined : Number(opts.replicas),
          podsToDelete: opts.podsToDelete ? String(opts.podsToDelete).split(',').filter(Boolean) : undefined,
        });
        const objects = await gather(session, live);
        const report = planReport({ cloneSet, ...objects, nowMs: Date.now(), featureGates: opts.featureGates });
        if (!printData(report, output)) write(renderReport(report));
      });
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
