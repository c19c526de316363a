import { createHash } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../src/apis/core-objects.ts';
import {
  SIM_CONTAINER_ENV_ANNOTATION,
  SimulatedNodes,
  podContainersFromStatus,
  pullFailure,
  resolveEnv,
  stoppedStatuses,
  simulatedContainerID,
  simulatedImageID,
  simulatedExecSeconds,
} from '../../../src/daemon/simulated/runtime.ts';
import { logger } from '../../../src/runtime/log.ts';
import { FakeClock } from '../../../src/util/clock.ts';

const UID = 'u-1';
function pod(annotations: Record<string, string> = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: UID, labels: { ver: 'v2' }, annotations },
    spec: {
      nodeName: 'kwok-node-0',
      containers: [
        {
          name: 'a',
          env: [
            { name: 'VER', valueFrom: { fieldRef: { fieldPath: "metadata.labels['ver']" } } },
            { name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
        },
        { name: 'b', env: [{ name: 'X', value: '1' }] },
      ],
    },
    status: {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'a',
          containerID: simulatedContainerID(UID, 'a', 0),
          restartCount: 0,
          image: 'nginx',
          state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
        },
        {
          name: 'b',
          containerID: simulatedContainerID(UID, 'b', 2),
          restartCount: 2,
          state: { terminated: { exitCode: 1, startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:01:00Z' } },
        },
      ],
    },
  };
}

test("containers come from pod status; env is the pinned one, or today's (to be pinned) for containers reading metadata", () => {
  const fresh = podContainersFromStatus(pod());
  assert.deepEqual(
    fresh.containers.map((c) => [c.name, c.state, c.restartCount, c.startedAt]),
    [
      ['a', 'running', 0, Date.parse('2026-01-01T00:00:00Z')],
      ['b', 'exited', 2, Date.parse('2026-01-01T00:00:00Z')],
    ],
  );
  assert.deepEqual(fresh.containers[0].env, { VER: 'v2', N: 'p' });
  assert.deepEqual(Object.keys(fresh.pins), ['a'], 'only containers reading labels/annotations are pinned');
  const pinned = podContainersFromStatus(
    pod({ [SIM_CONTAINER_ENV_ANNOTATION]: JSON.stringify({ a: { containerID: simulatedContainerID(UID, 'a', 0), env: { VER: 'v1' } } }) }),
  );
  assert.deepEqual(pinned.containers[0].env, { VER: 'v1' });
  assert.deepEqual(pinned.pins, {});
  // A pin for an earlier container does not apply to the current one; a broken annotation is ignored.
  assert.deepEqual(
    podContainersFromStatus(pod({ [SIM_CONTAINER_ENV_ANNOTATION]: JSON.stringify({ a: { containerID: 'old', env: { VER: 'v1' } } }) }))
      .containers[0].env,
    { VER: 'v2', N: 'p' },
  );
  assert.deepEqual(podContainersFromStatus(pod({ [SIM_CONTAINER_ENV_ANNOTATION]: '{' })).containers[0].env, { VER: 'v2', N: 'p' });
  assert.deepEqual(resolveEnv(pod().spec!.containers![1], pod()), { X: '1' });
});

test('a stop restarts the container in pod status the way the kubelet would (restartPolicy Always)', () => {
  const p = pod();
  const old = p.status!.containerStatuses![0].containerID!;
  const out = stoppedStatuses(p, old, '2026-02-02T00:00:00.000Z')!;
  assert.equal(out.restarted, true);
  assert.equal(out.container.restartCount, 1);
  assert.equal(out.container.containerID, simulatedContainerID(UID, 'a', 1));
  assert.deepEqual(out.container.state, { running: { startedAt: '2026-02-02T00:00:00.000Z' } });
  assert.equal((out.container.lastState as { terminated: { containerID: string } }).terminated.containerID, old);
  assert.deepEqual(out.statuses[1], p.status!.containerStatuses![1], 'other containers untouched');
  assert.equal(out.phase, undefined);
  assert.equal(stoppedStatuses(p, 'containerd://unknown', 'now'), undefined);
});

test("the restarted container runs the spec's image: an image changed in place costs no second restart", () => {
  const p = pod();
  p.spec!.containers![0].image = 'nginx:2.0';
  const out = stoppedStatuses(p, p.status!.containerStatuses![0].containerID!, '2026-02-02T00:00:00Z')!;
  assert.equal(out.container.restartCount, 1);
  assert.equal(out.container.image, 'nginx:2.0');
  assert.equal(out.container.imageID, simulatedImageID('nginx:2.0'));
  assert.equal(
    simulatedImageID('example.com:5000/a/b:1.0'),
    `example.com:5000/a/b@sha256:${createHash('sha256').update('example.com:5000/a/b:1.0').digest('hex')}`,
  );
  // Unchanged image: the status keeps its image and imageID.
  const q = pod();
  q.spec!.containers![0].image = 'nginx';
  q.status!.containerStatuses![0].imageID = 'nginx@sha256:x';
  const same = stoppedStatuses(q, q.status!.containerStatuses![0].containerID!, 'T')!.container;
  assert.deepEqual([same.image, same.imageID], ['nginx', 'nginx@sha256:x']);
});

test('a restarted container with a postStart hook is not ready, nor is the pod, until the hook has run', () => {
  const p = pod();
  p.status!.conditions = [
    { type: 'Ready', status: 'True' },
    { type: 'ContainersReady', status: 'True' },
    { type: 'PodScheduled', status: 'True' },
  ];
  const plain = stoppedStatuses(p, p.status!.containerStatuses![0].containerID!, 'T')!;
  assert.equal(plain.container.ready, true);
  assert.equal(plain.conditions, undefined, 'no hook: the pod stays Ready');
  p.spec!.containers![0].lifecycle = { postStart: { exec: { command: ['sleep', '10'] } } };
  const hooked = stoppedStatuses(p, p.status!.containerStatuses![0].containerID!, 'T')!;
  assert.equal(hooked.restarted, true);
  assert.equal(hooked.container.ready, false);
  assert.deepEqual(
    hooked.conditions?.map((c) => [c.type, c.status, c.reason]),
    [
      ['Ready', 'False', 'ContainersNotReady'],
      ['ContainersReady', 'False', 'ContainersNotReady'],
      ['PodScheduled', 'True', undefined],
    ],
  );
  assert.equal(hooked.phase, undefined);
});

test("the restarted container runs with the spec's resources: a resize pending in place costs no second restart", () => {
  const p = pod();
  p.spec!.containers![0].resources = { requests: { cpu: '200m' }, limits: { cpu: '1' } };
  const out = stoppedStatuses(p, p.status!.containerStatuses![0].containerID!, 'T')!;
  assert.equal(out.container.restartCount, 1);
  assert.deepEqual(out.container.resources, { requests: { cpu: '200m' }, limits: { cpu: '1' } });
  assert.deepEqual(out.container.allocatedResources, { cpu: '200m' });
});

test('under restartPolicy Never / OnFailure a stopped container stays exited; the last one ends the pod', () => {
  for (const restartPolicy of ['Never', 'OnFailure']) {
    const p = pod();
    p.spec!.restartPolicy = restartPolicy;
    p.status!.conditions = [
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ];
    p.status!.containerStatuses![1]!.state = { running: { startedAt: '2026-01-01T00:00:00Z' } };
    const [a, b] = p.status!.containerStatuses!.map((s) => s.containerID!);
    const first = stoppedStatuses(p, a!, 'T1')!;
    assert.equal(first.restarted, false);
    assert.equal(first.container.restartCount, p.status!.containerStatuses![0].restartCount, 'no restart');
    assert.equal(first.container.containerID, a);
    assert.equal(first.container.state?.terminated?.exitCode, 0);
    assert.equal(first.container.ready, false);
    assert.equal(first.phase, undefined, 'the other container still runs');
    const last = stoppedStatuses({ ...p, status: { ...p.status, containerStatuses: first.statuses } }, b!, 'T2')!;
    assert.equal(last.phase, 'Succeeded');
    assert.deepEqual(
      last.conditions?.map((c) => [c.type, c.status]),
      [
        ['Ready', 'False'],
        ['PodScheduled', 'True'],
      ],
    );
    // A container that had already failed makes the pod Failed.
    const failed = stoppedStatuses(pod({}), a!, 'T3');
    assert.equal(failed?.phase, undefined, 'restartPolicy Always: never terminal');
    const q = pod();
    q.spec!.restartPolicy = restartPolicy;
    assert.equal(stoppedStatuses(q, a!, 'T3')?.phase, 'Failed');
  }
});

test('a simulated exec of `sleep N` takes N seconds (a preStop hook holds the stop), capped at the timeout', () => {
  const cases: Array<[string[], number, number]> = [
    [['sleep', '8'], 0, 8],
    [['/bin/sh', '-c', 'sleep 8'], 0, 8],
    [['sh', '-c', 'echo bye; sleep 3 && exit 0'], 0, 3],
    [['sleep', '8'], 5, 5],
    [['sleep', '1.5'], 0, 0],
    [['nosleep', '8'], 0, 0],
    [['cat', '/tmp/ready'], 0, 0],
  ];
  for (const [command, timeout, want] of cases) assert.equal(simulatedExecSeconds(command, timeout), want, command.join(' '));
});

test('pull failure rule: .invalid hosts and the tag doesnotexist', () => {
  assert.match(pullFailure('registry.invalid/a/b:1')!, /lookup registry\.invalid: no such host/);
  assert.match(pullFailure('registry.invalid:5000/a:1')!, /lookup registry\.invalid: no such host/);
  assert.match(pullFailure('invalid.registry.k8s.io/invalid/alpine:3.1')!, /lookup invalid\.registry\.k8s\.io: no such host/);
  assert.match(pullFailure('nginx:doesnotexist')!, /nginx:doesnotexist: not found/);
  assert.equal(pullFailure('nginx:1.0'), undefined);
  assert.equal(pullFailure('example.com/a/b:1'), undefined);
});

test('simulated pulls take their time, report progress, and are remembered per node', async () => {
  const clock = new FakeClock();
  const nodes = new SimulatedNodes({
    client: {} as never,
    recorder: { event() {} },
    clock,
    logger: logger.child({}, { level: 'silent' }),
    podOfContainer: () => undefined,
    pullDelayMs: 400,
  });
  const rt = nodes.runtimeFor('n0');
  const progress: number[] = [];
  const p = rt.pullImage({ image: 'nginx:1.0', onProgress: (x) => progress.push(x) });
  await clock.advance(400);
  const { imageRef } = await p;
  assert.match(imageRef, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(progress, [0, 25, 50, 75, 100]);
  assert.equal((await rt.imageStatus('nginx:1.0'))?.id, imageRef);
  assert.equal(await nodes.runtimeFor('n1').imageStatus('nginx:1.0'), undefined);
  const bad = rt.pullImage({ image: 'nginx:doesnotexist' });
  const failed = assert.rejects(bad, /not found/);
  await clock.advance(400);
  await failed;
  // Stopping a container no node knows of is a no-op, as CRI StopContainer on a removed container.
  await rt.stopContainer('containerd://nobody', 10);
});
