// The shape check every webhook request passes before any handler runs: what upstream's Go
// webhooks enforce when they decode a request into their typed structs. Every field has its JSON
// type (a string where a string is declared, an object where an object is), integers fit their Go
// width, null stands for an absent field, unknown fields are ignored. Schemaless fields whose
// Kubernetes type is known (pod templates, volume claim templates, sidecar containers…; see
// DecodedAs) are checked as deeply as Go decodes them. Value rules (required, enum, pattern,
// format) are left to the API server's schema validation and to the validating webhooks.
//
// Errors are worded like the API server's own schema errors, naming the field:
//   spec.template.spec.containers[0].image: Invalid value: "integer": spec.template.spec.containers[0].image in body must be of type string: "integer"

import { Kind, Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { DecodedAs } from './primitives.ts';
import type { KindDefinition } from './registry.ts';
import { isJsonObject } from './json.ts';

/** The value to hand the handlers (nulls of typed fields removed), or why it does not decode. */
export type Decoded = { value: unknown; errors?: undefined } | { value?: undefined; errors: string[] };

/** At most this many field errors are reported for one value. */
const MAX_ERRORS = 20;

// Go's int64 bounds are not doubles: 2^63 itself is the first value out of range.
const INT_RANGE: Record<string, { minimum: number; maximum?: number; exclusiveMaximum?: number }> = {
  int32: { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 },
  int64: { minimum: -(2 ** 63), exclusiveMaximum: 2 ** 63 },
};
const INT64_MAX = '9223372036854775807';

const shapes = new WeakMap<TSchema, TSchema>();
// Object shapes recur (a container in every pod template, a probe three times in each container):
// each is compiled once as a referenced function rather than inlined at every use, which keeps the
// generated code of all kinds small enough to compile at start-up.
const objectShapes = new Map<string, TSchema>();

function shared(shape: TSchema): TSchema {
  const $id = `kruise-ts/decode/${objectShapes.size}`;
  objectShapes.set($id, { ...shape, $id });
  return Type.Ref($id);
}

function deref(shape: TSchema): TSchema {
  return shape[Kind] === 'Ref' ? objectShapes.get(shape.$ref)! : shape;
}

/** `schema` reduced to what decoding checks: JSON types and integer widths, all fields optional. */
export function shapeOf(schema: TSchema): TSchema {
  let shape = shapes.get(schema);
  if (!shape) {
    shape = reduce(schema);
    shapes.set(schema, shape);
  }
  return shape;
}

function reduce(schema: TSchema): TSchema {
  const declared = (schema as { [DecodedAs]?: TSchema })[DecodedAs];
  if (declared) return shapeOf(declared);
  switch (schema[Kind]) {
    case 'Object':
      return shared(
        Type.Object(
          Object.fromEntries(Object.entries(schema.properties as Record<string, TSchema>).map(([k, v]) => [k, Type.Optional(shapeOf(v))])),
        ),
      );
    case 'Array':
      return Type.Array(shapeOf(schema.items));
    case 'Record':
      return Type.Record(Type.String(), shapeOf(Object.values(schema.patternProperties as Record<string, TSchema>)[0]!));
    case 'Union':
      // intstr.IntOrString keeps its integer in an int32 (a Quantity, the other int-or-string
      // union, carries a pattern and has no such limit).
      if (schema['x-kubernetes-int-or-string'] && !schema.pattern) return Type.Union([Type.Integer(INT_RANGE.int32), Type.String()]);
      return Type.Union((schema.anyOf as TSchema[]).map(shapeOf));
    case 'String':
    case 'KruiseStringEnum':
      return Type.String();
    case 'Integer':
      return Type.Integer(INT_RANGE[schema.format as string] ?? {});
    case 'Number':
      return Type.Number();
    case 'Boolean':
      return Type.Boolean();
    case 'Unknown':
      return Type.Unknown();
    default:
      throw new Error(`decode: no shape for a ${String(schema[Kind])} schema`);
  }
}

/**
 * A copy of `value` without the nulls Go's decoder reads as absent: null-valued properties and map
 * entries of typed fields. Nulls in lists stay (and fail the check); untyped fields are kept as
 * they are (a null in a patch document means something).
 */
function dropNulls(ref: TSchema, value: unknown): unknown {
  const shape = deref(ref);
  if (Array.isArray(value)) return shape[Kind] === 'Array' ? value.map((v) => dropNulls(shape.items, v)) : value;
  if (!isJsonObject(value)) return value;
  const kind = shape[Kind];
  if (kind !== 'Object' && kind !== 'Record') return value;
  const props = shape.properties as Record<string, TSchema> | undefined;
  const values = kind === 'Record' ? (Object.values(shape.patternProperties)[0] as TSchema) : undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const child = values ?? props?.[k];
    if (!child) out[k] = v;
    else if (v !== null || child[Kind] === 'Unknown') out[k] = dropNulls(child, v);
  }
  return out;
}

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** '/spec/containers/0/name' under 'spec' → 'spec.containers[0].name'. */
function fieldPath(root: string, pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), root);
}

const TYPE_OF_ERROR: ReadonlyMap<ValueErrorType, string> = new Map([
  [ValueErrorType.Array, 'array'],
  [ValueErrorType.Boolean, 'boolean'],
  [ValueErrorType.Integer, 'integer'],
  [ValueErrorType.Number, 'number'],
  [ValueErrorType.Object, 'object'],
  [ValueErrorType.String, 'string'],
]);

function jsonTypeOfShape(shape: TSchema): string {
  return shape[Kind] === 'Record' ? 'object' : String(shape.type);
}

/** The API server's wording for one error; undefined for errors decoding does not report. */
function message(type: ValueErrorType, shape: TSchema, value: unknown, field: string): string | undefined {
  const actual = jsonType(value);
  const expected =
    TYPE_OF_ERROR.get(type) ?? (type === ValueErrorType.Union ? (shape.anyOf as TSchema[]).map(jsonTypeOfShape).join(',') : undefined);
  if (expected) return `${field}: Invalid value: "${actual}": ${field} in body must be of type ${expected}: "${actual}"`;
  if (type === ValueErrorType.IntegerMaximum)
    return `${field}: Invalid value: ${value}: ${field} in body should be less than or equal to ${shape.maximum}`;
  if (type === ValueErrorType.IntegerExclusiveMaximum)
    return `${field}: Invalid value: ${value}: ${field} in body should be less than or equal to ${INT64_MAX}`;
  if (type === ValueErrorType.IntegerMinimum)
    return `${field}: Invalid value: ${value}: ${field} in body should be greater than or equal to ${shape.minimum}`;
  return undefined;
}

/** A compiled shape check for one schema. */
export class ShapeDecoder {
  private readonly check: TypeCheck<TSchema>;
  private readonly shape: TSchema;

  constructor(schema: TSchema) {
    this.shape = shapeOf(schema);
    this.check = TypeCompiler.Compile(this.shape, [...objectShapes.values()]);
  }

  /**
   * `value` checked; field paths in messages start with `root` ('' for a Kubernetes object, whose
   * fields are named from its top, as the API server does; a value that is no object is 'object').
   */
  decode(value: unknown, root = ''): Decoded {
    if (this.check.Check(value)) return { value };
    const kept = dropNulls(this.shape, value);
    if (this.check.Check(kept)) return { value: kept };
    const seen = new Set<string>();
    const errors: string[] = [];
    for (const e of this.check.Errors(kept)) {
      if (seen.has(e.path)) continue;
      seen.add(e.path);
      const field = fieldPath(root, e.path) || 'object';
      const text = message(e.type, e.schema, e.value, field);
      if (text) errors.push(text);
      if (errors.length === MAX_ERRORS) break;
    }
    // Only value rules failed, which decoding leaves to others (cannot happen with reduced shapes).
    return errors.length ? { errors } : { value: kept };
  }
}

const decoders = new Map<string, ShapeDecoder>();

/**
 * The decoder for one served version of a kind, compiled by the first request that needs it
 * (1–20 ms; 10–17 ms for a kind with a pod template). Compiling every kind's at start-up, even one per
 * event-loop turn, cost the manager ≈20 MiB of RSS and 0.35 s of CPU while its caches were
 * filling, for kinds a cluster may never use (docs/benchmarks.md, issue 20).
 */
export function decoderFor(def: KindDefinition, version: string): ShapeDecoder | undefined {
  const key = `${def.group}/${version}/${def.kind}`;
  let decoder = decoders.get(key);
  if (!decoder) {
    const served = def.versions.find((v) => v.name === version);
    if (!served) return undefined;
    decoder = new ShapeDecoder(served.schema);
    decoders.set(key, decoder);
  }
  return decoder;
}
