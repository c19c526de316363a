import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { validateEphemeralJob } from './validating.ts';

export * from './validating.ts';

// Served at /validate-apps-kruise-io-v1alpha1-ephemeraljob upstream.
export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'ephemeraljobs',
    versions: ['v1alpha1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validateEphemeralJob,
    failurePolicy: 'Fail',
  },
];
