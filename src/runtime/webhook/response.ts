// The answers controller-runtime's admission package gives (pkg/webhook/admission/response.go), which
// kruise-manager is built on.

import fjp from 'fast-json-patch';
import type { AdmissionResponse } from './review.ts';

/** admission.Errored(code, err): not allowed, with the code and message in the status. */
export function errored(code: number, message: string, uid = ''): AdmissionResponse {
  return { uid, allowed: false, status: { code, message } };
}

/** What a client is told when a handler fails unexpectedly; the error itself goes to the log. */
export const INTERNAL_ERROR_MESSAGE = 'internal error: the webhook could not process this request; the kruise-manager log has the details';

/**
 * admission.PatchResponseFromRaw: allowed, with the difference from `original` to `mutated` as a
 * base64 RFC 6902 JSON patch; no difference, no patch. A JSON round trip of `mutated` drops the
 * undefined-valued keys a defaulter left, as serialization would.
 */
export function patchResponse(uid: string, original: object, mutated: unknown): AdmissionResponse {
  const ops = fjp.compare(original, JSON.parse(JSON.stringify(mutated)));
  if (!ops.length) return { uid, allowed: true };
  return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
}
