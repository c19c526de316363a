// Upstream checks CRR immutability inside its mutating handler, which sees the old object; our
// Defaulter does not, so the UPDATE half runs as a Validator on the same registration.
import type { ContainerRecreateRequest } from '../../apis/apps/containerrecreaterequest.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { checkContainerRecreateRequestUpdate } from './mutating.ts';

/** Throws AdmissionDenied (403) on a forbidden UPDATE; CREATE is fully handled by the mutator. */
export function validateContainerRecreateRequestUpdate(
  obj: ContainerRecreateRequest,
  old: ContainerRecreateRequest | undefined,
  ctx: AdmissionContext,
): FieldError[] {
  if (ctx.operation === 'UPDATE' && old) checkContainerRecreateRequestUpdate(obj, old);
  return [];
}
