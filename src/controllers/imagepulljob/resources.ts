// The ImagePullJob resource and the object shapes its controller reads and writes.
import type { ImagePullJob as ImagePullJobApi } from '../../apis/apps/imagepulljob.ts';
import type { Stored } from '../../apis/core-objects.ts';

export type ImagePullJob = Stored<ImagePullJobApi>;
export type ImagePullJobStatus = NonNullable<ImagePullJob['status']>;

/** A job is active (may still write NodeImages) until it completes or is being deleted. */
export function isActiveJob(job: ImagePullJob): boolean {
  return !job.metadata.deletionTimestamp && !job.status?.completionTime;
}
