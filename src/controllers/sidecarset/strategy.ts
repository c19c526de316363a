// The SidecarSet's cold upgrade (upstream sidecarset_strategy.go and updatePodSidecarAndHash, spec
// §6.3 step 4): which pods may be upgraded in place this round (selector, priority, scatter,
// partition, maxUnavailable), which cannot be (more than images changed), the pod each upgrade
// writes, and its SidecarSetUpgradable condition.
import type { UpdateScatterStrategy } from '../../apis/apps/pub.ts';
import type { Pod, PodCondition } from '../../apis/core-objects.ts';
import {
  CONDITION_SIDECARSET_UPGRADABLE,
  SIDECARSET_HASH_ANNOTATION,
  SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
  SIDECARSET_INJECTED_LIST_ANNOTATION,
  SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX,
  SIDECARSET_VERSION_ANNOTATION_PREFIX,
} from '../../apis/constants.ts';
import { calculatePartitionReplicas, getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { matchesLabelSelector } from '../../util/labelselector.ts';
import { compareActivePods } from '../../util/pod.ts';
import { marshalGoJSON } from '../../util/revision.ts';
import {
  formatUpgradeSpecs,
  hotUpgradeContainerNames,
  isHotUpgradeContainer,
  isPodSidecarUpdated,
  metaTime,
  parseUpgradeSpecs,
  patchPodMetadata,
  podSidecarSetHashWithoutImage,
  sidecarContainerNamesInPod,
  sidecarListOf,
  sidecarSetHashOf,
  sidecarSetHashWithoutImageOf,
  type StoredSidecarSet,
} from '../../util/sidecarset.ts';
import { sortByPriority, sortByScatter } from '../../util/updatesort.ts';
import { hotUpgradeContainerToUpgrade } from './hotupgrade.ts';
import { isPodStateConsistent, isSidecarPodReady, recordLastContainerStatuses } from './pod-state.ts';
import { isJsonObject } from '../../apis/json.ts';

export interface PodUpgrade {
  pod: Pod;
  /** The pod with new sidecar images and annotations (PUT with its resourceVersion). */
  updated: Pod;
}

/**
 * IsSidecarSetUpgradable: only images changed, and no ready sidecar is still mid-update.
 * `sidecars`: each sidecar container name on its own, sorted (built once per round).
 */
function upgradability(
  pod: Pod,
  s: StoredSidecarSet,
  sidecars: ReadonlyArray<ReadonlySet<string>>,
): { canUpgrade: boolean; consistent: boolean } {
  if (podSidecarSetHashWithoutImage(s.metadata.name, pod) !== sidecarSetHashWithoutImageOf(s))
    return { canUpgrade: false, consistent: false };
  const statuses = pod.status?.containerStatuses ?? [];
  for (const only of sidecars) {
    const ready = statuses.find((cs) => only.has(cs.name))?.ready;
    if (ready && !isPodStateConsistent(pod, s, only)) return { canUpgrade: true, consistent: false };
  }
  return { canUpgrade: true, consistent: true };
}

/** `value: "*"` in a scatter term stands for every value the pods carry. */
function expandScatter(scatter: UpdateScatterStrategy | undefined, pods: readonly Pod[]): UpdateScatterStrategy | undefined {
  if (!scatter) return undefined;
  const out: UpdateScatterStrategy = [];
  const add = (t: { key: string; value: string }) => {
    if (!out.some((x) => x.key === t.key && x.value === t.value)) out.push(t);
  };
  for (const term of scatter) {
    if (term.value !== '*') add(term);
    else for (const p of pods) if (p.metadata.labels?.[term.key] !== undefined) add({ key: term.key, value: p.metadata.labels[term.key]! });
  }
  return out;
}

/** GetNextUpgradePods: which pods to upgrade now, and which cannot be. */
export function nextUpgradePods(s: StoredSidecarSet, pods: readonly Pod[]): { upgrade: Pod[]; notUpgradable: Pod[] } {
  const strategy = s.spec?.updateStrategy ?? {};
  const selected = (p: Pod) => {
    if (!strategy.selector) return true;
    try {
      return matchesLabelSelector(strategy.selector, p.metadata.labels);
    } catch {
      return false;
    }
  };
  let wait: number[] = [];
  const notUpgradable: Pod[] = [];
  const sidecars = [...sidecarContainerNamesInPod(s)].sort().map((name) => new Set([name]));
  pods.forEach((p, i) => {
    if (isPodSidecarUpdated(s, p) || !selected(p)) return;
    const { canUpgrade, consistent } = upgradability(p, s, sidecars);
    if (canUpgrade && consistent) wait.push(i);
    else if (!canUpgrade) notUpgradable.push(p);
  });
  wait.sort((a, b) => compareActivePods(pods[a]!, pods[b]!) || 0);
  wait = sortByPriority(strategy.priorityStrategy, pods, wait);
  wait = sortByScatter(expandScatter(strategy.scatterStrategy, pods), pods, wait);
  const count = upgradeCount(s, wait, pods);
  return { upgrade: wait.slice(0, count).map((i) => pods[i]!), notUpgradable };
}

/** calculateUpgradeCount (spec §6.3 step 4). */
export function upgradeCount(s: StoredSidecarSet, wait: readonly number[], pods: readonly Pod[]): number {
  const strategy = s.spec?.updateStrategy ?? {};
  const partition = strategy.partition != null ? calculatePartitionReplicas(strategy.partition, pods.length) : 0;
  if (wait.length - partition <= 0) return 0;
  const candidates = wait.slice(0, wait.length - partition);
  const maxUnavailable = getScaledValueFromIntOrPercent(strategy.maxUnavailable ?? 1, pods.length, true);
  let unavailable = pods.filter((p) => isPodSidecarUpdated(s, p) && (!isPodStateConsistent(p, s) || !isSidecarPodReady(p, s))).length;
  let count = 0;
  for (const i of candidates) {
    if (!isSidecarPodReady(pods[i]!, s)) {
      count++;
      continue;
    }
    if (unavailable >= maxUnavailable) break;
    unavailable++;
    count++;
  }
  return count;
}

/**
 * The pod after an in-place upgrade (updatePodSidecarAndHash): new sidecar images, this
 * SidecarSet's hash record, the imageIDs the changed containers ran before (to tell when they
 * restarted), the injected list if missing, and patchPodMetadata. A hot-upgrade sidecar changes
 * its idle container (hotUpgradeContainerToUpgrade), with the SidecarSet's resourceVersion as its
 * version; kruise.io/sidecarset-working-hotupgrade-container still names the old one, which keeps
 * working until the new one is ready (resetHotUpgradedPod switches them, spec §6.3 step 5).
 */
export function upgradedPod(pod: Pod, s: StoredSidecarSet, now: Date, matchingSidecarSetNames: () => string[]): Pod {
  const out = structuredClone(pod);
  const timestamp = metaTime(now);
  const annotations = (out.metadata.annotations ??= {});
  const changed: string[] = [];
  const version = s.metadata.resourceVersion ?? '';
  for (const sidecar of s.spec?.containers ?? []) {
    const hot = isHotUpgradeContainer(sidecar);
    const { upgrade, other } = hot ? hotUpgradeContainerToUpgrade(sidecar, out, s) : { upgrade: sidecar.name, other: sidecar.name };
    // In-place upgrades change images only; nothing to do when the running one has it already.
    if (out.spec?.containers.find((x) => x.name === other)?.image === sidecar.image) continue;
    const c = out.spec?.containers.find((x) => x.name === upgrade);
    if (!c) continue;
    c.image = sidecar.image;
    changed.push(c.name);
    if (!hot) continue;
    const older = hotUpgradeContainerNames(sidecar.name).find((n) => n !== upgrade)!;
    annotations[`${SIDECARSET_VERSION_ANNOTATION_PREFIX}${upgrade}`] = version;
    annotations[`${SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX}${upgrade}`] =
      annotations[`${SIDECARSET_VERSION_ANNOTATION_PREFIX}${older}`] ?? '';
    annotations[`${SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX}${older}`] = version;
  }
  const hashes = parseUpgradeSpecs(annotations[SIDECARSET_HASH_ANNOTATION]);
  hashes[s.metadata.name] = {
    updateTimestamp: timestamp,
    hash: sidecarSetHashOf(s),
    sidecarSetName: s.metadata.name,
    sidecarList: sidecarListOf(s),
    ...(s.status?.latestRevision ? { controllerRevision: s.status.latestRevision } : {}),
  };
  annotations[SIDECARSET_HASH_ANNOTATION] = formatUpgradeSpecs(hashes);
  if (!annotations[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION]) {
    annotations[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION] = formatUpgradeSpecs({
      [s.metadata.name]: {
        updateTimestamp: timestamp,
        hash: sidecarSetHashWithoutImageOf(s),
        sidecarSetName: s.metadata.name,
        sidecarList: sidecarListOf(s),
      },
    });
  }
  recordLastContainerStatuses(out, s, changed, timestamp);
  if (!annotations[SIDECARSET_INJECTED_LIST_ANNOTATION])
    annotations[SIDECARSET_INJECTED_LIST_ANNOTATION] = matchingSidecarSetNames().join(',');
  patchPodMetadata(annotations, s.spec?.patchPodMetadata ?? []);
  delete out.status;
  return out;
}

/**
 * SidecarSetUpgradable on a pod: its message is a JSON map SidecarSet name → upgradable; True
 * (AllSidecarsetUpgradable) when every entry is, else False (UpdateImmutableField). Undefined when
 * nothing changes.
 */
export function upgradableCondition(pod: Pod, sidecarSetName: string, upgradable: boolean, now: Date): PodCondition[] | undefined {
  const conditions = pod.status?.conditions ?? [];
  const old = conditions.find((c) => c.type === CONDITION_SIDECARSET_UPGRADABLE);
  let kv: Record<string, unknown> = {};
  if (old?.message) {
    try {
      const parsed = JSON.parse(old.message) as unknown;
      if (isJsonObject(parsed)) kv = parsed;
    } catch {
      kv = {};
    }
  }
  kv[sidecarSetName] = upgradable;
  const all = Object.values(kv).every((v) => v !== false);
  const status = all ? 'True' : 'False';
  const reason = all ? 'AllSidecarsetUpgradable' : 'UpdateImmutableField';
  const message = marshalGoJSON(kv);
  if (old && old.status === status && old.reason === reason && old.message === message) return undefined;
  const next: PodCondition = {
    type: CONDITION_SIDECARSET_UPGRADABLE,
    status,
    reason,
    message,
    lastProbeTime: null,
    lastTransitionTime: old && old.status === status ? old.lastTransitionTime : metaTime(now),
  } as PodCondition;
  return [...conditions.filter((c) => c !== old), next];
}
