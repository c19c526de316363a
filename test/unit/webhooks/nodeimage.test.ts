import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeClock } from '../../../src/util/clock.ts';
import { nodeImageDefaulter, nodeImageError, registrations, validateNodeImage } from '../../../src/webhooks/nodeimage/index.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { AdmissionDenied, type AdmissionContext } from '../../../src/runtime/webhook/types.ts';
import { admission, loadExamples } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1beta1';
const node = (images: Record<string, any>): any => ({ apiVersion: V, kind: 'NodeImage', metadata: { name: 'n' }, spec: { images } });

describe('NodeImage', () => {
  const clock = new FakeClock(Date.parse('2024-08-09T10:03:50.700Z'));
  const mutate = nodeImageDefaulter(clock);

  test('defaults createdAt and pull policy, idempotently', async () => {
    const obj = node({
      nginx: {
        tags: [
          { tag: '1.9', pullPolicy: { ttlSecondsAfterFinished: 300 } },
          { tag: '1.10', createdAt: '2020-01-01T00:00:00Z' },
        ],
      },
    });
    await mutate(obj, admission(V));
    assert.deepEqual(obj.spec.images.nginx.tags, [
      { tag: '1.9', createdAt: '2024-08-09T10:03:50Z', pullPolicy: { ttlSecondsAfterFinished: 300, timeoutSeconds: 600, backoffLimit: 3 } },
      { tag: '1.10', createdAt: '2020-01-01T00:00:00Z', pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 } },
    ]);
    const once = structuredClone(obj);
    await clock.advance(5000);
    await mutate(obj, admission(V));
    assert.deepEqual(obj, once);
  });

  test('examples are accepted (each tag carries pullPolicy.ttlSecondsAfterFinished, which upstream requires)', async () => {
    const results = [];
    for (const doc of loadExamples('imagepulljob.yaml', 'NodeImage')) {
      await mutate(doc, admission(doc.apiVersion));
      results.push(nodeImageError(doc) ?? '');
    }
    assert.deepEqual(results, ['', '']);
  });

  const tag = (t: Record<string, any>) => ({
    tag: 'v1',
    createdAt: '2024-01-01T00:00:00Z',
    pullPolicy: { ttlSecondsAfterFinished: 1 },
    ...t,
  });
  const cases: Array<[string, Record<string, any>, string]> = [
    [
      'too many images',
      Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`img${i}`, { tags: [] }])),
      'spec images length 257 can not be more than 256',
    ],
    ['empty image name', { '': { tags: [] } }, 'image name can not be empty'],
    ['empty tag', { nginx: { tags: [tag({ tag: '' })] } }, 'tag for image nginx can not be empty'],
    ['duplicate tag', { nginx: { tags: [tag({}), tag({})] } }, 'duplicated tag v1 for image nginx'],
    ['no createdAt', { nginx: { tags: [tag({ createdAt: undefined })] } }, 'createAt field for nginx/v1 can not be empty'],
    ['negative version', { nginx: { tags: [tag({ version: -1 })] } }, 'version for nginx/v1 can not be less than 0'],
    ['no pullPolicy', { nginx: { tags: [tag({ pullPolicy: undefined })] } }, 'pullPolicy field for nginx/v1 must set'],
  ];
  for (const [name, images, expected] of cases) test(name, () => assert.equal(nodeImageError(node(images)), expected));

  test('registrations: both always; the validator answers 403 without KruiseDaemon', () => {
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.versions, !!r.mutate, !!r.validate, r.gate]),
      [
        ['nodeimages', ['v1alpha1', 'v1beta1'], true, false, undefined],
        ['nodeimages', ['v1alpha1', 'v1beta1'], false, true, undefined],
      ],
    );
    const ctx = (KruiseDaemon: boolean) =>
      ({
        operation: 'CREATE',
        apiVersion: 'apps.kruise.io/v1beta1',
        userInfo: {},
        dryRun: false,
        features: { ...FEATURE_GATE_DEFAULTS, KruiseDaemon },
      }) as AdmissionContext;
    assert.throws(
      () => validateNodeImage(node({}), undefined, ctx(false)),
      (e: unknown) => e instanceof AdmissionDenied && e.code === 403 && e.message === 'feature-gate KruiseDaemon is not enabled',
    );
    assert.deepEqual(validateNodeImage(node({}), undefined, ctx(true)), []);
  });
});
