// Applies a workload's image pre-download plan (src/util/imagepredownload.ts, spec §12.4): creates
// the ImagePullJobs for the update revision's new images, deletes them once revisions converge and
// labels the revision so the decision is made once. Best effort, as upstream: a failure is an
// event or a log line and never holds the rollout. Shared by CloneSet and Advanced DaemonSet.

import type { ImagePullJob } from '../../apis/apps/imagepulljob.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import type { KubeObject, Stored } from '../../apis/core-objects.ts';
import { ignoreNotFound, isAlreadyExists } from '../../runtime/errors.ts';
import { ControllerRevisions, ImagePullJobs } from '../../runtime/resources.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import type { PreDownloadPlan } from '../../util/imagepredownload.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { errMessage } from '../../util/errors.ts';

export interface PreDownloadDeps {
  client: Pick<KubeClient, 'create' | 'delete' | 'patch'>;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
}

export async function applyPreDownload(
  deps: PreDownloadDeps,
  owner: KubeObject,
  pd: PreDownloadPlan,
  event: (type: 'Normal' | 'Warning', reason: string, note: string) => void,
): Promise<void> {
  const ns = owner.metadata.namespace ?? '';
  for (const job of pd.createJobs) {
    const name = job.metadata?.name ?? '';
    try {
      await deps.client.create(ImagePullJobs, job as Stored<ImagePullJob>);
      event('Normal', 'CreatedImagePullJob', `created ImagePullJob ${name} for image: ${job.spec?.image}`);
    } catch (err) {
      if (isAlreadyExists(err)) continue;
      event('Normal', 'FailedCreateImagePullJob', `failed to create ImagePullJob ${name}: ${errMessage(err)}`);
      // Without the jobs, the revision must not be marked as handled: retry next round.
      return;
    }
  }
  for (const name of pd.deleteJobs) {
    try {
      await ignoreNotFound(deps.client.delete(ImagePullJobs, name, { namespace: ns }));
    } catch (err) {
      deps.log.error({ err: errMessage(err), job: name }, 'failed to delete ImagePullJob');
    }
  }
  if (pd.labelRevision) {
    const { name, key } = pd.labelRevision;
    try {
      const updated = await deps.client.patch<ControllerRevision>(
        ControllerRevisions,
        name,
        { metadata: { labels: { [key]: 'true' } } },
        { namespace: ns, patchType: PatchType.Merge },
      );
      deps.resourceVersions.expect(updated);
    } catch (err) {
      deps.log.error({ err: errMessage(err), revision: name }, 'failed to label ControllerRevision for image pre-download');
    }
  }
}
