// ImageListPullJob controller decisions, table-style: template hash, create/delete/recreate of the
// per-image ImagePullJobs, status sums and completion; the reconciler's writes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ResourceVersionExpectations, ScaleExpectations } from '../../../src/runtime/expectations.ts';
import { ImageListPullJobReconciler } from '../../../src/controllers/imagelistpulljob/controller.ts';
import {
  calculateListStatus,
  computeActions,
  isConsistent,
  jobTemplate,
  planImageListPullJob,
  templateHash,
  type ImageListPullJob,
} from '../../../src/controllers/imagelistpulljob/plan.ts';
import type { ImagePullJob } from '../../../src/controllers/imagejobs/resources.ts';
import { metaTime } from '../../../src/util/clock.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (s: number) => metaTime(NOW - s * 1000);

function list(
  spec: Partial<NonNullable<ImageListPullJob['spec']>> = {},
  status?: ImageListPullJob['status'],
  labels?: Record<string, string>,
): ImageListPullJob {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImageListPullJob',
    metadata: { name: 'l', namespace: 'ns', uid: 'lu', resourceVersion: '4', ...(labels ? { labels } : {}) },
    spec: { images: ['a:1', 'b:1'], completionPolicy: { type: 'Always' }, parallelism: 1, ...spec },
    ...(status ? { status } : {}),
  };
}

function child(
  image: string,
  hash: string | undefined,
  status?: ImagePullJob['status'],
  spec: Record<string, unknown> = { completionPolicy: { type: 'Always' }, parallelism: 1 },
): ImagePullJob {
  return {
    metadata: {
      name: `l-${image[0]}`,
      namespace: 'ns',
      uid: `u-${image}`,
      ...(hash ? { labels: { 'controller-revision-hash': hash } } : {}),
    },
    spec: { image, ...spec } as ImagePullJob['spec'],
    ...(status ? { status } : {}),
  };
}

describe('template hash', () => {
  test('independent of the image list and key order; changes with the template', () => {
    const h = templateHash(list());
    assert.equal(templateHash(list({ images: ['x'] })), h);
    assert.equal(templateHash({ ...list(), spec: { parallelism: 1, completionPolicy: { type: 'Always' }, images: [] } }), h);
    assert.notEqual(templateHash(list({ parallelism: 2 })), h);
    assert.match(h, /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  });
  test('consistency by label, or by content when unlabeled', () => {
    const l = list();
    const h = templateHash(l);
    assert.equal(isConsistent(child('a:1', h), jobTemplate(l), h), true);
    assert.equal(isConsistent(child('a:1', 'other'), jobTemplate(l), h), false);
    assert.equal(isConsistent(child('a:1', undefined), jobTemplate(l), h), true);
    assert.equal(isConsistent(child('a:1', undefined, undefined, { parallelism: 5 }), jobTemplate(l), h), false);
  });
});

describe('computeActions', () => {
  const l = list();
  const h = templateHash(l);
  const cases: Array<[string, ImagePullJob[], string[], string[]]> = [
    ['creates one job per image', [], ['a:1', 'b:1'], []],
    ['keeps consistent jobs', [child('a:1', h), child('b:1', h)], [], []],
    ['recreates jobs of an old template', [child('a:1', 'old'), child('b:1', h)], ['a:1'], ['a:1']],
    ['deletes jobs of removed images', [child('a:1', h), child('b:1', h), child('c:1', h)], [], ['c:1']],
  ];
  for (const [name, owned, create, del] of cases) {
    test(name, () => {
      const a = computeActions(l, new Map(owned.map((j) => [j.spec!.image, j])), h);
      assert.deepEqual(
        a.create.map((j) => j.spec!.image),
        create,
      );
      assert.deepEqual(
        a.delete.map((j) => j.spec!.image),
        del,
      );
    });
  }
  test('created jobs: generateName, hash label, controller ref, template copied', () => {
    const [j] = computeActions(list({ images: ['a:1'], pullSecrets: ['s'] }), new Map(), 'hh').create;
    assert.deepEqual(j!.metadata, {
      namespace: 'ns',
      generateName: 'l-',
      labels: { 'controller-revision-hash': 'hh' },
      ownerReferences: [
        {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'ImageListPullJob',
          name: 'l',
          uid: 'lu',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    assert.deepEqual(j!.spec, { image: 'a:1', completionPolicy: { type: 'Always' }, parallelism: 1, pullSecrets: ['s'] });
  });
});

describe('calculateListStatus', () => {
  const owned = (...jobs: ImagePullJob[]) => new Map(jobs.map((j) => [j.spec!.image, j]));
  test('sums the started jobs', () => {
    const s = calculateListStatus(
      list(),
      owned(
        child('a:1', 'h', { desired: 2, active: 1, succeeded: 1, startTime: ago(5) }),
        child('b:1', 'h', { desired: 2, succeeded: 1, failed: 1, startTime: ago(5) }),
      ),
      NOW,
    );
    assert.deepEqual(s, {
      startTime: metaTime(NOW),
      desired: 2,
      active: 1,
      completed: 1,
      succeeded: 0,
      failedImageStatuses: [
        { imagePullJob: 'l-b', name: 'b:1', message: "Please check for details which nodes failed by 'kubectl get ImagePullJob l-b'." },
      ],
    });
  });
  test('jobs that have not started do not count', () => {
    assert.equal(calculateListStatus(list(), owned(child('a:1', 'h', { desired: 0 })), NOW).completed, 0);
  });
  test('completes when every image completed (not for Never)', () => {
    const done = owned(
      child('a:1', 'h', { desired: 1, succeeded: 1, startTime: ago(5) }),
      child('b:1', 'h', { desired: 1, succeeded: 1, startTime: ago(5) }),
    );
    assert.equal(calculateListStatus(list({}, { desired: 2, startTime: ago(9) }), done, NOW).completionTime, metaTime(NOW));
    assert.equal(calculateListStatus(list({ completionPolicy: { type: 'Never' } }), done, NOW).completionTime, undefined);
    assert.equal(calculateListStatus(list({}, { desired: 2, startTime: ago(9) }), done, NOW).startTime, ago(9));
  });
});

describe('planImageListPullJob', () => {
  const l = list();
  const h = templateHash(l);
  const labelled = list({}, undefined, { 'controller-revision-hash': h });
  const started = { startTime: ago(10), desired: 1, active: 0, succeeded: 1, failed: 0 };
  // [name, list, owned, hashLabel, create, delete, status written, finished]
  const cases: Array<[string, ImageListPullJob, ImagePullJob[], string | undefined, string[], string[], boolean, unknown]> = [
    ['a new list job: label, one job per image, first status', l, [], h, ['a:1', 'b:1'], [], true, undefined],
    [
      'nothing to do once in line',
      { ...labelled, status: { startTime: metaTime(NOW), desired: 2, active: 0, completed: 0, succeeded: 0 } },
      [child('a:1', h), child('b:1', h)],
      undefined,
      [],
      [],
      false,
      undefined,
    ],
    [
      'children being deleted are not counted as present',
      labelled,
      [{ ...child('a:1', h), metadata: { ...child('a:1', h).metadata, deletionTimestamp: ago(1) } }, child('b:1', h)],
      undefined,
      ['a:1'],
      [],
      true,
      undefined,
    ],
    [
      'a finished child counts toward the status',
      labelled,
      [child('a:1', h, started), child('b:1', h)],
      undefined,
      [],
      [],
      true,
      undefined,
    ],
    [
      'a completed list job waits for its TTL',
      list({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 60 } }, { desired: 2, completionTime: ago(6) }),
      [],
      templateHash(list({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 60 } })),
      [],
      [],
      false,
      { action: 'wait', requeueAfterMs: 54_000 },
    ],
  ];
  for (const [name, lj, owned, hashLabel, create, del, status, finished] of cases) {
    test(name, () => {
      const plan = planImageListPullJob({ list: lj, owned, nowMs: NOW });
      assert.equal(plan.hashLabel, hashLabel);
      assert.deepEqual(
        plan.create.map((j) => j.spec?.image),
        create,
      );
      assert.deepEqual(
        plan.delete.map((j) => j.spec?.image),
        del,
      );
      assert.equal(plan.status !== undefined, status);
      assert.deepEqual(plan.finished, finished);
    });
  }
});

describe('ImageListPullJobReconciler', () => {
  function setup(l: ImageListPullJob, owned: ImagePullJob[] = []) {
    const calls: string[] = [];
    const bodies: any[] = [];
    const client = {
      async create(t: any, o: any) {
        calls.push(`create ${t.resource} ${o.spec.image}`);
        bodies.push(o);
        return o;
      },
      async delete(t: any, name: string) {
        calls.push(`delete ${t.resource} ${name}`);
        return {};
      },
      async patch(t: any, name: string, body: any) {
        calls.push(`patch ${t.resource} ${name}`);
        bodies.push(body);
        return body;
      },
      async updateStatus(t: any, o: any) {
        calls.push(`updateStatus ${t.resource}`);
        bodies.push(o);
        return o;
      },
    };
    const scaleExpectations = new ScaleExpectations();
    const events: string[] = [];
    const r = new ImageListPullJobReconciler({
      cache: { getList: () => l, ownedJobs: () => owned },
      client: client as any,
      recorder: { event: (_o: unknown, _t: string, reason: string, _a: string, note: string) => events.push(`${reason}: ${note}`) },
      log: pino({ level: 'silent' }),
      scaleExpectations,
      resourceVersions: new ResourceVersionExpectations(),
      clock: { now: () => NOW, setTimer: () => ({ cancel() {} }), sleep: async () => {} },
    });
    return { r, calls, bodies, events, scaleExpectations };
  }

  test('labels itself, creates the jobs with expectations, writes the status', async () => {
    const { r, calls, bodies, events, scaleExpectations } = setup(list());
    await r.reconcile('ns/l');
    assert.deepEqual(calls, [
      'patch imagelistpulljobs l',
      'create imagepulljobs a:1',
      'create imagepulljobs b:1',
      'updateStatus imagelistpulljobs',
    ]);
    assert.deepEqual(bodies[0], { metadata: { labels: { 'controller-revision-hash': templateHash(list()) } } });
    assert.deepEqual(events, ['Successful create ImagePullJob: Create 2 ImagePullJob']);
    assert.deepEqual(scaleExpectations.getExpectations('ns/l')?.create, new Set(['a:1', 'b:1']));
  });
  test('waits while creations are unobserved', async () => {
    const { r, scaleExpectations, calls } = setup(list({}, undefined, { 'controller-revision-hash': templateHash(list()) }));
    scaleExpectations.expectScale('ns/l', 'create', 'a:1');
    const res = await r.reconcile('ns/l');
    assert.ok((res.requeueAfterMs ?? 0) > 0);
    assert.deepEqual(calls, []);
  });
  test('a completed list job is deleted after its TTL', async () => {
    const l = list({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 5 } }, { desired: 2, completionTime: ago(6) });
    l.metadata.labels = { 'controller-revision-hash': templateHash(l) };
    const { r, calls } = setup(l);
    await r.reconcile('ns/l');
    assert.deepEqual(calls, ['delete imagelistpulljobs l']);
  });
});
