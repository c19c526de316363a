import { APPS_GROUP } from '../../apis/constants.ts';
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { nodeImageDefaulter } from './mutating.ts';
import { validateNodeImage } from './validating.ts';

export * from './mutating.ts';
export * from './validating.ts';

// The validator is always registered and answers 403 "feature-gate KruiseDaemon is not enabled"
// without the gate, as upstream's.
export const registrations: WebhookRegistration[] = [
  {
    group: APPS_GROUP,
    resource: 'nodeimages',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    mutate: nodeImageDefaulter(),
    failurePolicy: 'Fail',
  },
  {
    group: APPS_GROUP,
    resource: 'nodeimages',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    validate: validateNodeImage,
    failurePolicy: 'Fail',
  },
];
