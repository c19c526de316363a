import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImageTagStatus, NodeImageSpec, NodeImageStatus } from '../../../src/apis/apps/nodeimage.ts';
import { authsForImage, registryOf } from '../../../src/daemon/imagepuller/auth.ts';
import { PullSlots, runPullWorker } from '../../../src/daemon/imagepuller/controller.ts';
import {
  backoffMs,
  buildStatus,
  desiredTasks,
  imageReference,
  planWorkers,
  statusMergePatch,
} from '../../../src/daemon/imagepuller/plan.ts';
import { logger as root } from '../../../src/runtime/log.ts';

const logger = root.child({}, { level: 'silent' });
import { FakeClock } from '../../../src/util/clock.ts';
import { FakeRuntime } from './fake-runtime.ts';

const spec: NodeImageSpec = {
  images: {
    nginx: {
      tags: [
        { tag: '1.0', version: 2, pullPolicy: { timeoutSeconds: 20, backoffLimit: 1 } },
        { tag: '2.0', imagePullPolicy: 'IfNotPresent' },
      ],
      pullSecrets: [{ namespace: 'kruise-daemon-config', name: 's' }, { name: 'no-namespace' }],
    },
    bad: { tags: 'oops' } as never,
    'r.io/x': { tags: [{ tag: 'sha256:' + 'a'.repeat(64), version: 1 }, { tag: '' }] },
  },
};

test('desiredTasks: defaults, digests, malformed entries skipped', () => {
  const tasks = desiredTasks(spec);
  assert.deepEqual(
    tasks.map((t) => [t.key, t.ref, t.version, t.timeoutSeconds, t.backoffLimit, t.ifNotPresent]),
    [
      ['nginx:1.0', 'nginx:1.0', 2, 20, 1, false],
      ['nginx:2.0', 'nginx:2.0', 0, 600, 3, true],
      [`r.io/x:sha256:${'a'.repeat(64)}`, `r.io/x@sha256:${'a'.repeat(64)}`, 1, 600, 3, false],
    ],
  );
  assert.deepEqual(tasks[0].pullSecrets, [{ namespace: 'kruise-daemon-config', name: 's' }]);
  assert.deepEqual(desiredTasks(undefined), []);
  assert.equal(imageReference('a', 'latest'), 'a:latest');
});

test('backoff doubles from 1 s and is capped at 30 s', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 9].map(backoffMs), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
});

test('planWorkers: start new versions, keep finished ones across restarts, stop removed or re-versioned', () => {
  const tasks = desiredTasks(spec);
  const reported: NodeImageStatus = {
    desired: 3,
    imageStatuses: {
      nginx: {
        tags: [
          { tag: '1.0', phase: 'Succeeded', version: 2 },
          { tag: '2.0', phase: 'Pulling', version: 0 },
        ],
      },
    },
  };
  const plan = planWorkers(
    tasks,
    reported,
    new Map([
      ['nginx:2.0', 0],
      ['gone:1', 1],
    ]),
  );
  assert.deepEqual(
    plan.start.map((t) => t.key),
    [`r.io/x:sha256:${'a'.repeat(64)}`],
  );
  assert.deepEqual(plan.stop, ['gone:1']);
  // A new version is pulled again even though an older one succeeded.
  const bumped = planWorkers(
    tasks,
    { desired: 1, imageStatuses: { nginx: { tags: [{ tag: '1.0', phase: 'Succeeded', version: 1 }] } } },
    new Map([['nginx:1.0', 1]]),
  );
  assert.deepEqual(bumped.stop, ['nginx:1.0']);
  assert.ok(bumped.start.some((t) => t.key === 'nginx:1.0'));
});

test('buildStatus echoes spec versions and counts phases; the merge patch nulls removed images', () => {
  const tasks = desiredTasks(spec);
  const workers = new Map<string, ImageTagStatus>([
    ['nginx:2.0', { tag: '2.0', phase: 'Pulling', version: 0, progress: 50 }],
    ['nginx:1.0', { tag: '1.0', phase: 'Failed', version: 1 }],
  ]);
  const reported: NodeImageStatus = {
    desired: 1,
    imageStatuses: { old: { tags: [] }, nginx: { tags: [{ tag: '1.0', phase: 'Succeeded', version: 2 }] } },
    firstSyncStatus: { syncAt: 'then', status: 'Succeeded' },
  };
  const s = buildStatus(tasks, workers, reported, 'now');
  assert.deepEqual(
    s.imageStatuses!.nginx.tags.map((t) => [t.tag, t.phase, t.version]),
    [
      ['1.0', 'Succeeded', 2],
      ['2.0', 'Pulling', 0],
    ],
  );
  assert.deepEqual(
    s.imageStatuses!['r.io/x'].tags.map((t) => [t.phase, t.version]),
    [['Waiting', 1]],
  );
  assert.deepEqual([s.desired, s.succeeded, s.failed, s.pulling, s.waiting], [3, 1, 0, 1, 1]);
  assert.deepEqual(s.firstSyncStatus, { syncAt: 'then', status: 'Succeeded' });
  assert.equal(buildStatus([], new Map(), undefined, 'now').firstSyncStatus?.syncAt, 'now');
  const patch = statusMergePatch(reported, s)!;
  assert.equal((patch.status.imageStatuses as Record<string, unknown>).old, null);
  assert.equal(statusMergePatch(s, { ...s }), undefined);
});

test('registry matching of pull secrets', () => {
  const secret = (auths: Record<string, unknown>) => ({
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') },
  });
  assert.equal(registryOf('nginx'), 'docker.io');
  assert.equal(registryOf('library/nginx:1'), 'docker.io');
  assert.equal(registryOf('127.0.0.1:5000/a/b:1'), '127.0.0.1:5000');
  assert.equal(registryOf('index.docker.io/a/b'), 'docker.io');
  const auths = authsForImage('127.0.0.1:5000/app:1', [
    secret({ 'https://127.0.0.1:5000/v2/': { auth: Buffer.from('u:p').toString('base64') }, 'other.io': { username: 'x', password: 'y' } }),
    { data: { '.dockerconfigjson': 'not base64 json' } },
    {
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': Buffer.from(JSON.stringify({ '127.0.0.1:5000': { username: 'v', password: 'w' } })).toString('base64') },
    },
  ]);
  assert.deepEqual(
    auths.map((a) => [a.serverAddress, a.username, a.password]),
    [
      ['127.0.0.1:5000', 'u', 'p'],
      ['127.0.0.1:5000', 'v', 'w'],
    ],
  );
  assert.deepEqual(
    authsForImage('nginx', [secret({ 'https://index.docker.io/v1/': { username: 'h', password: 'q' } })]).map((a) => a.username),
    ['h'],
  );
});

const task = (over: Partial<ReturnType<typeof desiredTasks>[number]> = {}) => ({
  ...desiredTasks({ images: { app: { tags: [{ tag: '1', version: 4 }] } } })[0],
  ...over,
});

test("a pull worker retries with backoff and fails with the runtime's reason", async () => {
  const clock = new FakeClock();
  const rt = new FakeRuntime();
  rt.pull = async () => {
    throw new Error('manifest unknown');
  };
  const seen: ImageTagStatus[] = [];
  const done = runPullWorker(
    task({ backoffLimit: 2 }),
    { runtime: rt, clock, slots: new PullSlots(-1), auths: async () => [], log: logger },
    new AbortController().signal,
    (s) => seen.push(s),
  );
  await clock.advance(1000);
  assert.equal(rt.calls.length, 2);
  await clock.advance(2000);
  await done;
  assert.equal(rt.calls.length, 3);
  const last = seen.at(-1)!;
  assert.deepEqual([last.phase, last.version, last.message], ['Failed', 4, 'manifest unknown']);
  assert.ok(last.startTime && last.completionTime);
});

test('a pull worker: timeout per attempt, success with imageID, IfNotPresent skips present images, slots bound concurrency', async () => {
  const clock = new FakeClock();
  const rt = new FakeRuntime();
  let n = 0;
  rt.pull = (req) =>
    n++ === 0
      ? new Promise((_r, rej) => req.signal!.addEventListener('abort', () => rej(new Error('aborted'))))
      : (req.onProgress?.(50), Promise.resolve({ imageRef: 'sha256:abc' }));
  const seen: ImageTagStatus[] = [];
  const done = runPullWorker(
    task({ timeoutSeconds: 5, backoffLimit: 1 }),
    { runtime: rt, clock, slots: new PullSlots(-1), auths: async () => [], log: logger },
    new AbortController().signal,
    (s) => seen.push(s),
  );
  await clock.advance(6000);
  await done;
  assert.ok(seen.some((s) => /^retrying \(1\/1\) after: pulling image timed out after 5s$/.test(s.message ?? '')));
  assert.deepEqual([seen.at(-1)!.phase, seen.at(-1)!.imageID, seen.at(-1)!.progress], ['Succeeded', 'sha256:abc', 100]);
  assert.ok(seen.some((s) => s.progress === 50));

  const present = new FakeRuntime();
  present.images.set('app:1', { id: 'sha256:have', repoTags: ['app:1'], repoDigests: [], size: 1 });
  const out: ImageTagStatus[] = [];
  await runPullWorker(
    task({ ifNotPresent: true }),
    { runtime: present, clock, slots: new PullSlots(-1), auths: async () => [], log: logger },
    new AbortController().signal,
    (s) => out.push(s),
  );
  assert.deepEqual([out.at(-1)!.phase, out.at(-1)!.imageID, present.calls.length], ['Succeeded', 'sha256:have', 0]);

  const slots = new PullSlots(1);
  const release = await slots.acquire(new AbortController().signal);
  let second = false;
  const waiting = slots.acquire(new AbortController().signal).then((r) => {
    second = true;
    return r;
  });
  await clock.advance(0);
  assert.equal(second, false);
  release();
  (await waiting)();
  assert.equal(second, true);
});
