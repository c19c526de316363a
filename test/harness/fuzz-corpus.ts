// Seeded generator of invalid admission inputs for the webhook fuzz test
// (test/unit/webhooks/fuzz.test.ts): valid samples of every Kruise kind and version (examples/),
// and mutations of them — a wrong JSON type, null, a huge or negative number, "%"-style strings,
// empty values or a deleted field at paths taken from the sample and from the kind's schema
// (the pod template's fields included) — plus nesting far beyond the webhook's limit.

import fs from 'node:fs';
import path from 'node:path';
import { Kind, type TSchema } from '@sinclair/typebox';
import { parseAllDocuments } from 'yaml';
import { DecodedAs } from '../../src/apis/primitives.ts';
import { kindFor, parseApiVersion, type KindDefinition } from '../../src/apis/registry.ts';

/** mulberry32: a small seeded PRNG, so a failing case can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stable number for a string, to derive one seed per kind and version. */
export function hashSeed(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

// ---------------------------------------------------------------------------------------------
// Samples

export interface Sample {
  def: KindDefinition;
  version: string;
  /** Which examples/ document it is, for naming cases. */
  source: string;
  object: Record<string, any>;
}

const EXAMPLES = path.join(import.meta.dirname, '../../examples');

/** Every Kruise object in examples/, with its kind and version. */
export function samples(): Sample[] {
  const out: Sample[] = [];
  for (const file of fs
    .readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    parseAllDocuments(fs.readFileSync(path.join(EXAMPLES, file), 'utf8')).forEach((doc, i) => {
      const object = doc.toJS() as Record<string, any> | null;
      if (!object || typeof object.apiVersion !== 'string') return;
      const { group, version } = parseApiVersion(object.apiVersion);
      const def = kindFor(group, object.kind);
      if (def) out.push({ def, version, source: `${file}#${i}`, object });
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Schema paths

/** The JSON type a schema node declares, as far as decoding checks it. */
export type DeclaredType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'any';

export interface SchemaPath {
  path: (string | number)[];
  type: DeclaredType;
  /** Integer width, when the schema gives one. */
  format?: string;
}

function declaredType(schema: TSchema): DeclaredType {
  switch (schema[Kind]) {
    case 'Object':
    case 'Record':
      return 'object';
    case 'Array':
      return 'array';
    case 'String':
    case 'KruiseStringEnum':
      return 'string';
    case 'Integer':
      return 'integer';
    case 'Number':
      return 'number';
    case 'Boolean':
      return 'boolean';
    case 'Union':
      return 'int-or-string';
    default:
      return 'any';
  }
}

/** Every path of a kind-version schema (one element of each list, one key of each map), typed schemaless fields included. */
export function schemaPaths(schema: TSchema): SchemaPath[] {
  const out: SchemaPath[] = [];
  const walk = (node: TSchema, at: (string | number)[]) => {
    const declared = (node as { [DecodedAs]?: TSchema })[DecodedAs];
    if (declared) return walk(declared, at);
    if (at.length) out.push({ path: at, type: declaredType(node), format: node.format as string | undefined });
    if (node[Kind] === 'Object') for (const [k, v] of Object.entries(node.properties as Record<string, TSchema>)) walk(v, [...at, k]);
    if (node[Kind] === 'Array') walk(node.items, [...at, 0]);
    if (node[Kind] === 'Record') walk(Object.values(node.patternProperties as Record<string, TSchema>)[0]!, [...at, 'k']);
  };
  walk(schema, []);
  return out;
}

/** 'spec.template.spec.containers[0].image', as the webhooks name fields. */
export function fieldName(at: readonly (string | number)[]): string {
  return at.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

// ---------------------------------------------------------------------------------------------
// Values

/** Values of every JSON type, the edge numbers and the strings that trip int-or-percent parsing. */
export const BAD_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -1745,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  1e308,
  -1e308,
  '',
  'nginx',
  '%',
  '-1%',
  '1e9',
  '-1',
  '200%',
  '0x10',
  ' ',
  '\u0000',
  'a'.repeat(300),
  [],
  [null],
  ['x'],
  [1],
  [{}],
  {},
  { a: 1 },
  { '': null },
];

export function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Whether decoding must refuse `value` where `declared` is expected (null means absent: never). */
export function mustRefuse(declared: SchemaPath, value: unknown): boolean {
  const t = jsonType(value);
  if (t === 'null' || declared.type === 'any') return false;
  if (declared.type === 'int-or-string') return t !== 'integer' && t !== 'string';
  if (declared.type === 'number') return t !== 'integer' && t !== 'number';
  if (declared.type === 'integer') {
    if (t !== 'integer') return true;
    const n = value as number;
    if (declared.format === 'int32') return n < -(2 ** 31) || n > 2 ** 31 - 1;
    if (declared.format === 'int64') return n < -(2 ** 63) || n >= 2 ** 63;
    return false;
  }
  return t !== declared.type;
}

/** `{"a":{"a":…}}` (or nested lists) `depth` levels deep around `leaf`. */
export function nested(depth: number, leaf: unknown = 1, kind: 'object' | 'array' = 'object'): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = kind === 'object' ? { a: v } : [v];
  return v;
}

/** The same as text, for depths JSON.stringify cannot reach. */
export function nestedText(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

// ---------------------------------------------------------------------------------------------
// Mutations

export interface Mutation {
  /** e.g. 'set spec.replicas = "1e9"'. */
  name: string;
  object: Record<string, any>;
  /** The field a shape refusal must name, when the mutation puts a wrong type where the schema declares one. */
  refusedField?: string;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Sets `value` at `at`, creating the objects and lists on the way; false when a parent is not a container. */
export function setAt(root: Record<string, any>, at: readonly (string | number)[], value: unknown): boolean {
  let node: any = root;
  for (let i = 0; i < at.length - 1; i++) {
    const key = at[i]!;
    const next = at[i + 1]!;
    if (node[key] === undefined || node[key] === null) node[key] = typeof next === 'number' ? [] : {};
    node = node[key];
    if (typeof node !== 'object' || node === null) return false;
    if (typeof next === 'number' && !Array.isArray(node)) return false;
    if (typeof next === 'string' && Array.isArray(node)) return false;
  }
  const last = at[at.length - 1]!;
  if (typeof last === 'number') while (node.length < last) node.push({});
  node[last] = value;
  return true;
}

export function deleteAt(root: Record<string, any>, at: readonly (string | number)[]): boolean {
  let node: any = root;
  for (const key of at.slice(0, -1)) {
    node = node?.[key];
    if (typeof node !== 'object' || node === null) return false;
  }
  const last = at[at.length - 1]!;
  if (!(last in node)) return false;
  if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
  else delete node[last];
  return true;
}

/** Paths present in a JSON value (every object key and list index). */
export function valuePaths(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(value))
    value.forEach((v, i) => {
      out.push([...at, i]);
      valuePaths(v, [...at, i], out);
    });
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push([...at, k]);
      valuePaths(v, [...at, k], out);
    }
  }
  return out;
}

/** The declared type at a concrete path (list indexes and map keys matched loosely). */
function declaredAt(paths: readonly SchemaPath[], at: readonly (string | number)[]): SchemaPath | undefined {
  const key = (p: readonly (string | number)[]) => p.map((x) => (typeof x === 'number' ? '#' : x)).join('/');
  const wanted = key(at);
  return (
    paths.find((p) => key(p.path) === wanted) ??
    // A map key of the sample is any key of the schema's map.
    paths.find(
      (p) =>
        p.path.length === at.length &&
        p.path.every((x, i) => x === 'k' || (typeof x === 'number' ? typeof at[i] === 'number' : x === at[i])),
    )
  );
}

/**
 * Mutations of one sample: every field present in it replaced by a value of another JSON type and
 * deleted, `randomCount` random schema paths (present or not) set to a random bad value, and half
 * as many objects with three such values at once.
 */
export function mutations(sample: Sample, random: () => number, randomCount: number): Mutation[] {
  const schema = sample.def.versions.find((v) => v.name === sample.version)!.schema;
  const paths = schemaPaths(schema);
  const out: Mutation[] = [];
  const add = (at: readonly (string | number)[], value: unknown, declared: SchemaPath | undefined) => {
    const object = clone(sample.object);
    if (!setAt(object, at, clone(value))) return;
    const name = `set ${fieldName(at)} = ${JSON.stringify(value)?.slice(0, 40)}`;
    out.push({ name, object, ...(declared && mustRefuse(declared, value) && { refusedField: fieldName(at) }) });
  };
  for (const at of valuePaths(sample.object)) {
    if (at[0] === 'apiVersion' || at[0] === 'kind') continue;
    const declared = declaredAt(paths, at);
    const current = jsonType(at.reduce<any>((n, k) => n[k], sample.object));
    const other = BAD_VALUES.filter((v) => jsonType(v) !== current);
    add(at, pick(random, other), declared);
    const object = clone(sample.object);
    if (deleteAt(object, at)) out.push({ name: `delete ${fieldName(at)}`, object });
  }
  for (let i = 0; i < randomCount; i++) {
    const declared = pick(random, paths);
    add(declared.path, pick(random, BAD_VALUES), declared);
  }
  // A few fields wrong at once, in places handlers combine (selectors with templates, strategies with replicas).
  for (let i = 0; i < randomCount / 2; i++) {
    const object = clone(sample.object);
    const names: string[] = [];
    for (let j = 0; j < 3; j++) {
      const declared = pick(random, paths);
      const value = pick(random, BAD_VALUES);
      if (setAt(object, declared.path, clone(value))) names.push(`${fieldName(declared.path)} = ${JSON.stringify(value)?.slice(0, 20)}`);
    }
    out.push({ name: `set ${names.join(', ')}`, object });
  }
  return out;
}
