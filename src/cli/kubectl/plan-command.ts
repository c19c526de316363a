// `kubectl kruise rollout plan TYPE/NAME` for CloneSet, Advanced StatefulSet and Advanced
// DaemonSet: gathers the live workload and what its controller reads (owned pods, PVCs,
// ControllerRevisions, nodes), applies the previewed change in memory, and prints the plan of the
// controller's own planner (plan.ts, plan-advanced.ts).
import { Command } from 'commander';
import type { CloneSet } from '../../apis/apps/cloneset.ts';
import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { Node, Pod, KubeObject } from '../../apis/core-objects.ts';
import { ControllerRevisions, Nodes, PersistentVolumeClaims, Pods } from '../../runtime/resources.ts';
import type { Labels } from '../../util/labelselector.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { daemonSetPlanReport, statefulSetPlanReport } from './plan-advanced.ts';
import { applyOverrides, intOrPercent, planReport, renderReport, type PlanOverrides, type PlanReport } from './plan.ts';
import { withSession } from './program.ts';
import { CliError, getTarget, isKruise, parseOutput, parseTarget, printData, write, type Session } from './session.ts';

const PLANNED_KINDS = ['CloneSet', 'StatefulSet', 'DaemonSet'];

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

async function planOf(session: Session, kind: string, live: KubeObject, o: PlanOverrides, nowMs: number, featureGates: string) {
  const { pods, revisions } = await listOwned(session, live);
  const namespace = live.metadata.namespace;
  if (kind === 'CloneSet') {
    const cloneSet = applyOverrides(live as CloneSet & KubeObject, o);
    const isOwned = owned(live.metadata.uid);
    const pvcs = (await listPVCs(session, namespace)).filter((p) => isOwned(p) && !p.metadata.deletionTimestamp);
    let nodeLabels: ((node: string) => Labels | undefined) | undefined;
    if ((cloneSet.spec?.template?.spec?.topologySpreadConstraints?.length ?? 0) > 0) {
      const nodes = await session.client.list<KubeObject>(Nodes);
      const byName = new Map(nodes.items.map((n) => [n.metadata.name, n.metadata.labels]));
      nodeLabels = (node) => byName.get(node);
    }
    return planReport({ cloneSet, pods, pvcs, revisions, nodeLabels, nowMs, featureGates });
  }
  if (kind === 'StatefulSet') {
    const set = applyOverrides(live as StatefulSet & KubeObject, o, kind);
    // The controller's claims: `<template>-<set>-<ordinal>` in the set's namespace.
    const prefixes = (set.spec?.volumeClaimTemplates ?? []).map((t) => `${t.metadata?.name ?? ''}-${live.metadata.name}-`);
    const pvcs = prefixes.length
      ? (await listPVCs(session, namespace)).filter((c) => prefixes.some((p) => (c.metadata.name ?? '').startsWith(p)))
      : [];
    return statefulSetPlanReport({ set, pods, pvcs, revisions, nowMs, featureGates });
  }
  const daemonSet = applyOverrides(live as DaemonSet & KubeObject, o, kind);
  const nodes = (await session.client.list<Node & KubeObject>(Nodes)).items;
  return daemonSetPlanReport({ daemonSet, pods, nodes, revisions, nowMs, featureGates });
}

export function planCommand(): Command {
  return new Command('plan')
    .description(
      "dry-run the controller's own planner (CloneSet, Advanced StatefulSet, Advanced DaemonSet) against the live objects: the pods the next reconcile creates, deletes (and why), updates in place or recreates, the budget and the partition arithmetic",
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
        if (!isKruise(target.type) || !PLANNED_KINDS.includes(target.type.kind)) {
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
        const report: PlanReport = await planOf(session, target.type.kind, live, overrides, Date.now(), opts.featureGates);
        if (!printData(report, output)) write(renderReport(report));
      });
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
