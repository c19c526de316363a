import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateImagePullJob } from './mutating.ts';
import { validateImagePullJob } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

// The validator is always registered and, like upstream's, answers 403 "feature-gate … is not
// enabled" without KruiseDaemon or ImagePullJobGate, so jobs nothing would process are refused
// rather than silently accepted. The defaulter is gated: it adds the deletion-protection finalizer
// that only the ImagePullJob controller removes, and that controller runs only with the gate on —
// without it, jobs could never be deleted (and the validator refuses them anyway).
export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'imagepulljobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateImagePullJob,
    gate: 'ImagePullJobGate',
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'imagepulljobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validateImagePullJob,
    failurePolicy: 'Fail',
  },
];
