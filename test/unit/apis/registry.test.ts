import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CloneSet } from '../../../src/apis/apps/cloneset.ts';
import { gvrFor, kindFor, kinds, parseApiVersion, resolveResource, schemaFor, hubGVR } from '../../../src/apis/registry.ts';

describe('registry', () => {
  test('names are unique and derived as upstream derives them', () => {
    const plurals = kinds.map((k) => `${k.plural}.${k.group}`);
    assert.equal(new Set(plurals).size, kinds.length);
    for (const def of kinds) {
      assert.equal(def.listKind, `${def.kind}List`);
      assert.equal(def.singular, def.kind.toLowerCase());
      assert.equal(def.plural, `${def.singular}s`);
    }
  });

  test('parseApiVersion', () => {
    assert.deepEqual(parseApiVersion('apps.kruise.io/v1beta1'), { group: 'apps.kruise.io', version: 'v1beta1' });
    assert.deepEqual(parseApiVersion('v1'), { group: '', version: 'v1' });
  });

  test('gvrFor resolves served versions only', () => {
    assert.deepEqual(gvrFor('apps.kruise.io/v1alpha1', 'CloneSet'), {
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      resource: 'clonesets',
    });
    assert.deepEqual(gvrFor('policy.kruise.io/v1beta1', 'PodUnavailableBudget'), {
      group: 'policy.kruise.io',
      version: 'v1beta1',
      resource: 'podunavailablebudgets',
    });
    assert.equal(gvrFor('apps.kruise.io/v1beta1', 'EphemeralJob'), undefined);
    assert.equal(gvrFor('apps/v1', 'StatefulSet'), undefined);
  });

  test('hubGVR', () => {
    assert.deepEqual(hubGVR(kindFor('apps.kruise.io', 'NodePodProbe')!), {
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      resource: 'nodepodprobes',
    });
  });

  test('resolveResource accepts plural, singular, kind and short names', () => {
    for (const name of ['clonesets', 'cloneset', 'CloneSet', 'clone', 'clonesets.apps.kruise.io']) {
      assert.equal(resolveResource(name)?.kind, 'CloneSet', name);
    }
    assert.equal(resolveResource('asts')?.kind, 'StatefulSet');
    assert.equal(resolveResource('pub')?.group, 'policy.kruise.io');
    assert.equal(resolveResource('sts.policy.kruise.io'), undefined);
    assert.equal(resolveResource('deployments'), undefined);
  });

  test('schemaFor returns the version schema', () => {
    assert.equal(schemaFor('apps.kruise.io/v1beta1', 'CloneSet'), CloneSet);
    assert.equal(schemaFor('apps.kruise.io/v2', 'CloneSet'), undefined);
  });
});
