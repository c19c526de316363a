import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { validatePodProbeMarker } from './validating.ts';

export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'podprobemarkers',
    versions: ['v1alpha1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validatePodProbeMarker,
    failurePolicy: 'Fail',
  },
];
