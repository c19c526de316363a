import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { registrations, validateResourceDistribution } from '../../../src/webhooks/resourcedistribution/index.ts';
import { admission, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1beta1';
const rd = (resource: any, targets: Record<string, any> = { allNamespaces: true }): any => ({
  apiVersion: V,
  kind: 'ResourceDistribution',
  metadata: { name: 'rd' },
  spec: { resource, targets },
});
const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: {} };
const errors = (obj: any, old?: any) =>
  msg(validateResourceDistribution(obj, old, admission(V, old ? 'UPDATE' : 'CREATE', { gates: { ResourceDistributionGate: true } })));

describe('ResourceDistribution validation', () => {
  test('upstream examples pass', () => {
    for (const doc of loadExamples('resourcedistribution.yaml')) assert.equal(errors(doc), '', doc.apiVersion);
  });
  const cases: Array<[string, any, string]> = [
    // Upstream's paths and words (pkg/webhook/resourcedistribution/validating).
    ['empty resource', rd({}), 'spec: Invalid value: null: empty resource is not allowed'],
    [
      'unsupported kind',
      rd({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }),
      'spec.resource: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}: unknown or unsupported resource GroupKind, only support [Secret ConfigMap]',
    ],
    ['namespaced resource (the namespace is ignored)', rd({ ...secret, metadata: { name: 's', namespace: 'x' } }), ''],
    [
      'unnamed resource',
      rd({ ...secret, metadata: {} }),
      'spec.resource: Internal error: failed to dry-run to validate spec.resource, error: Secret "" is invalid: metadata.name: Required value: name or generateName is required',
    ],
    [
      'ambiguous namespace',
      rd(secret, { includedNamespaces: { list: [{ name: 'a' }] }, excludedNamespaces: { list: [{ name: 'a' }] } }),
      'spec.targets: Invalid value: {"includedNamespaces":{"list":[{"name":"a"}]},"excludedNamespaces":{"list":[{"name":"a"}]}}: ambiguous targets because namespace [a] is in both IncludedNamespaces.List and ExcludedNamespaces.List',
    ],
  ];
  for (const [name, obj, expected] of cases) test(name, () => assert.equal(errors(obj), expected));
  test('invalid namespace name', () =>
    assert.match(
      errors(rd(secret, { includedNamespaces: { list: [{ name: 'Bad_NS' }] } })),
      /^spec\.targets\.includedNamespaces: Invalid value: \{"list":\[\{"name":"Bad_NS"\}\]\}: a lowercase RFC 1123 label/,
    ));
  test('resource identity is immutable', () => {
    assert.equal(errors(rd({ ...secret, data: { a: 'Yg==' } }), rd(secret)), '');
    assert.equal(
      errors(rd({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't' } }), rd(secret)),
      'spec.resource: Invalid value: null: resource apiVersion, kind, and name are immutable',
    );
  });
  test('served with the gate off, refusing (403) as upstream does', () => {
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.gate]),
      [['resourcedistributions', undefined]],
    );
    assert.throws(() => validateResourceDistribution(rd(secret), undefined, admission(V)), {
      message: 'feature-gate ResourceDistributionGate is not enabled',
      code: 403,
    });
  });
});
