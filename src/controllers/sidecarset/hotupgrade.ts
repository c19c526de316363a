// Hot upgrade of a SidecarSet's sidecars (upstream sidecarset_hotupgrade.go, spec §6.3 step 5): each
// hot-upgrade sidecar runs as two containers, one working and one idle on hotUpgradeEmptyImage. A
// new image goes to the idle one; once it runs and is ready, the two switch and the old one goes
// back to the empty image.
import type { SidecarContainer, SidecarSet } from '../../apis/apps/sidecarset.ts';
import type { Pod } from '../../apis/core-objects.ts';
import {
  SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX,
  SIDECARSET_VERSION_ANNOTATION_PREFIX,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION,
} from '../../apis/constants.ts';
import { isRunningAndReady } from '../../util/pod.ts';
import { marshalGoJSON } from '../../util/revision.ts';
import {
  hotUpgradeContainerNames,
  hotUpgradeWorkInfo,
  isHotUpgradeContainer,
  metaTime,
  podHotUpgradeContainers,
  sidecarContainerNamesInPod,
  type StoredSidecarSet,
} from '../../util/sidecarset.ts';
import { isPodStateConsistent, recordLastContainerStatuses } from './pod-state.ts';

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
