import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateAdvancedCronJob } from './mutating.ts';
import { validateAdvancedCronJob } from './validating.ts';

export * from '../../util/cron.ts';
export * from './mutating.ts';
export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'advancedcronjobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateAdvancedCronJob,
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'advancedcronjobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validateAdvancedCronJob,
    failurePolicy: 'Fail',
  },
];
