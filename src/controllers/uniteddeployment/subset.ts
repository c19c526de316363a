// Subset workloads of a UnitedDeployment (spec §9.2, upstream adapter/*.go): one workload per
// topology subset, of the kind the UD's template names — apps/v1 StatefulSet, Advanced StatefulSet,
// CloneSet or apps/v1 Deployment. What each kind needs differs only in where the partition lives;
// everything else (naming, labels, selector, node affinity, tolerations, patch) is shared. Pure.

import type { UnitedDeployment } from '../../apis/apps/uniteddeployment.ts';
import { KRUISE_CONTROLLER_REVISION_HASH_LABEL, SUBSET_NAME_LABEL, SUBSET_PATCH_ANNOTATION } from '../../apis/constants.ts';
import type { NodeSelectorTerm, PodSpec, PodTemplateSpec } from '../../apis/core.ts';
import type { KubeObject, LabelSelector, OwnerReference, Pod, Stored } from '../../apis/core-objects.ts';
import { isDNS1123Subdomain } from '../../util/labelselector.ts';
import { strategicMergePod } from '../../util/strategicmerge.ts';

export type SubsetKind = 'StatefulSet' | 'AdvancedStatefulSet' | 'CloneSet' | 'Deployment';

type Subset = NonNullable<NonNullable<UnitedDeployment['spec']>['topology']>['subsets'] extends (infer S)[] | undefined ? S : never;

/** The fields of a subset workload the controller reads and writes (all four kinds share them). */
export interface SubsetWorkload extends KubeObject {
  spec?: {
    replicas?: number;
    selector?: LabelSelector;
    template?: PodTemplateSpec;
    updateStrategy?: {
      type?: string;
      partition?: number | string;
      rollingUpdate?: { partition?: number | string; [k: string]: unknown };
      [k: string]: unknown;
    };
    [k: string]: unknown;
  };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    observedGeneration?: number;
    [k: string]: unknown;
  };
}

const TEMPLATE_FIELD: Record<SubsetKind, keyof NonNullable<NonNullable<UnitedDeployment['spec']>['template']>> = {
  StatefulSet: 'statefulSetTemplate',
  AdvancedStatefulSet: 'advancedStatefulSetTemplate',
  CloneSet: 'cloneSetTemplate',
  Deployment: 'deploymentTemplate',
};

export const WORKLOAD_TYPE: Record<SubsetKind, { apiVersion: string; kind: string }> = {
  StatefulSet: { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  AdvancedStatefulSet: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet' },
  CloneSet: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet' },
  Deployment: { apiVersion: 'apps/v1', kind: 'Deployment' },
};

/** The kind the UD's template names (upstream getSubsetControls: the first template set, in this order). */
export function subsetKindOf(ud: UnitedDeployment): SubsetKind | undefined {
  const t = ud.spec?.template;
  if (t?.statefulSetTemplate) return 'StatefulSet';
  if (t?.advancedStatefulSetTemplate) return 'AdvancedStatefulSet';
  if (t?.cloneSetTemplate) return 'CloneSet';
  if (t?.deploymentTemplate) return 'Deployment';
  return undefined;
}

/** `<ud>-<subset>-`, or `<ud>-` when that is not a valid name prefix (getSubsetPrefix). */
export function subsetPrefix(udName: string, subsetName: string): string {
  const prefix = `${udName}-${subsetName}-`;
  // A generateName prefix is valid when it would be a valid name with a suffix appended.
  return isDNS1123Subdomain(`${prefix}a`).length === 0 ? prefix : `${udName}-`;
}

export function udControllerRef(ud: Stored<UnitedDeployment>): OwnerReference {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'UnitedDeployment',
    name: ud.metadata.name ?? '',
    uid: ud.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The subset's nodeSelectorTerm expressions ANDed into every required node-affinity term (attachNodeAffinity). */
export function attachNodeAffinity(spec: PodSpec, term: NodeSelectorTerm | undefined): PodSpec {
  const expressions = term?.matchExpressions ?? [];
  if (expressions.length === 0) return spec;
  const affinity = { ...(spec.affinity ?? {}) };
  const nodeAffinity = { ...(affinity.nodeAffinity ?? {}) };
  const required = { ...(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution ?? { nodeSelectorTerms: [] }) };
  const terms = required.nodeSelectorTerms.length > 0 ? required.nodeSelectorTerms : [{}];
  required.nodeSelectorTerms = terms.map((t) => ({ ...t, matchExpressions: [...(t.matchExpressions ?? []), ...expressions] }));
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = required;
  affinity.nodeAffinity = nodeAffinity;
  return { ...spec, affinity };
}

/** The subset patch as upstream records it in `apps.kruise.io/subset-patch`: the raw JSON, '' when unset. */
export function subsetPatchString(subset: Subset): string {
  return subset.patch == null ? '' : JSON.stringify(subset.patch);
}

/**
 * The subset workload as upstream's ApplySubsetTemplate writes it: template labels + selector labels +
 * revision + subset name on the workload, template annotations + the patch annotation; spec = the
 * template's spec with the selector narrowed to the subset, the replicas, the partition (where the kind
 * has one) and the pod template carrying the subset name, revision, node affinity, tolerations and patch.
 */
export function desiredSubsetWorkload(
  ud: Stored<UnitedDeployment>,
  kind: SubsetKind,
  subset: Subset,
  revision: string,
  replicas: number,
  partition: number,
): SubsetWorkload {
  const template = ud.spec?.template?.[TEMPLATE_FIELD[kind]] as
    { metadata?: PodTemplateSpec['metadata']; spec?: SubsetWorkload['spec'] } | undefined;
  const spec = structuredClone(template?.spec ?? {}) as NonNullable<SubsetWorkload['spec']>;
  const selector = structuredClone(ud.spec?.selector ?? {}) as LabelSelector;
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [SUBSET_NAME_LABEL]: subset.name };
  spec.selector = selector;
  spec.replicas = replicas;
  setPartition(kind, spec, partition);

  let pod: PodTemplateSpec = spec.template ?? {};
  pod = {
    ...pod,
    metadata: {
      ...(pod.metadata ?? {}),
      labels: { ...(pod.metadata?.labels ?? {}), [SUBSET_NAME_LABEL]: subset.name, [KRUISE_CONTROLLER_REVISION_HASH_LABEL]: revision },
    },
  };
  let podSpec = attachNodeAffinity((pod.spec ?? { containers: [] }) as PodSpec, subset.nodeSelectorTerm);
  if (subset.tolerations) podSpec = { ...podSpec, tolerations: [...(podSpec.tolerations ?? []), ...subset.tolerations] };
  pod = { ...pod, spec: podSpec };
  if (subset.patch != null) pod = strategicMergePod(pod, subset.patch as Record<string, unknown>);
  spec.template = pod;

  return {
    ...WORKLOAD_TYPE[kind],
    metadata: {
      namespace: ud.metadata.namespace,
      generateName: subsetPrefix(ud.metadata.name ?? '', subset.name),
      labels: {
        ...(template?.metadata?.labels ?? {}),
        ...(ud.spec?.selector?.matchLabels ?? {}),
        [KRUISE_CONTROLLER_REVISION_HASH_LABEL]: revision,
        [SUBSET_NAME_LABEL]: subset.name,
      },
      annotations: { ...(template?.metadata?.annotations ?? {}), [SUBSET_PATCH_ANNOTATION]: subsetPatchString(subset) },
      ownerReferences: [udControllerRef(ud)],
    },
    spec,
  };
}

/** An existing workload brought to the desired state (UpdateSubset): its metadata kept, labels/annotations merged, spec replaced. */
export function updatedSubsetWorkload(existing: SubsetWorkload, desired: SubsetWorkload): SubsetWorkload {
  return {
    ...existing,
    metadata: {
      ...existing.metadata,
      labels: { ...(existing.metadata.labels ?? {}), ...(desired.metadata.labels ?? {}) },
      annotations: { ...(existing.metadata.annotations ?? {}), ...(desired.metadata.annotations ?? {}) },
    },
    spec: desired.spec,
  };
}

function setPartition(kind: SubsetKind, spec: NonNullable<SubsetWorkload['spec']>, partition: number): void {
  const strategy = { ...(spec.updateStrategy ?? {}) };
  switch (kind) {
    case 'CloneSet':
    case 'AdvancedStatefulSet':
      strategy.rollingUpdate = { ...(strategy.rollingUpdate ?? {}), partition };
      break;
    case 'StatefulSet':
      // Only RollingUpdate (the default) has a partition; OnDelete is left to the user.
      if (strategy.type && strategy.type !== 'RollingUpdate') return;
      strategy.type = 'RollingUpdate';
      strategy.rollingUpdate = { ...(strategy.rollingUpdate ?? {}), partition };
      break;
    case 'Deployment':
      return;
  }
  spec.updateStrategy = strategy;
}

/** The partition a workload carries (GetSpecPartition); CloneSet percentages scale against its replicas, rounding up. */
export function workloadPartition(kind: SubsetKind, w: SubsetWorkload): number {
  const p = w.spec?.updateStrategy?.rollingUpdate?.partition;
  if (kind === 'Deployment' || p == null) return 0;
  if (typeof p === 'number') return p;
  const pct = Number(p.replace(/%$/, ''));
  return Number.isFinite(pct) ? Math.ceil((pct * (w.spec?.replicas ?? 1)) / 100) : 0;
}

/** Pods of the subset that are at the UD's revision and active, and of those the ready ones (CalculateUpdatedReplicas). */
export function updatedCounts(
  pods: readonly Pod[],
  revision: string,
  isReady: (p: Pod) => boolean,
): { updated: number; updatedReady: number } {
  let updated = 0;
  let updatedReady = 0;
  for (const p of pods) {
    if (p.metadata.labels?.[KRUISE_CONTROLLER_REVISION_HASH_LABEL] !== revision) continue;
    if (p.metadata.deletionTimestamp || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    updated++;
    if (isReady(p)) updatedReady++;
  }
  return { updated, updatedReady };
}
