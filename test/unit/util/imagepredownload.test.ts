// Image pre-download decisions for in-place updates (spec §12.4), table-style.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { changedImages, planImagePreDownload, type PreDownloadInput } from '../../../src/util/imagepredownload.ts';
import { IMAGE_PREDOWNLOAD_CREATED_KEY, IMAGE_PREDOWNLOAD_IGNORED_KEY } from '../../../src/apis/constants.ts';
import { cloneSet, revisionOf, template } from '../cloneset/fixtures.ts';

const current = revisionOf(cloneSet(), 1);
const update = revisionOf(cloneSet({ template: template('nginx:2.0') }), 2);
const hash = update.metadata.labels!['controller.kubernetes.io/hash']!;

function input(over: Partial<PreDownloadInput> = {}): PreDownloadInput {
  return {
    owner: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'cs', uid: 'cs-uid', namespace: 'default' },
    current,
    update,
    replicas: 10,
    partition: 0,
    maxUnavailable: 2,
    recreate: false,
    canUpdateInPlace: true,
    selector: { matchLabels: { app: 'demo' } },
    templateLabels: { app: 'demo' },
    pullSecrets: [],
    updatedReadyReplicas: 0,
    ownedJobs: [],
    ...over,
  };
}

describe('planImagePreDownload', () => {
  test('creates one job per changed container, for nodes of old-revision pods, and labels the revision', () => {
    const plan = planImagePreDownload(input({ parallelism: 3, pullSecrets: ['reg'] }));
    assert.deepEqual(plan.labelRevision, { name: update.metadata.name, key: IMAGE_PREDOWNLOAD_CREATED_KEY });
    assert.equal(plan.createJobs.length, 1);
    const job = plan.createJobs[0]!;
    assert.equal(job.metadata?.name, `${update.metadata.name}-main`);
    assert.equal(job.metadata?.namespace, 'default');
    assert.deepEqual(job.metadata?.labels, { app: 'demo', 'controller.kubernetes.io/hash': hash });
    assert.deepEqual(job.metadata?.ownerReferences, [
      { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'cs', uid: 'cs-uid', controller: true, blockOwnerDeletion: true },
    ]);
    assert.deepEqual(job.spec, {
      image: 'nginx:2.0',
      pullSecrets: ['reg'],
      podSelector: {
        matchLabels: { app: 'demo' },
        matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: [update.metadata.name, hash] }],
      },
      parallelism: 3,
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 600 },
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
      sandboxConfig: { labels: { app: 'demo', 'controller.kubernetes.io/hash': hash } },
    });
  });

  test('parallelism defaults to 1', () => {
    assert.equal(planImagePreDownload(input()).createJobs[0]!.spec?.parallelism, 1);
  });

  const ignoredCases: Array<[string, Partial<PreDownloadInput>]> = [
    ['recreate updates', { recreate: true }],
    ['3 replicas or fewer', { replicas: 3 }],
    ['all pods in one batch (partition 0, maxUnavailable >= replicas)', { maxUnavailable: 10 }],
    ['changes that cannot be applied in place', { canUpdateInPlace: false }],
  ];
  for (const [name, over] of ignoredCases) {
    test(`marks the revision ignored for ${name}`, () => {
      assert.deepEqual(planImagePreDownload(input(over)), {
        createJobs: [],
        deleteJobs: [],
        labelRevision: { name: update.metadata.name, key: IMAGE_PREDOWNLOAD_IGNORED_KEY },
      });
    });
  }

  const nothingCases: Array<[string, Partial<PreDownloadInput>]> = [
    [
      'a revision already handled',
      {
        update: {
          ...update,
          metadata: { ...update.metadata, labels: { ...update.metadata.labels, [IMAGE_PREDOWNLOAD_CREATED_KEY]: 'true' } },
        },
      },
    ],
    [
      'a revision already ignored',
      {
        update: {
          ...update,
          metadata: { ...update.metadata, labels: { ...update.metadata.labels, [IMAGE_PREDOWNLOAD_IGNORED_KEY]: 'true' } },
        },
      },
    ],
    [
      'a workload annotated image-predownload-ignored',
      { owner: { ...input().owner, annotations: { 'apps.kruise.io/image-predownload-ignored': 'true' } } },
    ],
    ['fewer updated-ready pods than minUpdatedReadyPods', { minUpdatedReadyPods: 2, updatedReadyReplicas: 1 }],
  ];
  for (const [name, over] of nothingCases) {
    test(`does nothing for ${name}`, () => assert.deepEqual(planImagePreDownload(input(over)), { createJobs: [], deleteJobs: [] }));
  }

  test('enough updated-ready pods lets it go on', () => {
    assert.equal(planImagePreDownload(input({ minUpdatedReadyPods: 2, updatedReadyReplicas: 2 })).createJobs.length, 1);
  });

  test('deletes the owned jobs once current and update revisions are the same', () => {
    assert.deepEqual(planImagePreDownload(input({ current: update, ownedJobs: ['a', 'b'] })), { createJobs: [], deleteJobs: ['a', 'b'] });
  });

  test('changedImages lists changed and new containers only', () => {
    const two = (a: string, b: string) =>
      template(a, {
        spec: {
          containers: [
            { name: 'main', image: a },
            { name: 'side', image: b },
          ],
        },
      });
    const from = revisionOf(cloneSet({ template: two('app:1', 'side:1') }), 1);
    const to = revisionOf(
      cloneSet({
        template: {
          ...two('app:1', 'side:2'),
          spec: {
            containers: [
              { name: 'main', image: 'app:1' },
              { name: 'side', image: 'side:2' },
              { name: 'extra', image: 'x:1' },
            ],
          },
        },
      }),
      2,
    );
    assert.deepEqual(
      [...changedImages(from, to)],
      [
        ['side', 'side:2'],
        ['extra', 'x:1'],
      ],
    );
  });
});
