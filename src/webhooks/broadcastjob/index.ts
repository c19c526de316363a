import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateBroadcastJob } from './mutating.ts';
import { validateBroadcastJob } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'broadcastjobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateBroadcastJob,
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'broadcastjobs',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validateBroadcastJob,
    failurePolicy: 'Fail',
  },
];
