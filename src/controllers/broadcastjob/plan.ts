// The BroadcastJob controller's decisions (upstream pkg/controller/broadcastjob, behaviour spec §7),
// pure: from the job, its pods, the nodes and the time, which pods to create (one per fitting node,
// within parallelism) and delete, the phase, conditions and counters, and when to look again.
import { isDeepStrictEqual } from 'node:util';
import type { BroadcastJob as BroadcastJobApi } from '../../apis/apps/broadcastjob.ts';
import { BROADCASTJOB_CONTROLLER_UID_LABEL, BROADCASTJOB_NAME_LABEL } from '../../apis/constants.ts';
import type { Node, OwnerReference, Pod, Stored } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { nodeFitFailure, targetNodeName, withNodeNameAffinity } from '../../util/nodefit.ts';
import { isPodActive, timeMillis } from '../../util/pod.ts';
import { errMessage } from '../../util/errors.ts';

export type BroadcastJob = Stored<BroadcastJobApi>;
export type BroadcastJobStatus = NonNullable<BroadcastJob['status']>;
type JobCondition = NonNullable<BroadcastJobStatus['conditions']>[number];

/** Parallelism when unset: no limit (math.MaxInt32). */
const UNLIMITED = 2 ** 31 - 1;

export interface BroadcastJobEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface BroadcastJobPlan {
  /** The job finished longer than ttlSecondsAfterFinished ago: delete it, nothing else. */
  deleteJob: boolean;
  /** failurePolicy Pause met a failed pod: store spec.paused=true. */
  pauseJob: boolean;
  /** New pods, each pinned to its node (the scale expectation's key), in creation order. */
  createPods: Pod[];
  /** Pods to delete: active pods of a failed job, pods on nodes they no longer fit. */
  deletePods: Pod[];
  /** The new status; undefined when unchanged. */
  status?: BroadcastJobStatus;
  events: BroadcastJobEvent[];
  requeueAfterMs?: number;
}

export interface BroadcastJobPlanInput {
  job: BroadcastJob;
  /** Pods the job controls. */
  pods: readonly Pod[];
  nodes: readonly Node[];
  nowMs: number;
  /** --assign-bcj-pods-by-scheduler (default true). */
  bindByScheduler?: boolean;
}

/** The labels that tie a pod to its job (upstream labelsAsMap). */
export function jobLabels(job: BroadcastJob): Record<string, string> {
  return { [BROADCASTJOB_NAME_LABEL]: job.metadata.name ?? '', [BROADCASTJOB_CONTROLLER_UID_LABEL]: job.metadata.uid ?? '' };
}

export function broadcastJobControllerRef(job: BroadcastJob): OwnerReference {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'BroadcastJob',
    name: job.metadata.name ?? '',
    uid: job.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

const completionType = (job: BroadcastJob) => job.spec?.completionPolicy?.type ?? 'Always';

/** IsJobFinished: a Complete or Failed condition is True (never for completionPolicy Never). */
export function isJobFinished(job: BroadcastJob): boolean {
  if (completionType(job) === 'Never') return false;
  return (job.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/** isPodFailed: an OnFailure pod restarted more than restartLimit times, a Never pod whose container exited non-zero. */
export function isPodFailed(restartLimit: number, pod: Pod): boolean {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  if (pod.spec?.restartPolicy === 'OnFailure') return statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0) > restartLimit;
  if (pod.spec?.restartPolicy === 'Never') return statuses.some((s) => (s.state?.terminated?.exitCode ?? 0) !== 0);
  return false;
}

/** filterPods: active, failed, succeeded; pods being deleted before they finished count in none. */
export function classifyPods(restartLimit: number, pods: readonly Pod[]): { active: Pod[]; failed: Pod[]; succeeded: Pod[] } {
  const out = { active: [] as Pod[], failed: [] as Pod[], succeeded: [] as Pod[] };
  for (const p of pods) {
    if (p.status?.phase === 'Succeeded') out.succeeded.push(p);
    else if (p.status?.phase === 'Failed') out.failed.push(p);
    else if (!p.metadata.deletionTimestamp) (isPodFailed(restartLimit, p) ? out.failed : out.active).push(p);
  }
  return out;
}

/** The pod the job would run on a node (NewMockPod): the template pinned by nodeName. */
function mockPodSpec(job: BroadcastJob, node: string) {
  return { containers: [], ...job.spec?.template?.spec, nodeName: node };
}

/**
 * The pod created for a node (GetPodFromTemplate), bound by a node-name affinity the scheduler
 * honours, or (--assign-bcj-pods-by-scheduler=false) by spec.nodeName directly.
 */
export function newPod(job: BroadcastJob, node: string, bindByScheduler = true): Pod {
  const template = structuredClone(job.spec?.template ?? {});
  const spec = { containers: [], ...template.spec };
  if (bindByScheduler) spec.affinity = withNodeNameAffinity(spec.affinity, node);
  else spec.nodeName = node;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${job.metadata.name ?? ''}-`,
      namespace: job.metadata.namespace,
      labels: { ...template.metadata?.labels, ...jobLabels(job) },
      ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
      ...(template.metadata?.finalizers?.length ? { finalizers: template.metadata.finalizers } : {}),
      ownerReferences: [broadcastJobControllerRef(job)],
    },
    spec,
  };
}

export interface NodePlacement {
  /** Every node the job should cover, with its pod when it has one. */
  desired: Map<string, Pod | undefined>;
  /** Fitting nodes without a pod, by name. */
  rest: string[];
  /** Pods (not yet being deleted) on nodes they no longer fit. */
  misplaced: Pod[];
}

/** getNodesToRunPod: which nodes are desired, which still need a pod, which pods must go. */
export function placeOnNodes(job: BroadcastJob, podByNode: ReadonlyMap<string, Pod>, nodes: readonly Node[]): NodePlacement {
  const out: NodePlacement = { desired: new Map(), rest: [], misplaced: [] };
  const sorted = [...nodes].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  for (const node of sorted) {
    const name = node.metadata.name ?? '';
    const pod = podByNode.get(name);
    if (pod) {
      if (nodeFitFailure(pod.spec, node) === undefined) out.desired.set(name, pod);
      else if (!pod.metadata.deletionTimestamp) out.misplaced.push(pod);
    } else if (nodeFitFailure(mockPodSpec(job, name), node) === undefined) {
      out.desired.set(name, undefined);
      out.rest.push(name);
    }
  }
  return out;
}

function condition(type: 'Complete' | 'Failed', message: string, nowMs: number): JobCondition {
  const now = metaTime(nowMs);
  return { type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason: type, message };
}

/** Drops undefined members, so a planned status compares equal to the stored one. */
function pruned<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function planBroadcastJob({ job, pods, nodes, nowMs, bindByScheduler = true }: BroadcastJobPlanInput): BroadcastJobPlan {
  const plan: BroadcastJobPlan = { deleteJob: false, pauseJob: false, createPods: [], deletePods: [], events: [] };
  const ns = job.metadata.namespace ?? '';
  const name = job.metadata.name ?? '';
  const policy = job.spec?.completionPolicy ?? {};
  const ttl = policy.ttlSecondsAfterFinished;

  // 1. A finished job only waits for its TTL.
  if (isJobFinished(job)) {
    const completed = timeMillis(job.status?.completionTime);
    if (ttl != null && completed !== undefined) {
      const left = ttl * 1000 - (nowMs - completed);
      if (left <= 0) plan.deleteJob = true;
      else plan.requeueAfterMs = left;
    }
    return plan;
  }

  // 2. Start time and default phase.
  const status: BroadcastJobStatus = structuredClone(job.status ?? {});
  status.startTime ??= metaTime(nowMs);
  status.phase ??= 'running';
  const deadline = policy.activeDeadlineSeconds;
  const started = timeMillis(status.startTime) ?? nowMs;
  if (completionType(job) === 'Always' && deadline != null) {
    // Look again when the deadline passes (upstream only when it sets startTime; a restarted manager must too).
    const left = deadline * 1000 - (nowMs - started);
    if (left > 0) plan.requeueAfterMs = left;
  }

  // 3. Classify pods; map them to their nodes.
  const restartLimit = job.spec?.failurePolicy?.restartLimit ?? 0;
  const classified = classifyPods(restartLimit, pods);
  const podByNode = new Map<string, Pod>();
  for (const p of pods) {
    const node = targetNodeName(p) ?? '';
    const other = podByNode.get(node);
    if (other)
      plan.events.push({
        type: 'Warning',
        reason: 'DuplicatePodCreatedOnSameNode',
        message: `Duplicated pod ${p.metadata.name} found on same node ${node}`,
      });
    podByNode.set(node, p);
  }

  // 4. Node fitness.
  const placement = placeOnNodes(job, podByNode, nodes);
  let active = classified.active.length;
  let failed = classified.failed.length;
  const succeeded = classified.succeeded.length;
  const desired = placement.desired.size;
  Object.assign(status, { active, failed, succeeded, desired });

  const finish = (s: BroadcastJobStatus) => {
    const out = pruned(s);
    plan.status = isDeepStrictEqual(out, pruned(job.status ?? {})) ? undefined : out;
    return plan;
  };

  // 5. Failed stays failed; paused creates nothing.
  if (status.phase === 'failed') return finish(status);
  if (job.spec?.paused && (status.phase === 'running' || status.phase === 'paused')) {
    status.phase = 'paused';
    return finish(status);
  }
  if (!job.spec?.paused && status.phase === 'paused') {
    status.phase = 'running';
    plan.events.push({ type: 'Normal', reason: 'Continue', message: 'continue to process job' });
  }

  // 6. Failure policy and deadline.
  let failure: { reason: string; message: string } | undefined;
  if (failed > 0) {
    const type = job.spec?.failurePolicy?.type ?? 'FailFast';
    if (type === 'Pause') {
      plan.events.push({ type: 'Warning', reason: 'Paused', message: 'job is paused, due to failed pod' });
      plan.pauseJob = true;
      status.phase = 'paused';
      return finish(status);
    }
    if (type === 'FailFast') {
      failure = {
        reason: 'failed pod is found',
        message: 'failure policy is FailurePolicyTypeFailFast and failed pod is found',
      };
      plan.events.push({
        type: 'Warning',
        reason: failure.reason,
        message: `${failure.message}: ${succeeded} pods succeeded, ${failed} pods failed`,
      });
    }
  }
  if (!failure && completionType(job) !== 'Never' && deadline != null && nowMs - started >= deadline * 1000) {
    failure = { reason: 'DeadlineExceeded', message: `Job ${ns}/${name} was active longer than specified deadline` };
  }

  // 7. Failed: delete the active pods. Otherwise place pods and look for completion.
  if (failure) {
    // Upstream counts every pod it deletes as failed.
    plan.deletePods.push(...classified.active);
    failed += classified.active.length;
    active -= classified.active.length;
    status.phase = 'failed';
    status.conditions = [...(status.conditions ?? []), condition('Failed', failure.message, nowMs)];
    status.completionTime = metaTime(nowMs);
    plan.requeueAfterMs = ttl != null ? (ttl + 1) * 1000 : undefined;
    plan.events.push({
      type: 'Warning',
      reason: failure.reason,
      message: `${failure.message}: ${succeeded} pods succeeded, ${failed} pods failed`,
    });
    return finish({ ...status, active, failed });
  }

  if (placement.misplaced.length) {
    plan.deletePods.push(...placement.misplaced);
    const misplacedActive = placement.misplaced.filter((p) => classified.active.includes(p)).length;
    failed += placement.misplaced.length;
    active -= misplacedActive;
  }

  if (!job.metadata.deletionTimestamp && placement.rest.length) {
    let parallelism: number | undefined;
    try {
      parallelism = getScaledValueFromIntOrPercent(job.spec?.parallelism ?? UNLIMITED, desired, true);
    } catch (err) {
      plan.events.push({ type: 'Warning', reason: 'InvalidParallelism', message: errMessage(err) });
    }
    if (parallelism !== undefined) {
      if (active > parallelism) {
        plan.events.push({ type: 'Warning', reason: 'TooManyActivePods', message: 'Number of active pods exceed parallelism limit' });
      } else if (active < parallelism) {
        const toCreate = placement.rest.slice(0, parallelism - active);
        plan.createPods = toCreate.map((node) => newPod(job, node, bindByScheduler));
        active += toCreate.length;
      }
    }
  }

  // isJobComplete: every desired node has a pod that is no longer active.
  const complete =
    completionType(job) !== 'Never' &&
    placement.desired.size > 0 &&
    [...placement.desired.values()].every((p) => p !== undefined && !isPodActive(p));
  if (complete) {
    status.phase = 'completed';
    status.conditions = [
      ...(status.conditions ?? []),
      condition('Complete', `Job completed, ${succeeded} pods succeeded, ${failed} pods failed`, nowMs),
    ];
    status.completionTime = metaTime(nowMs);
    plan.requeueAfterMs = ttl != null ? (ttl + 1) * 1000 : undefined;
    plan.events.push({
      type: 'Normal',
      reason: 'JobComplete',
      message: `Job ${ns}/${name} is completed, ${succeeded} pods succeeded, ${failed} pods failed`,
    });
  }
  return finish({ ...status, active, failed });
}
