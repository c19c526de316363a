import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CRD_SET_DIRS, crdFileName, crdManifest, renderCRD, type JSONSchemaProps } from '../../../src/apis/crd.ts';
import { API_VERSION_SETS, kinds, servedVersions } from '../../../src/apis/registry.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('generated CRDs', () => {
  for (const set of API_VERSION_SETS) {
    test(`${CRD_SET_DIRS[set]} matches the schemas (${set})`, () => {
      const dir = join(repoRoot, CRD_SET_DIRS[set]);
      const expected = new Map(kinds.map((k) => [crdFileName(k), renderCRD(k, set)]));
      const onDisk = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
      assert.deepEqual(onDisk.sort(), [...expected.keys()].sort(), 'CRD files are stale: run `npm run gen`');
      for (const [file, text] of expected) {
        assert.equal(readFileSync(join(dir, file), 'utf8'), text, `${file} is stale: run \`npm run gen\``);
      }
    });
  }

  test("by default the CRDs serve and store exactly OpenKruise v1.8.2's versions; v1beta1 is a set of its own", () => {
    const versions = (set: (typeof API_VERSION_SETS)[number]) =>
      Object.fromEntries(
        kinds.map((def) => {
          const m = crdManifest(def, set) as {
            spec: { versions: Array<{ name: string; storage: boolean }>; conversion: { strategy: string } };
          };
          const served = m.spec.versions.map((v) => `${v.name}${v.storage ? '*' : ''}`).join(',');
          return [def.kind, `${served} ${m.spec.conversion.strategy}`];
        }),
      );
    // As v1.8.2's config/crd (the storage version starred): only Advanced StatefulSet converts.
    const v18 = versions('openkruise-v1.8');
    for (const kind of Object.keys(v18))
      assert.equal(v18[kind], kind === 'StatefulSet' ? 'v1alpha1,v1beta1* Webhook' : 'v1alpha1* None', kind);
    const beta = versions('v1beta1');
    for (const def of kinds) {
      assert.equal(beta[def.kind], def.versions.length > 1 ? 'v1alpha1,v1beta1* Webhook' : 'v1alpha1* None', def.kind);
      assert.equal(servedVersions(def, 'v1beta1').storage, def.hubVersion);
    }
  });

  test('rendering is deterministic', () => {
    for (const def of kinds) assert.equal(renderCRD(def), renderCRD(def));
  });
});

// Keywords apiextensions.k8s.io/v1 JSONSchemaProps accepts (x-kubernetes-* checked separately).
const ALLOWED_KEYWORDS = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'nullable',
  'example',
  'externalDocs',
]);
const KUBERNETES_EXTENSIONS = new Set([
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

function valueFitsType(value: unknown, type: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

/** Violations of the structural-schema rules (KEP 2019-06-20-crd-validation-defaulting). */
function structuralViolations(node: JSONSchemaProps, path: string, underMetadata = false): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(node)) {
    if (key.startsWith('x-kubernetes-')) {
      if (!KUBERNETES_EXTENSIONS.has(key)) problems.push(`${path}: unknown extension ${key}`);
    } else if (!ALLOWED_KEYWORDS.has(key)) {
      problems.push(`${path}: keyword ${key} is not allowed`);
    }
  }
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (node.type === undefined) {
    if (!intOrString && !preserve) problems.push(`${path}: no type`);
  } else if (!TYPES.has(node.type as string)) {
    problems.push(`${path}: type ${String(node.type)}`);
  }
  if (intOrString) {
    if (node.type !== undefined) problems.push(`${path}: int-or-string with a type`);
    const anyOf = node.anyOf as JSONSchemaProps[] | undefined;
    if (anyOf && JSON.stringify(anyOf) !== JSON.stringify([{ type: 'integer' }, { type: 'string' }])) {
      problems.push(`${path}: int-or-string anyOf must be [integer, string]`);
    }
  } else if (node.anyOf || node.oneOf || node.allOf || node.not) {
    problems.push(`${path}: value validation (anyOf/oneOf/allOf/not) only for int-or-string here`);
  }
  if (node['x-kubernetes-preserve-unknown-fields'] === false) problems.push(`${path}: preserve-unknown-fields false`);
  if (node.properties !== undefined && node.additionalProperties !== undefined) {
    problems.push(`${path}: properties and additionalProperties together`);
  }
  if (node.additionalProperties === false || node.additionalProperties === true) {
    problems.push(`${path}: additionalProperties must be a schema`);
  }
  if (node['x-kubernetes-embedded-resource'] === true && node.type !== 'object') {
    problems.push(`${path}: embedded resource must be an object`);
  }
  if (node['x-kubernetes-map-type'] !== undefined && node.type !== 'object') {
    problems.push(`${path}: map-type on a non-object`);
  }
  if (node.type === 'array' && node.items === undefined) problems.push(`${path}: array without items`);
  if (node.type === 'object' && node.items !== undefined) problems.push(`${path}: object with items`);
  if (node.default !== undefined) {
    if (underMetadata) problems.push(`${path}: default under metadata`);
    if (!valueFitsType(node.default, node.type)) problems.push(`${path}: default does not fit type ${String(node.type)}`);
  }
  const required = (node.required as string[] | undefined) ?? [];
  const properties = (node.properties as Record<string, JSONSchemaProps> | undefined) ?? {};
  for (const name of required) {
    if (!(name in properties)) problems.push(`${path}: required ${name} is not a property`);
  }
  for (const [name, child] of Object.entries(properties)) {
    problems.push(...structuralViolations(child, `${path}.${name}`, underMetadata || name === 'metadata'));
  }
  if (node.items) problems.push(...structuralViolations(node.items as JSONSchemaProps, `${path}[]`, underMetadata));
  if (typeof node.additionalProperties === 'object') {
    problems.push(...structuralViolations(node.additionalProperties as JSONSchemaProps, `${path}{}`, underMetadata));
  }
  return problems;
}

function schemaAt(root: JSONSchemaProps, jsonPath: string): JSONSchemaProps | undefined {
  let node: JSONSchemaProps | undefined = root;
  for (const part of jsonPath.replace(/^\./, '').split('.')) {
    node = (node?.properties as Record<string, JSONSchemaProps> | undefined)?.[part];
  }
  return node;
}

describe('CRD schemas are structural', () => {
  for (const def of kinds) {
    test(`${def.plural}.${def.group}`, () => {
      const spec = crdManifest(def, 'v1beta1').spec as JSONSchemaProps;
      assert.equal(spec.preserveUnknownFields, false);
      // Every version of the v1beta1 set (the default serves a subset of them). Two served versions
      // convert through kruise-manager's /convert; one version needs nothing.
      if (def.versions.length > 1) {
        assert.deepEqual(spec.conversion, {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { service: { name: 'kruise-webhook-service', namespace: 'kruise-system', path: '/convert' } },
            conversionReviewVersions: ['v1', 'v1beta1'],
          },
        });
      } else {
        assert.deepEqual(spec.conversion, { strategy: 'None' });
      }
      const versions = spec.versions as JSONSchemaProps[];
      assert.equal(versions.filter((v) => v.storage === true).length, 1, 'exactly one storage version');
      for (const version of versions) {
        const root = (version.schema as JSONSchemaProps).openAPIV3Schema as JSONSchemaProps;
        assert.equal(root.type, 'object');
        assert.deepEqual((root.properties as Record<string, unknown>).metadata, { type: 'object' });
        assert.deepEqual(structuralViolations(root, String(version.name)), []);
        for (const column of (version.additionalPrinterColumns as JSONSchemaProps[] | undefined) ?? []) {
          assert.ok(['integer', 'number', 'string', 'boolean', 'date'].includes(column.type as string));
          assert.match(column.jsonPath as string, /^\./);
        }
        const subresources = version.subresources as JSONSchemaProps;
        assert.deepEqual(subresources.status, {});
        const scale = subresources.scale as JSONSchemaProps | undefined;
        if (scale) {
          assert.equal(schemaAt(root, scale.specReplicasPath as string)?.type, 'integer');
          assert.equal(schemaAt(root, scale.statusReplicasPath as string)?.type, 'integer');
          assert.equal(schemaAt(root, scale.labelSelectorPath as string)?.type, 'string');
        }
      }
    });
  }

  test('the checker catches a non-structural schema', () => {
    const bad = {
      type: 'object',
      properties: {
        a: {},
        b: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: { type: 'string' } },
        c: { anyOf: [{ type: 'string' }, { type: 'boolean' }] },
        d: { type: 'array' },
        e: { type: 'integer', default: 'x' },
        f: { type: 'string', const: 'x' },
      },
    };
    assert.equal(structuralViolations(bad, 'bad').length, 7);
  });
});

describe('kind metadata', () => {
  const byKind = new Map(kinds.map((k) => [k.kind, k]));

  test('served versions and storage versions follow spec §0', () => {
    const alphaOnly = ['PodProbeMarker', 'NodePodProbe', 'EphemeralJob'];
    assert.equal(kinds.length, 18);
    for (const def of kinds) {
      const names = def.versions.map((v) => v.name);
      if (alphaOnly.includes(def.kind)) {
        assert.deepEqual(names, ['v1alpha1'], def.kind);
        assert.equal(def.hubVersion, 'v1alpha1', def.kind);
      } else {
        assert.deepEqual(names, ['v1alpha1', 'v1beta1'], def.kind);
        assert.equal(def.hubVersion, 'v1beta1', def.kind);
      }
    }
  });

  test('scope and short names follow spec §0', () => {
    const expected: Record<string, [string, string[]]> = {
      CloneSet: ['Namespaced', ['clone']],
      StatefulSet: ['Namespaced', ['sts', 'asts']],
      DaemonSet: ['Namespaced', ['daemon', 'ads']],
      SidecarSet: ['Cluster', []],
      BroadcastJob: ['Namespaced', ['bcj']],
      AdvancedCronJob: ['Namespaced', ['acj']],
      UnitedDeployment: ['Namespaced', ['ud']],
      WorkloadSpread: ['Namespaced', ['ws']],
      ContainerRecreateRequest: ['Namespaced', ['crr']],
      ImagePullJob: ['Namespaced', []],
      ImageListPullJob: ['Namespaced', []],
      NodeImage: ['Cluster', []],
      ResourceDistribution: ['Cluster', ['distributor']],
      PersistentPodState: ['Namespaced', []],
      PodProbeMarker: ['Namespaced', []],
      NodePodProbe: ['Cluster', []],
      EphemeralJob: ['Namespaced', ['ejob']],
      PodUnavailableBudget: ['Namespaced', ['pub']],
    };
    for (const [kind, [scope, shortNames]] of Object.entries(expected)) {
      const def = byKind.get(kind);
      assert.ok(def, kind);
      assert.equal(def.scope, scope, kind);
      assert.deepEqual(def.shortNames, shortNames, kind);
    }
  });

  test('scale subresource on the replicated workloads only', () => {
    const scaled = kinds.filter((k) => k.versions.some((v) => v.scale)).map((k) => k.kind);
    assert.deepEqual(scaled.sort(), ['CloneSet', 'StatefulSet', 'UnitedDeployment']);
    for (const def of kinds.filter((k) => scaled.includes(k.kind))) {
      for (const v of def.versions) {
        assert.deepEqual(v.scale, {
          specReplicasPath: '.spec.replicas',
          statusReplicasPath: '.status.replicas',
          labelSelectorPath: '.status.labelSelector',
        });
      }
    }
  });

  test('upstream enums and defaults are carried', () => {
    const openAPI = (kind: string, version: string) =>
      ((crdManifest(byKind.get(kind)!, 'v1beta1').spec as JSONSchemaProps).versions as JSONSchemaProps[]).find((v) => v.name === version)!
        .schema as JSONSchemaProps;
    const at = (root: JSONSchemaProps, path: string) => schemaAt(root.openAPIV3Schema as JSONSchemaProps, path) as JSONSchemaProps;
    assert.deepEqual(at(openAPI('AdvancedCronJob', 'v1beta1'), '.spec.concurrencyPolicy').enum, ['Allow', 'Forbid', 'Replace']);
    assert.deepEqual(at(openAPI('WorkloadSpread', 'v1alpha1'), '.spec.scheduleStrategy.type').enum, ['Adaptive', 'Fixed', '']);
    const policy = at(openAPI('SidecarSet', 'v1beta1'), '.spec.injectionStrategy.revision.policy');
    assert.deepEqual([policy.enum, policy.default], [['Always', 'Partial'], 'Always']);
    assert.equal(at(openAPI('CloneSet', 'v1beta1'), '.spec.scaleStrategy.enablePVCReuse').default, false);
    assert.deepEqual(at(openAPI('CloneSet', 'v1beta1'), '.spec.template'), {
      description: 'Template describes the pods that will be created.',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });
});
