// The EphemeralJob planner (spec §17, upstream pkg/controller/ephemeraljob): from the job and the
// pods of its namespace at time `now`, decide the round — the finalizer, deletion after the TTL, the
// pods to inject the template's ephemeral containers into, the new status, when to look again. Pure.

import type { EphemeralJob, EphemeralJobStatus } from '../../apis/apps/ephemeraljob.ts';
import { ENV_EPHEMERAL_JOB_ID, FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP } from '../../apis/constants.ts';
import type { EphemeralContainer } from '../../apis/core.ts';
import type { ContainerStatus, Pod, Stored } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { isPodActive, timeMillis } from '../../util/pod.ts';
import { marshalGoJSON } from '../../util/revision.ts';

const DEFAULT_PARALLELISM = 1;
const DEFAULT_TTL_SECONDS = 1800;

type Condition = NonNullable<EphemeralJobStatus['conditions']>[number];

export interface PlanInput {
  job: Stored<EphemeralJob>;
  /** Pods of the job's namespace (the selector is applied here). */
  pods: readonly Pod[];
  now: number;
}

export interface EphemeralJobPlan {
  /** Add the cleanup finalizer first, or drop it from a job being deleted. */
  finalizer?: 'add' | 'remove';
  /** The finished job's TTL has passed. */
  delete?: boolean;
  /** Pods to inject the template's containers into, in order. */
  inject: Pod[];
  /** The containers to add (template + the owner env). */
  containers: EphemeralContainer[];
  status?: EphemeralJobStatus;
  /** When to look again (the TTL or activeDeadlineSeconds), ms from now. */
  requeueAfterMs?: number;
}

/** The template's containers as injected: each carries KRUISE_EJOB_ID=<job uid> to mark ownership. */
export function ownedContainers(job: EphemeralJob): EphemeralContainer[] {
  const uid = job.metadata?.uid ?? '';
  return (job.spec?.template?.ephemeralContainers ?? []).map((c) => ({
    ...c,
    env: [...(c.env ?? []), { name: ENV_EPHEMERAL_JOB_ID, value: uid }],
  }));
}

const ownedBy = (uid: string, c: EphemeralContainer) => (c.env ?? []).some((e) => e.name === ENV_EPHEMERAL_JOB_ID && e.value === uid);

type PodState = 'Succeeded' | 'Failed' | 'Running' | 'Pending' | 'Unknown';

/** parseEphemeralPodStatus: a pod's state from the statuses of the job's containers. */
export function ephemeralPodState(names: ReadonlySet<string>, statuses: readonly ContainerStatus[]): PodState {
  let waiting = 0;
  let running = 0;
  let succeeded = 0;
  for (const s of statuses) {
    if (!names.has(s.name)) continue;
    const t = s.state?.terminated;
    if (t && t.finishedAt && t.exitCode === 0) succeeded++;
    else if (t && t.exitCode !== 0) return 'Failed';
    else if (s.state?.running) running++;
    else if (s.state?.waiting) {
      if (s.state.waiting.reason === 'RunContainerError') return 'Failed';
      waiting++;
    }
  }
  if (succeeded > 0 && succeeded === names.size) return 'Succeeded';
  if (running > 0) return 'Running';
  if (waiting > 0) return 'Pending';
  return 'Unknown';
}

/** addConditions: the condition of that type replaced (always True, fresh times). */
function addCondition(conditions: Condition[], type: Condition['type'], reason: string, message: string, now: string): Condition[] {
  const c: Condition = { type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason, message };
  const at = conditions.findIndex((x) => x.type === type);
  return at >= 0 ? conditions.map((x, i) => (i === at ? c : x)) : [...conditions, c];
}

export function planEphemeralJob({ job, pods, now }: PlanInput): EphemeralJobPlan {
  const nowTime = metaTime(now);
  const containers = ownedContainers(job);
  const base: EphemeralJobPlan = { inject: [], containers };
  const finalizers = job.metadata.finalizers ?? [];
  if (job.metadata.deletionTimestamp) {
    // Ephemeral containers cannot be removed from a pod: cleaning up is dropping the finalizer.
    return finalizers.includes(FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP) ? { ...base, finalizer: 'remove' } : base;
  }
  if (!finalizers.includes(FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP)) return { ...base, finalizer: 'add' };

  const old = job.status ?? {};
  if (old.completionTime) {
    const left = (job.spec?.ttlSecondsAfterFinished ?? DEFAULT_TTL_SECONDS) * 1000 - (now - (timeMillis(old.completionTime) ?? now));
    return left <= 0 ? { ...base, delete: true } : { ...base, requeueAfterMs: left };
  }

  const status: EphemeralJobStatus = structuredClone(old);
  status.startTime ??= nowTime;
  let requeueAfterMs: number | undefined;
  const deadline = job.spec?.activeDeadlineSeconds;
  if (deadline != null) requeueAfterMs = Math.max(0, deadline * 1000 - (now - (timeMillis(status.startTime) ?? now)));

  // filterPods: active pods matching the selector, oldest first, without a same-named container of someone else.
  const uid = job.metadata.uid ?? '';
  const names = new Set((job.spec?.template?.ephemeralContainers ?? []).map((c) => c.name));
  const selector = labelSelectorAsSelector(job.spec?.selector);
  const sorted = pods
    .filter((p) => p.metadata.namespace === job.metadata.namespace && selector.matches(p.metadata.labels) && isPodActive(p))
    .sort(
      (a, b) =>
        (timeMillis(a.metadata.creationTimestamp) ?? 0) - (timeMillis(b.metadata.creationTimestamp) ?? 0) ||
        ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0),
    );
  const targets: Pod[] = [];
  for (const p of sorted) {
    const duplicated = (p.spec?.ephemeralContainers ?? []).some((c) => names.has(c.name) && !ownedBy(uid, c));
    if (duplicated) continue;
    if (job.spec?.replicas == null || targets.length < job.spec.replicas) targets.push(p);
  }

  // calculateStatus.
  let conditions: Condition[] = status.conditions ?? [];
  if (!status.conditions)
    conditions = [
      { type: 'Initialized', status: 'True', lastProbeTime: nowTime, lastTransitionTime: nowTime, reason: 'Initialized', message: '' },
    ];
  const counts = { Succeeded: 0, Failed: 0, Running: 0, Pending: 0, Unknown: 0 };
  for (const p of targets) counts[ephemeralPodState(names, p.status?.ephemeralContainerStatuses ?? [])]++;
  status.match = targets.length;
  status.succeeded = counts.Succeeded;
  status.failed = counts.Failed;
  status.running = counts.Running;
  status.waiting = counts.Pending;
  const replicas = job.spec?.replicas ?? targets.length;
  if (status.match === 0) {
    status.phase = 'Waiting';
    conditions = addCondition(conditions, 'MatchedEmpty', 'MatchEmpty', 'job match no pods', nowTime);
  } else if (status.succeeded === replicas && status.succeeded > 0) {
    status.completionTime = nowTime;
    status.phase = 'Succeeded';
    conditions = addCondition(conditions, 'JobSucceeded', 'JobSucceeded', 'job success to run all tasks', nowTime);
  } else if (status.running > 0) {
    status.phase = 'Running';
  } else if (status.failed === replicas) {
    status.completionTime = nowTime;
    status.phase = 'Failed';
    conditions = addCondition(conditions, 'JobFailed', 'JobFailed', 'job failed to run all tasks', nowTime);
  } else if (status.waiting === replicas) {
    status.phase = 'Waiting';
  } else {
    status.phase = 'Unknown';
  }
  if (job.spec?.paused) status.phase = 'Paused';
  const ref = `${job.metadata.namespace}/${job.metadata.name}`;
  if (status.failed > 0)
    conditions = addCondition(conditions, 'JobFailed', 'CreateFailed', `EphemeralJob ${ref} failed to create ephemeral container`, nowTime);
  const phase = status.phase;
  if (
    (phase === 'Waiting' || phase === 'Unknown' || phase === 'Running') &&
    deadline != null &&
    now - (timeMillis(status.startTime) ?? now) >= deadline * 1000
  ) {
    status.completionTime = nowTime;
    status.phase = 'Failed';
    conditions = addCondition(
      conditions,
      'JobFailed',
      'DeadlineExceeded',
      `EphemeralJob ${ref} was active longer than specified deadline`,
      nowTime,
    );
  }
  if (names.size === 0) {
    status.phase = 'Error';
    conditions = addCondition(conditions, 'JobError', 'Error', 'job spec invalid fields.', nowTime);
  }
  status.conditions = conditions;

  // syncTargetPods: inject up to parallelism. Injected containers the kubelet has not reported yet
  // count as running, so parallelism holds in that window too.
  let inject: Pod[] = [];
  if (status.phase !== 'Paused' && !status.completionTime && names.size > 0) {
    const injected = (p: Pod) => (p.spec?.ephemeralContainers ?? []).some((c) => names.has(c.name) && ownedBy(uid, c));
    const toCreate = targets.filter((p) => !injected(p));
    const unreported = targets.filter(
      (p) => injected(p) && ephemeralPodState(names, p.status?.ephemeralContainerStatuses ?? []) === 'Unknown',
    ).length;
    const parallelism = Math.min(job.spec?.parallelism ?? DEFAULT_PARALLELISM, toCreate.length);
    const budget = parallelism - (status.running ?? 0) - unreported;
    if (budget > 0) inject = toCreate.slice(0, budget);
  }

  // Conditions carry probe times: compare without them, or every round would write.
  const changed = marshalGoJSON(stripProbe(old)) !== marshalGoJSON(stripProbe(status));
  return { ...base, inject, status: changed ? status : undefined, requeueAfterMs };
}

function stripProbe(s: EphemeralJobStatus): unknown {
  return { ...s, conditions: s.conditions?.map((c) => ({ ...c, lastProbeTime: undefined, lastTransitionTime: undefined })) };
}
