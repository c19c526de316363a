// Applies an ImageListPullJob plan (plan.ts) through the API: the template hash label, then either
// the TTL deletion of a completed list job or the ImagePullJob creations and deletions (recorded as
// scale expectations first) and the status.
import { CONTROLLER_REVISION_HASH_LABEL } from '../../apis/constants.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { ignoreNotFound, isNotFound } from '../../runtime/errors.ts';
import { ImageListPullJobs, ImagePullJobs } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { writeStatus } from '../../runtime/writes.ts';
import type { ImagePullJob } from '../imagejobs/resources.ts';
import type { ImageListPullJob, ImageListPullJobPlan } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

export interface ImageListPullJobExecutorDeps {
  client: Pick<KubeClient, 'create' | 'delete' | 'patch' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
}

export class ImageListPullJobExecutor {
  constructor(private readonly deps: ImageListPullJobExecutorDeps) {}

  async execute(key: string, list: ImageListPullJob, plan: ImageListPullJobPlan): Promise<ReconcileResult> {
    const { client, scaleExpectations } = this.deps;
    const namespace = list.metadata.namespace ?? '';
    const name = list.metadata.name ?? '';
    if (plan.hashLabel) {
      try {
        await client.patch(
          ImageListPullJobs,
          name,
          { metadata: { labels: { [CONTROLLER_REVISION_HASH_LABEL]: plan.hashLabel } } },
          { namespace, patchType: PatchType.Merge },
        );
      } catch (err) {
        if (isNotFound(err)) return {};
        throw err;
      }
    }
    if (plan.finished) {
      if (plan.finished.action === 'delete') {
        this.deps.log.info('deleting ImageListPullJob for ttlSecondsAfterFinished');
        await ignoreNotFound(client.delete(ImageListPullJobs, name, { namespace, preconditions: { uid: list.metadata.uid } }));
        return {};
      }
      return { requeueAfterMs: plan.finished.requeueAfterMs };
    }

    const errors: string[] = [];
    let created = 0;
    for (const child of plan.create) {
      const image = child.spec?.image ?? '';
      scaleExpectations.expectScale(key, 'create', image);
      try {
        await client.create<ImagePullJob>(ImagePullJobs, child);
        created++;
      } catch (err) {
        scaleExpectations.observeScale(key, 'create', image);
        errors.push(`fail to create ImagePullJob for image ${image}: ${errMessage(err)}`);
        break;
      }
    }
    if (created) this.deps.recorder.event(list, 'Normal', 'Successful create ImagePullJob', 'Create', `Create ${created} ImagePullJob`);
    let deleted = 0;
    for (const child of plan.delete) {
      const image = child.spec?.image ?? '';
      scaleExpectations.expectScale(key, 'delete', image);
      try {
        await client.delete(ImagePullJobs, child.metadata.name ?? '', { namespace, preconditions: { uid: child.metadata.uid } });
        deleted++;
      } catch (err) {
        scaleExpectations.observeScale(key, 'delete', image);
        if (!isNotFound(err)) errors.push(`fail to delete ImagePullJob (${namespace}/${child.metadata.name}) for : ${errMessage(err)}`);
      }
    }
    if (deleted) this.deps.recorder.event(list, 'Normal', 'Successful delete ImagePullJob', 'Delete', `Delete ${deleted} ImagePullJob`);
    if (errors.length) throw new Error(errors.join('; '));

    const w = await writeStatus(client, ImageListPullJobs, list, plan.status);
    return w.ended ?? {};
  }
}
