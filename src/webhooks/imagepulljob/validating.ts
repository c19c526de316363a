// ImagePullJob validation (upstream pkg/webhook/imagepulljob/validating): the first broken rule
// denies with upstream's plain message (400), not a field-error list.
import type { ImagePullJob } from '../../apis/apps/imagepulljob.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { imageReferenceError } from '../../util/imageref.ts';
import { completionPolicyError, nodeSelectionError, parallelismError, requireImagePullGates } from '../imagepulljob-template.ts';

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

export function validateImagePullJob(obj: ImagePullJob, _old: ImagePullJob | undefined, ctx: AdmissionContext): FieldError[] {
  requireImagePullGates(ctx.features);
  const err = imagePullJobError(obj);
  if (err) throw new AdmissionDenied(err);
  return [];
}
