import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decoderFor } from '../../../src/apis/decode.ts';
import { kindFor } from '../../../src/apis/registry.ts';
import { MAX_JSON_DEPTH, nestingExceeds } from '../../../src/runtime/webhook/http.ts';

const cloneSetV1beta1 = decoderFor(kindFor('apps.kruise.io', 'CloneSet')!, 'v1beta1')!;
const cloneSet = (spec: Record<string, unknown>): any => ({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'CloneSet',
  metadata: { name: 'cs', labels: { app: 'a' } },
  spec: {
    selector: { matchLabels: { app: 'a' } },
    template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    ...spec,
  },
});

test('a well-shaped object is handed on as it is, unknown fields included', () => {
  const obj = { ...cloneSet({ replicas: 3 }), extra: { anything: [1] } };
  assert.equal(cloneSetV1beta1.decode(obj).value, obj);
});

test('nulls of typed fields read as absent, as Go decodes them; nulls in lists and untyped fields stay', () => {
  const obj = cloneSet({ replicas: null, updateStrategy: { rollingUpdate: { maxUnavailable: null } } });
  obj.spec.template.spec = { containers: [{ name: 'c', image: 'nginx', env: null, securityContext: { runAsUser: null } }] } as any;
  const out = cloneSetV1beta1.decode(obj).value as any;
  assert.equal('replicas' in out.spec, false);
  assert.deepEqual(out.spec.updateStrategy, { rollingUpdate: {} });
  assert.equal('env' in out.spec.template.spec.containers[0], false);
  assert.deepEqual(out.spec.template.spec.containers[0].securityContext, { runAsUser: null });
  assert.equal(obj.spec.replicas, null, 'the input is not changed');
  assert.deepEqual(cloneSetV1beta1.decode(cloneSet({ template: { spec: { containers: [null] } } })).errors, [
    'spec.template.spec.containers[0]: Invalid value: "null": spec.template.spec.containers[0] in body must be of type object: "null"',
  ]);
});

test('wrong types, int-or-string and integer widths are named like the API server names them', () => {
  assert.deepEqual(
    cloneSetV1beta1.decode(cloneSet({ replicas: 1.5, updateStrategy: { rollingUpdate: { maxSurge: true } }, minReadySeconds: 2 ** 31 }))
      .errors,
    [
      'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"',
      'spec.minReadySeconds: Invalid value: 2147483648: spec.minReadySeconds in body should be less than or equal to 2147483647',
      'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "boolean": spec.updateStrategy.rollingUpdate.maxSurge in body must be of type integer,string: "boolean"',
    ],
  );
  assert.deepEqual(cloneSetV1beta1.decode('x').errors, [
    'object: Invalid value: "string": object in body must be of type object: "string"',
  ]);
  assert.deepEqual(
    cloneSetV1beta1.decode(cloneSet({ template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 'http' }] }] } } })).errors,
    [
      'spec.template.spec.containers[0].ports[0].containerPort: Invalid value: "string": spec.template.spec.containers[0].ports[0].containerPort in body must be of type integer: "string"',
    ],
  );
});

test('nesting is measured on the bytes, brackets inside strings and escapes ignored', () => {
  const deep = (n: number) => Buffer.from('['.repeat(n) + ']'.repeat(n));
  assert.equal(nestingExceeds(deep(MAX_JSON_DEPTH), MAX_JSON_DEPTH), false);
  assert.equal(nestingExceeds(deep(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH), true);
  assert.equal(nestingExceeds(Buffer.from(JSON.stringify({ a: '[{'.repeat(1000), b: '\\"[[[' })), 3), false);
  assert.equal(nestingExceeds(Buffer.from(JSON.stringify({ a: 'x\\"', b: [[[[1]]]] })), 3), true);
});

test('an int-or-string integer is an int32, as intstr.IntOrString decodes it; a quantity is not limited', () => {
  const refused = cloneSetV1beta1.decode(
    cloneSet({ updateStrategy: { rollingUpdate: { maxSurge: 2 ** 31, partition: 2 ** 31 - 1 } } }),
  ).errors;
  assert.equal(refused?.length, 1);
  assert.match(refused![0]!, /^spec\.updateStrategy\.rollingUpdate\.maxSurge: /);
  assert.equal(cloneSetV1beta1.decode(cloneSet({ updateStrategy: { rollingUpdate: { maxSurge: 2 ** 31 - 1 } } })).errors, undefined);
  const quantity = cloneSet({});
  quantity.spec.template.spec.containers[0].resources = { limits: { memory: 2 ** 40 } };
  assert.equal(cloneSetV1beta1.decode(quantity).errors, undefined);
});
