import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { registrations, validatePersistentPodState } from '../../../src/webhooks/persistentpodstate/index.ts';
import { admission, fakeReader, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1beta1';
const pps = (spec: Record<string, any>, name = 'pps'): any => ({
  apiVersion: V,
  kind: 'PersistentPodState',
  metadata: { name, namespace: 'default' },
  spec: {
    targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'sts' },
    requiredPersistentTopology: { keys: ['zone'] },
    ...spec,
  },
});
const errors = async (obj: any, old?: any, objects: any[] = []) =>
  msg(await validatePersistentPodState(obj, old, admission(V, old ? 'UPDATE' : 'CREATE', { reader: fakeReader(objects) })));

describe('PersistentPodState validation', () => {
  test('upstream examples pass', async () => {
    for (const doc of loadExamples('persistentpodstate.yaml')) assert.equal(await errors(doc), '', doc.metadata.name);
  });
  test('target must be a StatefulSet or whitelisted', async () => {
    assert.equal(
      await errors(pps({ targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' } })),
      'spec.targetRef: Invalid value: {"apiVersion":"apps/v1","kind":"Deployment","name":"d"}: targetRef.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList',
    );
    const cm = {
      kind: 'ConfigMap',
      metadata: { name: 'kruise-configuration', namespace: 'kruise-system' },
      data: { PPS_Watch_Custom_Workload_WhiteList: JSON.stringify({ workloads: [{ Group: 'apps', Kind: 'Deployment' }] }) },
    };
    assert.equal(await errors(pps({ targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' } }), undefined, [cm]), '');
  });
  test('a topology is required', async () => {
    assert.equal(
      await errors(pps({ requiredPersistentTopology: undefined })),
      'spec: Invalid value: {"targetRef":{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","name":"sts"}}: TopologyConstraint and TopologyPreference cannot be empty at the same time',
    );
  });
  test('targetRef is immutable and unique per workload', async () => {
    assert.equal(
      await errors(pps({ targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'other' } }), pps({})),
      'spec.targetRef: Forbidden: targetRef is immutable',
    );
    assert.equal(
      await errors(pps({}), undefined, [pps({}, 'first')]),
      'spec.targetRef: Invalid value: {"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","name":"sts"}: targetRef is in conflict with other PersistentPodState first',
    );
  });
  test('registration', () =>
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.versions]),
      [['persistentpodstates', ['v1alpha1', 'v1beta1']]],
    ));
});
