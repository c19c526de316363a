// A strategic merge patch applied to a Pod, as Kubernetes's strategicpatch.StrategicMergePatch does
// with the Pod's struct tags: maps merge recursively, `null` removes a key, lists whose Go field has
// `patchStrategy:"merge"` merge element-wise by their `patchMergeKey` (a patch element with
// `"$patch": "delete"` removes the match), primitive merge lists (finalizers) take the union, every
// other list is replaced; `"$patch": "replace"` in a map replaces it whole. Used where upstream
// applies a user's patch to a pod or a pod template (same paths): WorkloadSpread and UnitedDeployment
// subset `patch`.

import { isJsonObject, type JsonObject } from '../apis/json.ts';

/** patchMergeKey of the merge lists of a Pod, by field path (`[]` marks a list element). */
const POD_MERGE_KEYS: Readonly<Record<string, string>> = {
  'metadata.ownerReferences': 'uid',
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.ephemeralContainers': 'name',
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'spec.hostAliases': 'ip',
  'spec.topologySpreadConstraints': 'topologyKey',
  'spec.resourceClaims': 'name',
  'spec.schedulingGates': 'name',
};
const CONTAINER_MERGE_KEYS: Readonly<Record<string, string>> = {
  env: 'name',
  ports: 'containerPort',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  resizePolicy: 'resourceName',
};
/** Lists of primitives merged as sets. */
const POD_SET_LISTS = new Set(['metadata.finalizers']);

function mergeKeyFor(path: string): string | undefined {
  const direct = POD_MERGE_KEYS[path];
  if (direct) return direct;
  const m = /^spec\.(?:containers|initContainers|ephemeralContainers)\[\]\.(\w+)$/.exec(path);
  return m ? CONTAINER_MERGE_KEYS[m[1]!] : undefined;
}

function mergeList(original: unknown[], patch: unknown[], path: string): unknown[] {
  if (POD_SET_LISTS.has(path)) return [...original, ...patch.filter((p) => !original.includes(p))];
  const key = mergeKeyFor(path);
  if (!key) return patch.filter((p) => !(isJsonObject(p) && p.$patch === 'delete'));
  const out = original.map((o) => structuredClone(o));
  for (const p of patch) {
    if (!isJsonObject(p)) continue;
    const i = out.findIndex((o) => isJsonObject(o) && o[key] === p[key]);
    if (p.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) out[i] = mergeMap(out[i] as JsonObject, p, `${path}[]`);
    else out.push(mergeMap({}, p, `${path}[]`));
  }
  return out;
}

function mergeMap(original: JsonObject, patch: JsonObject, path: string): JsonObject {
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return structuredClone(rest);
  }
  const out: JsonObject = { ...original };
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k.startsWith('$retainKeys') || k.startsWith('$setElementOrder')) continue;
    const childPath = path ? `${path}.${k}` : k;
    if (v === null) delete out[k];
    else if (isJsonObject(v)) out[k] = mergeMap(isJsonObject(out[k]) ? (out[k] as JsonObject) : {}, v, childPath);
    else if (Array.isArray(v)) out[k] = mergeList(Array.isArray(out[k]) ? (out[k] as unknown[]) : [], v, childPath);
    else out[k] = v;
  }
  return out;
}

/** The pod with the strategic merge patch applied (a new object; the input is not changed). */
export function strategicMergePod<T extends object>(pod: T, patch: JsonObject): T {
  return mergeMap(structuredClone(pod) as JsonObject, patch, '') as T;
}
