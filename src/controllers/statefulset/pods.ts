// Advanced StatefulSet pods: stable identity (name, hostname, subdomain, pod-name / pod-index
// labels), their PVCs `<vct>-<sts>-<ordinal>`, and the health predicates of upstream
// stateful_set_utils.go (isRunningAndReady, isRunningAndAvailable, isHealthy).

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import {
  CONTROLLER_REVISION_HASH_LABEL,
  LIFECYCLE_STATE_LABEL,
  LIFECYCLE_TIMESTAMP_ANNOTATION,
  LifecycleState,
  POD_INDEX_LABEL,
} from '../../apis/constants.ts';
import type { PersistentVolumeClaim, PodTemplateSpec } from '../../apis/core.ts';
import type { OwnerReference, Pod } from '../../apis/core-objects.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { isPodAllHooked } from '../../util/lifecycle.ts';
import { isPodAvailable, isPodTerminal, isRunningAndReady, podReadyTime } from '../../util/pod.ts';
import { equalToRevisionHash } from '../../util/revision.ts';
import { podNameFor } from './ordinals.ts';

export type { Pod };

export const STATEFULSET_POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';

export const podName = (pod: Pod): string => pod.metadata.name ?? '';
export const setName = (set: StatefulSet): string => set.metadata?.name ?? '';

export function controllerRef(set: StatefulSet): OwnerReference {
  return {
    apiVersion: set.apiVersion ?? 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    name: setName(set),
    uid: set.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export const isTerminating = (pod: Pod): boolean => !!pod.metadata.deletionTimestamp;
export const isFailedOrSucceeded = (pod: Pod): boolean => isPodTerminal(pod);

/** Running and Ready (the Ready condition includes the InPlaceUpdateReady readiness gate). */
export { isRunningAndReady };

/** Running and Ready for minReadySeconds. */
export const isRunningAndAvailable = (pod: Pod, minReadySeconds: number, nowMs: number): boolean =>
  pod.status?.phase === 'Running' && isPodAvailable(pod, minReadySeconds, nowMs);

/** Seconds until a ready pod becomes available, when it is not yet. */
export function secondsUntilAvailable(pod: Pod, minReadySeconds: number, nowMs: number): number | undefined {
  const since = podReadyTime(pod);
  if (since === undefined || minReadySeconds <= 0) return undefined;
  const left = Math.ceil((since + minReadySeconds * 1000 - nowMs) / 1000);
  return left > 0 ? left : undefined;
}

export const isHealthy = (pod: Pod): boolean => isRunningAndReady(pod) && !isTerminating(pod);

export const isPodAtRevision = (pod: Pod, revision: string): boolean =>
  equalToRevisionHash(pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL], revision);

export const claimName = (vct: string, set: string, ordinal: number): string => `${vct}-${set}-${ordinal}`;

/** The PVCs a pod of `ordinal` mounts, one per volumeClaimTemplate. */
export function claimsFor(set: StatefulSet, ordinal: number, ownerRefs: OwnerReference[]): PersistentVolumeClaim[] {
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(t.metadata?.name ?? '', setName(set), ordinal),
      namespace: set.metadata?.namespace,
      labels: { ...(t.metadata?.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) },
      ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      ...(ownerRefs.length ? { ownerReferences: ownerRefs } : {}),
    },
    spec: structuredClone(t.spec ?? {}),
  }));
}

/** Identity labels a pod of `ordinal` must carry. */
export function identityLabels(set: StatefulSet, ordinal: number, features: Pick<FeatureGates, 'PodIndexLabel'>): Record<string, string> {
  const labels: Record<string, string> = { [STATEFULSET_POD_NAME_LABEL]: podNameFor(setName(set), ordinal) };
  if (features.PodIndexLabel) labels[POD_INDEX_LABEL] = String(ordinal);
  return labels;
}

type Volume = { name: string; persistentVolumeClaim?: { claimName: string } };

/** newVersionedStatefulSetPod: the pod of `ordinal` from a revision's template. */
export function newPod(
  set: StatefulSet,
  template: PodTemplateSpec,
  revision: string,
  ordinal: number,
  opts: { now: string; features: Pick<FeatureGates, 'PodIndexLabel'> },
): Pod {
  const name = podNameFor(setName(set), ordinal);
  const t = structuredClone(template);
  const { creationTimestamp: _unset, ...templateMeta } = (t.metadata ?? {}) as Record<string, unknown>;
  const spec = { ...(t.spec ?? {}), hostname: name } as NonNullable<Pod['spec']> & { volumes?: Volume[]; subdomain?: string };
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...templateMeta,
      name,
      namespace: set.metadata?.namespace,
      labels: { ...(t.metadata?.labels ?? {}), ...identityLabels(set, ordinal, opts.features), [CONTROLLER_REVISION_HASH_LABEL]: revision },
      annotations: { ...(t.metadata?.annotations ?? {}) },
      ownerReferences: [controllerRef(set)],
    },
    spec,
  };
  // Each volumeClaimTemplate becomes the pod's volume of that name, bound to the ordinal's PVC.
  const vcts = set.spec?.volumeClaimTemplates ?? [];
  if (vcts.length) {
    const claimed = new Set(vcts.map((v) => v.metadata?.name ?? ''));
    const volumes = (spec.volumes ?? []).filter((v) => !claimed.has(v.name));
    for (const v of vcts) {
      const vname = v.metadata?.name ?? '';
      volumes.push({ name: vname, persistentVolumeClaim: { claimName: claimName(vname, setName(set), ordinal) } });
    }
    spec.volumes = volumes;
  }
  const preNormal = set.spec?.lifecycle?.preNormal;
  const state = preNormal && !isPodAllHooked(preNormal, pod) ? LifecycleState.PreparingNormal : LifecycleState.Normal;
  pod.metadata.labels![LIFECYCLE_STATE_LABEL] = state;
  pod.metadata.annotations![LIFECYCLE_TIMESTAMP_ANNOTATION] = opts.now;
  return pod;
}
