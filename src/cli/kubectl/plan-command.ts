// `kubectl kruise rollout plan TYPE/NAME` for CloneSet, Advanced StatefulSet and Advanced
// DaemonSet: gathers the live workload and what its controller reads (owned pods, PVCs,
// ControllerRevisions, nodes), applies the previewed change in memory, and prints the plan of the
// controller's own planner (plan.ts, plan-advanced.ts) for the next reconcile, then the whole
// rollout round by round (plan-rollout.ts).
import { Command } from 'commander';
import type { CloneSet } from '../../apis/apps/cloneset.ts';
import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { Node, Pod, KubeObject } from '../../apis/core-objects.ts';
import { ControllerRevisions, Nodes, PersistentVolumeClaims, Pods } from '../../runtime/resources.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { forecastRollout, isPlanned, planRound, renderForecast, type PlannedKind, type PlanState } from './plan-rollout.ts';
import { applyOverrides, intOrPercent, renderReport, type PlanOverrides } from './plan.ts';
import { withSession } from './program.ts';
import { CliError, getTarget, isKruise, parseOutput, parseTarget, printData, write, type Session } from './session.ts';

const owned = (uid: string | undefined) => (o: KubeObject) =>
  o.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid) ?? false;

async function listOwned(session: Session, workload: KubeObject) {
  const namespace = workload.metadata.namespace;
  const isOwned = owned(workload.metadata.uid);
  const [pods, revisions] = await Promise.all([
    session.client.list<Pod>(Pods, { namespace }),
    session.client.list<ControllerRevision>(ControllerRevisions, { namespace }),
  ]);
  return { pods: pods.items.filter(isOwned), revisions: revisions.items.filter(isOwned) };
}

const listPVCs = (session: Session, namespace: string | undefined) =>
  session.client.list<PersistentVolumeClaim & KubeObject>(PersistentVolumeClaims, { namespace }).then((l) => l.items);

/** What the kind's controller reads for the workload, with the previewed change applied to it. */
export async function gatherPlanState(session: Session, kind: PlannedKind, live: KubeObject, o: PlanOverrides): Promise<PlanState> {
  const { pods, revisions } = await listOwned(session, live);
  const namespace = live.metadata.namespace;
  const workload = applyOverrides(live, o, kind);
  if (kind === 'CloneSet') {
    const isOwned = owned(live.metadata.uid);
    const pvcs = (await listPVCs(session, namespace)).filter((p) => isOwned(p) && !p.metadata.deletionTimestamp);
    const spread = ((workload as CloneSet).spec?.template?.spec?.topologySpreadConstraints?.length ?? 0) > 0;
    const nodes = spread ? (await session.client.list<Node & KubeObject>(Nodes)).items : [];
    return { kind, workload, pods, revisions, pvcs, nodes };
  }
  if (kind === 'StatefulSet') {
    // The controller's claims: `<template>-<set>-<ordinal>` in the set's namespace.
    const templates = (workload as StatefulSet).spec?.volumeClaimTemplates ?? [];
    const prefixes = templates.map((t) => `${t.metadata?.name ?? ''}-${live.metadata.name}-`);
    const pvcs = prefixes.length
      ? (await listPVCs(session, namespace)).filter((c) => prefixes.some((p) => (c.metadata.name ?? '').startsWith(p)))
      : [];
    return { kind, workload, pods, revisions, pvcs, nodes: [] };
  }
  const nodes = (await session.client.list<Node & KubeObject>(Nodes)).items;
  return { kind, workload, pods, revisions, pvcs: [], nodes };
}

export function planCommand(): Command {
  return new Command('plan')
    .description(
      "dry-run the controller's own planner (CloneSet, Advanced StatefulSet, Advanced DaemonSet) against the live objects: the pods the next reconcile creates, deletes (and why), updates in place or recreates, the budget and the partition arithmetic; then the whole rollout round by round, to the round where the partition stops it",
    )
    .argument('<resource...>', 'cloneset/NAME, asts/NAME or ads/NAME')
    .option('--set <container=image>', 'preview an image change (container=image, or image for every container); repeatable', collect, [])
    .option('--partition <n>', 'preview a partition (number or percent)')
    .option('--replicas <n>', 'preview a replica count (CloneSet, Advanced StatefulSet)')
    .option('--pods-to-delete <p1,p2>', 'preview adding pods to scaleStrategy.podsToDelete (CloneSet)')
    .option('--feature-gates <gates>', "the manager's --feature-gates, when they change the plan (e.g. PreparingUpdateAsUpdate=true)", '')
    .option('-o, --output <format>', 'json|yaml: the plan for scripts')
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const target = parseTarget(args);
        if (!isKruise(target.type) || !isPlanned(target.type.kind)) {
          throw new CliError(
            `rollout plan supports CloneSet, Advanced StatefulSet (asts) and Advanced DaemonSet (ads) (got ${target.type.kind} ${target.name})`,
          );
        }
        const output = parseOutput(opts.output);
        const overrides: PlanOverrides = {
          images: (opts.set as string[]).map((s) => (s.startsWith('image=') ? s.slice('image='.length) : s)),
          partition: opts.partition === undefined ? undefined : intOrPercent(String(opts.partition)),
          replicas: opts.replicas === undefined ? undefined : Number(opts.replicas),
          podsToDelete: opts.podsToDelete ? String(opts.podsToDelete).split(',').filter(Boolean) : undefined,
        };
        const live = await getTarget<KubeObject>(session, target);
        const state = await gatherPlanState(session, target.type.kind, live, overrides);
        const now = Date.now();
        const { report } = planRound(state, now, opts.featureGates);
        const rollout = forecastRollout(state, now, opts.featureGates);
        if (!printData({ ...report, rollout }, output)) write(renderReport(report) + '\n' + renderForecast(rollout, report));
      });
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
