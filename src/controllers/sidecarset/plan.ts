// The SidecarSet controller's decisions (upstream pkg/controller/sidecarset: processor + strategy;
// spec §6.3), as a pure function of what the caches show: which pods it manages, the
// ControllerRevision of its current spec (and the history to trim), its status, and which pods get
// their sidecars upgraded in place this round (partition, maxUnavailable, selector, priority,
// scatter, paused, NotUpdate).
import type { SidecarContainer, SidecarSet, SidecarSetStatus } from '../../apis/apps/sidecarset.ts';
import type { UpdateScatterStrategy } from '../../apis/apps/pub.ts';
import type { ControllerRevision, Namespace, Pod, PodCondition } from '../../apis/core-objects.ts';
import {
  CONDITION_SIDECARSET_UPGRADABLE,
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_HASH_ANNOTATION,
  SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
  SIDECARSET_INJECTED_LIST_ANNOTATION,
  SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION,
  SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX,
  SIDECARSET_VERSION_ANNOTATION_PREFIX,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION,
} from '../../apis/constants.ts';
import { calculatePartitionReplicas, getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { matchesLabelSelector } from '../../util/labelselector.ts';
import { compareActivePods, isPodActive, isRunningAndReady } from '../../util/pod.ts';
import { CONTROLLER_REVISION_HASH_KEY, hashControllerRevision, marshalGoJSON } from '../../util/revision.ts';
import {
  formatUpgradeSpecs,
  hotUpgradeContainerNames,
  hotUpgradeWorkInfo,
  injectedSidecarSetNames,
  isHotUpgradeContainer,
  isPodSidecarUpdated,
  isSidecarUpdateCompleted,
  metaTime,
  parseUpgradeSpecs,
  podHotUpgradeContainers,
  podMatchesSidecarSet,
  podSidecarSetControllerRevision,
  podSidecarSetHashWithoutImage,
  revisionLabels,
  sidecarContainerNamesInPod,
  sidecarListOf,
  sidecarSetHashOf,
  sidecarSetHashWithoutImageOf,
  sidecarSetRevisionData,
  sidecarSetRevisionName,
  sidecarUpdateStatesOf,
  type SidecarUpdateState,
  type StoredSidecarSet,
} from '../../util/sidecarset.ts';
import { sortByPriority, sortByScatter } from '../../util/updatesort.ts';

export interface SidecarSetObserved {
  sidecarSet: StoredSidecarSet;
  /** Pods the selector picks, in every namespace (the planner applies namespaceSelector). */
  pods: readonly Pod[];
  namespaces: ReadonlyMap<string, Pick<Namespace, 'metadata'>>;
  /** Revisions labelled kruise.io/sidecarset-name=<name> in the manager's namespace. */
  revisions: readonly ControllerRevision[];
  /** The manager's namespace, where revisions live. */
  revisionNamespace: string;
  now: Date;
}

export interface RevisionPlan {
  /** The revision of the current spec: an existing one (maybe renumbered) or one to create. */
  latestName: string;
  create?: ControllerRevision;
  /** An equal older revision to renumber as the newest. */
  renumber?: { name: string; revision: number };
  /** customVersion label to set on the latest revision. */
  customVersionLabel?: string;
  /** Old revisions past revisionHistoryLimit that no pod uses. */
  delete: string[];
}

export interface PodUpgrade {
  pod: Pod;
  /** The pod with new sidecar images and annotations (PUT with its resourceVersion). */
  updated: Pod;
}

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

/** Running and ready, and every idle hot-upgrade container runs the empty image (commonControl.IsPodReady). */
export function isSidecarPodReady(pod: Pod, s: SidecarSet): boolean {
  for (const c of s.spec?.containers ?? []) {
    if (!isHotUpgradeContainer(c)) continue;
    const { other } = podHotUpgradeContainers(c.name, pod);
    const empty = c.upgradeStrategy?.hotUpgradeEmptyImage;
    if (empty && pod.spec?.containers.find((x) => x.name === other)?.image !== empty) return false;
  }
  return isRunningAndReady(pod);
}

const DIGEST = /@sha256:[a-f0-9]{64}$/;

/**
 * Whether the sidecar containers run what the spec says (IsPodStateConsistent): every container
 * has a status, and each sidecar either runs its digest image or has left the imageID recorded
 * when its image was last changed (kruise.io/sidecarset-inplace-update-state).
 */
export function isPodStateConsistent(pod: Pod, s: StoredSidecarSet, only?: ReadonlySet<string>): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  if ((pod.spec?.containers.length ?? 0) !== statuses.length) return false;
  const sidecars = only?.size ? only : sidecarContainerNamesInPod(s);
  let allDigests = true;
  for (const c of pod.spec?.containers ?? []) {
    if (!sidecars.has(c.name)) continue;
    if (!c.image || !DIGEST.test(c.image)) {
      allDigests = false;
      break;
    }
    const cs = statuses.find((x) => x.name === c.name);
    if (!cs || !cs.imageID?.endsWith(c.image.slice(c.image.indexOf('@') + 1))) return false;
  }
  if (allDigests) return true;
  return isSidecarUpdateCompleted(pod, [s.metadata.name], sidecars);
}

/** map[string]*InPlaceUpdateState as Go marshals it (sorted names; revision, updateTimestamp, lastContainerStatuses). */
function formatUpdateStates(states: Record<string, SidecarUpdateState>): string {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(states)) {
    out[name] = { revision: s.revision, updateTimestamp: s.updateTimestamp, lastContainerStatuses: s.lastContainerStatuses };
  }
  // marshalGoJSON sorts every object's keys; the state's own fields must keep Go's order.
  const names = Object.keys(out).sort();
  return `{${names
    .map((n) => {
      const s = states[n]!;
      return `${marshalGoJSON(n)}:{"revision":${marshalGoJSON(s.revision)},"updateTimestamp":${marshalGoJSON(s.updateTimestamp)},"lastContainerStatuses":${marshalGoJSON(s.lastContainerStatuses)}}`;
    })
    .join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// Revisions

function sortRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort((a, b) => a.revision - b.revision || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}

/** registerLatestRevision + truncateHistory (spec §6.3 step 1). */
export function planRevisions(o: SidecarSetObserved, pods: readonly Pod[]): RevisionPlan {
  const s = o.sidecarSet;
  const revisions = sortRevisions(o.revisions);
  const data = marshalGoJSON(sidecarSetRevisionData(s));
  const next = (revisions.at(-1)?.revision ?? 0) + 1;
  const equal = revisions.filter((r) => marshalGoJSON(r.data) === data);
  const plan: RevisionPlan = { latestName: '', delete: [] };
  let kept = revisions;
  if (equal.length && equal.at(-1) === revisions.at(-1)) {
    plan.latestName = revisions.at(-1)!.metadata.name!;
  } else if (equal.length) {
    const reuse = equal.at(-1)!;
    plan.latestName = reuse.metadata.name!;
    plan.renumber = { name: plan.latestName, revision: next };
    kept = [...revisions.filter((r) => r !== reuse), { ...reuse, revision: next }];
  } else {
    // Upstream always hashes with a collision count (0 until a collision), never without one.
    const collisionCount = s.status?.collisionCount ?? 0;
    const name = sidecarSetRevisionName(s, collisionCount);
    plan.latestName = name;
    const annotations: Record<string, string> = { ...s.metadata.annotations };
    plan.create = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: o.revisionNamespace,
        labels: { ...revisionLabels(s), [CONTROLLER_REVISION_HASH_KEY]: hashControllerRevision(data, collisionCount) },
        annotations,
        ownerReferences: [
          {
            apiVersion: 'apps.kruise.io/v1beta1',
            kind: 'SidecarSet',
            name: s.metadata.name,
            uid: s.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      // Go's bytes (sorted keys): OpenKruise compares revision data byte for byte (EqualRevision).
      data: JSON.parse(data),
      revision: next,
    };
    kept = [...revisions, plan.create];
  }
  const customVersion = s.spec?.customVersion;
  const latest = kept.find((r) => r.metadata.name === plan.latestName);
  if (customVersion && latest && latest !== plan.create && latest.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] !== customVersion) {
    plan.customVersionLabel = customVersion;
  }

  const limit = Math.max(1, s.spec?.revisionHistoryLimit ?? 10);
  let excess = kept.length - limit;
  if (excess > 0) {
    const active = activeRevisions(s, pods, kept);
    for (let i = 0; i < kept.length - 1 && excess > 0; i++) {
      const name = kept[i]!.metadata.name!;
      if (active.has(name)) continue;
      plan.delete.push(name);
      excess--;
    }
  }
  return plan;
}

/** Revisions pods still record, or that injectionStrategy.revision names. */
function activeRevisions(
  s: SidecarSet & { metadata: { name: string } },
  pods: readonly Pod[],
  revisions: readonly ControllerRevision[],
): Set<string> {
  const active = new Set<string>();
  for (const p of pods) {
    const r = podSidecarSetControllerRevision(s.metadata.name, p);
    if (r) active.add(r);
  }
  const info = s.spec?.injectionStrategy?.revision;
  if (info?.revisionName) active.add(info.revisionName);
  if (info?.customVersion) {
    const withVersion = revisions.filter((r) => r.metadata.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] === info.customVersion);
    const newest = withVersion.at(-1);
    if (newest?.metadata.name) active.add(newest.metadata.name);
  }
  return active;
}

// ---------------------------------------------------------------------------------------------
// Status

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

// ---------------------------------------------------------------------------------------------
// Upgrade

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
  for (const patch of s.spec?.patchPodMetadata ?? []) {
    for (const [k, v] of Object.entries(patch.annotations ?? {})) {
      if (patch.patchPolicy === 'Overwrite' || !(k in annotations)) annotations[k] = v;
    }
  }
  delete out.status;
  return out;
}

/** UpdatePodAnnotationsInUpgrade: the imageIDs the changed containers run now, under this SidecarSet's in-place update state. */
function recordLastContainerStatuses(out: Pod, s: StoredSidecarSet, changed: readonly string[], timestamp: string): void {
  const states = sidecarUpdateStatesOf(out) ?? {};
  const state = states[s.metadata.name] ?? { revision: sidecarSetHashOf(s), updateTimestamp: timestamp, lastContainerStatuses: null };
  const imageIDs = new Map((out.status?.containerStatuses ?? []).map((cs) => [cs.name, cs.imageID ?? '']));
  const last = { ...state.lastContainerStatuses };
  for (const name of changed) last[name] = { imageID: imageIDs.get(name) ?? '' };
  states[s.metadata.name] = { ...state, lastContainerStatuses: last };
  out.metadata.annotations![SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION] = formatUpdateStates(states);
}

/**
 * findContainerToHotUpgrade: the pod container of a hot-upgrade sidecar to put the new image in,
 * and the other one. First the one on the empty image; else the one not ready (or not yet running
 * its spec) while the other is; else the one not working now.
 */
export function hotUpgradeContainerToUpgrade(sidecar: SidecarContainer, pod: Pod, s: StoredSidecarSet): { upgrade: string; other: string } {
  const [name1, name2] = hotUpgradeContainerNames(sidecar.name);
  const image = (n: string) => pod.spec?.containers.find((c) => c.name === n)?.image;
  const empty = sidecar.upgradeStrategy?.hotUpgradeEmptyImage;
  if (image(name1) === empty) return { upgrade: name1, other: name2 };
  if (image(name2) === empty) return { upgrade: name2, other: name1 };
  const ready = (n: string) =>
    !!pod.status?.containerStatuses?.find((cs) => cs.name === n)?.ready && isPodStateConsistent(pod, s, new Set([n]));
  const ready1 = ready(name1);
  const ready2 = ready(name2);
  if (ready1 && !ready2) return { upgrade: name2, other: name1 };
  if (!ready1 && ready2) return { upgrade: name1, other: name2 };
  const { work, other } = podHotUpgradeContainers(sidecar.name, pod);
  return { upgrade: other, other: work };
}

interface HotUpgradePair {
  sidecar: SidecarContainer;
  /** A container of the pair other than the working one runs a new image (an upgrade in flight). */
  inFlight: boolean;
  /** In flight: the container with the new image (to work once ready) and the one it replaces. */
  incoming: string;
  outgoing: string;
  /** The containers that carry no version to check: the outgoing one in flight, else the idle one. */
  spare: string;
}

/**
 * The hot-upgrade pairs of a pod. In flight, the incoming container is the non-working one — or,
 * when the working one already runs the SidecarSet's image and the other does not, the working one:
 * a pod OpenKruise upgraded before a takeover (it moves the annotation with the upgrade), which must
 * not switch back to the old version.
 */
function hotUpgradePairs(pod: Pod, s: SidecarSet): HotUpgradePair[] {
  const images = new Map(pod.spec?.containers.map((c) => [c.name, c.image]));
  return (s.spec?.containers ?? []).filter(isHotUpgradeContainer).map((sidecar) => {
    const { work, other } = podHotUpgradeContainers(sidecar.name, pod);
    const inFlight = images.get(other) !== sidecar.upgradeStrategy?.hotUpgradeEmptyImage;
    const switchedAlready = inFlight && images.get(work) === sidecar.image && images.get(other) !== sidecar.image;
    const [incoming, outgoing] = switchedAlready ? [work, other] : [other, work];
    return { sidecar, inFlight, incoming, outgoing, spare: inFlight ? outgoing : other };
  });
}

/**
 * Whether a hot upgrade is in flight and its new container ready to take over (UpdateSidecarSet
 * step 3, with the spec's order: switch only after the new one is ready): every sidecar container
 * but the spare ones (outgoing, idle) runs its spec, and the pod is running and ready (or every
 * container but the spare ones is ready).
 */
export function isHotUpgradeReadyToReset(pod: Pod, s: StoredSidecarSet): boolean {
  if (!s.spec?.containers?.some(isHotUpgradeContainer)) return false;
  const pairs = hotUpgradePairs(pod, s);
  if (!pairs.some((p) => p.inFlight)) return false;
  const spare = new Set(pairs.map((p) => p.spare));
  const checked = new Set([...sidecarContainerNamesInPod(s)].filter((n) => !spare.has(n)));
  if (!isPodStateConsistent(pod, s, checked)) return false;
  if (isRunningAndReady(pod)) return true;
  return (pod.status?.containerStatuses ?? []).every((cs) => spare.has(cs.name) || cs.ready);
}

/**
 * The switch of each finished hot upgrade (spec §6.3 step 5; upstream's flipPodSidecarContainerDo
 * plus the working-container annotation, which upstream moves with the upgrade): the incoming
 * container becomes the working one, the outgoing one goes back to hotUpgradeEmptyImage with
 * version 0, and the incoming one's alternate version becomes 0. The hash record stays as the
 * upgrade wrote it.
 */
export function resetHotUpgradedPod(pod: Pod, s: StoredSidecarSet, now: Date): Pod {
  const out = structuredClone(pod);
  const annotations = (out.metadata.annotations ??= {});
  const changed: string[] = [];
  const workInfo = hotUpgradeWorkInfo(out);
  for (const { sidecar, inFlight, incoming, outgoing } of hotUpgradePairs(out, s)) {
    const c = out.spec?.containers.find((x) => x.name === outgoing);
    if (!inFlight || !c) continue;
    workInfo[sidecar.name] = incoming;
    c.image = sidecar.upgradeStrategy?.hotUpgradeEmptyImage;
    changed.push(outgoing);
    annotations[`${SIDECARSET_VERSION_ANNOTATION_PREFIX}${outgoing}`] = '0';
    annotations[`${SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX}${incoming}`] = '0';
  }
  annotations[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION] = marshalGoJSON(workInfo);
  recordLastContainerStatuses(out, s, changed, metaTime(now));
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
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) kv = parsed as Record<string, unknown>;
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

// ---------------------------------------------------------------------------------------------

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
