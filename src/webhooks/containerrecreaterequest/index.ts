import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateContainerRecreateRequest } from './mutating.ts';
import { validateContainerRecreateRequestUpdate } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

// Upstream answers 403 "feature-gate KruiseDaemon is not enabled" when the gate is off; here the
// webhook is simply not registered then.
export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'containerrecreaterequests',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateContainerRecreateRequest,
    validate: validateContainerRecreateRequestUpdate,
    gate: 'KruiseDaemon',
    failurePolicy: 'Fail',
  },
];
