// Sidecar terminator decisions (behaviour spec §18.3, upstream pkg/controller/sidecarterminator): a
// Job-like pod (restartPolicy Never/OnFailure) never finishes while a long-running sidecar keeps
// going after the main containers are done. Containers opt in through env:
//
//   KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true              "normal" sidecar: killed through a CRR
//     + KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE=true       its exit code must not fail the pod: the
//                                                            pod is first marked finished by us
//   KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE=<img>  on a virtual-kubelet node (no daemon, no
//                                                            CRR): the image is swapped in place for
//                                                            one that exits
//
// Everything here is pure; the executor applies the actions in order.

import {
  CONDITION_SIDECAR_TERMINATED,
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
} from '../../apis/constants.ts';
import type { Container } from '../../apis/core.ts';
import type { Pod, PodCondition } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';

/** The parts of a container the sidecar env switches are read from. */
export type SidecarContainer = Pick<Container, 'name' | 'env'>;

export type SidecarAction =
  /** Pod spec: new images for sidecars on a virtual-kubelet node. */
  | { kind: 'inPlaceUpdate'; images: Record<string, string> }
  /** CRR `sidecar-termination-<uid>` (forceRecreate, failurePolicy Ignore) for these containers. */
  | { kind: 'createCRR'; containers: string[] }
  /** Pod status: SidecarTerminated=True and a terminal phase, so sidecar exit codes do not count. */
  | { kind: 'markTerminated'; phase: 'Succeeded' | 'Failed'; condition: PodCondition };

export const SIDECAR_TERMINATED_MESSAGE = 'Terminated by Sidecar Terminator';

export const crrNameFor = (pod: Pod) => `sidecar-termination-${pod.metadata.uid ?? ''}`;

const envValue = (c: SidecarContainer, name: string) => c.env?.find((e) => e.name === name)?.value;
const isTrue = (v: string | undefined) => (v ?? '').toLowerCase() === 'true';

export const isNormalSidecar = (c: SidecarContainer) => isTrue(envValue(c, ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT));
export const isIgnoreExitCodeSidecar = (c: SidecarContainer) =>
  isNormalSidecar(c) && isTrue(envValue(c, ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE));
export const isInPlaceUpdateSidecar = (c: SidecarContainer) => !!envValue(c, ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE);
export const isSidecar = (c: SidecarContainer) => isNormalSidecar(c) || isInPlaceUpdateSidecar(c);

export interface SidecarGroups {
  normal: string[];
  ignoreExitCode: string[];
  inPlaceUpdate: string[];
}

/** Which sidecars are handled how: only image swaps on a virtual-kubelet node, only CRRs elsewhere. */
export function classifySidecars(pod: Pod, onVirtualKubelet: boolean): SidecarGroups {
  const groups: SidecarGroups = { normal: [], ignoreExitCode: [], inPlaceUpdate: [] };
  for (const c of pod.spec?.containers ?? []) {
    if (onVirtualKubelet) {
      if (isInPlaceUpdateSidecar(c)) groups.inPlaceUpdate.push(c.name);
    } else if (isIgnoreExitCodeSidecar(c)) groups.ignoreExitCode.push(c.name);
    else if (isNormalSidecar(c)) groups.normal.push(c.name);
  }
  return groups;
}

const mainContainers = (pod: Pod) => (pod.spec?.containers ?? []).filter((c) => !isSidecar(c)).map((c) => c.name);
const sidecarContainers = (pod: Pod) => (pod.spec?.containers ?? []).filter(isSidecar).map((c) => c.name);

// Until the kubelet reports every container, nothing counts as finished.
function allReported(pod: Pod): boolean {
  return (pod.spec?.containers ?? []).length === (pod.status?.containerStatuses ?? []).length;
}

export function containersCompleted(pod: Pod, names: readonly string[]): boolean {
  if (!allReported(pod)) return false;
  return (pod.status?.containerStatuses ?? []).every((s) => !names.includes(s.name) || !!s.state?.terminated);
}

export function containersSucceeded(pod: Pod, names: readonly string[]): boolean {
  if (!allReported(pod)) return false;
  return (pod.status?.containerStatuses ?? []).every((s) => !names.includes(s.name) || s.state?.terminated?.exitCode === 0);
}

function uncompleted(pod: Pod, names: readonly string[]): string[] {
  const done = new Set((pod.status?.containerStatuses ?? []).filter((s) => s.state?.terminated).map((s) => s.name));
  return names.filter((n) => !done.has(n)).sort();
}

/**
 * A pod the terminator acts on: not deleting, started, not restartPolicy Always, with a sidecar
 * still running, and its main containers done (Never) or done successfully (OnFailure, where the
 * kubelet restarts failed ones).
 */
export function isInterestingPod(pod: Pod): boolean {
  const policy = pod.spec?.restartPolicy || 'Always';
  if (pod.metadata.deletionTimestamp || (pod.status?.phase ?? 'Pending') === 'Pending' || policy === 'Always') return false;
  const sidecars = sidecarContainers(pod);
  if (sidecars.length === 0 || containersCompleted(pod, sidecars)) return false;
  if (policy === 'Never') return containersCompleted(pod, mainContainers(pod));
  if (policy === 'OnFailure') return containersSucceeded(pod, mainContainers(pod));
  return false;
}

export interface SidecarTerminatorInput {
  pod: Pod;
  onVirtualKubelet: boolean;
  /** CRR sidecar-termination-<uid> already exists (one per pod: it is never re-created). */
  crrExists: boolean;
  now: number;
}

export function planSidecarTermination({ pod, onVirtualKubelet, crrExists, now }: SidecarTerminatorInput): SidecarAction[] {
  if (!isInterestingPod(pod)) return [];
  const groups = classifySidecars(pod, onVirtualKubelet);
  const actions: SidecarAction[] = [];

  const images: Record<string, string> = {};
  for (const name of uncompleted(pod, groups.inPlaceUpdate)) {
    const c = pod.spec!.containers!.find((x) => x.name === name)!;
    const image = envValue(c, ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE)!;
    if (c.image !== image) images[name] = image;
  }
  if (Object.keys(images).length) actions.push({ kind: 'inPlaceUpdate', images });

  let crrTaken = crrExists;
  const normal = uncompleted(pod, groups.normal);
  if (normal.length && !crrTaken) {
    actions.push({ kind: 'createCRR', containers: normal });
    crrTaken = true;
  }

  // Sidecars whose exit code must not count are stopped only after every other sidecar is, and
  // only once the pod already carries its verdict from the main containers.
  if (groups.ignoreExitCode.length === 0 || !containersCompleted(pod, groups.normal) || !containersCompleted(pod, groups.inPlaceUpdate))
    return actions;
  const phase = pod.status?.phase;
  if (phase !== 'Succeeded' && phase !== 'Failed') {
    actions.push({
      kind: 'markTerminated',
      phase: containersSucceeded(pod, mainContainers(pod)) ? 'Succeeded' : 'Failed',
      condition: {
        type: CONDITION_SIDECAR_TERMINATED,
        status: 'True',
        message: SIDECAR_TERMINATED_MESSAGE,
        lastTransitionTime: metaTime(now),
      },
    });
  }
  const ignored = uncompleted(pod, groups.ignoreExitCode);
  if (ignored.length && !crrTaken) actions.push({ kind: 'createCRR', containers: ignored });
  return actions;
}
