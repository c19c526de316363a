// The SidecarSet controller's decisions (upstream pkg/controller/sidecarset: processor + strategy;
// spec §6.3), as a pure function of what the caches show: which pods it manages, the
// ControllerRevision of its current spec (revisions.ts), its status, the hot upgrades to switch
// (hotupgrade.ts) and which pods get their sidecars upgraded in place this round (strategy.ts).
import type { SidecarSet, SidecarSetStatus } from '../../apis/apps/sidecarset.ts';
import type { Pod, PodCondition } from '../../apis/core-objects.ts';
import { isPodActive } from '../../util/pod.ts';
import {
  hotUpgradeContainerNames,
  hotUpgradeWorkInfo,
  injectedSidecarSetNames,
  isHotUpgradeContainer,
  isPodSidecarUpdated,
  podMatchesSidecarSet,
  type StoredSidecarSet,
} from '../../util/sidecarset.ts';
import { isHotUpgradeReadyToReset, resetHotUpgradedPod } from './hotupgrade.ts';
import { isPodStateConsistent, isSidecarPodReady } from './pod-state.ts';
import { planRevisions, type RevisionPlan } from './revisions.ts';
import { nextUpgradePods, upgradableCondition, upgradedPod, type PodUpgrade } from './strategy.ts';
import type { SidecarSetObserved } from './types.ts';

export type { SidecarSetObserved } from './types.ts';

export interface SidecarSetPlan {
  revision: RevisionPlan;
  /** undefined: unchanged. */
  status?: SidecarSetStatus;
  /**
   * Hot upgrades whose new container is consistent and ready: it becomes the working one and the
   * old container goes back to hotUpgradeEmptyImage, in one write. Written before the upgrades.
   */
  resets: PodUpgrade[];
  upgrades: PodUpgrade[];
  /** Pods whose SidecarSetUpgradable condition changes, with the new conditions. */
  conditions: Array<{ pod: Pod; conditions: PodCondition[] }>;
  /** Pods that cannot be upgraded in place this round (non-image fields changed). */
  notUpgradable: number;
}

/** The pods the SidecarSet manages: active, injected by it, still carrying its sidecars. */
export function managedPods(o: Pick<SidecarSetObserved, 'sidecarSet' | 'pods' | 'namespaces'>): Pod[] {
  const s = o.sidecarSet;
  return o.pods.filter(
    (p) =>
      isPodActive(p) &&
      podMatchesSidecarSet(p, s, o.namespaces.get(p.metadata.namespace ?? '')) &&
      injectedSidecarSetNames(p).includes(s.metadata.name) &&
      isPodConsistentWithSidecarSet(p, s),
  );
}

function isPodConsistentWithSidecarSet(pod: Pod, s: SidecarSet): boolean {
  const containers = pod.spec?.containers ?? [];
  const has = (name: string) => containers.some((c) => c.name === name);
  let work: Record<string, string> | undefined;
  return (s.spec?.containers ?? []).every((c) => {
    if (!isHotUpgradeContainer(c)) return has(c.name);
    work ??= hotUpgradeWorkInfo(pod);
    return c.name in work && hotUpgradeContainerNames(c.name).every(has);
  });
}

export function calculateStatus(s: StoredSidecarSet, pods: readonly Pod[], latestRevision: string): SidecarSetStatus {
  let updated = 0;
  let ready = 0;
  let updatedReady = 0;
  for (const p of pods) {
    const u = isPodSidecarUpdated(s, p);
    if (u) updated++;
    if (isPodStateConsistent(p, s) && isSidecarPodReady(p, s)) {
      ready++;
      if (u) updatedReady++;
    }
  }
  return {
    observedGeneration: s.metadata.generation,
    matchedPods: pods.length,
    updatedPods: updated,
    readyPods: ready,
    updatedReadyPods: updatedReady,
    latestRevision,
    collisionCount: s.status?.collisionCount ?? 0,
  };
}

function statusChanged(old: SidecarSetStatus | undefined, next: SidecarSetStatus): boolean {
  return (
    (next.observedGeneration ?? 0) > (old?.observedGeneration ?? 0) ||
    next.matchedPods !== old?.matchedPods ||
    next.updatedPods !== old?.updatedPods ||
    next.readyPods !== old?.readyPods ||
    next.updatedReadyPods !== (old?.updatedReadyPods ?? 0) ||
    next.latestRevision !== old?.latestRevision ||
    next.collisionCount !== old?.collisionCount
  );
}

/** One round (UpdateSidecarSet): revisions, status, then the upgrades the strategy allows. */
export function planSidecarSet(o: SidecarSetObserved, matchingSidecarSetNames: (pod: Pod) => string[] = () => []): SidecarSetPlan {
  const s = o.sidecarSet;
  const pods = managedPods(o);
  const revision = planRevisions(o, pods);
  const status = calculateStatus(s, pods, revision.latestName);
  const plan: SidecarSetPlan = {
    revision,
    status: statusChanged(s.status, status) ? status : undefined,
    resets: [],
    upgrades: [],
    conditions: [],
    notUpgradable: 0,
  };
  const current: StoredSidecarSet = { ...s, status: { ...status } };
  // Finished hot upgrades are reset whatever the strategy says (even NotUpdate or paused).
  for (const p of pods)
    if (isHotUpgradeReadyToReset(p, current)) plan.resets.push({ pod: p, updated: resetHotUpgradedPod(p, current, o.now) });
  const strategy = s.spec?.updateStrategy ?? {};
  if (strategy.type === 'NotUpdate' || status.updatedPods >= status.matchedPods || strategy.paused) return plan;
  const reset = new Set(plan.resets.map((r) => r.pod));
  // A pod reset this round is written once; the next round (on its event) upgrades it.
  const { upgrade: chosen, notUpgradable } = nextUpgradePods(current, pods);
  const upgrade = chosen.filter((p) => !reset.has(p));
  plan.notUpgradable = notUpgradable.length;
  for (const p of notUpgradable) {
    const conditions = upgradableCondition(p, s.metadata.name, false, o.now);
    if (conditions) plan.conditions.push({ pod: p, conditions });
  }
  for (const p of upgrade) {
    plan.upgrades.push({ pod: p, updated: upgradedPod(p, current, o.now, () => matchingSidecarSetNames(p)) });
    const conditions = upgradableCondition(p, s.metadata.name, true, o.now);
    if (conditions) plan.conditions.push({ pod: p, conditions });
  }
  return plan;
}
