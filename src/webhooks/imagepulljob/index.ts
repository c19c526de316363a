import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateImagePullJob } from './mutating.ts';
import { validateImagePullJob } from './validating.ts';

export * from './imageref.ts';
export * from './mutating.ts';
export * from './validating.ts';

// Upstream's validator answers 403 "feature-gate … is not enabled" without KruiseDaemon and
// ImagePullJobGate; the gate dependencies force ImagePullJobGate off without KruiseDaemon, so
// gating the registration on ImagePullJobGate covers both. The defaulter is gated too: it adds the
// deletion-protection finalizer that only the ImagePullJob controller removes, and that controller
// runs only with the gate on — without it, jobs could never be deleted.
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
    gate: 'ImagePullJobGate',
    failurePolicy: 'Fail',
  },
];
