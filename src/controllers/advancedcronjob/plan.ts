// The AdvancedCronJob controller's decisions (upstream pkg/controller/advancedcronjob, behaviour
// spec §8; the CronJob "v2" algorithm), pure: from the cron job, its children of the template's
// kind and the time, the status, which children to delete (history limits, Replace), which child to
// create for the latest missed start time, and when the next start time is due.
import { isDeepStrictEqual } from 'node:util';
import type { AdvancedCronJob as AdvancedCronJobApi } from '../../apis/apps/advancedcronjob.ts';
import { SCHEDULED_AT_ANNOTATION } from '../../apis/constants.ts';
import type { KubeObject, ObjectReference, OwnerReference, Stored } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { formatInZone, localTimeZone, parseStandardCron } from '../../util/cron.ts';
import { timeMillis } from '../../util/pod.ts';
import { errMessage } from '../../util/errors.ts';

export type AdvancedCronJob = Stored<AdvancedCronJobApi>;
export type AdvancedCronJobStatus = NonNullable<AdvancedCronJob['status']>;
export type TemplateKind = 'Job' | 'BroadcastJob' | 'ImageListPullJob';

/** What the planner reads of a child, whichever its kind. */
export interface CronChild extends KubeObject {
  spec?: unknown;
  status?: {
    conditions?: Array<{ type: string; status: string }>;
    startTime?: string;
    completionTime?: string;
    succeeded?: number;
    desired?: number;
  };
}

/** More missed start times than this since the last one means something is off (clock skew, long outage). */
export const MAX_MISSED_START_TIMES = 100;

export interface CronJobEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface AdvancedCronJobPlan {
  kind: TemplateKind;
  /** The new status; undefined when unchanged. */
  status?: AdvancedCronJobStatus;
  /** Finished children beyond the history limits, oldest first. */
  deleteHistory: CronChild[];
  /** Active children replaced by the new run (concurrencyPolicy Replace). */
  deleteActive: CronChild[];
  create?: CronChild;
  events: CronJobEvent[];
  /** Until the next start time. */
  requeueAfterMs?: number;
}

export interface AdvancedCronJobPlanInput {
  cronJob: AdvancedCronJob;
  /** Children of the template's kind whose controller is the cron job. */
  children: readonly CronChild[];
  nowMs: number;
}

/** FindTemplateKind: the Job template, else the ImageListPullJob template, else BroadcastJob. */
export function templateKind(cronJob: AdvancedCronJob): TemplateKind {
  const t = cronJob.spec?.template;
  if (t?.jobTemplate) return 'Job';
  if (t?.imageListPullJobTemplate) return 'ImageListPullJob';
  return 'BroadcastJob';
}

/** formatSchedule: spec.timeZone as a TZ= prefix, unless the schedule names its own zone. */
export function effectiveSchedule(cronJob: AdvancedCronJob): string {
  const schedule = cronJob.spec?.schedule ?? '';
  const zone = cronJob.spec?.timeZone;
  if (schedule.includes('TZ') || zone == null) return schedule;
  return `TZ=${zone} ${schedule}`;
}

/** How a child ended: Complete, Failed, or undefined while it runs. */
export function childOutcome(kind: TemplateKind, child: CronChild): 'Complete' | 'Failed' | undefined {
  const status = child.status ?? {};
  if (kind === 'ImageListPullJob') {
    if (!status.completionTime) return undefined;
    return (status.succeeded ?? 0) === (status.desired ?? 0) ? 'Complete' : 'Failed';
  }
  const done = (status.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return done?.type as 'Complete' | 'Failed' | undefined;
}

export function cronJobControllerRef(cronJob: AdvancedCronJob): OwnerReference {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'AdvancedCronJob',
    name: cronJob.metadata.name ?? '',
    uid: cronJob.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

const CHILD_API_VERSION: Record<TemplateKind, string> = {
  Job: 'batch/v1',
  BroadcastJob: 'apps.kruise.io/v1beta1',
  ImageListPullJob: 'apps.kruise.io/v1beta1',
};

/** The child run for a scheduled time: named `<cron job>-<unix seconds>`, annotated with the time. */
export function newChild(cronJob: AdvancedCronJob, kind: TemplateKind, scheduledMs: number): CronChild {
  const t = cronJob.spec?.template;
  const template = kind === 'Job' ? t?.jobTemplate : kind === 'ImageListPullJob' ? t?.imageListPullJobTemplate : t?.broadcastJobTemplate;
  return {
    apiVersion: CHILD_API_VERSION[kind],
    kind,
    metadata: {
      name: `${cronJob.metadata.name ?? ''}-${Math.floor(scheduledMs / 1000)}`,
      namespace: cronJob.metadata.namespace,
      labels: { ...template?.metadata?.labels },
      // Go formats the scheduled time in the manager's own zone (time.Local).
      annotations: { ...template?.metadata?.annotations, [SCHEDULED_AT_ANNOTATION]: formatInZone(scheduledMs, localTimeZone()) },
      ownerReferences: [cronJobControllerRef(cronJob)],
    },
    spec: structuredClone(template?.spec ?? {}),
  };
}

function reference(kind: TemplateKind, child: CronChild): ObjectReference {
  const m = child.metadata;
  return {
    kind,
    namespace: m.namespace,
    name: m.name,
    uid: m.uid,
    apiVersion: child.apiVersion ?? CHILD_API_VERSION[kind],
    resourceVersion: m.resourceVersion,
  };
}

/** Oldest start first; children not started yet before all others (upstream's sort). */
function byStartTime(a: CronChild, b: CronChild): number {
  const x = timeMillis(a.status?.startTime);
  const y = timeMillis(b.status?.startTime);
  if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? -1 : 1;
  return x - y;
}

/** The children beyond `limit`, oldest first; none without a limit. */
function beyondLimit(children: readonly CronChild[], limit: number | undefined): CronChild[] {
  if (limit == null) return [];
  const sorted = [...children].sort(byStartTime);
  return sorted.slice(0, Math.max(0, sorted.length - limit));
}

/** Drops undefined members, so a planned status compares equal to the stored one. */
function pruned<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function planAdvancedCronJob({ cronJob, children, nowMs }: AdvancedCronJobPlanInput): AdvancedCronJobPlan {
  const kind = templateKind(cronJob);
  const plan: AdvancedCronJobPlan = { kind, deleteHistory: [], deleteActive: [], events: [] };
  const spec = cronJob.spec;

  // Sort the children and rebuild the status from them.
  const active: CronChild[] = [];
  const successful: CronChild[] = [];
  const failed: CronChild[] = [];
  let mostRecent: number | undefined;
  for (const child of children) {
    const outcome = childOutcome(kind, child);
    (outcome === 'Complete' ? successful : outcome === 'Failed' ? failed : active).push(child);
    const raw = child.metadata.annotations?.[SCHEDULED_AT_ANNOTATION];
    const scheduled = raw ? Date.parse(raw) : NaN;
    if (!Number.isNaN(scheduled) && (mostRecent === undefined || scheduled > mostRecent)) mostRecent = scheduled;
  }
  // Upstream clears lastScheduleTime when no child is left; kept here, or a history limit of 0
  // would delete the last run and then start it again as "missed".
  const lastScheduleTime = mostRecent !== undefined ? metaTime(mostRecent) : cronJob.status?.lastScheduleTime;
  const status: AdvancedCronJobStatus = pruned({
    ...cronJob.status,
    type: kind,
    active: active.length ? active.map((c) => reference(kind, c)) : undefined,
    lastScheduleTime,
  });
  if (!isDeepStrictEqual(status, pruned(cronJob.status ?? {}))) plan.status = status;

  // History limits.
  plan.deleteHistory.push(
    ...beyondLimit(failed, spec?.failedJobsHistoryLimit),
    ...beyondLimit(successful, spec?.successfulJobsHistoryLimit),
  );

  if (spec?.paused) return plan;

  // The latest missed start time since the last one (or creation), within startingDeadlineSeconds.
  let schedule;
  try {
    schedule = parseStandardCron(effectiveSchedule(cronJob));
  } catch (err) {
    const message = `unparsable schedule ${JSON.stringify(spec?.schedule ?? '')}: ${errMessage(err)}`;
    plan.events.push({ type: 'Warning', reason: 'UnparseableSchedule', message });
    return plan;
  }
  const deadline = spec?.startingDeadlineSeconds;
  let earliest = timeMillis(lastScheduleTime) ?? timeMillis(cronJob.metadata.creationTimestamp) ?? nowMs;
  if (deadline != null) earliest = Math.max(earliest, nowMs - deadline * 1000);
  let missed: number | undefined;
  if (earliest <= nowMs) {
    let starts = 0;
    for (let t = schedule.next(earliest); t !== undefined && t <= nowMs; t = schedule.next(t)) {
      missed = t;
      if (++starts > MAX_MISSED_START_TIMES) {
        plan.events.push({
          type: 'Warning',
          reason: 'TooManyMissedTimes',
          message: 'too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew',
        });
        return plan;
      }
    }
  }
  const next = schedule.next(nowMs);
  plan.requeueAfterMs = next !== undefined ? next - nowMs : undefined;
  if (missed === undefined) return plan;
  if (deadline != null && missed + deadline * 1000 < nowMs) return plan;

  // Concurrency.
  const policy = spec?.concurrencyPolicy ?? 'Allow';
  if (policy === 'Forbid' && active.length > 0) return plan;
  if (policy === 'Replace') plan.deleteActive.push(...active);

  plan.create = newChild(cronJob, kind, missed);
  return plan;
}
