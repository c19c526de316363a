import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateImageListPullJob } from './mutating.ts';
import { validateImageListPullJob } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

// Registered like ImagePullJob's: the validator always, answering 403 without the gates; the
// defaulter only with ImagePullJobGate (see imagepulljob/index.ts).
export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'imagelistpulljobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateImageListPullJob,
    gate: 'ImagePullJobGate',
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'imagelistpulljobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validateImageListPullJob,
    failurePolicy: 'Fail',
  },
];
