import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutateSidecarSet } from './mutating.ts';
import { validateSidecarSet } from './validating.ts';

export * from './containers.ts';
export * from './mutating.ts';
export * from './validating.ts';

export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'sidecarsets',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: mutateSidecarSet,
    validate: validateSidecarSet,
    failurePolicy: 'Fail',
  },
];
