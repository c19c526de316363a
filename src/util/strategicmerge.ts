// Client-side strategic merge patch of a pod template (what upstream's
// strategicpatch.StrategicMergePatch(template, patch, &corev1.PodTemplateSpec{}) does for
// UnitedDeployment subset patches). No npm package implements it, so this covers the pod template's
// schema: maps merge recursively, `null` deletes a key, lists of named things (containers, volumes,
// env, …) merge by their patch merge key, every other list is replaced, and the `$patch` directive
// (`replace` on a map, `delete` on a list item or map) is honoured. `$retainKeys` and
// `$setElementOrder` are not needed by template patches and are dropped.

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** patchMergeKey of the PodTemplateSpec's mergeable lists (k8s.io/api/core/v1 struct tags), by field name. */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  resourceClaims: 'name',
  readinessGates: 'conditionType',
  resizePolicy: 'resourceName',
  schedulingGates: 'name',
};

/** Applies a strategic merge patch to a JSON document (a pod template) and returns the result. */
export function strategicMergePatch<T>(original: T, patch: unknown): T {
  return mergeValue(original, patch, undefined) as T;
}

function mergeValue(original: unknown, patch: unknown, field: string | undefined): unknown {
  if (isObject(patch)) {
    if (patch.$patch === 'replace') return stripDirectives(patch);
    if (patch.$patch === 'delete') return undefined;
    return mergeMap(isObject(original) ? original : {}, patch);
  }
  if (Array.isArray(patch)) {
    const key = field ? MERGE_KEYS[field] : undefined;
    if (key && Array.isArray(original)) return mergeList(original, patch, key);
    return patch.filter((item) => !(isObject(item) && item.$patch === 'delete')).map(stripDirectives);
  }
  return patch;
}

function mergeMap(original: Json, patch: Json): Json {
  const out: Json = { ...original };
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    const merged = mergeValue(out[k], v, k);
    if (merged === undefined) delete out[k];
    else out[k] = merged;
  }
  return out;
}

function mergeList(original: unknown[], patch: unknown[], key: string): unknown[] {
  const out = [...original];
  for (const item of patch) {
    if (!isObject(item) || item[key] === undefined) {
      out.push(stripDirectives(item));
      continue;
    }
    const at = out.findIndex((o) => isObject(o) && o[key] === item[key]);
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
    } else if (item.$patch === 'replace') {
      if (at >= 0) out[at] = stripDirectives(item);
      else out.push(stripDirectives(item));
    } else if (at >= 0) {
      out[at] = mergeMap(out[at] as Json, item);
    } else {
      out.push(stripDirectives(item));
    }
  }
  return out;
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}
