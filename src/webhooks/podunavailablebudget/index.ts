import { POLICY_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { validatePodUnavailableBudget } from './validating.ts';

export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: POLICY_GROUP,
    resource: 'podunavailablebudgets',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validatePodUnavailableBudget,
    failurePolicy: 'Fail',
  },
];
