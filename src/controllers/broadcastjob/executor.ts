// Applies one BroadcastJob plan (plan.ts) through the API: the TTL deletion of a finished job, or
// spec.paused (failurePolicy Pause), pod deletions and slow-start creations (each a scale
// expectation keyed by node, recorded before the call, as upstream), events and the status.
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { ignoreNotFound, isNamespaceTerminating, isNotFound } from '../../runtime/errors.ts';
import { BroadcastJobs, Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { applyWrites, writeStatus } from '../../runtime/writes.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { targetNodeName } from '../../util/nodefit.ts';
import { slowStartBatches } from '../workload-writes.ts';
import type { BroadcastJob, BroadcastJobPlan } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

export type BroadcastJobClient = Pick<KubeClient, 'create' | 'delete' | 'patch' | 'updateStatus'>;

export interface BroadcastJobExecutorDeps {
  client: BroadcastJobClient;
  recorder: EventRecorder;
  log: Logger;
  /** Pods created / deleted per job key, by node name. */
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
}

export const jobKeyOf = (job: BroadcastJob) => `${job.metadata.namespace ?? ''}/${job.metadata.name ?? ''}`;

export class BroadcastJobExecutor {
  constructor(private readonly deps: BroadcastJobExecutorDeps) {}

  async execute(job: BroadcastJob, plan: BroadcastJobPlan): Promise<ReconcileResult> {
    const { client, recorder } = this.deps;
    const namespace = job.metadata.namespace ?? '';
    const name = job.metadata.name ?? '';
    if (plan.deleteJob) {
      this.deps.log.info({ job: jobKeyOf(job) }, 'deleting BroadcastJob after ttlSecondsAfterFinished');
      await ignoreNotFound(client.delete(BroadcastJobs, name, { namespace, preconditions: { uid: job.metadata.uid } }));
      return {};
    }
    return applyWrites(async () => {
      let current = job;
      if (plan.pauseJob) {
        current = await client.patch<BroadcastJob>(
          BroadcastJobs,
          name,
          { spec: { paused: true } },
          { namespace, patchType: PatchType.Merge },
        );
        this.deps.resourceVersions.expect(current);
      }
      const errors: string[] = [];
      try {
        await this.deletePods(job, plan.deletePods);
      } catch (err) {
        errors.push(errMessage(err));
      }
      try {
        await this.createPods(job, plan.createPods);
      } catch (err) {
        errors.push(errMessage(err));
      }
      for (const e of plan.events) recorder.event(job, e.type, e.reason, e.reason, e.message);
      // A round whose pod writes failed stores nothing: the next one counts again from the cache.
      if (errors.length) throw new Error(errors.join('; '));
      const w = await writeStatus(client, BroadcastJobs, current, plan.status, this.deps.resourceVersions);
      return w.ended ?? { requeueAfterMs: plan.requeueAfterMs };
    });
  }

  private async deletePods(job: BroadcastJob, pods: readonly Pod[]): Promise<void> {
    const key = jobKeyOf(job);
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        const node = targetNodeName(pod) ?? '';
        this.deps.scaleExpectations.expectScale(key, 'delete', node);
        try {
          await this.deps.client.delete(Pods, pod.metadata.name ?? '', {
            namespace: pod.metadata.namespace,
            preconditions: { uid: pod.metadata.uid },
          });
        } catch (err) {
          this.deps.scaleExpectations.observeScale(key, 'delete', node);
          if (isNotFound(err)) return;
          throw err;
        }
        this.deps.recorder.event(job, 'Normal', 'SuccessfulDelete', 'Delete', `Delete pod: ${pod.metadata.name}`);
      }),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  /** Slow-start batches (1, 2, 4, …); a failing batch stops the rest. */
  private async createPods(job: BroadcastJob, pods: readonly Pod[]): Promise<void> {
    const key = jobKeyOf(job);
    let next = 0;
    for (const size of slowStartBatches(pods.length)) {
      const batch = pods.slice(next, next + size);
      next += size;
      const results = await Promise.allSettled(batch.map((pod) => this.createOne(job, key, pod)));
      const failures = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as unknown);
      if (!failures.length) continue;
      // A namespace being deleted refuses pods for good; its deletion takes the job too.
      if (failures.some(isNamespaceTerminating)) return;
      throw failures[0];
    }
  }

  private async createOne(job: BroadcastJob, key: string, pod: Pod): Promise<void> {
    const node = targetNodeName(pod) ?? '';
    this.deps.scaleExpectations.expectScale(key, 'create', node);
    let created: Pod;
    try {
      created = await this.deps.client.create<Pod>(Pods, pod);
    } catch (err) {
      this.deps.scaleExpectations.observeScale(key, 'create', node);
      if (!isNamespaceTerminating(err))
        this.deps.recorder.event(job, 'Warning', 'FailedCreate', 'Create', `Error creating: ${errMessage(err)}`);
      throw err;
    }
    this.deps.recorder.event(job, 'Normal', 'SuccessfulCreate', 'Create', `Created pod: ${created.metadata.name}`);
  }
}
