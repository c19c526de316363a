// Building blocks of the v1alpha1 ↔ v1beta1 converters: JSON value helpers, metadata label /
// annotation moves, and the residual annotation that makes every conversion round-trip lossless.

import { parseApiVersion } from '../registry.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

/** A Kruise object as the apiserver hands it to a conversion webhook. */
export interface KubeObject extends JsonObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaLike;
  spec?: JsonObject;
  status?: JsonObject;
}

export interface ObjectMetaLike extends JsonObject {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The field mapping of one kind in both directions; each returns a new object. */
export interface KindConversion {
  toV1beta1(obj: KubeObject): KubeObject;
  toV1alpha1(obj: KubeObject): KubeObject;
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ak = Object.keys(a);
    return ak.length === Object.keys(b).length && ak.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Copy of `obj` under `apiVersion`: group kept, version replaced. */
export function withVersion(obj: KubeObject, version: string): KubeObject {
  const out = clone(obj);
  const { group } = parseApiVersion(obj.apiVersion ?? '');
  out.apiVersion = group ? `${group}/${version}` : version;
  return out;
}

/** Kinds whose v1alpha1 and v1beta1 schemas are the same: only apiVersion changes. */
export const identicalConversion: KindConversion = {
  toV1beta1: (obj) => withVersion(obj, 'v1beta1'),
  toV1alpha1: (obj) => withVersion(obj, 'v1alpha1'),
};

/** Copy of `obj` without the keys whose value is undefined; undefined when nothing is left. */
export function compact<T extends JsonObject>(obj: T): T | undefined {
  const out = Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Sets `obj[key]`, or deletes it when `value` is undefined. */
export function assign(obj: JsonObject, key: string, value: unknown): void {
  if (value === undefined) delete obj[key];
  else obj[key] = value;
}

// ---------------------------------------------------------------------------------------------
// Labels and annotations standing in for fields of the other version

type MetaMap = 'labels' | 'annotations';

export function metaValue(meta: ObjectMetaLike | undefined, map: MetaMap, key: string): string | undefined {
  const m = meta?.[map];
  return m && Object.hasOwn(m, key) ? m[key] : undefined;
}

export function setMetaValue(meta: ObjectMetaLike, map: MetaMap, key: string, value: string): void {
  meta[map] = { ...(meta[map] ?? {}), [key]: value };
}

/** Removes a label/annotation; an emptied map is removed too, as if it had never been written. */
export function deleteMetaValue(meta: ObjectMetaLike | undefined, map: MetaMap, key: string): void {
  const m = meta?.[map];
  if (!meta || !m || !Object.hasOwn(m, key)) return;
  delete m[key];
  if (Object.keys(m).length === 0) delete meta[map];
}

/** The object's metadata, created when absent (converters only write labels and annotations). */
export function metadataOf(obj: { metadata?: unknown }): ObjectMetaLike {
  if (!isJsonObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as ObjectMetaLike;
}

const INT32 = /^[+-]?\d+$/;

/** Go strconv.ParseInt(s, 10, 32). */
export function parseInt32(s: string): number | undefined {
  if (!INT32.test(s)) return undefined;
  const n = Number(s);
  return n >= -2147483648 && n <= 2147483647 ? n : undefined;
}

/** intstr.Parse: an int32 when the string is one, the string otherwise. */
export function parseIntOrString(s: string): number | string {
  return parseInt32(s) ?? s;
}

// ---------------------------------------------------------------------------------------------
// Residual: what the target version cannot express
//
// Every conversion A→B is checked against its inverse: the fields where converting B back would
// not give A again are recorded on B in one annotation, each with the value the inverse
// conversion produced at that time. Converting B back restores a recorded field only while the
// inverse still produces that same value, so an edit made in version B wins over the record.
// The annotation is consumed by the conversion back, and only labels and annotations of the
// metadata are ever touched, as the apiserver requires of conversion webhooks.

/** Annotation holding the residual of a conversion (JSON list of entries). */
export const CONVERSION_RESIDUAL_ANNOTATION = 'conversion.kruise.io/residual';

export interface ResidualEntry {
  /** Path of the field from the object root. */
  p: string[];
  /** Value in the source object; absent when the source had no such field. */
  v?: unknown;
  /** Value the inverse conversion produced; absent when it produced none. */
  n?: unknown;
}

function residualPaths(a: unknown, b: unknown, path: string[], out: ResidualEntry[]): void {
  if (deepEqual(a, b)) return;
  if (isJsonObject(a) && isJsonObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      residualPaths(a[key], b[key], [...path, key], out);
    }
    return;
  }
  const entry: ResidualEntry = { p: path };
  if (b !== undefined) entry.v = b;
  if (a !== undefined) entry.n = a;
  out.push(entry);
}

/**
 * Whether a value says nothing a Go client could tell from an absent field: undefined, false, an
 * empty list, or an object holding only such values (Go omits them or writes `{}` for structs).
 */
function isZero(value: unknown): boolean {
  if (value === undefined || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isJsonObject(value) && Object.values(value).every(isZero);
}

/**
 * Entries turning `inverse` (the source as the inverse conversion sees it) into `source`. A field
 * that is zero on both sides (`scaleStrategy: {}` against none, `enablePVCReuse: false` against
 * none) is no residual: recording it would put the annotation on nearly every object for nothing.
 */
export function computeResidual(inverse: KubeObject, source: KubeObject): ResidualEntry[] {
  const out: ResidualEntry[] = [];
  const { apiVersion: _a, ...inv } = inverse;
  const { apiVersion: _b, ...src } = source;
  residualPaths(inv, src, [], out);
  return out.filter((e) => isResidualPath(e.p) && !(isZero(e.v) && isZero(e.n)));
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Whether a residual may touch `path`: spec, status, and the labels and annotations of the
 * metadata (the rest of the metadata must come out of a conversion unchanged), never the residual
 * annotation itself. The annotation is user-writable, so its paths are checked before use.
 */
function isResidualPath(path: string[]): boolean {
  if (path.some((k) => FORBIDDEN_KEYS.has(k))) return false;
  const [root, map, key] = path;
  if (root === 'spec' || root === 'status') return true;
  return (
    root === 'metadata' && (map === 'labels' || map === 'annotations') && !(map === 'annotations' && key === CONVERSION_RESIDUAL_ANNOTATION)
  );
}

function getPath(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const key of path) {
    if (!isJsonObject(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

function setPath(obj: JsonObject, path: string[], value: unknown): void {
  let cur = obj;
  for (const key of path.slice(0, -1)) {
    if (!isJsonObject(cur[key])) cur[key] = {};
    cur = cur[key] as JsonObject;
  }
  assign(cur, path[path.length - 1], value);
}

/** Applies the entries whose recorded inverse value still matches `obj`; returns `obj`. */
export function applyResidual(obj: KubeObject, entries: ResidualEntry[]): KubeObject {
  for (const e of entries) {
    if (!isResidualPath(e.p) || !deepEqual(getPath(obj, e.p), e.n)) continue;
    setPath(obj, e.p, clone(e.v));
  }
  // A whole annotations map restored from a crafted residual could carry a residual of its own.
  deleteMetaValue(obj.metadata, 'annotations', CONVERSION_RESIDUAL_ANNOTATION);
  return obj;
}

function isEntry(value: unknown): value is ResidualEntry {
  return isJsonObject(value) && Array.isArray(value.p) && value.p.every((k) => typeof k === 'string');
}

/** Removes the residual annotation from `obj` and returns its entries (invalid JSON: none). */
export function takeResidual(obj: KubeObject): ResidualEntry[] {
  const raw = metaValue(obj.metadata, 'annotations', CONVERSION_RESIDUAL_ANNOTATION);
  if (raw === undefined) return [];
  deleteMetaValue(obj.metadata, 'annotations', CONVERSION_RESIDUAL_ANNOTATION);
  if (isJsonObject(obj.metadata) && Object.keys(obj.metadata).length === 0) delete obj.metadata;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter(isEntry) : [];
  } catch {
    return [];
  }
}

export function putResidual(obj: KubeObject, entries: ResidualEntry[]): void {
  if (entries.length === 0) return;
  setMetaValue(metadataOf(obj), 'annotations', CONVERSION_RESIDUAL_ANNOTATION, JSON.stringify(entries));
}
