// Image pre-download for in-place updates (behaviour spec §12.4; gate PreDownloadImageForInPlaceUpdate),
// shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet. While a workload rolls from one
// revision to another, the new images are pulled on the nodes of its not-yet-updated pods by
// ImagePullJobs the workload owns, so the in-place update itself does not wait for the registry.
//
// Pure: the workload's controller passes what it observed and applies the returned plan.

import type { ImagePullJob } from '../apis/apps/imagepulljob.ts';
import { CONTROLLER_REVISION_HASH_LABEL, IMAGE_PREDOWNLOAD_CREATED_KEY, IMAGE_PREDOWNLOAD_IGNORED_KEY } from '../apis/constants.ts';
import type { OwnerReference } from '../apis/core.ts';
import { canUpdateInPlace } from './inplaceupdate.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from './intstr.ts';
import type { LabelSelectorLike } from './labelselector.ts';
import { templateFromRevision, type ControllerRevision } from './revision-data.ts';
import { CONTROLLER_REVISION_HASH_KEY } from './revision.ts';

/** Workloads this small update too quickly for a pre-pull to help (upstream: replicas <= 3). */
export const MIN_REPLICAS_TO_PREDOWNLOAD = 3;
export const DEFAULT_PREDOWNLOAD_TIMEOUT_SECONDS = 600;
/** Finished jobs are garbage-collected after this long. */
export const PREDOWNLOAD_JOB_TTL_SECONDS = 600;

export interface PreDownloadInput {
  owner: OwnerReference & { namespace: string; annotations?: Record<string, string> };
  current: ControllerRevision;
  update: ControllerRevision;
  replicas: number;
  /** Pods kept at the current revision (already scaled from int-or-percent). */
  partition: number;
  /** Pods updated at once (already scaled). */
  maxUnavailable: number;
  /** The update strategy recreates pods: nothing is updated in place. */
  recreate: boolean;
  /** Whether current → update can be applied in place. */
  canUpdateInPlace: boolean;
  selector: LabelSelectorLike;
  templateLabels?: Record<string, string>;
  pullSecrets: string[];
  /** status.updatedReadyReplicas, counted only when status.updateRevision is `update`. */
  updatedReadyReplicas: number;
  minUpdatedReadyPods?: IntOrString;
  parallelism?: IntOrString;
  timeoutSeconds?: number;
  /** Names of the ImagePullJobs the workload controls now. */
  ownedJobs: string[];
}

export interface PreDownloadPlan {
  createJobs: ImagePullJob[];
  deleteJobs: string[];
  /** Label to put on the update revision so the decision is made once per revision. */
  labelRevision?: { name: string; key: string };
}

/** A workload (CloneSet, Advanced DaemonSet, …) as pre-download reads it. */
export interface PreDownloadWorkload {
  apiVersion?: string;
  metadata?: { name?: string; uid?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: {
    selector?: LabelSelectorLike;
    template?: { metadata?: { labels?: Record<string, string> }; spec?: { imagePullSecrets?: ReadonlyArray<{ name?: string }> } };
  };
}

/** What a workload's rollout decides (scaled already): the rest of the input comes from the workload. */
export type PreDownloadRollout = Pick<
  PreDownloadInput,
  | 'replicas'
  | 'partition'
  | 'maxUnavailable'
  | 'recreate'
  | 'updatedReadyReplicas'
  | 'minUpdatedReadyPods'
  | 'parallelism'
  | 'timeoutSeconds'
>;

/**
 * Pre-download for a workload of `kind` rolling from `current` to `update`: its owner reference,
 * selector, template labels and pull secrets are read from the workload itself.
 */
export function planWorkloadImagePreDownload(input: {
  kind: string;
  workload: PreDownloadWorkload;
  current: ControllerRevision;
  update: ControllerRevision;
  rollout: PreDownloadRollout;
  ownedJobs: readonly string[];
  /** Feature gate InPlaceUpdateEnvFromMetadata (what can change in place). */
  envFromMetadata: boolean;
  /** Feature gate InPlaceWorkloadVerticalScaling (resource changes can be in place). */
  verticalScaling: boolean;
}): PreDownloadPlan {
  const { kind, workload, current, update } = input;
  const { metadata, spec } = workload;
  return planImagePreDownload({
    ...input.rollout,
    owner: {
      apiVersion: workload.apiVersion ?? 'apps.kruise.io/v1beta1',
      kind,
      name: metadata?.name ?? '',
      uid: metadata?.uid ?? '',
      namespace: metadata?.namespace ?? '',
      annotations: metadata?.annotations,
    },
    current,
    update,
    canUpdateInPlace: canUpdateInPlace(current, update, { envFromMetadata: input.envFromMetadata, verticalScaling: input.verticalScaling }),
    selector: spec?.selector ?? {},
    templateLabels: spec?.template?.metadata?.labels,
    pullSecrets: (spec?.template?.spec?.imagePullSecrets ?? []).map((s) => s.name ?? '').filter(Boolean),
    ownedJobs: [...input.ownedJobs],
  });
}

const nothing = (): PreDownloadPlan => ({ createJobs: [], deleteJobs: [] });

/** Containers whose image differs (or that are new) in `update`, as name → new image. */
export function changedImages(current: ControllerRevision, update: ControllerRevision): Map<string, string> {
  const oldImages = new Map((templateFromRevision(current).spec?.containers ?? []).map((c) => [c.name, c.image]));
  const changed = new Map<string, string>();
  for (const c of templateFromRevision(update).spec?.containers ?? []) {
    if (c.image && oldImages.get(c.name) !== c.image) changed.set(c.name, c.image);
  }
  return changed;
}

export function planImagePreDownload(input: PreDownloadInput): PreDownloadPlan {
  const updateName = input.update.metadata.name ?? '';
  if (input.current.metadata.name === updateName) {
    // Revisions converged: the jobs have done their work.
    return { createJobs: [], deleteJobs: [...input.ownedJobs] };
  }
  const labels = input.update.metadata.labels ?? {};
  if (labels[IMAGE_PREDOWNLOAD_CREATED_KEY] !== undefined || labels[IMAGE_PREDOWNLOAD_IGNORED_KEY] !== undefined) return nothing();
  if (input.owner.annotations?.[IMAGE_PREDOWNLOAD_IGNORED_KEY] !== undefined) return nothing();

  const minReady = getScaledValueFromIntOrPercent(input.minUpdatedReadyPods ?? 0, input.replicas, true);
  if (input.updatedReadyReplicas < minReady) return nothing();

  const ignore = (): PreDownloadPlan => ({ ...nothing(), labelRevision: { name: updateName, key: IMAGE_PREDOWNLOAD_IGNORED_KEY } });
  if (input.recreate) return ignore();
  if (input.replicas <= MIN_REPLICAS_TO_PREDOWNLOAD) return ignore();
  // Everything updates in one batch: the update itself is the pull.
  if (input.partition === 0 && input.maxUnavailable >= input.replicas) return ignore();
  if (!input.canUpdateInPlace) return ignore();

  // Pods name their revision by full name, or by the bare hash (CloneSetShortHash; Advanced
  // DaemonSet revisions carry it as controller-revision-hash).
  const hash = labels[CONTROLLER_REVISION_HASH_KEY] ?? labels[CONTROLLER_REVISION_HASH_LABEL] ?? '';
  // Only the nodes of pods still at an old revision need the new image.
  const podSelector = {
    ...(input.selector.matchLabels ? { matchLabels: { ...input.selector.matchLabels } } : {}),
    matchExpressions: [
      ...(input.selector.matchExpressions ?? []).map((r) => ({
        key: r.key,
        operator: r.operator,
        ...(r.values ? { values: [...r.values] } : {}),
      })),
      { key: CONTROLLER_REVISION_HASH_LABEL, operator: 'NotIn', values: [updateName, hash] },
    ],
  };
  // Everything a workload owns matches its selector; the template labels guarantee that.
  const jobLabels = { ...input.templateLabels, [CONTROLLER_REVISION_HASH_KEY]: hash };
  const createJobs: ImagePullJob[] = [...changedImages(input.current, input.update)].map(([container, image]) => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImagePullJob',
    metadata: {
      name: `${updateName}-${container}`,
      namespace: input.owner.namespace,
      labels: jobLabels,
      ownerReferences: [
        {
          apiVersion: input.owner.apiVersion,
          kind: input.owner.kind,
          name: input.owner.name,
          uid: input.owner.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      image,
      ...(input.pullSecrets.length ? { pullSecrets: input.pullSecrets } : {}),
      podSelector,
      parallelism: input.parallelism ?? 1,
      pullPolicy: { backoffLimit: 1, timeoutSeconds: input.timeoutSeconds ?? DEFAULT_PREDOWNLOAD_TIMEOUT_SECONDS },
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: PREDOWNLOAD_JOB_TTL_SECONDS },
      sandboxConfig: { labels: jobLabels },
    },
  }));
  return { createJobs, deleteJobs: [], labelRevision: { name: updateName, key: IMAGE_PREDOWNLOAD_CREATED_KEY } };
}
