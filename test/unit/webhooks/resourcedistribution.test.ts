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
const errors = (obj: any, old?: any) => msg(validateResourceDistribution(obj, old, admission(V, old ? 'UPDATE' : 'CREATE')));

describe('ResourceDistribution validation', () => {
  test('upstream examples pass', () => {
    for (const doc of loadExamples('resourcedistribution.yaml')) assert.equal(errors(doc), '', doc.apiVersion);
  });
  const cases: Array<[string, any, string]> = [
    ['empty resource', rd({}), 'spec.resource: Required value: empty resource is not allowed'],
    ['unsupported kind', rd({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }), 'spec.resource: Invalid value: "apps/v1/Deployment": unknown or unsupported resource GroupKind, only Secret and ConfigMap are supported'],
    ['namespaced resource', rd({ ...secret, metadata: { name: 's', namespace: 'x' } }), 'spec.resource.metadata.namespace: Forbidden: namespace of resource should not be set'],
    ['ambiguous namespace', rd(secret, { includedNamespaces: { list: [{ name: 'a' }] }, excludedNamespaces: { list: [{ name: 'a' }] } }), 'spec.targets: Invalid value: "a": ambiguous targets because namespace a is in both IncludedNamespaces.List and ExcludedNamespaces.List'],
  ];
  for (const [name, obj, expected] of cases) test(name, () => assert.equal(errors(obj), expected));
  test('invalid namespace name', () => assert.match(errors(rd(secret, { includedNamespaces: { list: [{ name: 'Bad_NS' }] } })), /^spec\.targets\.includedNamespaces\.list\[0\]\.name: Invalid value: "Bad_NS": a lowercase RFC 1123 label/));
  test('resource identity is immutable', () => {
    assert.equal(errors(rd({ ...secret, data: { a: 'Yg==' } }), rd(secret)), '');
    assert.equal(
      errors(rd({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't' } }), rd(secret)),
      '[spec.resource.kind: Invalid value: "ConfigMap": kind of resource is immutable, spec.resource.metadata.name: Invalid value: "t": name of resource is immutable]',
    );
  });
  test('registration gated on ResourceDistributionGate', () => {
    assert.deepEqual(registrations.map((r) => [r.resource, r.gate]), [['resourcedistributions', 'ResourceDistributionGate']]);
  });
});
