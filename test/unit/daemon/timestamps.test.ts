// Times the daemon writes into objects are metav1.Time: RFC 3339 at whole seconds, as the API
// server itself writes them (clients parse them that way). The clocks here stand at .123 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImageTagStatus } from '../../../src/apis/apps/nodeimage.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { PullSlots, runPullWorker } from '../../../src/daemon/imagepuller/controller.ts';
import { desiredTasks } from '../../../src/daemon/imagepuller/plan.ts';
import { SimulatedNodes, simulatedContainerID } from '../../../src/daemon/simulated/runtime.ts';
import { formatMicroTime } from '../../../src/runtime/leaderelection.ts';
import { logger as root } from '../../../src/runtime/log.ts';
import { FakeClock, metaTime } from '../../../src/util/clock.ts';
import { FakeRuntime } from './fake-runtime.ts';

const logger = root.child({}, { level: 'silent' });
const META_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const OFF_SECOND = 1_700_000_000_123;

/** Every string under a key ending in Time/At/Timestamp, with its path. */
function timesIn(value: unknown, path = ''): [string, string][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    typeof v === 'string' && /(Time|At|Timestamp)$/.test(k) ? [[`${path}.${k}`, v] as [string, string]] : timesIn(v, `${path}.${k}`),
  );
}

test('metaTime is whole seconds; MicroTime has exactly six fractional digits', () => {
  assert.equal(metaTime(OFF_SECOND), '2023-11-14T22:13:20Z');
  assert.equal(formatMicroTime(OFF_SECOND), '2023-11-14T22:13:20.123000Z');
});

test('image pull worker: startTime and completionTime are whole seconds', async () => {
  const clock = new FakeClock(OFF_SECOND);
  const seen: ImageTagStatus[] = [];
  const [task] = desiredTasks({ images: { app: { tags: [{ tag: '1', version: 1 }] } } });
  await runPullWorker(
    task,
    { runtime: new FakeRuntime(), clock, slots: new PullSlots(-1), auths: async () => [], log: logger },
    new AbortController().signal,
    (s) => seen.push(s),
  );
  const times = seen.flatMap((s) => timesIn(s));
  assert.ok(
    times.some(([p]) => p === '.completionTime'),
    JSON.stringify(seen),
  );
  for (const [path, t] of times) assert.match(t, META_TIME, path);
});

test('simulated container stop: finishedAt, startedAt and condition times are whole seconds', async () => {
  const clock = new FakeClock(OFF_SECOND);
  const id = simulatedContainerID('u', 'a', 0);
  const pod: Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '1' },
    spec: { nodeName: 'n0', restartPolicy: 'Never', containers: [{ name: 'a' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2023-11-14T22:00:00Z' }],
      containerStatuses: [
        { name: 'a', containerID: id, restartCount: 0, ready: true, state: { running: { startedAt: '2023-11-14T22:00:00Z' } } },
      ],
    },
  } as Pod;
  const patches: unknown[] = [];
  const client = {
    get: async () => pod,
    patchStatus: async (_t: unknown, _n: string, body: unknown) => {
      patches.push(body);
      return pod;
    },
  };
  const nodes = new SimulatedNodes({
    client: client as never,
    recorder: { event() {} },
    clock,
    logger,
    podOfContainer: () => ({ namespace: 'ns', name: 'p', uid: 'u' }),
    pullDelayMs: 0,
  });
  await nodes.runtimeFor('n0').stopContainer(id, 1);
  const times = patches.flatMap((p) => timesIn(p));
  assert.ok(
    times.some(([p]) => p.endsWith('.finishedAt')),
    JSON.stringify(patches),
  );
  for (const [path, t] of times) assert.match(t, META_TIME, path);
});
