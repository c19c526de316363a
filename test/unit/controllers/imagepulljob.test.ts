// ImagePullJob controller decisions, table-style: status from NodeImage tag statuses, claiming
// NodeImages (tag add/merge, versions, secrets), pull policies, parallelism, deadlines, TTL, node
// selection, pull-secret copies; the reconciler's writes against a recording client; image
// reference normalisation.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ResourceVersionExpectations, ScaleExpectations } from '../../../src/runtime/expectations.ts';
import { ImagePullJobReconciler, type ImagePullJobCache } from '../../../src/controllers/imagepulljob/controller.ts';
import { changedImages } from '../../../src/controllers/imagepulljob/event-handler.ts';
import {
  calculateStatus,
  claimNodeImage,
  deadlineRequeueMs,
  nodesToClaim,
  parallelismOf,
  planImagePullJob,
  tagPullPolicy,
} from '../../../src/controllers/imagepulljob/plan.ts';
import { finishedJobAction, type ImagePullJob, type NodeImage } from '../../../src/controllers/imagejobs/resources.ts';
import type { Secret } from '../../../src/apis/core-objects.ts';
import { planSecretSync } from '../../../src/controllers/imagepulljob/secrets.ts';
import { nodeImagesForJob, jobSelectsNodeImage } from '../../../src/controllers/imagepulljob/select.ts';
import { imageReferenceError, normalizeImageRef } from '../../../src/util/imageref.ts';
import { metaTime } from '../../../src/util/clock.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (s: number) => metaTime(NOW - s * 1000);
const IMG = 'docker.io/library/nginx';

function job(
  spec: Partial<NonNullable<ImagePullJob['spec']>> = {},
  status?: ImagePullJob['status'],
  meta: Record<string, unknown> = {},
): ImagePullJob {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImagePullJob',
    metadata: {
      name: 'job',
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '5',
      finalizers: ['apps.kruise.io/deletion-protection'],
      ...meta,
    },
    spec: { image: 'nginx:1.25', completionPolicy: { type: 'Always' }, imagePullPolicy: 'IfNotPresent', ...spec },
    ...(status ? { status } : {}),
  };
}

const ref = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'ImagePullJob', name: 'job', namespace: 'ns', uid: 'u1' };

function ni(
  name: string,
  tags?: Array<Record<string, unknown>>,
  statuses?: Array<Record<string, unknown>>,
  labels: Record<string, string> = { type: 'kwok' },
): NodeImage {
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion: '3', labels },
    spec: { images: tags ? { [IMG]: { tags: tags as never } } : {} },
    status: { desired: 0, ...(statuses ? { imageStatuses: { [IMG]: { tags: statuses as never } } } : {}) },
  };
}
const owned = (version = 0) => ({
  tag: '1.25',
  version,
  ownerReferences: [ref],
  createdAt: ago(5),
  pullPolicy: { ttlSecondsAfterFinished: 600 },
});
const st = (phase: string, version = 0) => ({ tag: '1.25', phase, version });

describe('normalizeImageRef', () => {
  const cases: Array<[string, string, string]> = [
    ['nginx', 'docker.io/library/nginx', 'latest'],
    ['nginx:1.25', 'docker.io/library/nginx', '1.25'],
    ['foo/bar:v1', 'docker.io/foo/bar', 'v1'],
    ['index.docker.io/foo/bar', 'docker.io/foo/bar', 'latest'],
    ['registry.local:5000/a/b:2', 'registry.local:5000/a/b', '2'],
    ['localhost/x', 'localhost/x', 'latest'],
    [`busybox@sha256:${'a'.repeat(64)}`, 'docker.io/library/busybox', `sha256:${'a'.repeat(64)}`],
    [`busybox:1@sha256:${'a'.repeat(64)}`, 'docker.io/library/busybox', '1'],
  ];
  for (const [ref, name, tag] of cases) test(ref, () => assert.deepEqual(normalizeImageRef(ref), { name, tag }));
  for (const bad of ['', 'Nginx', 'a'.repeat(64), 'foo//bar', 'nginx:']) {
    test(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => normalizeImageRef(bad)));
  }
  test('validation error texts', () => {
    assert.equal(imageReferenceError('nginx:1'), undefined);
    assert.equal(imageReferenceError('NGINX'), 'repository name must be lowercase');
  });
});

describe('calculateStatus', () => {
  const input = (j: ImagePullJob, nodeImages: NodeImage[], nowMs = NOW, secrets: Array<{ namespace: string; name: string }> = []) =>
    calculateStatus({ job: j, nodeImages, imageName: IMG, imageTag: '1.25', secrets, nowMs });
  const cases: Array<[string, ImagePullJob, NodeImage[], Record<string, unknown>, string[]]> = [
    [
      'nothing synced yet',
      job(),
      [ni('a'), ni('b')],
      { desired: 2, active: 0, succeeded: 0, failed: 0, message: 'job is running, progress 0.0%' },
      ['a', 'b'],
    ],
    [
      'a tag of someone else is not synced',
      job(),
      [ni('a', [{ ...owned(), ownerReferences: [{ ...ref, uid: 'other' }] }])],
      { active: 0 },
      ['a'],
    ],
    ['owned tag without status is pulling', job(), [ni('a', [owned()]), ni('b')], { active: 1 }, ['b']],
    ['status of another version is pulling', job(), [ni('a', [owned(2)], [st('Succeeded', 1)])], { active: 1, succeeded: 0 }, []],
    [
      'succeeded and failed by version',
      job(),
      [ni('a', [owned(1)], [st('Succeeded', 1)]), ni('b', [owned()], [st('Failed')]), ni('c', [owned()], [st('Pulling')])],
      { desired: 3, active: 1, succeeded: 1, failed: 1, failedNodes: ['b'], message: 'job is running, progress 66.7%' },
      [],
    ],
    [
      'Always completes when every node finished',
      job(),
      [ni('a', [owned()], [st('Succeeded')]), ni('b', [owned()], [st('Failed')])],
      { completionTime: metaTime(NOW), message: 'job has completed', failedNodes: ['b'] },
      [],
    ],
    [
      'Never does not complete',
      job({ completionPolicy: { type: 'Never' } }),
      [ni('a', [owned()], [st('Succeeded')])],
      { completionTime: undefined, succeeded: 1 },
      [],
    ],
    ['no nodes: completes at once (upstream)', job(), [], { desired: 0, completionTime: metaTime(NOW) }, []],
  ];
  for (const [name, j, nodeImages, want, notSynced] of cases) {
    test(name, () => {
      const r = input(j, nodeImages);
      for (const [k, v] of Object.entries(want)) assert.deepEqual((r.status as Record<string, unknown>)[k], v, k);
      assert.deepEqual(r.notSynced, notSynced);
      assert.equal(r.status.startTime, metaTime(NOW));
    });
  }
  test('activeDeadlineSeconds passed: unfinished and unsynced nodes count as failed', () => {
    const j = job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 100 } }, { desired: 3, startTime: ago(101) });
    const r = input(j, [ni('a', [owned()], [st('Succeeded')]), ni('b', [owned()]), ni('c')]);
    assert.deepEqual(r.status, {
      startTime: ago(101),
      completionTime: metaTime(NOW),
      desired: 3,
      active: 0,
      succeeded: 1,
      failed: 2,
      failedNodes: ['b', 'c'],
      message: 'job exceeds activeDeadlineSeconds',
    });
    assert.deepEqual(r.notSynced, []);
  });
  test('a node missing a pull secret is not synced', () => {
    const r = input(job(), [ni('a', [owned()], [st('Succeeded')])], NOW, [{ namespace: 'kruise-daemon-config', name: 's' }]);
    assert.deepEqual(r.notSynced, ['a']);
    assert.equal(r.status.succeeded, 1);
  });
  test('the start time is kept', () => {
    assert.equal(input(job({}, { desired: 1, startTime: ago(50) }), [ni('a')]).status.startTime, ago(50));
  });
});

describe('parallelism', () => {
  const cases: Array<[unknown, number]> = [
    [undefined, 1],
    [3, 3],
    ['4', 4],
    ['x', 0],
    [0, 0],
  ];
  for (const [p, want] of cases)
    test(`parallelism ${JSON.stringify(p)} → ${want}`, () => assert.equal(parallelismOf(job({ parallelism: p as never })), want));
  test('claims parallelism minus active', () => {
    assert.deepEqual(nodesToClaim(job({ parallelism: 3 }), { desired: 5, active: 1 }, ['a', 'b', 'c', 'd']), ['a', 'b']);
    assert.deepEqual(nodesToClaim(job(), { desired: 5, active: 1 }, ['a']), []);
    assert.deepEqual(nodesToClaim(job(), { desired: 5, active: 0 }, ['a', 'b']), ['a']);
  });
});

describe('tagPullPolicy', () => {
  const rand = (n: number) => n - 1;
  const cases: Array<[string, Partial<NonNullable<ImagePullJob['spec']>>, Record<string, number>]> = [
    [
      'Always with TTL',
      { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 100 } },
      { ttlSecondsAfterFinished: 100 + 300 + 299 },
    ],
    [
      'Always with deadline',
      { completionPolicy: { type: 'Always', activeDeadlineSeconds: 1000 } },
      { ttlSecondsAfterFinished: 1000 + 599, activeDeadlineSeconds: 1000 },
    ],
    [
      'Always from retries',
      { pullPolicy: { timeoutSeconds: 100, backoffLimit: 2 } },
      { ttlSecondsAfterFinished: 200 + 599, timeoutSeconds: 100, backoffLimit: 2 },
    ],
    ['Always defaults', {}, { ttlSecondsAfterFinished: 1800 + 599 }],
    ['Never', { completionPolicy: { type: 'Never' } }, { ttlSecondsAfterFinished: 86400 + 599, activeDeadlineSeconds: 1800 }],
    [
      'Never with a long pull timeout',
      { completionPolicy: { type: 'Never' }, pullPolicy: { timeoutSeconds: 3600 } },
      { ttlSecondsAfterFinished: 86400 + 599, activeDeadlineSeconds: 3600, timeoutSeconds: 3600 },
    ],
  ];
  for (const [name, spec, want] of cases) test(name, () => assert.deepEqual(tagPullPolicy(job(spec), 300, rand), want));
});

describe('claimNodeImage', () => {
  const claim = (obj: NodeImage, j = job(), secrets: Array<{ namespace: string; name: string; mode?: string }> = []) =>
    claimNodeImage({
      nodeImage: obj,
      job: j,
      imageName: IMG,
      imageTag: '1.25',
      secrets,
      pullPolicy: { ttlSecondsAfterFinished: 900 },
      nowMs: NOW,
    });
  test('a new tag starts at version 0', () => {
    assert.deepEqual(claim(ni('a')), {
      tags: [
        {
          tag: '1.25',
          version: 0,
          pullPolicy: { ttlSecondsAfterFinished: 900 },
          ownerReferences: [ref],
          createdAt: metaTime(NOW),
          imagePullPolicy: 'IfNotPresent',
        },
      ],
    });
  });
  test('a new tag continues after the last reported version', () => {
    const obj = ni('a', [], [st('Succeeded', 4)]);
    assert.equal(claim(obj)!.tags[0]!.version, 5);
  });
  test('another owner: merged with a version bump and a new createdAt', () => {
    const other = { ...ref, name: 'other', uid: 'u2' };
    const obj = ni('a', [
      { tag: '1.25', version: 2, ownerReferences: [other], createdAt: ago(100), pullPolicy: { ttlSecondsAfterFinished: 5 } },
      { tag: '0.9', version: 0, createdAt: ago(1), ownerReferences: [other] },
    ]);
    const entry = claim(obj)!;
    assert.deepEqual(
      entry.tags.map((t) => t.tag),
      ['0.9', '1.25'],
    );
    const t = entry.tags[1]!;
    assert.equal(t.version, 3);
    assert.deepEqual(t.ownerReferences, [other, ref]);
    assert.equal(t.createdAt, metaTime(NOW));
    assert.deepEqual(t.pullPolicy, { ttlSecondsAfterFinished: 5 }, 'the existing pull policy stays');
  });
  test('already owned: nothing to write', () => {
    assert.equal(claim(ni('a', [owned()])), undefined);
  });
  test('already owned but a secret missing: only the secret is added', () => {
    const entry = claim(ni('a', [owned()]), job(), [{ namespace: 'kruise-daemon-config', name: 's-x', mode: 'batch' }])!;
    assert.deepEqual(entry.pullSecrets, [{ namespace: 'kruise-daemon-config', name: 's-x', mode: 'batch' }]);
    assert.equal(entry.tags[0]!.version, 0);
  });
  test('sandboxConfig follows the job', () => {
    const entry = claim(ni('a'), job({ sandboxConfig: { labels: { a: 'b' } } }))!;
    assert.deepEqual(entry.sandboxConfig, { labels: { a: 'b' } });
  });
});

describe('finished jobs and deadlines', () => {
  test('deleted after ttlSecondsAfterFinished', () => {
    const spec = { completionPolicy: { type: 'Always' as const, ttlSecondsAfterFinished: 60 } };
    assert.deepEqual(finishedJobAction(job(spec, { desired: 1, completionTime: ago(61) }), NOW), { action: 'delete' });
    assert.deepEqual(finishedJobAction(job(spec, { desired: 1, completionTime: ago(10) }), NOW), {
      action: 'wait',
      requeueAfterMs: 50_000,
    });
    assert.deepEqual(finishedJobAction(job({}, { desired: 1, completionTime: ago(10) }), NOW), { action: 'wait' });
  });
  test('requeue for the deadline, at least 1s; none for Never', () => {
    const j = job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 100 } });
    assert.equal(deadlineRequeueMs(j, { desired: 1, startTime: ago(40) }, NOW), 60_000);
    assert.equal(deadlineRequeueMs(j, { desired: 1, startTime: ago(400) }, NOW), 1000);
    assert.equal(deadlineRequeueMs(job(), { desired: 1, startTime: ago(40) }, NOW), undefined);
  });
});

describe('node selection', () => {
  const nodeImages = [
    ni('a', undefined, undefined, { type: 'kwok' }),
    ni('b', undefined, undefined, { type: 'other' }),
    ni('c', undefined, undefined, { type: 'kwok' }),
  ];
  const pods = [
    { metadata: { name: 'p1', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'a' }, status: { phase: 'Running' } },
    { metadata: { name: 'p2', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'b' }, status: { phase: 'Succeeded' } },
    { metadata: { name: 'p3', namespace: 'ns', labels: { app: 'web' } }, spec: {}, status: { phase: 'Pending' } },
    { metadata: { name: 'p4', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'gone' }, status: { phase: 'Running' } },
  ];
  const cache = {
    getNodeImage: (n: string) => nodeImages.find((x) => x.metadata.name === n),
    listNodeImages: () => nodeImages,
    listPods: () => pods as never,
  };
  const names = (j: ImagePullJob) => nodeImagesForJob(j, cache).map((x) => x.metadata.name);
  const cases: Array<[string, Partial<NonNullable<ImagePullJob['spec']>>, string[]]> = [
    ['no selector: all', {}, ['a', 'b', 'c']],
    ['names that exist', { selector: { names: ['c', 'x', 'a'] } }, ['c', 'a']],
    ['labels', { selector: { matchLabels: { type: 'kwok' } } }, ['a', 'c']],
    ['empty label selector: all', { selector: {} }, ['a', 'b', 'c']],
    ['nodes of active scheduled pods', { podSelector: { matchLabels: { app: 'web' } } }, ['a']],
  ];
  for (const [name, spec, want] of cases) test(name, () => assert.deepEqual(names(job(spec)), want));
  test('an invalid selector throws', () => {
    assert.throws(() => names(job({ selector: { matchExpressions: [{ key: 'a', operator: 'Bad' }] } })));
  });
  test('NodeImage events concern jobs whose selection the old or new labels match', () => {
    const j = job({ selector: { matchLabels: { type: 'kwok' } } });
    assert.equal(
      jobSelectsNodeImage(j, nodeImages[0]!, () => []),
      true,
    );
    assert.equal(
      jobSelectsNodeImage(j, nodeImages[1]!, () => []),
      false,
    );
    assert.equal(
      jobSelectsNodeImage(j, nodeImages[1]!, () => [], { type: 'kwok' }),
      true,
    );
    assert.equal(
      jobSelectsNodeImage(job({}, { desired: 1, completionTime: ago(1) }), nodeImages[0]!, () => []),
      false,
      'completed jobs are not active',
    );
  });
  test('changedImages compares spec entries and statuses per image', () => {
    const a = ni('a', [owned()]);
    const b = ni('a', [owned()], [st('Pulling')]);
    assert.deepEqual([...changedImages(a, b)], [IMG]);
    assert.deepEqual([...changedImages(a, a)], []);
  });
});

function secret(ns: string, name: string, annotations?: Record<string, string>, data: Record<string, string> = { k: 'djE=' }): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: ns, name, uid: `uid-${name}`, ...(annotations ? { annotations } : {}) },
    data,
  };
}
const copyOf = (name: string, refs: string, source = 'ns/reg', mode = 'batch') =>
  secret('kruise-daemon-config', name, {
    'imagepulljobs.kruise.io/source-key': source,
    'imagepulljobs.kruise.io/references': refs,
    'imagepulljobs.kruise.io/mode': mode,
  });

describe('planSecretSync', () => {
  const sources = { reg: secret('ns', 'reg', { note: 'x' }, { k: 'djI=' }) } as Record<string, Secret>;
  const sync = (j: ImagePullJob, copies: Secret[]) =>
    planSecretSync({ job: j, copies, source: (n) => sources[n], randomSuffix: () => 'abcde' });
  test('creates a copy with source-key, references and mode, labelled with the source uid', () => {
    const plan = sync(job({ pullSecrets: ['reg', 'missing'] }), []);
    assert.equal(plan.create.length, 1);
    assert.deepEqual(plan.create[0]!.metadata, {
      namespace: 'kruise-daemon-config',
      name: 'reg-abcde',
      labels: { 'imagepulljobs.kruise.io/source-uid': 'uid-reg' },
      annotations: {
        note: 'x',
        'imagepulljobs.kruise.io/references': 'ns/job',
        'imagepulljobs.kruise.io/source-key': 'ns/reg',
        'imagepulljobs.kruise.io/mode': 'batch',
      },
    });
    assert.deepEqual(plan.create[0]!.data, { k: 'djI=' });
    assert.deepEqual(plan.refs, [{ namespace: 'kruise-daemon-config', name: 'reg-abcde', mode: 'batch' }]);
  });
  test('joins an existing copy: reference added, data refreshed', () => {
    const plan = sync(job({ pullSecrets: ['reg'] }), [copyOf('reg-zzzzz', 'other/j')]);
    assert.equal(plan.create.length, 0);
    assert.equal(plan.update.length, 1);
    assert.equal(plan.update[0]!.metadata.annotations!['imagepulljobs.kruise.io/references'], 'ns/job,other/j');
    assert.deepEqual(plan.update[0]!.data, { k: 'djI=' });
  });
  test('an up-to-date copy needs no write', () => {
    const c = copyOf('reg-zzzzz', 'ns/job');
    c.data = { k: 'djI=' };
    const plan = sync(job({ pullSecrets: ['reg'] }), [c]);
    assert.deepEqual([plan.create.length, plan.update.length, plan.delete.length], [0, 0, 0]);
    assert.deepEqual(plan.refs, [{ namespace: 'kruise-daemon-config', name: 'reg-zzzzz', mode: 'batch' }]);
  });
  test('a completed job releases its copies: deleted when last, else unreferenced', () => {
    const done = job({ pullSecrets: ['reg'] }, { desired: 1, completionTime: ago(1) });
    const plan = sync(done, [copyOf('reg-a', 'ns/job'), copyOf('reg-b', 'ns/job,other/j'), copyOf('reg-c', 'other/j')]);
    assert.deepEqual(
      plan.delete.map((s) => s.metadata.name),
      ['reg-a'],
    );
    assert.deepEqual(
      plan.update.map((s) => [s.metadata.name, s.metadata.annotations!['imagepulljobs.kruise.io/references']]),
      [['reg-b', 'other/j']],
    );
    assert.deepEqual(plan.refs, []);
  });
  test('a secret no longer listed is released', () => {
    const plan = sync(job({ pullSecrets: [] }), [copyOf('reg-a', 'ns/job')]);
    assert.deepEqual(
      plan.delete.map((s) => s.metadata.name),
      ['reg-a'],
    );
  });
  test('jobs in kruise-daemon-config use their secrets directly', () => {
    const j = job({ pullSecrets: ['x'] }, undefined, { namespace: 'kruise-daemon-config' });
    assert.deepEqual(sync(j, []), { update: [], delete: [], create: [], refs: [{ namespace: 'kruise-daemon-config', name: 'x' }] });
  });
});

describe('planImagePullJob', () => {
  const secretCopy = copyOf('reg-a', 'ns/job');
  const input = (j: ImagePullJob, extra: Partial<Parameters<typeof planImagePullJob>[0]> = {}) =>
    planImagePullJob({
      job: j,
      secretCopies: [],
      sourceSecret: () => undefined,
      daemonNamespace: { metadata: { name: 'kruise-daemon-config' } },
      nodeImages: [],
      image: { name: IMG, tag: '1.25' },
      nowMs: NOW,
      defaultTtlForAlways: 300,
      randomInt: () => 0,
      randomSuffix: () => 'abcde',
      ...extra,
    });
  const running = job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 100 } });
  const deadlineJob = {
    ...running,
    status: calculateStatus({ job: running, nodeImages: [ni('a', [owned()])], imageName: IMG, imageTag: '1.25', secrets: [], nowMs: NOW })
      .status,
  };
  // [name, job, extra input, expected plan summary]
  const cases: Array<[string, ImagePullJob, Partial<Parameters<typeof planImagePullJob>[0]>, Record<string, unknown>]> = [
    [
      'an active job claims up to parallelism and stores its first status',
      job(),
      { nodeImages: [ni('a'), ni('b')] },
      { kind: 'sync', finalizers: undefined, claims: ['a'], status: 'job is running, progress 0.0%', requeueAfterMs: undefined },
    ],
    [
      'a job without the finalizer gets it first',
      job({}, undefined, { finalizers: ['x'] }),
      { nodeImages: [ni('a', [owned()])] },
      {
        kind: 'sync',
        finalizers: ['x', 'apps.kruise.io/deletion-protection'],
        claims: [],
        status: 'job is running, progress 0.0%',
        requeueAfterMs: undefined,
      },
    ],
    ['no NodeImages selected: an Always job completes', job(), {}, { kind: 'sync', claims: [], status: 'job has completed' }],
    [
      'an unchanged status is not written; the deadline is re-checked',
      deadlineJob,
      { nodeImages: [ni('a', [owned()])] },
      { kind: 'sync', finalizers: undefined, claims: [], status: undefined, requeueAfterMs: 100_000 },
    ],
    [
      'secrets cannot be copied without kruise-daemon-config',
      job({ pullSecrets: ['reg'] }),
      { sourceSecret: () => secret('ns', 'reg'), daemonNamespace: undefined },
      { kind: 'sync', blocked: 'namespace kruise-daemon-config does not exist: pull secrets cannot be copied for kruise-daemon' },
    ],
    [
      'a deleted job releases its secrets and drops the finalizer',
      job({ pullSecrets: ['reg'] }, undefined, { deletionTimestamp: ago(1) }),
      { secretCopies: [secretCopy] },
      { kind: 'finalize', finalizers: [], deleteSecrets: ['reg-a'], deleteJob: false, requeueAfterMs: undefined },
    ],
    [
      'a deleted job without the finalizer has nothing to release',
      job({}, undefined, { deletionTimestamp: ago(1), finalizers: [] }),
      {},
      { kind: 'finalize', finalizers: undefined, deleteSecrets: undefined, deleteJob: false, requeueAfterMs: undefined },
    ],
    [
      'a completed job waits for its TTL',
      job({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 60 } }, { desired: 1, completionTime: ago(20) }),
      {},
      { kind: 'finalize', finalizers: [], deleteJob: false, requeueAfterMs: 40_000 },
    ],
    [
      'a completed job past its TTL is deleted',
      job(
        { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 10 } },
        { desired: 1, completionTime: ago(20) },
        { finalizers: [] },
      ),
      {},
      { kind: 'finalize', finalizers: undefined, deleteJob: true, requeueAfterMs: undefined },
    ],
  ];
  for (const [name, j, extra, want] of cases) {
    test(name, () => {
      const plan = input(j, extra);
      const got: Record<string, unknown> = { kind: plan.kind };
      for (const k of Object.keys(want)) {
        if (k === 'claims') got.claims = plan.kind === 'sync' ? (plan.claims?.nodes ?? []) : undefined;
        else if (k === 'status') got.status = plan.kind === 'sync' ? plan.status?.message : undefined;
        else if (k === 'blocked') got.blocked = plan.secrets?.blocked;
        else if (k === 'deleteSecrets') got.deleteSecrets = plan.secrets?.delete.map((c) => c.metadata.name);
        else if (k !== 'kind') got[k] = (plan as Record<string, unknown>)[k];
      }
      assert.deepEqual(got, want);
    });
  }
  test('pure: the same input gives the same plan', () => {
    const j = job({ pullSecrets: ['reg'] });
    const extra = { nodeImages: [ni('a'), ni('b')], sourceSecret: () => secret('ns', 'reg') };
    assert.deepEqual(input(j, extra), input(j, extra));
  });
});

describe('ImagePullJobReconciler', () => {
  function setup(j: ImagePullJob, nodeImages: NodeImage[], extra: Partial<ImagePullJobCache> = {}) {
    const calls: Array<{ verb: string; resource: string; obj?: any; opts?: any }> = [];
    const stamp = (o: any) => ({ ...o, metadata: { ...o.metadata, uid: o.metadata.uid ?? 'new', resourceVersion: '99' } });
    const client = {
      async get(t: any, name: string) {
        calls.push({ verb: 'get', resource: t.resource, obj: name });
        return nodeImages.find((n) => n.metadata.name === name);
      },
      async create(t: any, o: any) {
        calls.push({ verb: 'create', resource: t.resource, obj: o });
        return stamp(o);
      },
      async update(t: any, o: any) {
        calls.push({ verb: 'update', resource: t.resource, obj: o });
        return stamp(o);
      },
      async patch(t: any, name: string, body: any, opts: any) {
        calls.push({ verb: 'patch', resource: t.resource, obj: body, opts: { name, ...opts } });
        return stamp({ metadata: { name } });
      },
      async delete(t: any, name: string, opts: any) {
        calls.push({ verb: 'delete', resource: t.resource, obj: name, opts });
        return {};
      },
      async updateStatus(t: any, o: any) {
        calls.push({ verb: 'updateStatus', resource: t.resource, obj: o });
        return stamp(o);
      },
    };
    const cache: ImagePullJobCache = {
      getJob: () => j,
      getNodeImage: (n) => nodeImages.find((x) => x.metadata.name === n),
      listNodeImages: () => nodeImages,
      listPods: () => [],
      getSecret: () => undefined,
      listSecrets: () => [],
      getNamespace: () => ({ metadata: { name: 'kruise-daemon-config' } }),
      ...extra,
    };
    const events: string[] = [];
    const r = new ImagePullJobReconciler({
      cache,
      client: client as any,
      recorder: { event: (_o: unknown, _t: string, reason: string) => events.push(reason) },
      log: pino({ level: 'silent' }),
      scaleExpectations: new ScaleExpectations(),
      resourceVersions: new ResourceVersionExpectations(),
      clock: { now: () => NOW, setTimer: () => ({ cancel() {} }), sleep: async () => {} },
      randomInt: () => 0,
      randomSuffix: () => 'abcde',
    });
    return { r, calls, events };
  }

  test('claims one NodeImage (parallelism 1), then writes the status', async () => {
    const { r, calls } = setup(job(), [ni('a'), ni('b')]);
    assert.deepEqual(await r.reconcile('ns/job'), {});
    assert.deepEqual(
      calls.map((c) => `${c.verb} ${c.resource}`),
      ['update nodeimages', 'updateStatus imagepulljobs'],
    );
    assert.equal(calls[0]!.obj.metadata.name, 'a');
    assert.equal(calls[0]!.obj.metadata.resourceVersion, '3');
    assert.equal(calls[0]!.obj.spec.images[IMG].tags[0].pullPolicy.ttlSecondsAfterFinished, 1800 + 300);
    assert.deepEqual(calls[1]!.obj.status, {
      startTime: metaTime(NOW),
      desired: 2,
      active: 0,
      succeeded: 0,
      failed: 0,
      failedNodes: [],
      message: 'job is running, progress 0.0%',
    });
  });
  test('adds the protection finalizer when missing', async () => {
    const { r, calls } = setup(job({}, undefined, { finalizers: undefined }), []);
    await r.reconcile('ns/job');
    assert.deepEqual(calls[0]!.obj, { metadata: { finalizers: ['apps.kruise.io/deletion-protection'], resourceVersion: '5' } });
  });
  test('a deleted job releases its secrets and drops the finalizer', async () => {
    const { r, calls } = setup(job({ pullSecrets: ['reg'] }, undefined, { deletionTimestamp: ago(1) }), [], {
      listSecrets: () => [copyOf('reg-a', 'ns/job')],
    });
    await r.reconcile('ns/job');
    assert.deepEqual(
      calls.map((c) => `${c.verb} ${c.resource}`),
      ['delete secrets', 'patch imagepulljobs'],
    );
    assert.deepEqual(calls[1]!.obj.metadata.finalizers, []);
  });
  test('a completed job past its TTL is deleted', async () => {
    const j = job(
      { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 10 } },
      { desired: 1, completionTime: ago(20) },
      { finalizers: [] },
    );
    const { r, calls } = setup(j, []);
    await r.reconcile('ns/job');
    assert.deepEqual(
      calls.map((c) => `${c.verb} ${c.resource}`),
      ['delete imagepulljobs'],
    );
    assert.deepEqual(calls[0]!.opts, { namespace: 'ns', preconditions: { uid: 'u1' } });
  });
  test('secrets cannot be copied without kruise-daemon-config: event and retry', async () => {
    const { r, events } = setup(job({ pullSecrets: ['reg'] }), [ni('a')], {
      getSecret: () => secret('ns', 'reg'),
      getNamespace: () => undefined,
    });
    await assert.rejects(r.reconcile('ns/job'), /does not exist/);
    assert.deepEqual(events, ['FailedSyncSecrets']);
  });
  test('an unparsable image is reported, not retried', async () => {
    const { r, events, calls } = setup(job({ image: 'Bad Image' }), [ni('a')]);
    await assert.rejects(r.reconcile('ns/job'), (err: Error) => err.name === 'TerminalError');
    assert.deepEqual(events, ['FailedSync']);
    assert.equal(calls.at(-1)!.verb, 'updateStatus');
  });
  test('no status write when nothing changed; requeue for the deadline', async () => {
    const j = job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 100 } });
    const nodeImages = [ni('a', [owned()])];
    const first = setup(j, nodeImages);
    await first.r.reconcile('ns/job');
    const status = first.calls.at(-1)!.obj.status;
    const { r, calls } = setup({ ...j, status }, nodeImages);
    assert.deepEqual(await r.reconcile('ns/job'), { requeueAfterMs: 100_000 });
    assert.deepEqual(calls, []);
  });
});
