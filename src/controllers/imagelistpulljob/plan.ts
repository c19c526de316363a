// The ImageListPullJob controller's decisions (upstream pkg/controller/imagelistpulljob), pure: the
// template hash, which ImagePullJobs to create and delete, and the status they add up to.
import { isDeepStrictEqual } from 'node:util';
import type { ImageListPullJob as ImageListPullJobApi } from '../../apis/apps/imagelistpulljob.ts';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../apis/constants.ts';
import type { Stored } from '../../apis/core-objects.ts';
import { fnv1a_32, safeEncodeString } from '../../util/revision.ts';
import { finishedJobAction, pruneUndefined, type FinishedAction, type ImagePullJob } from '../imagejobs/resources.ts';
import { metaTime } from '../../util/clock.ts';

export type ImageListPullJob = Stored<ImageListPullJobApi>;
export type ImageListPullJobStatus = NonNullable<ImageListPullJob['status']>;

/** The spec minus the image list: what every generated ImagePullJob shares. */
export function jobTemplate(job: ImageListPullJob): Record<string, unknown> {
  const { images: _images, ...template } = job.spec ?? { images: [] };
  return pruneUndefined(template);
}

/** JSON with object keys sorted, so equal templates hash equally whatever their key order. */
function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJSON((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The controller-revision-hash label of the list job and its ImagePullJobs: FNV-1a of the template,
 * safe-encoded. (Upstream hashes Go's struct dump, which cannot be reproduced; jobs created by Go
 * Kruise therefore look changed once and are recreated.)
 */
export function templateHash(job: ImageListPullJob): string {
  return safeEncodeString(String(fnv1a_32(canonicalJSON(jobTemplate(job)))));
}

/** Whether a generated job still follows the list's template (by hash; unlabeled ones by content). */
export function isConsistent(child: ImagePullJob, template: Record<string, unknown>, hash: string): boolean {
  const label = child.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
  if (label === hash) return true;
  if (label !== undefined) return false;
  const { image: _image, ...childTemplate } = child.spec ?? { image: '' };
  return isDeepStrictEqual(pruneUndefined(childTemplate), template);
}

export function newImagePullJob(list: ImageListPullJob, image: string, hash: string): ImagePullJob {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImagePullJob',
    metadata: {
      namespace: list.metadata.namespace,
      generateName: `${list.metadata.name}-`,
      labels: { [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ownerReferences: [
        {
          apiVersion: list.apiVersion ?? 'apps.kruise.io/v1beta1',
          kind: 'ImageListPullJob',
          name: list.metadata.name ?? '',
          uid: list.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { image, ...structuredClone(jobTemplate(list)) } as ImagePullJob['spec'],
  };
}

export interface Actions {
  create: ImagePullJob[];
  delete: ImagePullJob[];
}

/** One job per listed image; jobs of removed images or an outdated template go (and are recreated). */
export function computeActions(list: ImageListPullJob, owned: ReadonlyMap<string, ImagePullJob>, hash: string): Actions {
  const template = jobTemplate(list);
  const images = list.spec?.images ?? [];
  const actions: Actions = { create: [], delete: [] };
  for (const image of images) {
    const child = owned.get(image);
    if (child && isConsistent(child, template, hash)) continue;
    if (child) actions.delete.push(child);
    actions.create.push(newImagePullJob(list, image, hash));
  }
  for (const [image, child] of owned) if (!images.includes(image)) actions.delete.push(child);
  return actions;
}

/** Upstream calculateStatus over the generated jobs that have started. */
export function calculateListStatus(
  list: ImageListPullJob,
  owned: ReadonlyMap<string, ImagePullJob>,
  nowMs: number,
): ImageListPullJobStatus {
  let active = 0;
  let completed = 0;
  let succeeded = 0;
  const failedImageStatuses: NonNullable<ImageListPullJobStatus['failedImageStatuses']> = [];
  for (const child of [...owned.values()].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1))) {
    const s = child.status;
    if (!s?.startTime) continue;
    if ((s.active ?? 0) > 0) active++;
    if ((s.failed ?? 0) > 0) {
      failedImageStatuses.push({
        imagePullJob: child.metadata.name,
        name: child.spec?.image,
        message: `Please check for details which nodes failed by 'kubectl get ImagePullJob ${child.metadata.name}'.`,
      });
    }
    if (s.desired === (s.failed ?? 0) + (s.succeeded ?? 0)) completed++;
    if (s.desired === (s.succeeded ?? 0)) succeeded++;
  }
  const status: ImageListPullJobStatus = {
    startTime: list.status?.startTime ?? metaTime(nowMs),
    desired: (list.spec?.images ?? []).length,
    active,
    completed,
    succeeded,
  };
  if (failedImageStatuses.length) status.failedImageStatuses = failedImageStatuses;
  if (list.spec?.completionPolicy?.type !== 'Never' && status.desired === completed) status.completionTime = metaTime(nowMs);
  return pruneUndefined(status);
}

export function listStatusChanged(list: ImageListPullJob, status: ImageListPullJobStatus): boolean {
  return !isDeepStrictEqual(pruneUndefined(list.status ?? {}), status);
}

export interface ImageListPullJobInput {
  list: ImageListPullJob;
  /** The ImagePullJobs the list job controls. */
  owned: readonly ImagePullJob[];
  nowMs: number;
}

export interface ImageListPullJobPlan {
  /** The template hash to store in the controller-revision-hash label, when it differs. */
  hashLabel?: string;
  /** A completed list job: deleted after its TTL, or looked at again then. */
  finished?: FinishedAction;
  create: ImagePullJob[];
  delete: ImagePullJob[];
  /** The new status, when it changed. */
  status?: ImageListPullJobStatus;
}

/** The whole round for one list job (upstream Reconcile after its expectation checks). */
export function planImageListPullJob({ list, owned, nowMs }: ImageListPullJobInput): ImageListPullJobPlan {
  const hash = templateHash(list);
  const hashLabel = list.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] !== hash ? hash : undefined;
  if (list.status?.completionTime) return { hashLabel, finished: finishedJobAction(list, nowMs), create: [], delete: [] };
  const byImage = new Map<string, ImagePullJob>();
  for (const child of owned) {
    if (!child.metadata.deletionTimestamp) byImage.set(child.spec?.image ?? '', child);
  }
  const status = calculateListStatus(list, byImage, nowMs);
  return { hashLabel, ...computeActions(list, byImage, hash), status: listStatusChanged(list, status) ? status : undefined };
}
