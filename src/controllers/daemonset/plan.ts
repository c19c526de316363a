// One Advanced DaemonSet reconcile as a pure plan (behaviour spec §5.2; upstream
// daemonset_controller.go syncDaemonSet): revisions, in-place refreshes, `manage` (manage.ts: one
// pod per eligible node, failed-pod backoff, misscheduled pods, progressive creation), burstReplicas,
// then — when manage changed nothing — the rolling update (update.ts: partition, selector,
// maxUnavailable or maxSurge, in place where possible), history clean-up and status (status.ts).

import type { DaemonSet, DaemonSetStatus } from '../../apis/apps/daemonset.ts';
import { CONTROLLER_REVISION_HASH_LABEL, LifecycleState } from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { planWorkloadImagePreDownload, type PreDownloadPlan } from '../../util/imagepredownload.ts';
import { planInPlaceRefresh } from '../../util/inplaceupdate.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { isPodHooked, planLifecycleTransition } from '../../util/lifecycle.ts';
import { nodeShouldRunDaemonPod } from '../../util/nodefit.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { getNodesNeedingPods, manage, newDaemonPod } from './manage.ts';
import { hasInPlaceGate, isPodUpdated, nodeToDaemonPods, partitionOf, podName, rollingUpdateOf } from './pods.ts';
import { chooseRevisions, revisionHash, revisionsToTruncate } from './revisions.ts';
import { computeStatus, daemonSetStatusChanged } from './status.ts';
import { rollingUpdate } from './update.ts';
import { randomString } from '../../util/rand.ts';
import type { PlanInput, DaemonSetPlan } from './types.ts';

export type { PlanInput, DaemonSetPlan } from './types.ts';

/** Upstream BurstReplicas: pods created (and deleted) per reconcile unless spec.burstReplicas says. */
export const DEFAULT_BURST_REPLICAS = 250;

const randomSuffix = () => randomString(5);

/**
 * The status of a round that waits for our own pod writes to be observed (upstream syncDaemonSet's
 * unsatisfied-expectations branch): the counts as the cache has them, observedGeneration left as it
 * was (the controller has not acted on the generation); undefined when nothing changed.
 */
export function planWaitingStatus(input: PlanInput): DaemonSetStatus | undefined {
  const prev = input.daemonSet.status;
  const status: DaemonSetStatus = { ...planDaemonSet(input).status, observedGeneration: prev?.observedGeneration };
  return daemonSetStatusChanged(prev, status) ? status : undefined;
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
  return planWorkloadImagePreDownload({
    kind: 'DaemonSet',
    workload: ds,
    current,
    update,
    rollout: {
      replicas: desired,
      partition: partitionOf(ds, desired),
      maxUnavailable: getScaledValueFromIntOrPercent(ru?.maxUnavailable ?? 1, desired, false),
      recreate: ru?.rollingUpdateType !== 'InPlaceIfPossible',
      updatedReadyReplicas: ds.status?.updateRevision === hash ? ds.status.updatedNumberScheduled : 0,
    },
    ownedJobs: jobs,
    envFromMetadata: features.InPlaceUpdateEnvFromMetadata,
    verticalScaling: features.InPlaceWorkloadVerticalScaling,
  });
}
