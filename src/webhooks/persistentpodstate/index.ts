import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { validatePersistentPodState } from './validating.ts';

export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'persistentpodstates',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validatePersistentPodState,
    failurePolicy: 'Fail',
  },
];
