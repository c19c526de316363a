// The answers controller-runtime's admission package gives (pkg/webhook/admission/response.go), which
// kruise-manager is built on.

import type { AdmissionResponse } from './review.ts';

/** admission.Errored(code, err): not allowed, with the code and message in the status. */
export function errored(code: number, message: string, uid = ''): AdmissionResponse {
  return { uid, allowed: false, status: { code, message } };
}

/** What a client is told when a handler fails unexpectedly; the error itself goes to the log. */
export const INTERNAL_ERROR_MESSAGE = 'internal error: the webhook could not process this request; the kruise-manager log has the details';

/**
 * admission.PatchResponseFromRaw: allowed, with the difference from `original` (the object as sent)
 * to `mutated` (the decoded object, nulls dropped, after the handler) as a base64 RFC 6902 JSON
 * patch. `mutated` is compared as serialization would give it (undefined-valued keys a defaulter
 * left are absent). No patch when the handler changed nothing, only the nulls decoding dropped
 * differ: upstream's handlers compare the decoded object with its copy (reflect.DeepEqual) and
 * answer without a patch then, which keeps a stored `creationTimestamp: null` in a pod template —
 * removed, the spec would change and its generation with it.
 */
export function patchResponse(uid: string, original: object, mutated: unknown): AdmissionResponse {
  const ops: JsonPatchOperation[] = [];
  diffJson(original, mutated as object, ops);
  if (ops.every((op) => op.op === 'remove' && valueAt(original, op.path) === null)) return { uid, allowed: true };
  return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
}

/** The value at a JSON pointer made by `pointer`. */
function valueAt(root: object, path: string): unknown {
  let v: unknown = root;
  for (const key of path.slice(1).split('/')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

export type JsonPatchOperation = { op: 'remove'; path: string } | { op: 'replace' | 'add'; path: string; value: unknown };

const escapeKey = (key: string) => (key.includes('/') || key.includes('~') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key);

/** The JSON pointer of `key` under the keys in `at`; built only for an operation. */
const pointer = (at: readonly string[], key?: string) => {
  let path = '';
  for (const k of at) path += `/${escapeKey(k)}`;
  return key === undefined ? path : `${path}/${escapeKey(key)}`;
};

type Json = Record<string, unknown>;

/**
 * The operations fast-json-patch's compare(old, JSON.parse(JSON.stringify(cur))) gives, in its
 * order (removals and replacements from the last old key back, then additions), for an `old` that
 * is parsed JSON: without the JSON round trip of the whole of `cur` (a key whose value is
 * undefined is absent, an undefined array element is null), without copying the values put in the
 * operations (they are serialized at once), and without a path string for a key that did not
 * change (test/unit/runtime/webhook-patch.test.ts compares the two).
 */
export function diffJson(old: object, cur: object, ops: JsonPatchOperation[], at: string[] = []): void {
  const oldIsArray = Array.isArray(old);
  const curIsArray = Array.isArray(cur);
  const oldKeys = oldIsArray ? undefined : Object.keys(old);
  const oldLength = oldKeys ? oldKeys.length : (old as unknown[]).length;
  let deleted = false;
  for (let t = oldLength - 1; t >= 0; t--) {
    const key = oldKeys ? oldKeys[t]! : String(t);
    const oldVal = (old as Json)[key];
    const inCur = curIsArray ? t < (cur as unknown[]).length : Object.hasOwn(cur, key) && (cur as Json)[key] !== undefined;
    if (inCur) {
      const newVal = (cur as Json)[key] ?? null;
      if (
        typeof oldVal === 'object' &&
        oldVal !== null &&
        typeof newVal === 'object' &&
        newVal !== null &&
        Array.isArray(oldVal) === Array.isArray(newVal)
      ) {
        at.push(key);
        diffJson(oldVal, newVal, ops, at);
        at.pop();
      } else if (oldVal !== newVal) {
        ops.push({ op: 'replace', path: pointer(at, key), value: newVal });
      }
    } else if (oldIsArray === curIsArray) {
      ops.push({ op: 'remove', path: pointer(at, key) });
      deleted = true;
    } else {
      ops.push({ op: 'replace', path: pointer(at), value: cur });
    }
  }
  if (curIsArray) {
    const length = (cur as unknown[]).length;
    if (!deleted && length === oldLength) return;
    for (let i = oldLength; i < length; i++) ops.push({ op: 'add', path: pointer(at, String(i)), value: (cur as unknown[])[i] ?? null });
    return;
  }
  let newCount = 0;
  for (const key in cur) if (Object.hasOwn(cur, key) && (cur as Json)[key] !== undefined) newCount++;
  if (!deleted && newCount === oldLength) return;
  for (const key of Object.keys(cur)) {
    const value = (cur as Json)[key];
    if (value !== undefined && !Object.hasOwn(old, key)) ops.push({ op: 'add', path: pointer(at, key), value });
  }
}
