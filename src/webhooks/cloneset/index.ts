import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateCloneSet } from './mutating.ts';
import { validateCloneSet } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'clonesets',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateCloneSet,
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'clonesets',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    operationGates: { DELETE: 'ResourcesDeletionProtection' },
    validate: validateCloneSet,
    failurePolicy: 'Fail',
  },
];
