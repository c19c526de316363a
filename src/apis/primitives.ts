// Leaf schema constructors shared by core.ts and schema.ts (kept apart so neither imports the
// other in a cycle). Each produces a node that is legal in a structural CRD schema.

import { Kind, Type, TypeRegistry, type SchemaOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';

export const Opt = Type.Optional;

export const Str = (o?: SchemaOptions) => Type.String(o);
export const Bool = (o?: SchemaOptions) => Type.Boolean(o);
export const Int32 = (o?: SchemaOptions) => Type.Integer({ format: 'int32', ...o });
export const Int64 = (o?: SchemaOptions) => Type.Integer({ format: 'int64', ...o });
/** metav1.Time: an RFC3339 string. */
export const Time = (o?: SchemaOptions) => Type.String({ format: 'date-time', ...o });
export const StringList = (o?: SchemaOptions) => Type.Array(Type.String(), o);
export const StringMap = (o?: SchemaOptions) => Type.Record(Type.String(), Type.String(), o);
/** map[string]T, emitted as additionalProperties. */
export const MapOf = <T extends TSchema>(value: T, o?: SchemaOptions) => Type.Record(Type.String(), value, o);

/** intstr.IntOrString. */
export const IntOrString = (o?: SchemaOptions) => Type.Union([Type.Integer(), Type.String()], { 'x-kubernetes-int-or-string': true, ...o });

const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
/** resource.Quantity, in the form Kubernetes generates for it. */
export const Quantity = (o?: SchemaOptions) =>
  Type.Union([Type.Integer(), Type.String()], { pattern: QUANTITY_PATTERN, 'x-kubernetes-int-or-string': true, ...o });

// A CRD `enum` must be a plain `{type: string, enum: [...]}`, which TypeBox's Union-of-Literals
// does not produce; a registered kind keeps both the emitted shape and the runtime check right.
const STRING_ENUM_KIND = 'KruiseStringEnum';
if (!TypeRegistry.Has(STRING_ENUM_KIND)) {
  TypeRegistry.Set<{ enum: string[] }>(STRING_ENUM_KIND, (schema, value) => typeof value === 'string' && schema.enum.includes(value));
}

/** A string the apiserver restricts to `values` (upstream `+kubebuilder:validation:Enum`). */
export function StringEnum<const T extends readonly string[]>(values: T, o?: SchemaOptions): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...o, [Kind]: STRING_ENUM_KIND, type: 'string', enum: [...values] });
}

/**
 * A string upstream does not restrict in its CRD: the known values are named in the TS type for
 * readers and completion, while any string stays acceptable (as the apiserver accepts it).
 */
export function KnownString<T extends string>(o?: SchemaOptions): TUnsafe<T | (string & {})> {
  return Type.Unsafe<T | (string & {})>(Type.String(o));
}

/**
 * The Kubernetes type a schemaless or preserved field holds: upstream's Go webhooks decode the
 * field into it, so the webhooks' shape check (src/apis/decode.ts) checks it as deeply. A symbol
 * key, so it never reaches a CRD.
 */
export const DecodedAs = Symbol.for('kruise-ts/decoded-as');

function decodedAs<S extends TSchema>(schema: S, shape: TSchema | undefined): S {
  return shape ? { ...schema, [DecodedAs]: shape } : schema;
}

/**
 * A field upstream marks `+kubebuilder:validation:Schemaless` + `PreserveUnknownFields`: the CRD
 * carries no schema for it (any value is stored as given), the TS type is the Kubernetes type,
 * `shape` its schema when the webhooks decode it (raw patches and documents have none).
 */
export function Schemaless<T>(o?: SchemaOptions, shape?: TSchema): TUnsafe<T> {
  return Type.Unsafe<T>(decodedAs(Type.Unknown({ ...o, 'x-kubernetes-preserve-unknown-fields': true }), shape));
}

/** An object whose contents are kept verbatim (`type: object` + preserve-unknown-fields). */
export function PreservedObject<T>(o?: SchemaOptions, shape?: TSchema): TUnsafe<T> {
  return Type.Unsafe<T>(decodedAs(Type.Object({}, { ...o, 'x-kubernetes-preserve-unknown-fields': true }), shape));
}

/** A complete Kubernetes object embedded in a field (`x-kubernetes-embedded-resource`). */
export function EmbeddedResource<T>(o?: SchemaOptions, shape?: TSchema): TUnsafe<T> {
  return Type.Unsafe<T>(
    decodedAs(Type.Object({}, { ...o, 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true }), shape),
  );
}

/** Copy of a schema with a description attached where it is used. */
export function describe<S extends TSchema>(schema: S, description: string): S {
  return { ...schema, description };
}
