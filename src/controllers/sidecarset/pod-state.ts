// What a SidecarSet reads of a pod's sidecars (upstream sidecarcontrol's commonControl): whether
// they run what the spec says (digest imageIDs, or the imageIDs recorded before the last in-place
// image change), whether the pod counts as ready, and the record of that change
// (kruise.io/sidecarset-inplace-update-state) an upgrade or a hot-upgrade reset writes.
import type { SidecarSet } from '../../apis/apps/sidecarset.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION } from '../../apis/constants.ts';
import { isRunningAndReady } from '../../util/pod.ts';
import { marshalGoJSON } from '../../util/revision.ts';
import {
  isHotUpgradeContainer,
  isSidecarUpdateCompleted,
  podHotUpgradeContainers,
  sidecarContainerNamesInPod,
  sidecarSetHashOf,
  sidecarUpdateStatesOf,
  type SidecarUpdateState,
  type StoredSidecarSet,
} from '../../util/sidecarset.ts';

const DIGEST = /@sha256:[a-f0-9]{64}$/;

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

/** UpdatePodAnnotationsInUpgrade: the imageIDs the changed containers run now, under this SidecarSet's in-place update state. */
export function recordLastContainerStatuses(out: Pod, s: StoredSidecarSet, changed: readonly string[], timestamp: string): void {
  const states = sidecarUpdateStatesOf(out) ?? {};
  const state = states[s.metadata.name] ?? { revision: sidecarSetHashOf(s), updateTimestamp: timestamp, lastContainerStatuses: null };
  const imageIDs = new Map((out.status?.containerStatuses ?? []).map((cs) => [cs.name, cs.imageID ?? '']));
  const last = { ...state.lastContainerStatuses };
  for (const name of changed) last[name] = { imageID: imageIDs.get(name) ?? '' };
  states[s.metadata.name] = { ...state, lastContainerStatuses: last };
  out.metadata.annotations![SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION] = formatUpdateStates(states);
}
