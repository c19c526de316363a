// CloneSet v1alpha1 ↔ v1beta1 (behaviour spec §22): the flat v1alpha1 updateStrategy whose type
// doubles as the pod update policy becomes type + rollingUpdate; disablePVCReuse is the negation
// of enablePVCReuse; a label and three annotations of v1alpha1 become v1beta1 fields.
// The spec mappers are shared with UnitedDeployment's cloneSetTemplate.

import type { CloneSetSpec, CloneSetSpecV1alpha1 } from '../apps/cloneset.ts';
import type { InPlaceUpdateStrategy } from '../apps/pub.ts';
import {
  CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL,
  IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION,
  IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION,
  IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION,
} from '../constants.ts';
import {
  compact,
  deleteMetaValue,
  metaValue,
  parseInt32,
  parseIntOrString,
  setMetaValue,
  withVersion,
  type KindConversion,
  type KubeObject,
  type ObjectMetaLike,
} from './shared.ts';
import { isJsonObject } from '../json.ts';

type AlphaUpdateStrategy = NonNullable<CloneSetSpecV1alpha1['updateStrategy']>;
type BetaUpdateStrategy = NonNullable<CloneSetSpec['updateStrategy']>;
type BetaRollingUpdate = NonNullable<BetaUpdateStrategy['rollingUpdate']>;

const POD_UPDATE_POLICIES = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'];

/** v1alpha1 strategy type → v1beta1 (type, podUpdatePolicy). */
export function updateTypeToV1beta1(type: string | undefined): { type?: string; podUpdatePolicy?: string } {
  if (type === undefined) return {};
  if (type === 'OnDelete') return { type: 'OnDelete' };
  return { type: 'RollingUpdate', podUpdatePolicy: POD_UPDATE_POLICIES.includes(type) ? type : 'ReCreate' };
}

/** v1beta1 (type, podUpdatePolicy) → v1alpha1 strategy type. */
export function updateTypeToV1alpha1(type: string | undefined, podUpdatePolicy: string | undefined): string | undefined {
  if (type === 'OnDelete') return 'OnDelete';
  if (podUpdatePolicy !== undefined) return POD_UPDATE_POLICIES.includes(podUpdatePolicy) ? podUpdatePolicy : 'ReCreate';
  return type === undefined ? undefined : 'ReCreate';
}

const PREDOWNLOAD_ANNOTATIONS = {
  imagePreDownloadParallelism: IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION,
  imagePreDownloadTimeoutSeconds: IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION,
  imagePreDownloadMinUpdatedReadyPods: IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION,
} as const;

/**
 * v1alpha1 inPlaceUpdateStrategy + pre-download annotations → v1beta1 inPlaceUpdateStrategy.
 * A valid annotation wins over the field and is moved out of the metadata; an invalid one stays.
 */
function inPlaceToV1beta1(src: InPlaceUpdateStrategy | undefined, meta: ObjectMetaLike | undefined): InPlaceUpdateStrategy | undefined {
  const out: InPlaceUpdateStrategy = { ...(src ?? {}) };
  for (const [field, key] of Object.entries(PREDOWNLOAD_ANNOTATIONS)) {
    const raw = metaValue(meta, 'annotations', key);
    if (raw === undefined || raw === '') continue;
    const value = field === 'imagePreDownloadParallelism' ? parseIntOrString(raw) : parseInt32(raw);
    if (value === undefined) continue;
    (out as Record<string, unknown>)[field] = value;
    deleteMetaValue(meta, 'annotations', key);
  }
  return src === undefined && Object.keys(out).length === 0 ? undefined : out;
}

/** v1beta1 inPlaceUpdateStrategy → v1alpha1 one (gracePeriodSeconds) + pre-download annotations. */
function inPlaceToV1alpha1(src: InPlaceUpdateStrategy | undefined, meta: ObjectMetaLike): InPlaceUpdateStrategy | undefined {
  if (src === undefined) return undefined;
  const out: Record<string, unknown> = { ...src };
  for (const [field, key] of Object.entries(PREDOWNLOAD_ANNOTATIONS)) {
    const value = out[field];
    if (value === undefined) continue;
    setMetaValue(meta, 'annotations', key, String(value));
    delete out[field];
  }
  return compact(out) as InPlaceUpdateStrategy | undefined;
}

/** v1alpha1 CloneSet spec → v1beta1; moves the label/annotations it maps out of `meta`. */
export function cloneSetSpecToV1beta1(spec: CloneSetSpecV1alpha1, meta: ObjectMetaLike | undefined): CloneSetSpec {
  const { scaleStrategy, updateStrategy, ...common } = spec;
  const out: CloneSetSpec = { ...common };

  const { disablePVCReuse, ...scaleRest } = scaleStrategy ?? {};
  const excludePreparingDelete = metaValue(meta, 'labels', CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL) === 'true' ? true : undefined;
  if (excludePreparingDelete) deleteMetaValue(meta, 'labels', CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL);
  // PVC reuse is on by default in v1alpha1 and off by default in v1beta1.
  out.scaleStrategy = compact({
    ...scaleRest,
    enablePVCReuse: disablePVCReuse === true ? undefined : true,
    excludePreparingDelete,
  });

  const { type, inPlaceUpdateStrategy, ...rollout } = updateStrategy ?? {};
  const inPlace = inPlaceToV1beta1(inPlaceUpdateStrategy, meta);
  if (updateStrategy !== undefined || inPlace !== undefined) {
    const mapped = updateTypeToV1beta1(type);
    const rollingUpdate = compact<BetaRollingUpdate>({
      ...rollout,
      podUpdatePolicy: mapped.podUpdatePolicy,
      inPlaceUpdateStrategy: inPlace,
    });
    out.updateStrategy = compact<BetaUpdateStrategy>({ type: mapped.type, rollingUpdate }) ?? {};
  }
  return (compact(out) ?? {}) as CloneSetSpec;
}

/** v1beta1 CloneSet spec → v1alpha1; writes the label/annotations v1alpha1 uses into `meta`. */
export function cloneSetSpecToV1alpha1(spec: CloneSetSpec, meta: ObjectMetaLike): CloneSetSpecV1alpha1 {
  const { scaleStrategy, updateStrategy, ...common } = spec;
  const out: CloneSetSpecV1alpha1 = { ...common };

  const { enablePVCReuse, excludePreparingDelete, ...scaleRest } = scaleStrategy ?? {};
  if (excludePreparingDelete === true) {
    setMetaValue(meta, 'labels', CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL, 'true');
  }
  out.scaleStrategy = compact({ ...scaleRest, disablePVCReuse: enablePVCReuse === true ? undefined : true });

  if (updateStrategy !== undefined) {
    const { podUpdatePolicy, inPlaceUpdateStrategy, ...rollout } = updateStrategy.rollingUpdate ?? {};
    out.updateStrategy = {
      ...compact<AlphaUpdateStrategy>({
        type: updateTypeToV1alpha1(updateStrategy.type, podUpdatePolicy),
        ...rollout,
        inPlaceUpdateStrategy: inPlaceToV1alpha1(inPlaceUpdateStrategy, meta),
      }),
    };
  }
  return (compact(out) ?? {}) as CloneSetSpecV1alpha1;
}

function emptyMetaToUndefined(obj: KubeObject): void {
  if (isJsonObject(obj.metadata) && Object.keys(obj.metadata).length === 0) delete obj.metadata;
}

export const cloneSetConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    if (isJsonObject(out.spec)) out.spec = cloneSetSpecToV1beta1(out.spec as CloneSetSpecV1alpha1, out.metadata);
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    if (isJsonObject(out.spec)) {
      const hadMeta = out.metadata !== undefined;
      out.metadata ??= {};
      out.spec = cloneSetSpecToV1alpha1(out.spec as CloneSetSpec, out.metadata);
      if (!hadMeta) emptyMetaToUndefined(out);
    }
    return out;
  },
};
