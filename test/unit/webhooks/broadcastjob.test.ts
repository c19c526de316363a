import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fieldErrorString } from '../../../src/apis/field-errors.ts';
import { mutateBroadcastJob, validateBroadcastJob } from '../../../src/webhooks/broadcastjob/index.ts';
import { ctx, examples } from './helpers.ts';

const V = 'apps.kruise.io/v1beta1';
function bcj(spec: Record<string, any> = {}, restartPolicy: string | undefined = 'Never'): any {
  return {
    apiVersion: V,
    kind: 'BroadcastJob',
    metadata: { name: 'job-1' },
    spec: { template: { spec: { containers: [{ name: 'pi', image: 'perl' }], ...(restartPolicy ? { restartPolicy } : {}) } }, ...spec },
  };
}
function errors(obj: any, defaults = true): string[] {
  const c = ctx(V);
  if (defaults) mutateBroadcastJob(obj, c);
  return validateBroadcastJob(obj, undefined, c).map(fieldErrorString);
}

describe('BroadcastJob', () => {
  test('defaults and idempotence', () => {
    const obj = bcj();
    mutateBroadcastJob(obj, ctx(V));
    assert.deepEqual(obj.spec.completionPolicy, { type: 'Always' });
    assert.equal(obj.spec.parallelism, 2147483647);
    assert.deepEqual(obj.spec.failurePolicy, { type: 'FailFast' });
    assert.equal(obj.spec.template.spec.containers[0].imagePullPolicy, 'Always');
    const again = structuredClone(obj);
    mutateBroadcastJob(again, ctx(V));
    assert.deepEqual(again, obj);
  });
  test('examples pass after defaulting', () => {
    for (const doc of examples('broadcastjob.yaml')) assert.deepEqual(errors(doc), [], doc.metadata.name);
  });
  const cases: Array<[string, any, string[]]> = [
    [
      'restartPolicy Always',
      bcj({}, 'Always'),
      ['spec.template.spec.restartPolicy: Invalid value: "Always": pod restartPolicy can only be Never or OnFailure'],
    ],
    [
      'restartPolicy empty reads as Always',
      bcj({}, ''),
      ['spec.template.spec.restartPolicy: Invalid value: "Always": pod restartPolicy can only be Never or OnFailure'],
    ],
    [
      'Never with ttl',
      bcj({ completionPolicy: { type: 'Never', ttlSecondsAfterFinished: 5, activeDeadlineSeconds: 3 } }),
      [
        'spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 5: ttlSecondsAfterFinished can just work with Always CompletionPolicyType',
        'spec.completionPolicy.activeDeadlineSeconds: Invalid value: 3: activeDeadlineSeconds can just work with Always CompletionPolicyType',
      ],
    ],
    [
      'preset labels',
      (() => {
        const o = bcj();
        o.spec.template.metadata = { labels: { 'broadcastjob-name': 'x' } };
        return o;
      })(),
      [
        'spec.template.metadata.labels: Invalid value: {"broadcastjob-name":"x"}: "broadcastjob-name" and "broadcastjob-controller-uid" are not allowed to preset in pod labels',
      ],
    ],
    [
      'bad name',
      (() => {
        const o = bcj();
        o.metadata.name = 'a_b';
        return o;
      })(),
      [
        `metadata.name: Invalid value: "a_b": BroadcastJob name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')`,
      ],
    ],
    [
      'no containers',
      (() => {
        const o = bcj();
        o.spec.template.spec.containers = [];
        return o;
      })(),
      ['spec.template.spec.containers: Required value'],
    ],
  ];
  for (const [name, obj, want] of cases) test(name, () => assert.deepEqual(errors(obj), want));
});
