import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateDaemonSet } from './mutating.ts';
import { validateDaemonSet } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'daemonsets',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateDaemonSet,
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'daemonsets',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validateDaemonSet,
    failurePolicy: 'Fail',
  },
];
