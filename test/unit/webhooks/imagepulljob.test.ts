import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdmissionDenied } from '../../../src/runtime/webhook/types.ts';
import {
  imageListPullJobError,
  mutateImageListPullJob,
  registrations as listRegistrations,
  validateImageListPullJob,
} from '../../../src/webhooks/imagelistpulljob/index.ts';
import { imagePullJobError, mutateImagePullJob, registrations, validateImagePullJob } from '../../../src/webhooks/imagepulljob/index.ts';
import { imageReferenceError } from '../../../src/util/imageref.ts';
import { admission, loadExamples } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1beta1';
const job = (spec: Record<string, any>): any => ({
  apiVersion: V,
  kind: 'ImagePullJob',
  metadata: { name: 'j', namespace: 'default' },
  spec: { image: 'nginx:1.9.1', ...spec },
});
const defaulted = (spec: Record<string, any>) => {
  const obj = job(spec);
  mutateImagePullJob(obj, admission(V));
  return obj;
};

describe('ImagePullJob defaulting', () => {
  test('defaults and the protection finalizer on CREATE, idempotently', () => {
    const obj = defaulted({});
    assert.deepEqual(obj.spec, {
      image: 'nginx:1.9.1',
      completionPolicy: { type: 'Always' },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
      imagePullPolicy: 'IfNotPresent',
    });
    assert.deepEqual(obj.metadata.finalizers, ['apps.kruise.io/deletion-protection']);
    const once = structuredClone(obj);
    mutateImagePullJob(obj, admission(V));
    assert.deepEqual(obj, once);
  });
  test('no finalizer added on UPDATE', () => {
    const obj = job({});
    mutateImagePullJob(obj, admission(V, 'UPDATE'));
    assert.equal(obj.metadata.finalizers, undefined);
  });
});

describe('ImagePullJob validation', () => {
  test('examples are valid', () => {
    const results = loadExamples('imagepulljob.yaml', 'ImagePullJob').map((d) => {
      mutateImagePullJob(d, admission(d.apiVersion));
      return imagePullJobError(d) ?? '';
    });
    assert.deepEqual(results, ['', '']);
  });

  const cases: Array<[string, any, string]> = [
    // The user manual's sample does this; upstream refuses it too.
    [
      'names and labels',
      { selector: { names: ['a'], matchLabels: { a: 'b' } } },
      'can not set both names and labelSelector in this spec.selector',
    ],
    ['duplicated names', { selector: { names: ['a', 'a'] } }, 'duplicated name in selector names'],
    [
      'selector and podSelector',
      { selector: { names: ['a'] }, podSelector: { matchLabels: { a: 'b' } } },
      'can not set both selector and podSelector',
    ],
    [
      'bad podSelector',
      { podSelector: { matchExpressions: [{ key: 'a', operator: 'Has' }] } },
      'invalid podSelector: "Has" is not a valid label selector operator',
    ],
    ['empty image', { image: '' }, 'image can not be empty'],
    ['bad image', { image: 'nginx:bad:tag' }, 'invalid image nginx:bad:tag: invalid reference format'],
    ['uppercase image', { image: 'Nginx' }, 'invalid image Nginx: repository name must be lowercase'],
    ['percent parallelism', { parallelism: '50%' }, 'parallelism does not support percentage value'],
    [
      'non-numeric parallelism',
      { parallelism: 'ten' },
      'parallelism must be a valid integer: strconv.ParseInt: parsing "ten": invalid syntax',
    ],
    ['negative parallelism', { parallelism: -1 }, 'parallelism must be non-negative'],
    [
      'short deadline',
      { completionPolicy: { type: 'Always', activeDeadlineSeconds: 100 } },
      'completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)',
    ],
    [
      'Never with ttl',
      { completionPolicy: { type: 'Never', ttlSecondsAfterFinished: 10 } },
      'activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType',
    ],
    ['unknown completion type', { completionPolicy: { type: 'Sometimes' } }, 'unknown type of completionPolicy: Sometimes'],
  ];
  for (const [name, spec, expected] of cases) test(name, () => assert.equal(imagePullJobError(defaulted(spec)), expected));

  test('valid images and numeric-string parallelism', () => {
    for (const image of [
      'nginx',
      'docker.io/library/nginx:1.25',
      'localhost:5000/a/b@sha256:' + 'a'.repeat(64),
      'registry.example.com/team/app-x_y.z:v1.0-rc',
    ]) {
      assert.equal(imageReferenceError(image), undefined, image);
    }
    assert.equal(imagePullJobError(defaulted({ parallelism: '3' })), undefined);
  });

  const gated = admission(V, 'CREATE', { gates: { ImagePullJobGate: true } });

  test('the validator denies with a 400 plain message', () => {
    assert.throws(
      () => validateImagePullJob(defaulted({ image: '' }), undefined, gated),
      (e: unknown) => e instanceof AdmissionDenied && e.code === 400 && e.message === 'image can not be empty',
    );
    assert.deepEqual(validateImagePullJob(defaulted({}), undefined, gated), []);
  });

  test('without KruiseDaemon or ImagePullJobGate both validators answer 403', () => {
    const cases: Array<[Record<string, boolean>, string]> = [
      [{ ImagePullJobGate: false }, 'feature-gate ImagePullJobGate is not enabled'],
      [{ KruiseDaemon: false, ImagePullJobGate: true }, 'feature-gate KruiseDaemon is not enabled'],
    ];
    for (const [gates, message] of cases) {
      const ctx = admission(V, 'CREATE', { gates });
      const denied403 = (e: unknown) => e instanceof AdmissionDenied && e.code === 403 && e.message === message;
      assert.throws(() => validateImagePullJob(defaulted({}), undefined, ctx), denied403);
      assert.throws(
        () =>
          validateImageListPullJob(
            { apiVersion: V, kind: 'ImageListPullJob', metadata: { name: 'l' }, spec: { images: ['nginx'] } } as never,
            undefined,
            ctx,
          ),
        denied403,
      );
    }
  });

  // The defaulter is gated: its deletion-protection finalizer is removed only by the gated
  // controller. The validators are always registered so they can refuse with 403.
  test('registrations: defaulting gated on ImagePullJobGate, validation always', () => {
    assert.deepEqual(
      [...registrations, ...listRegistrations].map((r) => [r.resource, !!r.mutate, !!r.validate, r.gate]),
      [
        ['imagepulljobs', true, false, 'ImagePullJobGate'],
        ['imagepulljobs', false, true, undefined],
        ['imagelistpulljobs', true, false, 'ImagePullJobGate'],
        ['imagelistpulljobs', false, true, undefined],
      ],
    );
  });
});

describe('ImageListPullJob', () => {
  const list = (spec: Record<string, any>): any => {
    const obj: any = {
      apiVersion: V,
      kind: 'ImageListPullJob',
      metadata: { name: 'l' },
      spec: { images: ['nginx:1', 'busybox'], ...spec },
    };
    mutateImageListPullJob(obj, admission(V));
    return obj;
  };
  test('defaults (no imagePullPolicy, no finalizer)', () => {
    const obj = list({});
    assert.deepEqual(obj.spec, {
      images: ['nginx:1', 'busybox'],
      completionPolicy: { type: 'Always' },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
    });
    assert.equal(obj.metadata.finalizers, undefined);
  });
  test('examples', () => {
    const results = loadExamples('imagelistpulljob.yaml').map((d) => {
      mutateImageListPullJob(d, admission(d.apiVersion));
      return imageListPullJobError(d) ?? '';
    });
    assert.deepEqual(results, ['', '']);
  });
  const cases: Array<[string, any, string | undefined]> = [
    ['valid', {}, undefined],
    ['no images', { images: [] }, 'image can not be empty'],
    ['duplicates', { images: ['a', 'a'] }, 'images cannot have duplicate values'],
    ['too many', { images: Array.from({ length: 256 }, (_, i) => `img${i}`) }, 'the maximum number of images cannot > 255'],
    ['bad image', { images: ['a', 'B'] }, 'invalid image B: repository name must be lowercase'],
    ['short deadline allowed', { completionPolicy: { type: 'Always', activeDeadlineSeconds: 1 } }, undefined],
  ];
  for (const [name, spec, expected] of cases) test(name, () => assert.equal(imageListPullJobError(list(spec)), expected));
});
