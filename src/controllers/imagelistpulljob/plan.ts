// The ImageListPullJob controller's decisions (upstream pkg/controller/imagelistpulljob), pure: the
// template hash, which ImagePullJobs to create and delete, and the status they add up to.
import { isDeepStrictEqual } from 'node:util';
import type { ImageListPullJob as ImageListPullJobApi } from '../../apis/apps/imagelistpulljob.ts';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../apis/constants.ts';
import type { Stored } from '../../apis/core-objects.ts';
import { fnv1a_32, safeEncodeString } from '../../util/revision.ts';
import { finishedJobAction, pruneUndefined, type FinishedAction, type ImagePullJob } from '../imagejobs/resources.ts';
import { metaTime } from '../../util/clock.ts';
import { isJsonObject } from '../../apis/json.ts';

export type ImageListPullJob = Stored<ImageListPullJobApi>;
export type ImageListPullJobStatus = NonNullable<ImageListPullJob['status']>;

/** The spec minus the image list: what every generated ImagePullJob shares. */
export function jobTemplate(job: ImageListPullJob): Record<string, unknown> {
  const { images: _images, ...template } = job.spec ?? { images: [] };
  return pruneUndefined(template);
}

// Upstream hashes the template with Kubernetes' DeepHashObject: FNV-1a over go-spew's `%#v` dump
// of the typed v1alpha1.ImagePullJobTemplate (types in parentheses, struct fields in declaration
// order, map keys sorted, strings bare, nil as <nil>). The dump below writes exactly that for the
// fields the Go type has, so the label agrees with jobs created by OpenKruise.
type Dumped = Record<string, unknown> | undefined;
const field = (name: string, type: string, value: string) => `${name}:(${type})${value}`;
const pointer = (name: string, type: string, value: string | undefined) => field(name, `*${type}`, value ?? '<nil>');
const stringSlice = (v: unknown) => (Array.isArray(v) ? `[${v.join(' ')}]` : '<nil>');
const stringMap = (v: unknown) =>
  isJsonObject(v)
    ? `map[${Object.keys(v)
        .sort()
        .map((k) => `${k}:${String(v[k])}`)
        .join(' ')}]`
    : '<nil>';
const int = (v: unknown) => (typeof v === 'number' ? String(v) : undefined);

function labelSelectorFields(sel: Record<string, unknown>): string {
  const expressions = Array.isArray(sel.matchExpressions)
    ? `[${sel.matchExpressions
        .map(
          (e: Record<string, unknown>) =>
            `{${[field('Key', 'string', String(e.key ?? '')), field('Operator', 'v1.LabelSelectorOperator', String(e.operator ?? '')), field('Values', '[]string', stringSlice(e.values))].join(' ')}}`,
        )
        .join(' ')}]`
    : '<nil>';
  return field(
    'LabelSelector',
    'v1.LabelSelector',
    `{${field('MatchLabels', 'map[string]string', stringMap(sel.matchLabels))} ${field('MatchExpressions', '[]v1.LabelSelectorRequirement', expressions)}}`,
  );
}

function intOrString(v: unknown): string | undefined {
  if (typeof v === 'number') return `{Type:(intstr.Type)0 IntVal:(int32)${v} StrVal:(string)}`;
  if (typeof v === 'string') return `{Type:(intstr.Type)1 IntVal:(int32)0 StrVal:(string)${v}}`;
  return undefined;
}

/** go-spew's `%#v` of the template as a v1alpha1.ImagePullJobTemplate. */
export function dumpTemplateForHash(t: Record<string, unknown>): string {
  const selector = t.selector as Dumped;
  const podSelector = t.podSelector as Dumped;
  const pullPolicy = t.pullPolicy as Dumped;
  const completion = (t.completionPolicy as Dumped) ?? {};
  const sandbox = t.sandboxConfig as Dumped;
  const fields = [
    field('PullSecrets', '[]string', stringSlice(t.pullSecrets)),
    pointer(
      'Selector',
      'v1alpha1.ImagePullJobNodeSelector',
      selector && `{${field('Names', '[]string', stringSlice(selector.names))} ${labelSelectorFields(selector)}}`,
    ),
    pointer('PodSelector', 'v1alpha1.ImagePullJobPodSelector', podSelector && `{${labelSelectorFields(podSelector)}}`),
    pointer('Parallelism', 'intstr.IntOrString', intOrString(t.parallelism)),
    pointer(
      'PullPolicy',
      'v1alpha1.PullPolicy',
      pullPolicy &&
        `{${pointer('TimeoutSeconds', 'int32', int(pullPolicy.timeoutSeconds))} ${pointer('BackoffLimit', 'int32', int(pullPolicy.backoffLimit))}}`,
    ),
    field(
      'CompletionPolicy',
      'v1alpha1.CompletionPolicy',
      `{${[
        field('Type', 'v1alpha1.CompletionPolicyType', String(completion.type ?? '')),
        pointer('ActiveDeadlineSeconds', 'int64', int(completion.activeDeadlineSeconds)),
        pointer('TTLSecondsAfterFinished', 'int32', int(completion.ttlSecondsAfterFinished)),
      ].join(' ')}}`,
    ),
    pointer(
      'SandboxConfig',
      'v1alpha1.SandboxConfig',
      sandbox &&
        `{${field('Labels', 'map[string]string', stringMap(sandbox.labels))} ${field('Annotations', 'map[string]string', stringMap(sandbox.annotations))}}`,
    ),
    field('ImagePullPolicy', 'v1alpha1.ImagePullPolicy', String(t.imagePullPolicy ?? '')),
  ];
  return `(v1alpha1.ImagePullJobTemplate){${fields.join(' ')}}`;
}

/** The controller-revision-hash label of the list job and its ImagePullJobs, as upstream computes it. */
export function templateHash(job: ImageListPullJob): string {
  return safeEncodeString(String(fnv1a_32(dumpTemplateForHash(jobTemplate(job)))));
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
