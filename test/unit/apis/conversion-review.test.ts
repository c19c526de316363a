import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { convert, handleConversionReview } from '../../../src/apis/conversion/index.ts';
import { validateObject } from '../../../src/apis/validate.ts';

const cloneSet = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'cs', namespace: 'ns', uid: 'cs-uid' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'a' } },
    template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    updateStrategy: { type: 'InPlaceIfPossible' },
  },
};
const pub = {
  apiVersion: 'policy.kruise.io/v1alpha1',
  kind: 'PodUnavailableBudget',
  metadata: { name: 'pub', namespace: 'ns', annotations: { 'pub.kruise.io/protect-total-replicas': '3' } },
  spec: { selector: { matchLabels: { app: 'a' } }, maxUnavailable: 1 },
};

function review(desiredAPIVersion: unknown, objects: unknown, uid = 'req-1'): unknown {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects } };
}

describe('handleConversionReview', () => {
  test('converts every object to desiredAPIVersion and echoes the uid', () => {
    const out = handleConversionReview(review('apps.kruise.io/v1beta1', [cloneSet, { ...cloneSet, metadata: { name: 'cs2' } }]));
    assert.equal(out.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(out.kind, 'ConversionReview');
    assert.equal(out.request, undefined);
    assert.equal(out.response?.uid, 'req-1');
    assert.deepEqual(out.response?.result, { status: 'Success' });
    assert.equal(out.response?.convertedObjects.length, 2);
    for (const obj of out.response!.convertedObjects) {
      assert.equal(obj.apiVersion, 'apps.kruise.io/v1beta1');
      assert.deepEqual(validateObject(obj), { errors: [], unknownFields: [] });
    }
    assert.deepEqual(out.response?.convertedObjects[0], convert(cloneSet, 'apps.kruise.io/v1beta1'));
    assert.deepEqual(out.response?.convertedObjects[0].spec?.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' },
    });
  });

  test('converts policy.kruise.io objects', () => {
    const out = handleConversionReview(review('policy.kruise.io/v1beta1', [pub]));
    assert.deepEqual(out.response?.result, { status: 'Success' });
    assert.equal(out.response?.convertedObjects[0].spec?.protectTotalReplicas, 3);
  });

  test('an empty object list succeeds with no objects', () => {
    const out = handleConversionReview(review('apps.kruise.io/v1alpha1', []));
    assert.deepEqual(out.response, { uid: 'req-1', convertedObjects: [], result: { status: 'Success' } });
  });

  const failures: [string, unknown, RegExp][] = [
    [
      'unknown kind',
      review('apps.kruise.io/v1beta1', [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'Widget', metadata: { name: 'w' } }]),
      /object 0 \(w\): unknown kind Widget/,
    ],
    [
      'version not served by the kind',
      review('apps.kruise.io/v1beta1', [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'e' } }]),
      /EphemeralJob is not served in apps.kruise.io\/v1beta1/,
    ],
    ['unknown desired version', review('apps.kruise.io/v2', [cloneSet]), /CloneSet is not served in apps.kruise.io\/v2/],
    [
      'second object fails',
      review('apps.kruise.io/v1beta1', [cloneSet, pub]),
      /object 1 \(pub\): cannot convert PodUnavailableBudget from group policy.kruise.io/,
    ],
    [
      'object without kind',
      review('apps.kruise.io/v1beta1', [{ apiVersion: 'apps.kruise.io/v1alpha1' }]),
      /object 0: object to convert has no apiVersion or kind/,
    ],
    ['object not an object', review('apps.kruise.io/v1beta1', ['x']), /object 0: object to convert is not a JSON object/],
    ['missing desiredAPIVersion', review(undefined, [cloneSet]), /no desiredAPIVersion/],
    ['missing objects', review('apps.kruise.io/v1beta1', undefined), /no objects/],
    ['missing request', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }, /has no request/],
    ['not a ConversionReview', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }, /expected a ConversionReview/],
    ['not an object', 'hello', /expected a ConversionReview/],
  ];
  for (const [name, input, message] of failures) {
    test(`Failure: ${name}`, () => {
      const out = handleConversionReview(input);
      assert.equal(out.kind, 'ConversionReview');
      assert.equal(out.response?.result.status, 'Failure');
      assert.deepEqual(out.response?.convertedObjects, []);
      const result = out.response!.result as { message: string };
      assert.match(result.message, message);
    });
  }

  test('Failure echoes the request uid', () => {
    const out = handleConversionReview(review('apps.kruise.io/v1beta1', [{ apiVersion: 'x/v1', kind: 'Y' }], 'uid-9'));
    assert.equal(out.response?.uid, 'uid-9');
  });

  test('a review round trip returns the original objects', () => {
    const there = handleConversionReview(review('apps.kruise.io/v1beta1', [cloneSet]));
    const back = handleConversionReview(review('apps.kruise.io/v1alpha1', there.response!.convertedObjects));
    assert.deepEqual(back.response?.convertedObjects, [cloneSet]);
  });
});
