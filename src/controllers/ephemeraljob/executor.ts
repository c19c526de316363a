// Applies one EphemeralJob plan (plan.ts) through the API: the cleanup finalizer (added first, or
// released from a job being deleted), the deletion after the TTL, the injection through the pods'
// `ephemeralcontainers` subresource, then the status. Every written version is expected in the
// cache before the next round plans from it.

import type { EphemeralJob } from '../../apis/apps/ephemeraljob.ts';
import { FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP } from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { EphemeralJobs, Pods } from '../../runtime/resources.ts';
import { isNotFound } from '../../runtime/errors.ts';
import type { Stored } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import { applyWrites, writeStatus } from '../../runtime/writes.ts';
import { errMessage } from '../../util/errors.ts';
import type { EphemeralJobPlan } from './plan.ts';

export interface EphemeralJobExecutorDeps {
  client: Pick<KubeClient, 'patch' | 'delete' | 'updateStatus'>;
  recorder: EventRecorder;
  resourceVersions: ResourceVersionExpectations;
}

export class EphemeralJobExecutor {
  constructor(private readonly deps: EphemeralJobExecutorDeps) {}

  execute(job: Stored<EphemeralJob>, plan: EphemeralJobPlan): Promise<ReconcileResult> {
    return applyWrites(() => this.write(job, plan));
  }

  private async write(job: Stored<EphemeralJob>, plan: EphemeralJobPlan): Promise<ReconcileResult> {
    const { client, resourceVersions } = this.deps;
    const ns = job.metadata.namespace ?? '';
    const name = job.metadata.name ?? '';
    if (plan.finalizer) {
      const current = job.metadata.finalizers ?? [];
      const finalizers =
        plan.finalizer === 'add'
          ? [...current, FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP]
          : current.filter((f) => f !== FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP);
      const patch = { metadata: { finalizers, resourceVersion: job.metadata.resourceVersion } };
      resourceVersions.expect(await client.patch(EphemeralJobs, name, patch, { namespace: ns, patchType: PatchType.Merge }));
      return {};
    }
    if (plan.delete) {
      await client.delete(EphemeralJobs, name, { namespace: ns, preconditions: { uid: job.metadata.uid } });
      return {};
    }
    for (const pod of plan.inject) {
      try {
        const written = await client.patch<Pod>(
          Pods,
          pod.metadata.name ?? '',
          { spec: { ephemeralContainers: plan.containers } },
          { namespace: ns, patchType: PatchType.StrategicMerge, subresource: 'ephemeralcontainers' },
        );
        resourceVersions.expect(written);
      } catch (err) {
        if (isNotFound(err)) continue;
        const message = `failed to create ephemeral container in pod ${ns}/${pod.metadata.name}: ${errMessage(err)}`;
        this.deps.recorder.event(job, 'Warning', 'CreateFailed', 'Inject', message);
        throw err;
      }
    }
    const status = await writeStatus(client, EphemeralJobs, job, plan.status, resourceVersions);
    if (status.ended) return status.ended;
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {};
  }
}
