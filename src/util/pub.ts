// PodUnavailableBudget rules shared by its controller, the pod webhook and the workload controllers
// that consult a budget before updating a pod in place (spec §16; upstream pkg/control/pubcontrol).
// Pure: which pods count as available, which operations a budget protects, and the
// check-and-decrement of one admission. The I/O around them (caches, the serialised status write)
// is src/runtime/pub-budget.ts; the controller's status arithmetic is
// src/controllers/podunavailablebudget/plan.ts.

import {
  ENV_IS_INJECTED,
  POD_UNAVAILABLE_LABEL_PREFIX,
  PUB_NO_PROTECT_ANNOTATION,
  PUB_PROTECT_OPERATIONS_ANNOTATION,
  PUB_RELATED_ANNOTATION,
  PUB_RELATED_ANNOTATION_OLD,
} from '../apis/constants.ts';
import type { Pod, Stored } from '../apis/core-objects.ts';
import type { PodUnavailableBudget, PodUnavailableBudgetStatus, PubOperation } from '../apis/policy/podunavailablebudget.ts';
import { checkInPlaceUpdateCompleted } from './inplaceupdate.ts';
import { labelSelectorAsSelector, type Labels } from './labelselector.ts';
import { isPodReady } from './pod.ts';
import { injectedSidecarSetNames, isSidecarUpdateCompleted, metaTime } from './sidecarset.ts';

export type StoredPub = Stored<PodUnavailableBudget>;

/** Most pods a budget may hold as disrupted + unavailable before it refuses more (MaxUnavailablePodSize). */
export const PUB_MAX_UNAVAILABLE_POD_SIZE = 2000;

const DEFAULT_PROTECT_OPERATIONS: readonly PubOperation[] = ['DELETE', 'UPDATE', 'EVICT'];

/** The PUB a pod is recorded under (pub.kruise.io/related-pub, or the deprecated kruise.io/related-pub); '' when none. */
export function relatedPubName(pod: Pick<Pod, 'metadata'> | undefined): string {
  const a = pod?.metadata.annotations;
  return a?.[PUB_RELATED_ANNOTATION] || a?.[PUB_RELATED_ANNOTATION_OLD] || '';
}

/** Both related-pub keys, as upstream writes them. */
export function relatedPubAnnotations(pubName: string): Record<string, string> {
  return { [PUB_RELATED_ANNOTATION]: pubName, [PUB_RELATED_ANNOTATION_OLD]: pubName };
}

/** pub.kruise.io/no-protect parsed as Go's strconv.ParseBool. */
export function isPodNoProtect(pod: Pick<Pod, 'metadata'>): boolean {
  const v = pod.metadata.annotations?.[PUB_NO_PROTECT_ANNOTATION];
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}

export function hasUnavailableLabel(labels: Labels): boolean {
  return Object.keys(labels ?? {}).some((k) => k.startsWith(POD_UNAVAILABLE_LABEL_PREFIX));
}

/** Running, Ready and without an unavailable-pod.kruise.io/* label (pubControl.IsPodReady). */
export function isPubPodReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod) && !hasUnavailableLabel(pod.metadata.labels);
}

/**
 * Whether the pod's containers run what its spec says (pubControl.IsPodStateConsistent): a
 * container pinned by digest must report that digest; otherwise neither a SidecarSet's in-place
 * sidecar upgrade nor the workload's in-place update may be unfinished.
 */
export function isPodStateConsistent(pod: Pod): boolean {
  const containers = pod.spec?.containers ?? [];
  let allDigest = containers.length > 0;
  for (const c of containers) {
    const at = (c.image ?? '').indexOf('@');
    if (at < 0) {
      allDigest = false;
      continue;
    }
    const digest = (c.image ?? '').slice(at + 1);
    const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
    if (!status?.imageID?.endsWith(digest)) return false;
  }
  if (allDigest) return true;
  // Sidecars a SidecarSet is still upgrading in place: the pod is not yet running what its spec says.
  const sidecarSets = injectedSidecarSetNames(pod);
  const sidecars = new Set(
    containers.filter((c) => c.env?.some((e) => e.name === ENV_IS_INJECTED && e.value === 'true')).map((c) => c.name),
  );
  if (sidecarSets.length && sidecars.size && !isSidecarUpdateCompleted(pod, sidecarSets, sidecars)) return false;
  return checkInPlaceUpdateCompleted(pod) === undefined;
}

/** The operations a budget protects: spec.protectOperations, else the deprecated annotation, else DELETE, UPDATE, EVICT. */
export function pubProtectOperations(pub: Pick<StoredPub, 'metadata' | 'spec'>): Set<PubOperation> {
  if (pub.spec?.protectOperations?.length) return new Set(pub.spec.protectOperations as PubOperation[]);
  const fromAnnotation = (pub.metadata.annotations?.[PUB_PROTECT_OPERATIONS_ANNOTATION] ?? '').split(',').filter((s) => s !== '');
  if (fromAnnotation.length) return new Set(fromAnnotation as PubOperation[]);
  return new Set(DEFAULT_PROTECT_OPERATIONS);
}

/** Whether the budget protects the operation; with InPlacePodVerticalScaling off a protected UPDATE covers RESIZE. */
export function isPubProtecting(
  pub: Pick<StoredPub, 'metadata' | 'spec'>,
  operation: PubOperation,
  inPlacePodVerticalScaling: boolean,
): boolean {
  const ops = pubProtectOperations(pub);
  if (!inPlacePodVerticalScaling && ops.has('UPDATE')) ops.add('RESIZE');
  return ops.has(operation);
}

/** Whether the pod matches the budget's non-empty ignoredPodSelector (a bad selector ignores nothing). */
export function isPodIgnoredByPub(pub: Pick<StoredPub, 'spec'>, pod: Pick<Pod, 'metadata'>): boolean {
  const sel = pub.spec?.ignoredPodSelector;
  if (!sel) return false;
  try {
    const s = labelSelectorAsSelector(sel);
    return !s.isEverything() && s.matches(pod.metadata.labels);
  } catch {
    return false;
  }
}

/**
 * Whether a pod update may make the pod unavailable (pubControl.IsPodUnavailableChanged): a spec
 * change, or a new unavailable-pod.kruise.io/* label. Metadata-only changes never need a budget.
 */
export function isPodUnavailableChanged(oldPod: Pod, newPod: Pod): boolean {
  if (JSON.stringify(oldPod.spec ?? {}) !== JSON.stringify(newPod.spec ?? {})) return true;
  return !hasUnavailableLabel(oldPod.metadata.labels) && hasUnavailableLabel(newPod.metadata.labels);
}

/**
 * Whether the update only resizes containers in place without a restart (pubControl.CanResizeInplace):
 * no unavailable label added, the spec differs only in container resources, same containers, and
 * every changed cpu/memory resource has resizePolicy NotRequired (or none).
 */
export function canResizeInPlace(oldPod: Pod, newPod: Pod): boolean {
  if (!hasUnavailableLabel(oldPod.metadata.labels) && hasUnavailableLabel(newPod.metadata.labels)) return false;
  const withoutResources = (p: Pod) =>
    JSON.stringify({ ...p.spec, containers: (p.spec?.containers ?? []).map((c) => ({ ...c, resources: undefined })) });
  if (withoutResources(oldPod) !== withoutResources(newPod)) return false;
  const oldContainers = oldPod.spec?.containers ?? [];
  const newContainers = newPod.spec?.containers ?? [];
  if (oldContainers.length !== newContainers.length) return false;
  for (const c of newContainers) {
    const old = oldContainers.find((o) => o.name === c.name);
    if (!old) return false;
    const names = new Set([
      ...Object.keys(old.resources?.requests ?? {}),
      ...Object.keys(c.resources?.requests ?? {}),
      ...Object.keys(old.resources?.limits ?? {}),
      ...Object.keys(c.resources?.limits ?? {}),
    ]);
    for (const r of names) {
      const changed =
        old.resources?.requests?.[r] !== c.resources?.requests?.[r] || old.resources?.limits?.[r] !== c.resources?.limits?.[r];
      if (!changed) continue;
      if (r !== 'cpu' && r !== 'memory') return false;
      const policies = (c.resizePolicy ?? []) as Array<{ resourceName?: string; restartPolicy?: string }>;
      const policy = policies.find((p) => p.resourceName === r)?.restartPolicy;
      if (policy && policy !== 'NotRequired') return false;
    }
  }
  return true;
}

/** Why an admission needs no budget, or undefined when it must take one (PodUnavailableBudgetValidatePod's early exits). */
export function pubExemption(
  pod: Pod,
  pub: StoredPub | undefined,
  operation: PubOperation,
  inPlacePodVerticalScaling: boolean,
): string | undefined {
  if (isPodNoProtect(pod)) return 'pod opts out (pub.kruise.io/no-protect)';
  if (!isPubPodReady(pod) || !isPodStateConsistent(pod)) return 'pod already unavailable';
  if (!pub) return 'no PodUnavailableBudget';
  if (isPodIgnoredByPub(pub, pod)) return 'pod matches ignoredPodSelector';
  if ((pub.status?.desiredAvailable ?? 0) === 0) return 'desiredAvailable is 0';
  if (!isPubProtecting(pub, operation, inPlacePodVerticalScaling)) return `${operation} not protected`;
  if (isPodRecordedInPub(pod.metadata.name ?? '', pub)) return 'pod already recorded by the budget';
  return undefined;
}

export function isPodRecordedInPub(podName: string, pub: Pick<StoredPub, 'status'>): boolean {
  return podName in (pub.status?.disruptedPods ?? {}) || podName in (pub.status?.unavailablePods ?? {});
}

/** The denial upstream's checkAndDecrement returns (a Forbidden StatusError's message). */
export function pubForbiddenMessage(pubName: string, reason: string): string {
  return `podunavailablebudget.policy.kruise.io ${JSON.stringify(pubName)} is forbidden: ${reason}`;
}

export const PUB_NEGATIVE_REASON = 'pub unavailable allowed is negative';
export const PUB_TOO_MANY_REASON = 'DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller';

/**
 * Takes one unit of budget for the pod (checkAndDecrement): the status with unavailableAllowed − 1
 * and the pod recorded (unavailablePods for UPDATE, disruptedPods otherwise), or the denial.
 */
export function takePubBudget(
  pub: StoredPub,
  podName: string,
  operation: PubOperation,
  now: Date,
): { status: PodUnavailableBudgetStatus; denied?: undefined } | { denied: string; status?: undefined } {
  const status = pub.status ?? { unavailableAllowed: 0, currentAvailable: 0, desiredAvailable: 0, totalReplicas: 0 };
  if (status.unavailableAllowed <= 0) return { denied: pubForbiddenMessage(pub.metadata.name ?? '', PUB_NEGATIVE_REASON) };
  const disrupted = { ...status.disruptedPods };
  const unavailable = { ...status.unavailablePods };
  if (Object.keys(disrupted).length + Object.keys(unavailable).length > PUB_MAX_UNAVAILABLE_POD_SIZE) {
    return { denied: pubForbiddenMessage(pub.metadata.name ?? '', PUB_TOO_MANY_REASON) };
  }
  if (operation === 'UPDATE') unavailable[podName] = metaTime(now);
  else disrupted[podName] = metaTime(now);
  return {
    status: { ...status, unavailableAllowed: status.unavailableAllowed - 1, disruptedPods: disrupted, unavailablePods: unavailable },
  };
}

/** Group of an apiVersion ('' for the core group). */
export function apiGroupOf(apiVersion: string | undefined): string {
  const v = apiVersion ?? '';
  return v.includes('/') ? v.split('/')[0]! : '';
}
