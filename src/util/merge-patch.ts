// RFC 7386 JSON merge patch (`application/merge-patch+json`), as the API server applies it to custom
// resources: objects merge key by key, `null` removes a key, anything else (arrays too) replaces.

import { isDeepStrictEqual } from 'node:util';
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

/**
 * The merge patch that turns `from` into `to`, or undefined when they are equal: changed keys with
 * their new values (objects key by key, arrays whole), removed keys as `null`. A key whose new value
 * is `null` is removed by it rather than set to null, which a Go client reads alike.
 */
export function createMergePatch(from: unknown, to: unknown): unknown {
  if (!isJsonObject(from) || !isJsonObject(to)) return isDeepStrictEqual(from, to) ? undefined : to;
  const patch: JsonObject = {};
  for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (!Object.hasOwn(from, key)) patch[key] = value;
    else {
      const changed = createMergePatch(from[key], value);
      if (changed !== undefined) patch[key] = changed;
    }
  }
  return Object.keys(patch).length ? patch : undefined;
}
