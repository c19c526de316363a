import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { registrations, validateEphemeralJob } from '../../../src/webhooks/ephemeraljob/index.ts';
import { admission, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1alpha1';
const ejob = (
  spec: Record<string, any> = {},
  containers: any[] = [{ name: 'debug', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }],
): any => ({
  apiVersion: V,
  kind: 'EphemeralJob',
  metadata: { name: 'e', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: containers }, ...spec },
});
const errors = (obj: any) => msg(validateEphemeralJob(obj, undefined, admission(V)));

describe('EphemeralJob validation', () => {
  test('upstream example passes', () => {
    for (const doc of loadExamples('ephemeraljob.yaml')) assert.equal(errors(doc), '');
  });
  const cases: Array<[string, any, string]> = [
    ['no selector', ejob({ selector: undefined }), 'spec.selector: Required value: no selector defined for EphemeralJob'],
    ['negative parallelism', ejob({ parallelism: -1 }), 'spec.parallelism: Invalid value: -1: must be greater than or equal to 0'],
    ['no containers', ejob({}, []), 'spec.template.ephemeralContainers: Required value'],
    [
      'no image',
      ejob({}, [{ name: 'd', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }]),
      'ephemeralContainers[0].image: Required value',
    ],
    [
      'no policies',
      ejob({}, [{ name: 'd', image: 'i' }]),
      '[ephemeralContainers[0].terminationMessagePolicy: Required value, ephemeralContainers[0].imagePullPolicy: Required value]',
    ],
    [
      'ports',
      ejob({}, [
        { name: 'd', image: 'i', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', ports: [{ containerPort: 80 }] },
      ]),
      'ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
    ],
    [
      'subPath',
      ejob({}, [
        {
          name: 'd',
          image: 'i',
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePolicy: 'File',
          volumeMounts: [{ name: 'v', mountPath: '/v', subPath: 'x' }],
        },
      ]),
      'ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container',
    ],
    [
      'bad pull policy',
      ejob({}, [{ name: 'd', image: 'i', terminationMessagePolicy: 'File', imagePullPolicy: 'Sometimes' }]),
      'ephemeralContainers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    ],
  ];
  for (const [name, obj, expected] of cases) test(name, () => assert.equal(errors(obj), expected));
  test('registration (v1alpha1 only)', () =>
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.versions]),
      [['ephemeraljobs', ['v1alpha1']]],
    ));
});
