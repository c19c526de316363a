// ImagePullJob defaulting (upstream apis/apps/defaults SetDefaultsImagePullJob).
import type { ImagePullJob } from '../../apis/apps/imagepulljob.ts';
import { FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION } from '../../apis/constants.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { setDefaultsImagePullJobTemplate } from '../imagepulljob-template.ts';

/** Also imagePullPolicy IfNotPresent, and on creation the finalizer guarding copied secrets. */
export function setDefaultsImagePullJob(obj: ImagePullJob, addProtection: boolean): void {
  obj.spec ??= { image: '', completionPolicy: {} };
  setDefaultsImagePullJobTemplate(obj.spec);
  if (!obj.spec.imagePullPolicy) obj.spec.imagePullPolicy = 'IfNotPresent';
  if (addProtection) {
    obj.metadata ??= {};
    const finalizers = (obj.metadata.finalizers ??= []);
    if (!finalizers.includes(FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION)) finalizers.push(FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION);
  }
}

export function mutateImagePullJob(obj: ImagePullJob, ctx: AdmissionContext): void {
  setDefaultsImagePullJob(obj, ctx.operation === 'CREATE');
}
