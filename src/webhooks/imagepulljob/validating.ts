// ImagePullJob validation (upstream pkg/webhook/imagepulljob/validating): the first broken rule
// denies with upstream's plain message (400), not a field-error list.
import type { ImagePullJob } from '../../apis/apps/imagepulljob.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { imageReferenceError } from '../../util/imageref.ts';
import { nonNegativeCountError } from '../../util/intstr.ts';

type Template = Omit<NonNullable<ImagePullJob['spec']>, 'image'>;

const DEFAULT_PULL_TIMEOUT_SECONDS = 600;

function selectorError(sel: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] }): string | undefined {
  try {
    labelSelectorAsSelector(sel as never);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Node selection rules shared with ImageListPullJob. */
export function nodeSelectionError(spec: Template): string | undefined {
  const sel = spec.selector;
  if (sel) {
    if (sel.matchLabels || sel.matchExpressions) {
      if (sel.names) return 'can not set both names and labelSelector in this spec.selector';
      const err = selectorError(sel);
      if (err) return `invalid selector: ${err}`;
    }
    if (sel.names && new Set(sel.names).size !== sel.names.length) return 'duplicated name in selector names';
  }
  if (spec.podSelector) {
    if (sel) return 'can not set both selector and podSelector';
    const err = selectorError(spec.podSelector);
    if (err) return `invalid podSelector: ${err}`;
  }
  return undefined;
}

/** Parallelism is a count of nodes: an int32, possibly as a numeric string, never a percentage. */
export function parallelismError(spec: Template): string | undefined {
  const p = spec.parallelism;
  return p === undefined || p === null ? undefined : nonNegativeCountError(p, 'parallelism');
}

/** ImagePullJob (checkDeadline) also wants the deadline to outlast one pull attempt. */
export function completionPolicyError(spec: Template, checkDeadline: boolean): string | undefined {
  const timeout = spec.pullPolicy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  const cp = spec.completionPolicy ?? {};
  switch (cp.type ?? '') {
    case 'Always':
      if (checkDeadline && cp.activeDeadlineSeconds !== undefined && cp.activeDeadlineSeconds !== null && timeout > cp.activeDeadlineSeconds) {
        return 'completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)';
      }
      return undefined;
    case 'Never':
      if (cp.activeDeadlineSeconds != null || cp.ttlSecondsAfterFinished != null) {
        return 'activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType';
      }
      return undefined;
    default:
      return `unknown type of completionPolicy: ${cp.type ?? ''}`;
  }
}

/** The first violated rule, in upstream's order; undefined when valid. */
export function imagePullJobError(obj: ImagePullJob): string | undefined {
  const spec = obj.spec ?? ({} as NonNullable<ImagePullJob['spec']>);
  const selection = nodeSelectionError(spec);
  if (selection) return selection;
  if (!spec.image) return 'image can not be empty';
  const refErr = imageReferenceError(spec.image);
  if (refErr) return `invalid image ${spec.image}: ${refErr}`;
  return parallelismError(spec) ?? completionPolicyError(spec, true);
}

/** Upstream's 403 for jobs no controller would process; shared with ImageListPullJob. */
export function requireImagePullGates(features: FeatureGates): void {
  for (const gate of ['KruiseDaemon', 'ImagePullJobGate'] as const) {
    if (!features[gate]) throw new AdmissionDenied(`feature-gate ${gate} is not enabled`, 403);
  }
}

export function validateImagePullJob(obj: ImagePullJob, _old: ImagePullJob | undefined, ctx: AdmissionContext): FieldError[] {
  requireImagePullGates(ctx.features);
  const err = imagePullJobError(obj);
  if (err) throw new AdmissionDenied(err);
  return [];
}
