// RFC 7386 JSON merge patch (`application/merge-patch+json`), as the API server applies it to custom
// resources: objects merge key by key, `null` removes a key, anything else (arrays too) replaces.

import { isJsonObject, type JsonObject } from '../apis/json.ts';

/** `target` with `patch` merged in (a new value; neither input is changed). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}
