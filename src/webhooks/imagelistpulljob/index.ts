import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateImageListPullJob } from './mutating.ts';
import { validateImageListPullJob } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

// The validator is gated like ImagePullJob's (see imagepulljob/index.ts).
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
    gate: 'ImagePullJobGate',
    failurePolicy: 'Fail',
  },
];
