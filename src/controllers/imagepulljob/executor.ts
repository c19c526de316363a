// Applies an ImagePullJob plan (plan.ts) through the API, in order: finalizer, pull-secret copies,
// NodeImage claims, status; for a finished job: secrets, finalizer, TTL deletion. Creations are
// recorded as expectations first, and every write's resourceVersion is expected in the cache.
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { ignoreNotFound, isConflict, isNotFound } from '../../runtime/errors.ts';
import { Secrets, ImagePullJobs, NodeImages } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../apis/constants.ts';
import { jobKey, type ImagePullJob, type NodeImage } from '../imagejobs/resources.ts';
import type { Secret } from '../../apis/core-objects.ts';
import { claimNodeImage, type Claims, type ImagePullJobPlan, type SecretWrites } from './plan.ts';

/** Writes into one NodeImage retried against a fresh copy (retry.RetryOnConflict). */
const NODEIMAGE_UPDATE_ATTEMPTS = 5;

const requeue = (ms: number | undefined): ReconcileResult => (ms === undefined ? {} : { requeueAfterMs: ms });

/** The calls the executor makes (a KubeClient in production). */
export type ImagePullJobClient = Pick<KubeClient, 'get' | 'create' | 'update' | 'patch' | 'delete' | 'updateStatus'>;

export interface ImagePullJobExecutorDeps {
  client: ImagePullJobClient;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  getNodeImage(name: string): NodeImage | undefined;
}

export class ImagePullJobExecutor {
  constructor(private readonly deps: ImagePullJobExecutorDeps) {}

  async execute(job: ImagePullJob, plan: ImagePullJobPlan): Promise<ReconcileResult> {
    if (plan.kind === 'finalize') {
      if (plan.secrets) await this.writeSecrets(job, plan.secrets);
      if (plan.finalizers) await this.patchFinalizers(job, plan.finalizers);
      if (plan.deleteJob) {
        this.deps.log.info('deleting ImagePullJob for ttlSecondsAfterFinished');
        await ignoreNotFound(
          this.deps.client.delete(ImagePullJobs, job.metadata.name ?? '', {
            namespace: job.metadata.namespace,
            preconditions: { uid: job.metadata.uid },
          }),
        );
        return {};
      }
      return requeue(plan.requeueAfterMs);
    }
    if (plan.finalizers && !(await this.patchFinalizers(job, plan.finalizers))) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
    await this.writeSecrets(job, plan.secrets);
    if (plan.claims) await this.claim(plan.claims);
    const w = await writeStatus(this.deps.client, ImagePullJobs, job, plan.status, this.deps.resourceVersions);
    if (w.ended) return w.ended;
    return requeue(plan.requeueAfterMs);
  }

  /** False on a conflict or a gone job (the cache is behind; the next round sees the newer job). */
  private async patchFinalizers(job: ImagePullJob, finalizers: string[]): Promise<boolean> {
    try {
      const patched = await this.deps.client.patch<ImagePullJob>(
        ImagePullJobs,
        job.metadata.name ?? '',
        { metadata: { finalizers, resourceVersion: job.metadata.resourceVersion } },
        { namespace: job.metadata.namespace, patchType: PatchType.Merge },
      );
      this.deps.resourceVersions.expect(patched);
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return false;
      throw err;
    }
  }

  private async writeSecrets(job: ImagePullJob, plan: SecretWrites): Promise<void> {
    for (const s of plan.delete) {
      await ignoreNotFound(
        this.deps.client.delete(Secrets, s.metadata.name ?? '', {
          namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
          preconditions: { uid: s.metadata.uid },
        }),
      );
    }
    // Update (not patch) keeps the references exact: a job that claimed the copy since our read
    // makes this write conflict instead of being dropped from the list.
    for (const s of plan.update) {
      const written = await this.deps.client.update<Secret>(Secrets, s);
      this.deps.resourceVersions.expect(written);
    }
    if (plan.blocked) {
      this.deps.recorder.event(job, 'Warning', 'FailedSyncSecrets', 'SyncSecrets', plan.blocked);
      throw new Error(plan.blocked);
    }
    const key = jobKey(job);
    for (const s of plan.create) {
      this.deps.scaleExpectations.expectScale(key, 'create', s.metadata.name ?? '');
      try {
        await this.deps.client.create<Secret>(Secrets, s);
      } catch (err) {
        this.deps.scaleExpectations.observeScale(key, 'create', s.metadata.name ?? '');
        throw err;
      }
    }
  }

  /** Applies the claim to each cached NodeImage, then to fresh copies while the update conflicts. */
  private async claim({ nodes, imageName, claim }: Claims): Promise<void> {
    for (const name of nodes) {
      let current = this.deps.getNodeImage(name);
      for (let attempt = 1; current; attempt++) {
        const entry = claimNodeImage({ ...claim, nodeImage: current });
        if (!entry) break;
        const updated: NodeImage = { ...current, spec: { ...current.spec, images: { ...current.spec?.images, [imageName]: entry } } };
        try {
          const written = await this.deps.client.update<NodeImage>(NodeImages, updated);
          this.deps.resourceVersions.expect(written);
          break;
        } catch (err) {
          if (isNotFound(err)) break;
          if (!isConflict(err) || attempt >= NODEIMAGE_UPDATE_ATTEMPTS) throw err;
        }
        current = await ignoreNotFound(this.deps.client.get<NodeImage>(NodeImages, name));
      }
    }
  }
}
