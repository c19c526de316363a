// Applies one AdvancedCronJob plan (plan.ts) through the API, in upstream's order: the status, the
// children beyond the history limits, the active children a Replace run supersedes, then the new
// child. Deletions propagate in the background; every create and delete is a scale expectation
// (by child name) recorded before the call.
import type { KubeClient } from '../../runtime/client.ts';
import { isAlreadyExists, isNamespaceTerminating, isNotFound } from '../../runtime/errors.ts';
import { AdvancedCronJobs, BroadcastJobs, ImageListPullJobs, Jobs, type ResourceType } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { writeStatus } from '../../runtime/writes.ts';
import type { AdvancedCronJob, AdvancedCronJobPlan, CronChild, TemplateKind } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

export type AdvancedCronJobClient = Pick<KubeClient, 'create' | 'delete' | 'updateStatus'>;

export const CHILD_RESOURCES: Record<TemplateKind, ResourceType> = {
  Job: Jobs,
  BroadcastJob: BroadcastJobs,
  ImageListPullJob: ImageListPullJobs,
};

export interface AdvancedCronJobExecutorDeps {
  client: AdvancedCronJobClient;
  recorder: EventRecorder;
  log: Logger;
  /** Children created / deleted per cron job key, by name. */
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
}

export const cronJobKeyOf = (cronJob: AdvancedCronJob) => `${cronJob.metadata.namespace ?? ''}/${cronJob.metadata.name ?? ''}`;

export class AdvancedCronJobExecutor {
  constructor(private readonly deps: AdvancedCronJobExecutorDeps) {}

  async execute(cronJob: AdvancedCronJob, plan: AdvancedCronJobPlan): Promise<ReconcileResult> {
    const { client, recorder } = this.deps;
    const resource = CHILD_RESOURCES[plan.kind];
    for (const e of plan.events) recorder.event(cronJob, e.type, e.reason, e.reason, e.message);
    const w = await writeStatus(client, AdvancedCronJobs, cronJob, plan.status, this.deps.resourceVersions);
    if (w.ended) return w.ended;

    for (const child of plan.deleteHistory) {
      try {
        await this.deleteChild(cronJob, resource, child);
      } catch (err) {
        // As upstream: a child that could not be trimmed does not stop the schedule.
        this.deps.log.info({ child: child.metadata.name, err: errMessage(err) }, 'could not delete an old finished child');
      }
    }
    for (const child of plan.deleteActive) {
      await this.deleteChild(cronJob, resource, child);
      recorder.event(cronJob, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted job ${child.metadata.name}`);
    }
    if (plan.create) await this.createChild(cronJob, resource, plan.create);
    return { requeueAfterMs: plan.requeueAfterMs };
  }

  private async deleteChild(cronJob: AdvancedCronJob, resource: ResourceType, child: CronChild): Promise<void> {
    const key = cronJobKeyOf(cronJob);
    const name = child.metadata.name ?? '';
    this.deps.scaleExpectations.expectScale(key, 'delete', name);
    try {
      await this.deps.client.delete(resource, name, {
        namespace: child.metadata.namespace,
        propagationPolicy: 'Background',
        preconditions: { uid: child.metadata.uid },
      });
    } catch (err) {
      this.deps.scaleExpectations.observeScale(key, 'delete', name);
      if (!isNotFound(err)) throw err;
    }
  }

  private async createChild(cronJob: AdvancedCronJob, resource: ResourceType, child: CronChild): Promise<void> {
    const key = cronJobKeyOf(cronJob);
    const name = child.metadata.name ?? '';
    this.deps.scaleExpectations.expectScale(key, 'create', name);
    try {
      await this.deps.client.create(resource, child);
    } catch (err) {
      this.deps.scaleExpectations.observeScale(key, 'create', name);
      // The run exists already: the cache had not shown it yet.
      if (isAlreadyExists(err) || isNamespaceTerminating(err)) return;
      this.deps.recorder.event(cronJob, 'Warning', 'FailedCreate', 'Create', `Error creating job: ${errMessage(err)}`);
      throw err;
    }
    this.deps.recorder.event(cronJob, 'Normal', 'SuccessfulCreate', 'Create', `Created job ${name}`);
  }
}
