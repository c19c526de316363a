// ImageListPullJob defaulting (upstream SetDefaultsImageListPullJob): the template defaults of
// ImagePullJob, without imagePullPolicy and finalizer (the generated ImagePullJobs get those).
import type { ImageListPullJob } from '../../apis/apps/imagelistpulljob.ts';
import { setDefaultsImagePullJobTemplate } from '../imagepulljob-template.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

export function mutateImageListPullJob(obj: ImageListPullJob, _ctx: AdmissionContext): void {
  obj.spec ??= { images: [], completionPolicy: {} };
  setDefaultsImagePullJobTemplate(obj.spec);
}
