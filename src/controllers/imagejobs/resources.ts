// The image pre-pulling resources (ImagePullJob, NodeImage) and the small rules the
// ImagePullJob, ImageListPullJob and NodeImage controllers share about them.
import type { ImagePullJob as ImagePullJobApi } from '../../apis/apps/imagepulljob.ts';
import type { NodeImage as NodeImageApi } from '../../apis/apps/nodeimage.ts';
import type { Stored } from '../../apis/core-objects.ts';

export type ImagePullJob = Stored<ImagePullJobApi>;
export type ImagePullJobStatus = NonNullable<ImagePullJob['status']>;

/** The workqueue key of a job. */
export function jobKey(job: ImagePullJob): string {
  return `${job.metadata.namespace ?? ''}/${job.metadata.name ?? ''}`;
}

/** A job is active (may still write NodeImages) until it completes or is being deleted. */
export function isActiveJob(job: ImagePullJob): boolean {
  return !job.metadata.deletionTimestamp && !job.status?.completionTime;
}

export type NodeImage = Stored<NodeImageApi>;
export type ImageSpec = NonNullable<NonNullable<NodeImage['spec']>['images']>[string];
export type ImageTagSpec = ImageSpec['tags'][number];
export type NodeImageStatus = NonNullable<NodeImage['status']>;
export type ImageTagStatus = NonNullable<NodeImageStatus['imageStatuses']>[string]['tags'][number];

/** Tags in spec and status are kept sorted by tag, so writers never reorder each other's lists. */
export function byTag(a: { tag: string }, b: { tag: string }): number {
  return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
}

/** ms since the epoch of a metav1.Time, or undefined when unset or unparsable. */
export function parseTime(t: string | undefined | null): number | undefined {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Drops undefined members so plans compare equal to what the API server returns. */
export function pruneUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export type FinishedAction = { action: 'delete' } | { action: 'wait'; requeueAfterMs?: number };

/**
 * A completed job (ImagePullJob or ImageListPullJob) is deleted ttlSecondsAfterFinished after
 * completionTime (kept forever without).
 */
export function finishedJobAction(
  job: ImagePullJob | { spec?: { completionPolicy?: { ttlSecondsAfterFinished?: number } }; status?: { completionTime?: string } },
  nowMs: number,
): FinishedAction {
  const ttl = job.spec?.completionPolicy?.ttlSecondsAfterFinished;
  if (ttl == null) return { action: 'wait' };
  const completed = parseTime(job.status?.completionTime) ?? nowMs;
  const left = ttl * 1000 - (nowMs - completed);
  return left <= 0 ? { action: 'delete' } : { action: 'wait', requeueAfterMs: left };
}
