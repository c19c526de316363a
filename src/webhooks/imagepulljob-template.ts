// ImagePullJob template rules shared by the ImagePullJob and ImageListPullJob webhooks (an
// ImageListPullJob's spec is an ImagePullJob template with a list of images): defaults, node
// selection, parallelism, completion policy, and the feature gates both need.
import type { ImagePullJob } from '../apis/apps/imagepulljob.ts';
import type { FeatureGates } from '../apis/features.ts';
import { nonNegativeCountError } from '../util/intstr.ts';
import { labelSelectorAsSelector } from '../util/labelselector.ts';
import { AdmissionDenied } from '../runtime/webhook/types.ts';

type PullJobTemplate = Pick<NonNullable<ImagePullJob['spec']>, 'completionPolicy' | 'pullPolicy'>;

/** Template defaults: completion Always, pull timeout 600s, 3 retries. */
export function setDefaultsImagePullJobTemplate(spec: PullJobTemplate): void {
  spec.completionPolicy ??= {};
  if (!spec.completionPolicy.type) spec.completionPolicy.type = 'Always';
  spec.pullPolicy ??= {};
  spec.pullPolicy.timeoutSeconds ??= 600;
  spec.pullPolicy.backoffLimit ??= 3;
}

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

/** Node selection: names or a label selector, or a pod selector. */
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
      if (
        checkDeadline &&
        cp.activeDeadlineSeconds !== undefined &&
        cp.activeDeadlineSeconds !== null &&
        timeout > cp.activeDeadlineSeconds
      ) {
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

/** Upstream's 403 for jobs no controller would process */
export function requireImagePullGates(features: FeatureGates): void {
  for (const gate of ['KruiseDaemon', 'ImagePullJobGate'] as const) {
    if (!features[gate]) throw new AdmissionDenied(`feature-gate ${gate} is not enabled`, 403);
  }
}
