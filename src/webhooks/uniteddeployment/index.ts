import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateUnitedDeployment } from './mutating.ts';
import { validateUnitedDeployment } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'uniteddeployments',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateUnitedDeployment,
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'uniteddeployments',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    operationGates: { DELETE: 'ResourcesDeletionProtection' },
    validate: validateUnitedDeployment,
    failurePolicy: 'Fail',
  },
];
