import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import { parseAllDocuments } from 'yaml';
import { CloneSet, type CloneSetSpec } from '../../../src/apis/apps/cloneset.ts';
import { kinds } from '../../../src/apis/registry.ts';
import { validateObject } from '../../../src/apis/validate.ts';

const examplesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples');

function loadExamples(file: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(join(examplesDir, file), 'utf8'))
    .map((d) => d.toJSON() as Record<string, unknown> | null)
    .filter((d): d is Record<string, unknown> => d !== null);
}

const files = readdirSync(examplesDir).filter((f) => f.endsWith('.yaml'));

describe('upstream examples validate against the schemas', () => {
  for (const file of files) {
    test(file, () => {
      const docs = loadExamples(file);
      assert.ok(docs.length > 0);
      for (const doc of docs) {
        const name = `${String(doc.apiVersion)} ${String(doc.kind)} ${String((doc.metadata as { name?: string })?.name)}`;
        assert.deepEqual(validateObject(doc), { errors: [], unknownFields: [] }, name);
      }
    });
  }

  test('every served kind-version has an example', () => {
    const covered = new Set(files.flatMap((f) => loadExamples(f)).map((d) => `${String(d.apiVersion)}/${String(d.kind)}`));
    const missing = kinds.flatMap((k) => k.versions.map((v) => `${k.group}/${v.name}/${k.kind}`)).filter((gvk) => !covered.has(gvk));
    assert.deepEqual(missing, []);
  });
});

describe('validateObject', () => {
  const cloneSet = () => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name: 'x', labels: { a: 'b' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'x' } },
      template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    } as Record<string, unknown>,
  });

  test('reports fields the version does not know, as kubectl names them', () => {
    const obj = cloneSet();
    obj.spec.updateStrategy = { type: 'RollingUpdate', partition: 1 };
    obj.spec.scaleStrategy = { disablePVCReuse: true };
    assert.deepEqual(validateObject(obj).unknownFields, ['spec.updateStrategy.partition', 'spec.scaleStrategy.disablePVCReuse']);
  });

  test('schemaless fields keep anything', () => {
    const obj = cloneSet();
    (obj.spec.template as Record<string, unknown>).whatever = { deep: [1, 'x'] };
    assert.deepEqual(validateObject(obj), { errors: [], unknownFields: [] });
  });

  test('rejects values of the wrong type', () => {
    const obj = cloneSet();
    obj.spec.replicas = 'two';
    obj.spec.updateStrategy = { rollingUpdate: { maxSurge: true } };
    assert.deepEqual(
      validateObject(obj).errors.map((e) => e.path),
      ['/spec/replicas', '/spec/updateStrategy/rollingUpdate/maxSurge'],
    );
  });

  test('requires what upstream requires', () => {
    const obj = cloneSet();
    delete obj.spec.selector;
    assert.deepEqual(
      validateObject(obj).errors.map((e) => e.path),
      ['/spec/selector'],
    );
  });

  test('enforces upstream enums and date-time strings', () => {
    const acj = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'AdvancedCronJob',
      spec: { schedule: '* * * * *', concurrencyPolicy: 'Sometimes', template: {} },
      status: { lastScheduleTime: 'yesterday' },
    };
    assert.deepEqual(
      validateObject(acj).errors.map((e) => e.path),
      ['/spec/concurrencyPolicy', '/status/lastScheduleTime'],
    );
  });

  test('drops nulls like the apiserver', () => {
    const obj = cloneSet();
    obj.spec.replicas = null;
    assert.deepEqual(validateObject(obj), { errors: [], unknownFields: [] });
  });

  test('refuses objects of unknown kinds or versions', () => {
    assert.equal(validateObject({ apiVersion: 'apps.kruise.io/v1', kind: 'CloneSet' }).errors.length, 1);
    assert.equal(validateObject({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'PodProbeMarker' }).errors.length, 1);
    assert.equal(validateObject({ kind: 'CloneSet' }).errors.length, 1);
  });

  test('schema defaults fill in like CRD defaulting', () => {
    const spec = Value.Default(CloneSet.properties.spec, { scaleStrategy: {} }) as CloneSetSpec;
    assert.equal(spec.scaleStrategy?.enablePVCReuse, false);
  });
});
