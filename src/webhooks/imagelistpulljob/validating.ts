// ImageListPullJob validation (upstream pkg/webhook/imagelistpulljob/validating): ImagePullJob's
// rules over a list of 1..255 distinct images; plain-message denials.
import type { ImageListPullJob } from '../../apis/apps/imagelistpulljob.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import { imageReferenceError } from '../../util/imageref.ts';
import { completionPolicyError, nodeSelectionError, parallelismError, requireImagePullGates } from '../imagepulljob-template.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

const MAX_IMAGES = 255;

export function imageListPullJobError(obj: ImageListPullJob): string | undefined {
  const spec = obj.spec ?? ({} as NonNullable<ImageListPullJob['spec']>);
  const selection = nodeSelectionError(spec);
  if (selection) return selection;
  const images = spec.images ?? [];
  if (images.length === 0) return 'image can not be empty';
  if (new Set(images).size !== images.length) return 'images cannot have duplicate values';
  if (images.length > MAX_IMAGES) return `the maximum number of images cannot > ${MAX_IMAGES}`;
  for (const image of images) {
    const refErr = imageReferenceError(image);
    if (refErr) return `invalid image ${image}: ${refErr}`;
  }
  return parallelismError(spec) ?? completionPolicyError(spec, false);
}

export function validateImageListPullJob(obj: ImageListPullJob, _old: ImageListPullJob | undefined, ctx: AdmissionContext): FieldError[] {
  requireImagePullGates(ctx.features);
  const err = imageListPullJobError(obj);
  if (err) throw new AdmissionDenied(err);
  return [];
}
