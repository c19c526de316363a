// Structural validation of Kruise objects against their schema, the way the apiserver does it
// before storing them: null-valued fields are dropped, fields the schema does not know are
// reported (kubectl's strict field validation rejects them, the apiserver prunes them), and the
// remaining value is checked with the compiled TypeBox schema. Semantic rules belong to the
// validating webhooks, not here.

import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { toOpenAPI, type JSONSchemaProps } from './crd.ts';
import { schemaFor } from './registry.ts';
import { isJsonObject } from './json.ts';

// RFC 3339 date-time, as metav1.Time serializes it.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));
}

export interface SchemaIssue {
  /** JSON pointer of the offending value. */
  path: string;
  message: string;
}

export interface ObjectValidation {
  /** Values that do not fit the schema: the apiserver rejects the object. */
  errors: SchemaIssue[];
  /** Fields the schema does not declare, as kubectl names them ('spec.foo'). */
  unknownFields: string[];
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();
const openAPI = new WeakMap<TSchema, JSONSchemaProps>();

function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

function openAPIFor(schema: TSchema): JSONSchemaProps {
  let props = openAPI.get(schema);
  if (!props) {
    props = toOpenAPI(schema);
    openAPI.set(schema, props);
  }
  return props;
}

/** Value-level errors of `value` against `schema`, the first one per path. */
export function schemaErrors(schema: TSchema, value: unknown): SchemaIssue[] {
  const byPath = new Map<string, SchemaIssue>();
  for (const e of checkerFor(schema).Errors(value)) {
    if (!byPath.has(e.path)) byPath.set(e.path, { path: e.path, message: e.message });
  }
  return [...byPath.values()];
}

/**
 * What the apiserver keeps of `value`: nulls removed from fields that are not nullable; fields
 * unknown to the schema are removed too and their paths collected.
 */
function prune(node: JSONSchemaProps, value: unknown, path: string, unknown: string[]): unknown {
  // ObjectMeta is validated by the apiserver itself, whatever the CRD says about it.
  if (path === 'metadata') return value;
  if (node['x-kubernetes-preserve-unknown-fields'] === true && node.properties === undefined) return value;
  if (Array.isArray(value)) {
    const items = node.items as JSONSchemaProps | undefined;
    return items ? value.map((v, i) => prune(items, v, `${path}[${i}]`, unknown)) : value;
  }
  if (!isJsonObject(value)) return value;
  const properties = node.properties as Record<string, JSONSchemaProps> | undefined;
  const additional = node.additionalProperties as JSONSchemaProps | undefined;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    const childSchema = properties?.[key] ?? additional;
    if (child === null && childSchema?.nullable !== true) continue;
    if (!childSchema) {
      if (node['x-kubernetes-preserve-unknown-fields'] === true) out[key] = child;
      else unknown.push(childPath);
      continue;
    }
    out[key] = prune(childSchema, child, childPath, unknown);
  }
  return out;
}

/** Validates `value` against a kind-version schema. */
export function validateAgainst(schema: TSchema, value: unknown): ObjectValidation {
  const unknownFields: string[] = [];
  const kept = prune(openAPIFor(schema), value, '', unknownFields);
  return { errors: schemaErrors(schema, kept), unknownFields };
}

/** Validates a Kruise object, finding its schema from apiVersion and kind. */
export function validateObject(obj: { apiVersion?: unknown; kind?: unknown }): ObjectValidation {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    return { errors: [{ path: '', message: 'apiVersion and kind must be set' }], unknownFields: [] };
  }
  const schema = schemaFor(apiVersion, kind);
  if (!schema) {
    return { errors: [{ path: '', message: `no Kruise kind ${kind} in ${apiVersion}` }], unknownFields: [] };
  }
  return validateAgainst(schema, obj);
}
