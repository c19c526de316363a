// The ImagePullJob resource and the object shapes its controller reads and writes.
import type { ImagePullJob as ImagePullJobApi } from '../../apis/apps/imagepulljob.ts';
import type { KubeObject } from '../../runtime/client.ts';

export type ImagePullJob = ImagePullJobApi & KubeObject;
export type ImagePullJobStatus = NonNullable<ImagePullJob['status']>;

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  immutable?: boolean;
}

/** A job is active (may still write NodeImages) until it completes or is being deleted. */
export function isActiveJob(job: ImagePullJob): boolean {
  return !job.metadata.deletionTimestamp && !job.status?.completionTime;
}
