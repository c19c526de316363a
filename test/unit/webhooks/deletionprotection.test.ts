// Deletion protection of built-in resources (spec §20): upstream's messages, 403, only with the gate.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AdmissionDenied } from '../../../src/runtime/webhook/types.ts';
import {
  validateAlwaysOnlyDeletion,
  validateBuiltinWorkloadDeletion,
  validateCRDDeletion,
  validateNamespaceDeletion,
} from '../../../src/webhooks/deletionprotection/index.ts';
import { admission, fakeReader } from './nonworkload-helpers.ts';

const on = { ResourcesDeletionProtection: true };
const labelled = (value: string, extra: object = {}) => ({
  metadata: { name: 'x', labels: { 'policy.kruise.io/delete-protection': value } },
  ...extra,
});

async function refusal(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
    return undefined;
  } catch (err) {
    assert.ok(err instanceof AdmissionDenied);
    assert.equal(err.code, 403);
    return err.message;
  }
}

describe('deletion protection', () => {
  test('Deployment: Always refuses, Cascading while replicas > 0; nothing with the gate off or while already deleting', async () => {
    const ctx = admission('apps/v1', 'DELETE', { gates: on });
    assert.equal(
      await refusal(() => validateBuiltinWorkloadDeletion(labelled('Always') as never, undefined, ctx)),
      'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always',
    );
    assert.equal(
      await refusal(() => validateBuiltinWorkloadDeletion(labelled('Cascading', { spec: { replicas: 3 } }) as never, undefined, ctx)),
      'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 3>0',
    );
    assert.equal(
      await refusal(() => validateBuiltinWorkloadDeletion(labelled('Cascading', { spec: { replicas: 0 } }) as never, undefined, ctx)),
      undefined,
    );
    assert.equal(
      await refusal(() => validateBuiltinWorkloadDeletion(labelled('Always') as never, undefined, admission('apps/v1', 'DELETE'))),
      undefined,
    );
    const deleting = labelled('Always');
    (deleting.metadata as Record<string, unknown>).deletionTimestamp = '2026-11-24T00:00:00Z';
    assert.equal(await refusal(() => validateBuiltinWorkloadDeletion(deleting as never, undefined, ctx)), undefined);
  });

  test('Service / Ingress: Always refuses, Cascading has no effect', async () => {
    const ctx = admission('v1', 'DELETE', { gates: on });
    assert.ok(await refusal(() => validateAlwaysOnlyDeletion(labelled('Always') as never, undefined, ctx)));
    assert.equal(await refusal(() => validateAlwaysOnlyDeletion(labelled('Cascading') as never, undefined, ctx)), undefined);
  });

  test('Namespace Cascading: active pods first, then Bound PVCs not being deleted', async () => {
    const ns = labelled('Cascading');
    ns.metadata.name = 'team';
    const pod = (name: string, phase: string) => ({ kind: 'Pod', metadata: { name, namespace: 'team' }, status: { phase } });
    const pvc = (name: string, phase: string, deleting = false) => ({
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: 'team', ...(deleting ? { deletionTimestamp: '2026-11-24T00:00:00Z' } : {}) },
      status: { phase },
    });
    const ctx = (objects: object[]) => admission('v1', 'DELETE', { gates: on, reader: fakeReader(objects) });
    assert.equal(
      await refusal(() =>
        validateNamespaceDeletion(ns as never, undefined, ctx([pod('a', 'Running'), pod('b', 'Succeeded'), pvc('c', 'Bound')])),
      ),
      'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active pods 1>0',
    );
    assert.equal(
      await refusal(() =>
        validateNamespaceDeletion(
          ns as never,
          undefined,
          ctx([pod('b', 'Failed'), pvc('c', 'Bound'), pvc('d', 'Bound', true), pvc('e', 'Pending')]),
        ),
      ),
      'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and "Bound" status pvc 1>0',
    );
    assert.equal(await refusal(() => validateNamespaceDeletion(ns as never, undefined, ctx([pvc('d', 'Bound', true)]))), undefined);
  });

  test('CRD Cascading needs DeletionProtectionForCRDCascadingGate, then refuses while CRs are active', async () => {
    const crd = labelled('Cascading', {
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', kind: 'Widget' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', storage: true }],
      },
    });
    assert.equal(
      await refusal(() => validateCRDDeletion(crd as never, undefined, admission('apiextensions.k8s.io/v1', 'DELETE', { gates: on }))),
      'feature-gate DeletionProtectionForCRDCascadingGate is not enabled',
    );
    const listed: string[] = [];
    const reader = {
      ...fakeReader([]),
      async listResource<T>(type: { group: string; version: string; resource: string }): Promise<T[]> {
        listed.push(`${type.group}/${type.version}/${type.resource}`);
        return [{ metadata: { name: 'a' } }, { metadata: { name: 'b', deletionTimestamp: 'x' } }] as T[];
      },
    };
    const ctx = admission('apiextensions.k8s.io/v1', 'DELETE', { gates: { ...on, DeletionProtectionForCRDCascadingGate: true }, reader });
    assert.equal(
      await refusal(() => validateCRDDeletion(crd as never, undefined, ctx)),
      'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active CRs 1>0',
    );
    assert.deepEqual(listed, ['example.com/v1/widgets']);
  });
});
