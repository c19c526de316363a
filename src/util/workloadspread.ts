// WorkloadSpread's shared rules (spec §10; upstream pkg/util/workloadspread): which workloads a
// WorkloadSpread can target, the `apps.kruise.io/matched-workloadspread` annotation, the subset a
// new pod goes to, the creatingPods / deletingPods bookkeeping the pod webhook writes and the
// controller expires, and what a subset injects into a pod. Pure: the webhook and the controller
// both build on it.

import type { WorkloadSpread, WorkloadSpreadSpec, WorkloadSpreadStatus } from '../apis/apps/workloadspread.ts';
import { CONTROLLER_REVISION_HASH_LABEL, MATCHED_WORKLOADSPREAD_ANNOTATION } from '../apis/constants.ts';
import type { OwnerReference, Pod } from '../apis/core-objects.ts';
import { metaTime } from './clock.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from './intstr.ts';
import { matchesLabelSelector, type Labels } from './labelselector.ts';
import { strategicMergePod } from './strategicmerge.ts';

export type SubsetStatus = NonNullable<WorkloadSpreadStatus['subsetStatuses']>[number];
export type SubsetSpec = WorkloadSpreadSpec['subsets'][number];

/** A WorkloadSpread whose spec is known to be there (every stored one). */
export type SpreadView = Pick<WorkloadSpread, 'metadata' | 'status'> & { spec: WorkloadSpreadSpec };
export type SubsetCondition = NonNullable<SubsetStatus['conditions']>[number];

/** Versioned statuses key of workloads whose pods are not versioned (all but Deployment / ReplicaSet). */
export const VERSION_IGNORED = 'versionIgnored';
/** Where the controller puts pods matched to no subset. */
export const FAKE_SUBSET_NAME = 'kruise.io/workloadspread-fake-subset-name';
/** A creatingPods entry the controller has not seen turn into a pod by then is dropped (CreatPodTimeout). */
export const CREATE_POD_TIMEOUT_MS = 30_000;
/** A deletingPods entry whose pod still exists by then is dropped (DeletePodTimeout). */
export const DELETE_POD_TIMEOUT_MS = 15_000;
/** An unschedulable subset is tried again this long after it was marked so (MaxScheduledFailedDuration). */
export const MAX_SCHEDULED_FAILED_DURATION_MS = 300_000;
export const SUBSET_SCHEDULABLE = 'Schedulable';
export const POD_DELETION_COST_POSITIVE = 100;
export const POD_DELETION_COST_NEGATIVE = -100;
/** Workload annotation: the controller does not patch subset metadata onto pods it matches late. */
export const IGNORE_PATCH_EXISTING_PODS_ANNOTATION = 'workloadspread.kruise.io/ignore-patch-existing-pods-metadata';

export interface WorkloadKind {
  kind: string;
  groups: readonly string[];
}

/** The workloads a WorkloadSpread may target without the custom whitelist. */
export const BUILTIN_WORKLOADS: readonly WorkloadKind[] = [
  { kind: 'Deployment', groups: ['apps'] },
  { kind: 'CloneSet', groups: ['apps.kruise.io'] },
  { kind: 'ReplicaSet', groups: ['apps'] },
  { kind: 'Job', groups: ['batch'] },
  { kind: 'StatefulSet', groups: ['apps', 'apps.kruise.io'] },
];

export const groupOf = (apiVersion: string | undefined): string => {
  const v = apiVersion ?? '';
  const i = v.indexOf('/');
  return i < 0 ? '' : v.slice(0, i);
};

/** Whether an owner (or target) reference names one of the given workload kinds. */
export function isWorkloadRef(ref: Pick<OwnerReference, 'apiVersion' | 'kind'> | undefined, workloads: readonly WorkloadKind[]): boolean {
  if (!ref) return false;
  const group = groupOf(ref.apiVersion);
  return workloads.some((w) => w.kind === ref.kind && w.groups.includes(group));
}

export const controllerOf = (obj: { metadata?: { ownerReferences?: OwnerReference[] } }): OwnerReference | undefined =>
  obj.metadata?.ownerReferences?.find((r) => r.controller);

/** The annotation value upstream writes: `{"name":…,"subset":…}` plus `"uid"` for pods named by the API server. */
export interface MatchedWorkloadSpread {
  name: string;
  subset: string;
  uid?: string;
}

export function formatMatchedWorkloadSpread(m: MatchedWorkloadSpread): string {
  return JSON.stringify(m.uid ? { name: m.name, subset: m.subset, uid: m.uid } : { name: m.name, subset: m.subset });
}

/** The pod's annotation, or undefined when absent or not JSON of that shape. */
export function matchedWorkloadSpreadOf(pod: { metadata?: { annotations?: Record<string, string> } }): MatchedWorkloadSpread | undefined {
  const raw = pod.metadata?.annotations?.[MATCHED_WORKLOADSPREAD_ANNOTATION];
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const { name, subset, uid } = v as Record<string, unknown>;
    return {
      name: typeof name === 'string' ? name : '',
      subset: typeof subset === 'string' ? subset : '',
      ...(typeof uid === 'string' && uid ? { uid } : {}),
    };
  } catch {
    return undefined;
  }
}

/** targetFilter.selector: no filter or no selector selects every pod. Throws on an invalid selector. */
export function isPodSelected(ws: Pick<SpreadView, 'spec'>, labels: Labels | undefined): boolean {
  const selector = ws.spec.targetFilter?.selector;
  return !selector || matchesLabelSelector(selector, labels ?? {});
}

/**
 * The versioned-status key of a pod (GetPodVersion): pods of ReplicaSets (Deployments) by
 * `pod-template-hash`, else the short `controller-revision-hash`; every other pod `versionIgnored`.
 */
export function podVersion(pod: Pick<Pod, 'metadata'>): string {
  const owner = controllerOf(pod);
  const kind = owner?.kind.toLowerCase();
  if (kind !== 'replicaset' && kind !== 'deployment') return VERSION_IGNORED;
  const labels = pod.metadata.labels ?? {};
  if (labels['pod-template-hash'] !== undefined) return labels['pod-template-hash'];
  const hash = labels[CONTROLLER_REVISION_HASH_LABEL];
  if (hash !== undefined) return hash.slice(hash.lastIndexOf('-') + 1);
  return VERSION_IGNORED;
}

export const hasPercentSubset = (ws: Pick<SpreadView, 'spec'>): boolean => ws.spec.subsets.some((s) => typeof s.maxReplicas === 'string');

/** maxReplicas scaled against the workload's replicas (rounded up); -1 for nil (unlimited). Throws on a bad value. */
export function subsetMaxReplicas(maxReplicas: IntOrString | undefined, workloadReplicas: number): number {
  if (maxReplicas === undefined || maxReplicas === null) return -1;
  return getScaledValueFromIntOrPercent(maxReplicas, workloadReplicas, true);
}

/** Fresh statuses for a version no pod has been recorded in yet (initializedSubsetStatuses). */
export function initialSubsetStatuses(ws: Pick<SpreadView, 'spec'>, workloadReplicas: number): SubsetStatus[] {
  return ws.spec.subsets.map((s) => {
    let missing: number;
    try {
      missing = subsetMaxReplicas(s.maxReplicas, workloadReplicas);
    } catch {
      // Upstream ignores the error and leaves 0: the subset takes no pods.
      missing = 0;
    }
    return { name: s.name, replicas: 0, missingReplicas: missing };
  });
}

export const subsetCondition = (s: Pick<SubsetStatus, 'conditions'> | undefined, type: string): SubsetCondition | undefined =>
  s?.conditions?.find((c) => c.type === type);

const schedulable = (s: SubsetStatus) => subsetCondition(s, SUBSET_SCHEDULABLE)?.status !== 'False';

/** The first subset (spec order) not marked unschedulable with room left (missingReplicas > 0 or -1). */
export function suitableSubset(statuses: readonly SubsetStatus[]): SubsetStatus | undefined {
  return statuses.find((s) => schedulable(s) && (s.missingReplicas > 0 || s.missingReplicas === -1));
}

/** The ordinal of a StatefulSet pod (`<parent>-<n>`), -1 when the name has none. */
export function statefulOrdinal(name: string | undefined): number {
  const m = /^(.*)-([0-9]+)$/.exec(name ?? '');
  if (!m) return -1;
  const n = Number(m[2]);
  return n <= 2147483647 ? n : -1;
}

/**
 * StatefulSet pods go by ordinal: subset i takes ordinals below the sum of the maxReplicas of the
 * schedulable subsets up to it (a nil maxReplicas is unlimited); subsets marked unschedulable in
 * status.subsetStatuses are skipped. undefined: no subset.
 */
export function statefulSubset(ws: Pick<SpreadView, 'spec' | 'status'>, podName: string | undefined): string | undefined {
  const ordinal = statefulOrdinal(podName);
  let threshold = 0;
  for (const subset of ws.spec.subsets) {
    const status = ws.status?.subsetStatuses?.find((s) => s.name === subset.name);
    if (subsetCondition(status, SUBSET_SCHEDULABLE)?.status === 'False') continue;
    threshold += subset.maxReplicas === undefined ? 2147483647 : typeof subset.maxReplicas === 'number' ? subset.maxReplicas : 0;
    if (ordinal < threshold) return subset.name;
  }
  return undefined;
}

export type SpreadOperation = 'Create' | 'Delete' | 'Eviction';

export interface SubsetRecord {
  /** Whether the status changed (and must be written). */
  changed: boolean;
  /** The subset the pod goes to / leaves. */
  subset?: string;
  /** The id recorded for a pod created with generateName only. */
  generatedUID?: string;
}

/**
 * updateSubsetForPod: records a pod being created in the first suitable subset of its version
 * (creatingPods, missingReplicas - 1) or a pod being deleted in its annotated subset (deletingPods,
 * missingReplicas + 1); a pod already recorded anywhere is left alone. Mutates `status`.
 */
export function recordPodInSubset(
  ws: Pick<SpreadView, 'spec'>,
  status: WorkloadSpreadStatus,
  pod: Pick<Pod, 'metadata'>,
  op: SpreadOperation,
  opts: { now: number; workloadReplicas: number; newUID: () => string; matched?: MatchedWorkloadSpread },
): SubsetRecord {
  const version = podVersion(pod);
  status.versionedSubsetStatuses ??= {};
  let statuses = status.versionedSubsetStatuses[version];
  if (!statuses?.length) {
    statuses = initialSubsetStatuses(ws, opts.workloadReplicas);
    status.versionedSubsetStatuses[version] = statuses;
  }
  const name = pod.metadata.name ?? '';
  const recorded = (n: string) => statuses.find((s) => (s.creatingPods && n in s.creatingPods) || (s.deletingPods && n in s.deletingPods));
  const stamp = metaTime(opts.now);
  if (op === 'Create') {
    if (name) {
      const r = recorded(name);
      if (r) return { changed: false, subset: r.name };
    }
    const subset = suitableSubset(statuses);
    if (!subset) return { changed: false };
    if (subset.missingReplicas === -1) return { changed: false, subset: subset.name };
    const id = name || opts.newUID();
    subset.creatingPods = { ...subset.creatingPods, [id]: stamp };
    if (subset.missingReplicas > 0) subset.missingReplicas--;
    return { changed: true, subset: subset.name, ...(name ? {} : { generatedUID: id }) };
  }
  if (recorded(name)) return { changed: false };
  const subset = statuses.find((s) => s.name === opts.matched?.subset);
  if (!subset) return { changed: false };
  if (subset.missingReplicas === -1) return { changed: false, subset: subset.name };
  subset.deletingPods = { ...subset.deletingPods, [name]: stamp };
  subset.missingReplicas++;
  return { changed: true, subset: subset.name };
}

type Affinity = NonNullable<NonNullable<Pod['spec']>['affinity']>;

/**
 * injectWorkloadSpreadIntoPod: the subset's tolerations and preferred terms appended, its required
 * term ANDed into every required node-affinity term (or made the only one), its `patch` merged
 * strategically, and the matched-workloadspread annotation. Returns the new pod (the input is
 * changed in place too when no patch applies). Throws when the patch does not merge.
 */
export function injectSubsetIntoPod(ws: Pick<SpreadView, 'metadata' | 'spec'>, pod: Pod, subsetName: string, generatedUID?: string): Pod {
  const subset = ws.spec.subsets.find((s) => s.name === subsetName);
  if (!subset) return pod;
  pod.spec ??= { containers: [] };
  const spec = pod.spec;
  if (subset.tolerations?.length) spec.tolerations = [...(spec.tolerations ?? []), ...structuredClone(subset.tolerations)];
  const affinity: Affinity = (spec.affinity ??= {});
  const nodeAffinity = (affinity.nodeAffinity ??= {});
  if (subset.preferredNodeSelector?.length) {
    nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution = [
      ...(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? []),
      ...structuredClone(subset.preferredNodeSelector),
    ];
  }
  if (subset.requiredNodeSelector) {
    const required = (nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= { nodeSelectorTerms: [] });
    if (!required.nodeSelectorTerms?.length) {
      required.nodeSelectorTerms = [structuredClone(subset.requiredNodeSelector)];
    } else {
      for (const term of required.nodeSelectorTerms) {
        const exprs = subset.requiredNodeSelector.matchExpressions ?? [];
        const fields = subset.requiredNodeSelector.matchFields ?? [];
        if (exprs.length) term.matchExpressions = [...(term.matchExpressions ?? []), ...structuredClone(exprs)];
        if (fields.length) term.matchFields = [...(term.matchFields ?? []), ...structuredClone(fields)];
      }
    }
  }
  let out = pod;
  if (subset.patch && Object.keys(subset.patch).length) {
    const priorityClass = pod.spec.priorityClassName;
    out = strategicMergePod(pod, subset.patch);
    // A changed priority class must be resolved again by the API server.
    if (out.spec && out.spec.priorityClassName !== priorityClass) delete out.spec.priority;
  }
  out.metadata.annotations = {
    ...out.metadata.annotations,
    [MATCHED_WORKLOADSPREAD_ANNOTATION]: formatMatchedWorkloadSpread({
      name: ws.metadata?.name ?? '',
      subset: subsetName,
      uid: generatedUID,
    }),
  };
  return out;
}

/** An integer at a dotted path of a workload (GetReplicasFromObject); 0 when absent. Throws on a non-integer. */
export function replicasAtPath(obj: unknown, path: string): number {
  if (!path) return 0;
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return 0;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return 0;
  if (typeof cur !== 'number' || !Number.isInteger(cur)) throw new Error(`${path} is of the type ${typeof cur}, expected int64`);
  return cur;
}

/**
 * The workload's replicas the percentages scale against: the sum over targetFilter.replicasPathList
 * when given, else spec.replicas (a Job's spec.parallelism); 0 without a workload.
 */
export function workloadReplicasOf(ws: Pick<SpreadView, 'spec'>, workload: { kind?: string; spec?: unknown } | undefined): number {
  if (!workload) return 0;
  const paths = ws.spec.targetFilter?.replicasPathList;
  if (paths?.length) return paths.reduce((sum, p) => sum + replicasAtPath(workload, p), 0);
  const spec = (workload.spec ?? {}) as { replicas?: number; parallelism?: number };
  return (ws.spec.targetRef.kind === 'Job' ? spec.parallelism : spec.replicas) ?? 1;
}

/** The apiVersion a workload kind is read at (Kruise kinds at their storage version). */
export function workloadApiVersion(ref: Pick<OwnerReference, 'apiVersion' | 'kind'>): string {
  const group = groupOf(ref.apiVersion);
  if (group === 'apps.kruise.io') return 'apps.kruise.io/v1beta1';
  if (group === 'apps') return 'apps/v1';
  if (group === 'batch') return 'batch/v1';
  return ref.apiVersion;
}
