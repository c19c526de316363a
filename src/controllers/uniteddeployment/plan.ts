// The UnitedDeployment planner (upstream uniteddeployment_controller.go Reconcile, spec §9): from the
// UD, its ControllerRevisions, its subset workloads and their pods at time `now`, decide the whole
// round — the revision to record, the subset workloads to create / update / delete, the pods whose
// reserved label changes (reservation strategy), the new status and when to look again. Pure: no
// API calls, no clock reads.

import type { UnitedDeployment, UnitedDeploymentStatus } from '../../apis/apps/uniteddeployment.ts';
import { convert } from '../../apis/conversion/index.ts';
import {
  KRUISE_CONTROLLER_REVISION_HASH_LABEL,
  SUBSET_NAME_LABEL,
  SUBSET_PATCH_ANNOTATION,
  UNITED_DEPLOYMENT_RESERVED_POD_LABEL,
} from '../../apis/constants.ts';
import type { PodTemplateSpec } from '../../apis/core.ts';
import type { ControllerRevision, Pod, Stored } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { isPodReady, timeMillis } from '../../util/pod.ts';
import { CONTROLLER_REVISION_HASH_KEY, controllerRevisionName, hashControllerRevision, marshalGoJSON } from '../../util/revision.ts';
import { chooseUpdateRevision, normalisePodTemplate } from '../../util/revision-data.ts';
import { AllocationError, allocateReplicas, type ObservedSubset } from './allocator.ts';
import {
  desiredSubsetWorkload,
  subsetPatchString,
  udControllerRef,
  updatedCounts,
  updatedSubsetWorkload,
  workloadPartition,
  type SubsetKind,
  type SubsetWorkload,
} from './subset.ts';

const DEFAULT_RESCHEDULE_CRITICAL_SECONDS = 30;
const DEFAULT_UNSCHEDULABLE_SECONDS = 300;
const DEFAULT_HISTORY_LIMIT = 10;

type Spec = NonNullable<UnitedDeployment['spec']>;
type Condition = NonNullable<UnitedDeploymentStatus['conditions']>[number];
type SubsetStatus = NonNullable<UnitedDeploymentStatus['subsetStatuses']>[number];
type SubsetCondition = NonNullable<SubsetStatus['conditions']>[number];

export interface PlanInput {
  ud: Stored<UnitedDeployment>;
  kind: SubsetKind;
  /** ControllerRevisions the UD owns. */
  revisions: readonly ControllerRevision[];
  /** Workloads of the template's kind the UD owns. */
  workloads: readonly SubsetWorkload[];
  /** Pods in the UD's namespace carrying a subset-name label (grouped per subset here). */
  pods: readonly Pod[];
  now: number;
  /**
   * The version the cluster serves UnitedDeployments at. At `v1alpha1` (OpenKruise v1.8.2's API, the
   * default) the status has v1.8.2's members only: no UnitedDeploymentUpdated condition and no
   * per-subset or total reservedPods/readyReplicas, which its schema would prune on every write
   * (and the reservation strategy they serve is a v1beta1 field). Default `v1beta1`.
   */
  servedVersion?: string;
}

export interface UnitedDeploymentPlan {
  /** A revision to create before anything is labelled with it. */
  newRevision?: ControllerRevision;
  /** An equal older revision becomes the newest again (rollback): its new revision number. */
  revisionUpdate?: { name: string; revision: number };
  revisionsToDelete: string[];
  updateRevision: string;
  collisionCount: number;
  creates: SubsetWorkload[];
  updates: SubsetWorkload[];
  deletes: SubsetWorkload[];
  /** Reservation strategy: pods whose `apps.kruise.io/united-deployment-reserved-pod` label becomes this value. */
  reservedLabels: Array<{ pod: string; value: 'true' | 'false' }>;
  /** The allocators refused the topology: reported as an event, nothing else is changed. */
  allocationError?: string;
  /** The new status; undefined when unchanged. */
  status?: UnitedDeploymentStatus;
  /** When to look again (a pending pod times out, an unschedulable subset recovers), in milliseconds. */
  requeueAfterMs?: number;
}

// ---------------------------------------------------------------------------------------------
// revisions

/**
 * The revision data: the UD's spec.template as a strategic-merge replace patch (getUnitedDeploymentPatch).
 * Upstream hashes the v1alpha1 template (its only UD version), so a v1beta1 UD is hashed in its
 * v1alpha1 form: the same name for the same template whichever version the object is read at — a
 * takeover from OpenKruise v1.8 keeps its revisions and the subset workloads' revision label.
 */
export function unitedDeploymentRevisionData(ud: UnitedDeployment): string {
  const alpha = ud.apiVersion?.endsWith('/v1beta1') ? (convert(ud, 'apps.kruise.io/v1alpha1') as UnitedDeployment) : ud;
  return marshalGoJSON({ spec: { template: { ...goSubsetTemplates(alpha.spec?.template ?? {}), $patch: 'replace' } } });
}

type SubsetTemplates = NonNullable<NonNullable<UnitedDeployment['spec']>['template']>;

/**
 * The members of each subset template's spec that Go marshals even when unset, with the value it
 * writes: structs (not pointers; `omitempty` does not drop a struct) as `{}`, fields without
 * `omitempty` as their zero value (`selector`, a pointer: null; apps/v1 `serviceName`: ""). v1.8.2
 * hashes them whether or not the stored object has them — an object OpenKruise stored has them (its
 * webhook re-marshals), one created through Kruise TS does not.
 */
const GO_ALWAYS_WRITTEN: Record<string, Record<string, unknown>> = {
  cloneSetTemplate: { selector: null, scaleStrategy: {}, updateStrategy: {} },
  advancedStatefulSetTemplate: { selector: null, volumeClaimUpdateStrategy: {}, updateStrategy: {} },
  statefulSetTemplate: { selector: null, serviceName: '', updateStrategy: {} },
  deploymentTemplate: { selector: null, strategy: {} },
};

/**
 * The subset templates as Go re-marshals its decoded types: metadata with `creationTimestamp: null`,
 * pod templates as normalisePodTemplate writes them, the spec's struct-typed members
 * (GO_ALWAYS_WRITTEN) always present, claim templates as Go marshals a PersistentVolumeClaim.
 */
function goSubsetTemplates(templates: SubsetTemplates): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, t] of Object.entries(templates) as Array<[string, { metadata?: object; spec?: Record<string, unknown> } | undefined]>) {
    if (!t) continue;
    const spec: Record<string, unknown> = { ...(t.spec ?? {}) };
    spec.template = normalisePodTemplate(spec.template as PodTemplateSpec | undefined);
    for (const [member, zero] of Object.entries(GO_ALWAYS_WRITTEN[key] ?? {}))
      if (spec[member] === undefined) spec[member] = structuredClone(zero);
    if (Array.isArray(spec.volumeClaimTemplates)) spec.volumeClaimTemplates = spec.volumeClaimTemplates.map(goClaimTemplate);
    out[key] = { ...t, metadata: { creationTimestamp: null, ...(t.metadata ?? {}) }, spec };
  }
  return out;
}

/** A PersistentVolumeClaim as Go marshals it: metadata, spec.resources and status are structs. */
function goClaimTemplate(claim: { metadata?: object; spec?: Record<string, unknown>; status?: object }): unknown {
  return {
    ...claim,
    metadata: { creationTimestamp: null, ...(claim.metadata ?? {}) },
    spec: { resources: {}, ...(claim.spec ?? {}) },
    status: claim.status ?? {},
  };
}

function templateLabels(ud: UnitedDeployment): Record<string, string> {
  const t = ud.spec?.template;
  const labels = (t?.statefulSetTemplate ?? t?.advancedStatefulSetTemplate ?? t?.cloneSetTemplate ?? t?.deploymentTemplate)?.metadata
    ?.labels;
  return { ...(labels ?? {}) };
}

export function newUnitedDeploymentRevision(ud: Stored<UnitedDeployment>, revision: number, collisionCount: number): ControllerRevision {
  const data = unitedDeploymentRevisionData(ud);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(ud.metadata.name ?? '', data, collisionCount),
      namespace: ud.metadata.namespace,
      labels: { ...templateLabels(ud), [CONTROLLER_REVISION_HASH_KEY]: hashControllerRevision(data, collisionCount) },
      annotations: { ...(ud.metadata.annotations ?? {}) },
      ownerReferences: [udControllerRef(ud)],
    },
    data: JSON.parse(data),
    revision,
  };
}

/** constructUnitedDeploymentRevisions: the update revision is found (or made) from the template; current follows status. */
export function chooseRevisions(ud: Stored<UnitedDeployment>, revisions: readonly ControllerRevision[]) {
  const sorted = [...revisions].sort((a, b) => a.revision - b.revision);
  const { update, collisionCount, newRevision, renumbered } = chooseUpdateRevision(sorted, ud.status?.collisionCount ?? 0, (n, c) =>
    newUnitedDeploymentRevision(ud, n, c),
  );
  const revisionUpdate: UnitedDeploymentPlan['revisionUpdate'] = renumbered && {
    name: renumbered.metadata.name ?? '',
    revision: update.revision,
  };
  const current = sorted.find((r) => r.metadata.name === ud.status?.currentRevision) ?? update;
  // cleanExpiredRevision: the oldest beyond the history limit, except the live ones.
  const exceed = sorted.length - (ud.spec?.revisionHistoryLimit ?? DEFAULT_HISTORY_LIMIT);
  const live = new Set([ud.status?.currentRevision, ud.status?.updatedRevision].filter(Boolean));
  const toDelete = exceed > 0 ? sorted.slice(0, exceed).filter((r) => !live.has(r.metadata.name ?? '')) : [];
  return { current, update, collisionCount, newRevision, revisionUpdate, toDelete: toDelete.map((r) => r.metadata.name ?? '') };
}

// ---------------------------------------------------------------------------------------------
// conditions

function setUDCondition(conditions: Condition[], c: Omit<Condition, 'lastTransitionTime'>, now: string): Condition[] {
  const current = conditions.find((x) => x.type === c.type);
  if (current && current.status === c.status && current.reason === c.reason) return conditions;
  const lastTransitionTime = current && current.status === c.status ? current.lastTransitionTime : now;
  return [...conditions.filter((x) => x.type !== c.type), { ...c, lastTransitionTime }];
}

function setSubsetCondition(s: SubsetStatus, status: 'True' | 'False', reason: string, message: string, now: string): void {
  const conditions = s.conditions ?? [];
  const current = conditions.find((c) => c.type === 'Schedulable');
  if (current && current.status === status && current.reason === reason) return;
  const next: SubsetCondition = { type: 'Schedulable', status, reason, message, lastTransitionTime: now };
  s.conditions = current ? conditions.map((c) => (c === current ? next : c)) : [...conditions, next];
}

// ---------------------------------------------------------------------------------------------
// adaptive scheduling

interface Strategy {
  adaptive: boolean;
  reserve: boolean;
  rescheduleCriticalMs: number;
  unschedulableMs: number;
}

function strategyOf(spec: Spec): Strategy {
  const s = spec.topology?.scheduleStrategy;
  const adaptive = s?.type === 'Adaptive';
  return {
    adaptive,
    reserve: adaptive && Boolean(s?.adaptive?.reserveUnschedulablePods),
    rescheduleCriticalMs: (s?.adaptive?.rescheduleCriticalSeconds ?? DEFAULT_RESCHEDULE_CRITICAL_SECONDS) * 1000,
    unschedulableMs: (s?.adaptive?.unschedulableDuration ?? s?.adaptive?.unschedulableLastSeconds ?? DEFAULT_UNSCHEDULABLE_SECONDS) * 1000,
  };
}

/**
 * GetTimeBeforePendingTimeout: a pod the scheduler failed to place (Pending, no node,
 * PodScheduled=False/Unschedulable) times out `timeoutMs` after its creation; before that, when to look again.
 */
export function pendingTimeout(pod: Pod, timeoutMs: number, now: number): { timedOut: boolean; checkAfter?: number } {
  if (pod.metadata.deletionTimestamp || pod.status?.phase !== 'Pending' || pod.spec?.nodeName) return { timedOut: false };
  const failed = pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
  if (!failed) return { timedOut: false };
  const deadline = (timeMillis(pod.metadata.creationTimestamp) ?? now) + timeoutMs;
  return deadline < now ? { timedOut: true } : { timedOut: false, checkAfter: deadline - now };
}

class Requeue {
  ms: number | undefined;
  /** A deadline reached but not yet past (ms 0) is looked at in the next millisecond, not dropped. */
  push(ms: number): void {
    const wait = Math.max(1, ms);
    if (this.ms === undefined || wait < this.ms) this.ms = wait;
  }
}

interface SubsetFacts extends ObservedSubset {
  workload: SubsetWorkload;
  pods: Pod[];
  statusReplicas: number;
  readyReplicas: number;
}

/** calculateSubsetsStatusForDefaultAdaptiveStrategy. */
function defaultAdaptive(facts: SubsetFacts, status: SubsetStatus, st: Strategy, now: number, requeue: Requeue): void {
  const nowTime = metaTime(now);
  const cond = status.conditions?.find((c) => c.type === 'Schedulable');
  if (cond && cond.status === 'False') {
    const recoverAt = (timeMillis(cond.lastTransitionTime) ?? now) + st.unschedulableMs;
    if (now < recoverAt) {
      requeue.push(recoverAt - now);
      facts.unschedulable = true;
    } else {
      const seconds = (st.unschedulableMs / 1000).toFixed(6);
      setSubsetCondition(status, 'True', 'recover', `unschedulable subset recovered after ${seconds} seconds`, nowTime);
    }
  }
  if (facts.readyReplicas < facts.statusReplicas) {
    let pendingPods = 0;
    for (const pod of facts.pods) {
      const t = pendingTimeout(pod, st.rescheduleCriticalMs, now);
      if (t.timedOut) pendingPods++;
      if (t.checkAfter !== undefined) requeue.push(t.checkAfter);
    }
    facts.runningReplicas -= pendingPods;
    if (pendingPods > 0) {
      facts.unschedulable = true;
      setSubsetCondition(status, 'False', 'reschedule', 'timeout pending pods found', nowTime);
      requeue.push(st.unschedulableMs);
    }
  }
}

/** CheckPodReallyInReservedStatus: whether the pod is (still) reserved, and when to look again. */
function podReserved(
  pod: Pod,
  updatedRevision: string,
  updatedSince: number | undefined,
  st: Strategy,
  now: number,
): { reserved: boolean; checkAfter?: number } {
  const revision = pod.metadata.labels?.[KRUISE_CONTROLLER_REVISION_HASH_LABEL];
  if (pod.metadata.labels?.[UNITED_DEPLOYMENT_RESERVED_POD_LABEL] === 'true') {
    if (pod.status?.phase === 'Running' && revision === updatedRevision) {
      const ready = pod.status.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
      if (ready) {
        const leaves = (timeMillis(ready.lastTransitionTime) ?? now) + st.unschedulableMs;
        return leaves < now ? { reserved: false } : { reserved: true, checkAfter: leaves - now };
      }
    }
    return { reserved: true, checkAfter: st.unschedulableMs };
  }
  let timedOut: boolean;
  let checkAfter: number | undefined;
  if (revision === updatedRevision) {
    ({ timedOut, checkAfter } = pendingTimeout(pod, st.rescheduleCriticalMs, now));
  } else {
    // GetTimeBeforeUpdateTimeout: an old-revision pod is reserved once the update has lasted too long.
    const deadline = (updatedSince ?? now) + st.rescheduleCriticalMs;
    timedOut = pod.metadata.deletionTimestamp ? false : deadline < now;
    checkAfter = pod.metadata.deletionTimestamp || timedOut ? undefined : deadline - now;
  }
  return timedOut ? { reserved: true, checkAfter: st.unschedulableMs } : { reserved: false, checkAfter };
}

/** calculateSubsetsStatusForReservedAdaptiveStrategy. */
function reservationAdaptive(
  facts: SubsetFacts,
  status: SubsetStatus,
  st: Strategy,
  updatedRevision: string,
  updatedSince: number | undefined,
  now: number,
  requeue: Requeue,
  labels: UnitedDeploymentPlan['reservedLabels'],
): void {
  const nowTime = metaTime(now);
  const cond = status.conditions?.find((c) => c.type === 'Schedulable');
  if (cond) facts.markedAsUnschedulable = cond.status === 'False';
  for (const pod of facts.pods) {
    const label = pod.metadata.labels?.[UNITED_DEPLOYMENT_RESERVED_POD_LABEL];
    if (facts.markedAsUnschedulable && label === undefined) {
      // Created while the subset is marked unschedulable: reserved until proven healthy.
      facts.reservedPods++;
      labels.push({ pod: pod.metadata.name ?? '', value: 'true' });
      requeue.push(st.unschedulableMs);
      continue;
    }
    const r = podReserved(pod, updatedRevision, updatedSince, st, now);
    if (r.reserved) facts.reservedPods++;
    if (r.checkAfter !== undefined) requeue.push(r.checkAfter);
    if (label === undefined || r.reserved !== (label === 'true'))
      labels.push({ pod: pod.metadata.name ?? '', value: r.reserved ? 'true' : 'false' });
  }
  if (facts.reservedPods > 0) {
    facts.unschedulable = true;
    setSubsetCondition(status, 'False', 'reschedule', 'reserved pods found', nowTime);
  } else {
    facts.unschedulable = false;
    setSubsetCondition(status, 'True', 'reschedule', 'no reserved pods', nowTime);
  }
}

// ---------------------------------------------------------------------------------------------
// the plan

/** calcNextPartitions: Manual partitions[subset] (default 0), capped at the subset's next replicas. */
export function nextPartitions(spec: Spec, next: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  const partitions = (spec.updateStrategy?.type ?? 'Manual') === 'Manual' ? spec.updateStrategy?.manualUpdate?.partitions : undefined;
  for (const s of spec.topology?.subsets ?? []) {
    let p = partitions?.[s.name] ?? 0;
    const replicas = next.get(s.name);
    if (replicas !== undefined && p > replicas) p = replicas;
    out.set(s.name, p);
  }
  return out;
}

const byCreation = (a: SubsetWorkload, b: SubsetWorkload) =>
  (timeMillis(a.metadata.creationTimestamp) ?? 0) - (timeMillis(b.metadata.creationTimestamp) ?? 0) ||
  (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

export function planUnitedDeployment(input: PlanInput): UnitedDeploymentPlan {
  const { ud, kind, now } = input;
  const spec = ud.spec as Spec;
  const nowTime = metaTime(now);
  const st = strategyOf(spec);
  const requeue = new Requeue();
  const subsets = spec.topology?.subsets ?? [];

  const rev = chooseRevisions(ud, input.revisions);
  const updateRevision = rev.update.metadata.name ?? '';
  const currentRevision = rev.current.metadata.name ?? '';

  // initStatus: a status entry for every subset of the spec.
  const oldStatus = ud.status;
  const subsetStatuses: SubsetStatus[] = structuredClone(oldStatus?.subsetStatuses ?? []);
  const hadStatuses = subsetStatuses.length > 0;
  for (const s of subsets) {
    if (subsetStatuses.some((x) => x.name === s.name)) continue;
    const entry: SubsetStatus = { name: s.name };
    if (hadStatuses && st.reserve) setSubsetCondition(entry, 'False', 'created', 'newly-created subsets in reservation strategy', nowTime);
    subsetStatuses.push(entry);
  }
  const statusOf = (name: string) => subsetStatuses.find((x) => x.name === name)!;

  const v1beta1Status = input.servedVersion !== 'v1alpha1';
  let conditions: Condition[] = [...(oldStatus?.conditions ?? [])];
  const updated = currentRevision === updateRevision;
  if (v1beta1Status) {
    conditions = setUDCondition(
      conditions,
      {
        type: 'UnitedDeploymentUpdated',
        status: updated ? 'True' : 'False',
        reason: updated ? 'UnitedDeploymentRevisionUpdated' : 'UnitedDeploymentRevisionUpdating',
        message: `${updated ? 'updated' : 'updating'} to revision ${updateRevision}`,
      },
      nowTime,
    );
  } else conditions = conditions.filter((c) => c.type !== 'UnitedDeploymentUpdated');

  // Existing subsets: one workload per subset name, the oldest kept, duplicates and label-less ignored or deleted.
  const deletes: SubsetWorkload[] = [];
  const bySubset = new Map<string, SubsetWorkload>();
  for (const w of [...input.workloads].sort(byCreation)) {
    if (w.metadata.deletionTimestamp) continue;
    const name = w.metadata.labels?.[SUBSET_NAME_LABEL];
    if (name === undefined) continue;
    if (bySubset.has(name)) deletes.push(w);
    else bySubset.set(name, w);
  }

  const podsBySubset = new Map<string, Pod[]>();
  for (const p of input.pods) {
    const name = p.metadata.labels?.[SUBSET_NAME_LABEL];
    if (name === undefined) continue;
    const list = podsBySubset.get(name) ?? [];
    list.push(p);
    podsBySubset.set(name, list);
  }

  const facts = new Map<string, SubsetFacts>();
  for (const [name, w] of bySubset) {
    const selector = labelSelectorAsSelector(w.spec?.selector);
    const pods = (podsBySubset.get(name) ?? []).filter((p) => selector.matches(p.metadata.labels));
    facts.set(name, {
      workload: w,
      pods,
      replicas: w.spec?.replicas ?? 0,
      statusReplicas: w.status?.replicas ?? 0,
      readyReplicas: w.status?.readyReplicas ?? 0,
      runningReplicas: w.status?.replicas ?? 0,
      unschedulable: false,
      markedAsUnschedulable: false,
      reservedPods: 0,
    });
  }

  const reservedLabels: UnitedDeploymentPlan['reservedLabels'] = [];
  if (st.adaptive) {
    const updatedCond = conditions.find((c) => c.type === 'UnitedDeploymentUpdated');
    const updatedSince = timeMillis(updatedCond?.lastTransitionTime);
    for (const [name, f] of facts) {
      const status = subsetStatuses.find((x) => x.name === name);
      if (!status) continue;
      if (st.reserve) reservationAdaptive(f, status, st, updateRevision, updatedSince, now, requeue, reservedLabels);
      else defaultAdaptive(f, status, st, now, requeue);
    }
  }

  const base = {
    newRevision: rev.newRevision,
    revisionUpdate: rev.revisionUpdate,
    revisionsToDelete: rev.toDelete,
    updateRevision,
    collisionCount: rev.collisionCount,
    reservedLabels,
  };

  let next: Map<string, number>;
  try {
    next = allocateReplicas(spec, facts);
  } catch (err) {
    if (!(err instanceof AllocationError)) throw err;
    return { ...base, creates: [], updates: [], deletes: [], allocationError: err.message };
  }

  if (st.reserve) {
    // postProcessSubsetStatusForReservedAdaptiveStrategy: a just-recovered subset scaled up stays marked,
    // so its new pods start reserved and temporary pods go only once they are healthy.
    for (const [name, f] of facts) {
      if (!f.unschedulable && f.markedAsUnschedulable && (next.get(name) ?? 0) > f.replicas) {
        setSubsetCondition(statusOf(name), 'False', 'reschedule', 'subset just recovered scaled up', nowTime);
      }
    }
  }

  const partitions = nextPartitions(spec, next);

  // manageSubsetProvision: create missing subsets, delete those no longer in the spec.
  const creates: SubsetWorkload[] = [];
  const updates: SubsetWorkload[] = [];
  const specNames = new Set(subsets.map((s) => s.name));
  for (const s of subsets) {
    const want = desiredSubsetWorkload(ud, kind, s, updateRevision, next.get(s.name) ?? 0, partitions.get(s.name) ?? 0);
    const existing = bySubset.get(s.name);
    if (!existing) {
      creates.push(want);
      continue;
    }
    // manageSubsets: revision, replicas, partition or patch changed.
    const changed =
      existing.metadata.labels?.[KRUISE_CONTROLLER_REVISION_HASH_LABEL] !== updateRevision ||
      (existing.spec?.replicas ?? 0) !== (next.get(s.name) ?? 0) ||
      workloadPartition(kind, existing) !== (partitions.get(s.name) ?? 0) ||
      (existing.metadata.annotations?.[SUBSET_PATCH_ANNOTATION] ?? '') !== subsetPatchString(s);
    if (changed) updates.push(updatedSubsetWorkload(existing, want));
  }
  for (const [name, w] of bySubset) if (!specNames.has(name)) deletes.push(w);
  // A new subset is looked at again once its pods could have timed out pending (pod events cover the rest).
  if (st.adaptive && creates.length > 0) requeue.push(st.rescheduleCriticalMs);
  conditions = setUDCondition(conditions, { type: 'SubsetProvisioned', status: 'True', reason: '', message: '' }, nowTime);
  conditions = setUDCondition(conditions, { type: 'SubsetUpdated', status: 'True', reason: '', message: '' }, nowTime);
  conditions = conditions.filter((c) => c.type !== 'SubsetFailure');

  // calculateStatus.
  let replicas = 0;
  let reservedPods = 0;
  let readyReplicas = 0;
  let updatedReplicas = 0;
  let updatedReadyReplicas = 0;
  for (const [name, f] of facts) {
    if (!specNames.has(name)) continue;
    const counts = updatedCounts(f.pods, updateRevision, isPodReady);
    replicas += f.statusReplicas - f.reservedPods;
    reservedPods += f.reservedPods;
    readyReplicas += f.readyReplicas;
    updatedReplicas += counts.updated;
    updatedReadyReplicas += counts.updatedReady;
    const s = statusOf(name);
    s.replicas = next.get(name) ?? 0;
    s.partition = partitions.get(name) ?? 0;
    if (v1beta1Status) {
      s.readyReplicas = f.readyReplicas;
      s.reservedPods = f.reservedPods;
    } else {
      delete s.readyReplicas;
      delete s.reservedPods;
    }
  }
  let newCurrent = oldStatus?.currentRevision || currentRevision;
  if (updateRevision !== newCurrent && updatedReadyReplicas >= replicas) newCurrent = updateRevision;

  let labelSelector = labelSelectorAsSelector(spec.selector).toString();
  if (st.reserve) labelSelector += `,${UNITED_DEPLOYMENT_RESERVED_POD_LABEL}=false`;

  const status: UnitedDeploymentStatus = {
    ...(oldStatus ?? {}),
    observedGeneration: ud.metadata.generation,
    replicas,
    readyReplicas,
    updatedReplicas,
    updatedReadyReplicas,
    reservedPods: v1beta1Status ? reservedPods : undefined,
    currentRevision: newCurrent,
    updatedRevision: updateRevision,
    collisionCount: rev.collisionCount,
    subsetStatuses: subsetStatuses.filter((s) => specNames.has(s.name ?? '')),
    conditions,
    labelSelector,
  };
  return {
    ...base,
    creates,
    updates,
    deletes,
    status: statusChanged(oldStatus, status) ? status : undefined,
    requeueAfterMs: requeue.ms,
  };
}

function statusChanged(old: UnitedDeploymentStatus | undefined, next: UnitedDeploymentStatus): boolean {
  return marshalGoJSON(old ?? {}) !== marshalGoJSON(next);
}
