// CustomResourceDefinition manifests derived from the kind definitions. The output is a pure
// function of the schemas, so `npm run gen` is reproducible and a test can compare it with the
// files in config/crd/bases.

import type { TSchema } from '@sinclair/typebox';
import { stringify } from 'yaml';
import { DEFAULT_API_VERSION_SET, servedVersions, type APIVersionSet } from './registry.ts';
import type { KindDefinition, VersionDefinition } from './schema.ts';

export type JSONSchemaProps = { [key: string]: unknown };

// TypeBox writes map[string]T as patternProperties with this catch-all key.
const RECORD_STRING_KEY = '^(.*)$';

/**
 * The openAPIV3Schema form of a TypeBox schema: TypeBox's symbol keys dropped, records turned into
 * additionalProperties, empty property lists removed, keys and `required` sorted.
 */
export function toOpenAPI(schema: TSchema): JSONSchemaProps {
  return convert(JSON.parse(JSON.stringify(schema)) as JSONSchemaProps);
}

function convert(node: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = {};
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case 'properties': {
        const props = value as Record<string, JSONSchemaProps>;
        if (Object.keys(props).length === 0) break;
        out.properties = Object.fromEntries(
          Object.keys(props)
            .sort()
            .map((name) => [name, convert(props[name])]),
        );
        break;
      }
      case 'patternProperties': {
        const patterns = value as Record<string, JSONSchemaProps>;
        const keys = Object.keys(patterns);
        if (keys.length !== 1 || keys[0] !== RECORD_STRING_KEY) {
          throw new Error(`patternProperties are not allowed in a CRD schema: ${keys.join(', ')}`);
        }
        out.additionalProperties = convert(patterns[RECORD_STRING_KEY]);
        break;
      }
      case 'required':
        out.required = [...(value as string[])].sort();
        break;
      case 'items':
        out.items = convert(value as JSONSchemaProps);
        break;
      case 'anyOf':
        out.anyOf = (value as JSONSchemaProps[]).map(convert);
        break;
      default:
        out[key] = value;
    }
  }
  return sortKeys(out);
}

function sortKeys(node: JSONSchemaProps): JSONSchemaProps {
  return Object.fromEntries(
    Object.keys(node)
      .sort()
      .map((k) => [k, node[k]]),
  );
}

function versionManifest(version: VersionDefinition, storage: string): JSONSchemaProps {
  const manifest: JSONSchemaProps = {};
  if (version.printerColumns.length > 0) {
    manifest.additionalPrinterColumns = version.printerColumns.map((c) => {
      const column: JSONSchemaProps = {};
      if (c.description !== undefined) column.description = c.description;
      column.jsonPath = c.jsonPath;
      column.name = c.name;
      if (c.priority !== undefined) column.priority = c.priority;
      column.type = c.type;
      return column;
    });
  }
  manifest.name = version.name;
  manifest.schema = { openAPIV3Schema: toOpenAPI(version.schema) };
  manifest.served = true;
  manifest.storage = version.name === storage;
  const subresources: JSONSchemaProps = {};
  if (version.scale) {
    const scale: JSONSchemaProps = {};
    if (version.scale.labelSelectorPath) scale.labelSelectorPath = version.scale.labelSelectorPath;
    scale.specReplicasPath = version.scale.specReplicasPath;
    scale.statusReplicasPath = version.scale.statusReplicasPath;
    subresources.scale = scale;
  }
  subresources.status = {};
  manifest.subresources = subresources;
  return manifest;
}

/**
 * Kinds served in two versions convert through kruise-manager's /convert webhook, as upstream's
 * installed CRDs do. The in-cluster Service is the default client config; the manager rewrites it
 * (URL mode on a local cluster) and injects the caBundle when it starts.
 */
function conversionFor(versions: readonly VersionDefinition[]): JSONSchemaProps {
  if (versions.length < 2) return { strategy: 'None' };
  return {
    strategy: 'Webhook',
    webhook: {
      clientConfig: { service: { name: 'kruise-webhook-service', namespace: 'kruise-system', path: '/convert' } },
      conversionReviewVersions: ['v1', 'v1beta1'],
    },
  };
}

/** The apiextensions.k8s.io/v1 CustomResourceDefinition for a kind, serving an API version set's versions. */
export function crdManifest(def: KindDefinition, set: APIVersionSet = DEFAULT_API_VERSION_SET): JSONSchemaProps {
  const served = servedVersions(def, set);
  const names: JSONSchemaProps = {};
  if (def.categories.length > 0) names.categories = [...def.categories];
  names.kind = def.kind;
  names.listKind = def.listKind;
  names.plural = def.plural;
  if (def.shortNames.length > 0) names.shortNames = [...def.shortNames];
  names.singular = def.singular;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${def.group}` },
    spec: {
      conversion: conversionFor(served.versions),
      group: def.group,
      names,
      preserveUnknownFields: false,
      scope: def.scope,
      versions: served.versions.map((v) => versionManifest(v, served.storage)),
    },
  };
}

/** Where the generated CRDs of each API version set live: upstream's config/crd/bases for the default. */
export const CRD_SET_DIRS: Readonly<Record<APIVersionSet, string>> = {
  'openkruise-v1.8': 'config/crd/bases',
  v1beta1: 'config/crd/v1beta1',
};

/** File name under config/crd/bases, as upstream names it. */
export function crdFileName(def: KindDefinition): string {
  return `${def.group}_${def.plural}.yaml`;
}

/** The YAML text written to an API version set's CRD directory. */
export function renderCRD(def: KindDefinition, set: APIVersionSet = DEFAULT_API_VERSION_SET): string {
  return `# Generated by hack/gen-crds.ts from src/apis; do not edit.\n---\n${stringify(crdManifest(def, set), { lineWidth: 0, indentSeq: false })}`;
}
