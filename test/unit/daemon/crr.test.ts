import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterKill,
  computeContainerStates,
  isWellFormedCRR,
  pickCRR,
  planCRRStep,
  terminationGraceSeconds,
  unreadyGraceGate,
  type CRR,
} from '../../../src/daemon/containerrecreate/state.ts';
import { killContainer, preStopUrl, remainingGraceSeconds } from '../../../src/daemon/containerrecreate/kill.ts';
import type { RuntimeContainer } from '../../../src/daemon/runtime/types.ts';
import { FakeClock } from '../../../src/util/clock.ts';
import { FakeRuntime } from './fake-runtime.ts';

const NOW = 1_700_000_100_000;
const iso = (ms: number) => new Date(ms).toISOString();

function crr(
  over: {
    name?: string;
    created?: number;
    phase?: string;
    strategy?: CRR['spec']['strategy'];
    states?: NonNullable<CRR['status']>['containerRecreateStates'];
    containers?: string[];
    snapshot?: NonNullable<CRR['status']>['containerStatusSnapshot'];
    conditions?: NonNullable<CRR['status']>['conditions'];
  } = {},
): CRR {
  return {
    metadata: {
      name: over.name ?? 'r',
      namespace: 'ns',
      uid: `uid-${over.name ?? 'r'}`,
      creationTimestamp: iso(over.created ?? NOW - 60_000),
    },
    spec: {
      podName: 'p',
      strategy: over.strategy,
      containers: (over.containers ?? ['a']).map((n) => ({
        name: n,
        statusContext: { containerID: `containerd://${n}-0`, restartCount: 0 },
      })),
    },
    status:
      over.phase || over.states || over.snapshot || over.conditions
        ? {
            phase: (over.phase ?? 'Recreating') as 'Recreating',
            containerRecreateStates: over.states,
            containerStatusSnapshot: over.snapshot,
            conditions: over.conditions,
          }
        : undefined,
  };
}

const rc = (name: string, attempt: number, state: RuntimeContainer['state'] = 'running', startedAt = NOW - 100_000): RuntimeContainer => ({
  name,
  containerID: `containerd://${name}-${attempt}`,
  restartCount: attempt,
  state,
  startedAt,
});

test('pickCRR: Recreating before Pending before new, oldest first; later new ones go Pending', () => {
  const cases: Array<[string, CRR[], string | undefined, string[]]> = [
    ['none', [], undefined, []],
    ['finished skipped', [crr({ name: 'x', phase: 'Completed' })], undefined, []],
    ['oldest new first', [crr({ name: 'b', created: NOW - 10 }), crr({ name: 'a', created: NOW - 20 })], 'a', ['b']],
    [
      'recreating wins over older new',
      [crr({ name: 'old', created: NOW - 99 }), crr({ name: 'run', phase: 'Recreating', created: NOW })],
      'run',
      ['old'],
    ],
    ['pending stays pending (no write)', [crr({ name: 'run', phase: 'Recreating' }), crr({ name: 'p', phase: 'Pending' })], 'run', []],
  ];
  for (const [name, crrs, picked, pending] of cases) {
    const out = pickCRR(crrs);
    assert.equal(out.picked?.metadata.name, picked, name);
    assert.deepEqual(
      out.toPending.map((c) => c.metadata.name),
      pending,
      name,
    );
  }
});

test('isWellFormedCRR refuses objects the daemon cannot act on', () => {
  assert.equal(isWellFormedCRR(crr()), true);
  assert.equal(isWellFormedCRR({ metadata: {}, spec: { podName: 'p' } } as never), false);
  assert.equal(isWellFormedCRR({ metadata: {}, spec: { podName: '', containers: [] } } as never), false);
  assert.equal(isWellFormedCRR({ metadata: {}, spec: { podName: 'p', containers: [null] } } as never), false);
  assert.equal(isWellFormedCRR({ metadata: {} } as never), false);
});

test('unreadyGraceGate waits for PreRecreateGrace and then for the grace', () => {
  const cond = (at: number) => [
    { type: 'PreRecreateGrace', status: 'True' as const, lastTransitionTime: iso(at), reason: '', message: '' },
  ];
  assert.deepEqual(unreadyGraceGate(crr(), NOW), { wait: false });
  assert.equal(unreadyGraceGate(crr({ strategy: { unreadyGracePeriodSeconds: 5 } }), NOW).wait, true);
  const g = unreadyGraceGate(crr({ strategy: { unreadyGracePeriodSeconds: 5 }, conditions: cond(NOW - 2000) }), NOW);
  assert.deepEqual(g.wait && g.requeueAfterMs, 3000);
  assert.deepEqual(unreadyGraceGate(crr({ strategy: { unreadyGracePeriodSeconds: 5 }, conditions: cond(NOW - 5000) }), NOW), {
    wait: false,
  });
});

test('computeContainerStates', () => {
  // The manager's copy of pod status showing the new container, ready.
  const synced = [{ name: 'a', ready: true, restartCount: 1, containerID: 'containerd://a-1' }];
  type Row = [string, CRR, RuntimeContainer[], Array<[string, string, boolean?]>];
  const rows: Row[] = [
    ['not found', crr(), [], [['a', 'Pending']]],
    ['unchanged → Pending', crr(), [rc('a', 0)], [['a', 'Pending']]],
    ['exited → Recreating', crr(), [rc('a', 0, 'exited')], [['a', 'Recreating']]],
    [
      'replaced, started long ago, snapshot synced → Succeeded',
      crr({ states: [{ name: 'a', phase: 'Recreating', isKilled: true }], snapshot: synced }),
      [rc('a', 1)],
      [['a', 'Succeeded', true]],
    ],
    [
      'replaced but minStartedSeconds not reached',
      crr({ strategy: { minStartedSeconds: 10 }, snapshot: synced }),
      [rc('a', 1, 'running', NOW - 5000)],
      [['a', 'Recreating']],
    ],
    [
      'replaced, minStartedSeconds reached',
      crr({ strategy: { minStartedSeconds: 10 }, snapshot: synced }),
      [rc('a', 1, 'running', NOW - 10_000)],
      [['a', 'Succeeded']],
    ],
    ['no snapshot yet', crr(), [rc('a', 1)], [['a', 'Recreating']]],
    [
      'snapshot of the old container',
      crr({ snapshot: [{ name: 'a', ready: true, restartCount: 0, containerID: 'containerd://a-0' }] }),
      [rc('a', 1)],
      [['a', 'Recreating']],
    ],
    ['snapshot: new container not ready yet', crr({ snapshot: [{ ...synced[0], ready: false }] }), [rc('a', 1)], [['a', 'Recreating']]],
    [
      'forceRecreate, not killed → Pending even if replaced',
      crr({ strategy: { forceRecreate: true }, snapshot: synced }),
      [rc('a', 1)],
      [['a', 'Pending']],
    ],
    [
      'forceRecreate, killed → Succeeded',
      crr({ strategy: { forceRecreate: true }, states: [{ name: 'a', phase: 'Recreating', isKilled: true }], snapshot: synced }),
      [rc('a', 1)],
      [['a', 'Succeeded', true]],
    ],
    ['finished states kept', crr({ states: [{ name: 'a', phase: 'Failed', message: 'x' }] }), [rc('a', 0)], [['a', 'Failed']]],
  ];
  for (const [name, c, containers, want] of rows) {
    const got = computeContainerStates(c, containers, NOW).map((s) => (s.isKilled ? [s.name, s.phase, true] : [s.name, s.phase]));
    assert.deepEqual(got, want, name);
  }
});

test('computeContainerStates: a killed container the pod does not restart is done once exited', () => {
  const killed = crr({ strategy: { forceRecreate: true }, states: [{ name: 'a', phase: 'Recreating', isKilled: true }] });
  const exited = (exitCode: number) => ({ ...rc('a', 0, 'exited'), exitCode });
  const phase = (c: CRR, r: RuntimeContainer, policy?: string) => computeContainerStates(c, [r], NOW, policy)[0]!.phase;
  assert.equal(phase(killed, exited(0), 'Never'), 'Succeeded');
  assert.equal(phase(killed, exited(137), 'Never'), 'Succeeded');
  assert.equal(phase(killed, exited(0), 'OnFailure'), 'Succeeded');
  assert.equal(phase(killed, exited(137), 'OnFailure'), 'Recreating', 'OnFailure restarts a failed exit');
  assert.equal(phase(killed, exited(0), 'Always'), 'Recreating');
  assert.equal(phase(killed, exited(0)), 'Recreating', 'default restartPolicy is Always');
  assert.equal(phase(crr(), exited(0), 'Never'), 'Recreating', 'not killed by us: nothing to conclude');
});

test('planCRRStep: record first, one kill per round, ordered waits, failure policy, completion', () => {
  const st = (name: string, phase: string, isKilled?: boolean) => ({ name, phase: phase as 'Pending', ...(isKilled ? { isKilled } : {}) });
  // Unrecorded states are written before anything is killed.
  const onNode = new Set(['a', 'b']);
  assert.equal(planCRRStep(crr({ containers: ['a', 'b'] }), [st('a', 'Pending'), st('b', 'Pending')], onNode).kind, 'states');
  const recorded = (states: ReturnType<typeof st>[], strategy?: CRR['spec']['strategy']) =>
    crr({ containers: states.map((s) => s.name), states, strategy });
  type Row = [string, CRR, ReturnType<typeof st>[], string, string?, Set<string>?];
  const rows: Row[] = [
    [
      'kills the first pending',
      recorded([st('a', 'Pending'), st('b', 'Pending')]),
      [st('a', 'Pending'), st('b', 'Pending')],
      'states',
      'a',
    ],
    [
      'unordered: kills past a recreating one',
      recorded([st('a', 'Recreating', true), st('b', 'Pending')]),
      [st('a', 'Recreating', true), st('b', 'Pending')],
      'states',
      'b',
    ],
    [
      'ordered: waits for the recreating one',
      recorded([st('a', 'Recreating', true), st('b', 'Pending')], { orderedRecreate: true }),
      [st('a', 'Recreating', true), st('b', 'Pending')],
      'wait',
    ],
    [
      'all succeeded → complete',
      recorded([st('a', 'Succeeded'), st('b', 'Succeeded')]),
      [st('a', 'Succeeded'), st('b', 'Succeeded')],
      'complete',
    ],
    ['failed with Fail → complete', recorded([st('a', 'Failed'), st('b', 'Pending')]), [st('a', 'Failed'), st('b', 'Pending')], 'complete'],
    [
      'failed with Ignore → continue',
      recorded([st('a', 'Failed'), st('b', 'Pending')], { failurePolicy: 'Ignore' }),
      [st('a', 'Failed'), st('b', 'Pending')],
      'states',
      'b',
    ],
    [
      'failed ignored + succeeded → complete',
      recorded([st('a', 'Failed'), st('b', 'Succeeded')], { failurePolicy: 'Ignore' }),
      [st('a', 'Failed'), st('b', 'Succeeded')],
      'complete',
    ],
    // The pod is gone (or its containers not there yet): nothing to kill, the manager ends the CRR.
    ['pending container not on the node: no kill', recorded([st('a', 'Pending')]), [st('a', 'Pending')], 'wait', undefined, new Set()],
    [
      'unordered: stops at a container not on the node',
      recorded([st('a', 'Recreating', true), st('b', 'Pending')]),
      [st('a', 'Recreating', true), st('b', 'Pending')],
      'wait',
      undefined,
      new Set(['a']),
    ],
  ];
  for (const [name, c, states, kind, kill, present] of rows) {
    const step = planCRRStep(c, states, present ?? onNode);
    assert.equal(step.kind, kind, name);
    assert.equal(step.kind === 'states' ? step.kill : undefined, kill, name);
  }
  assert.equal(
    (
      planCRRStep(recorded([st('a', 'Recreating', true)], { minStartedSeconds: 7 }), [st('a', 'Recreating', true)], onNode) as {
        requeueAfterMs?: number;
      }
    ).requeueAfterMs,
    7000,
  );
});

test('afterKill and terminationGraceSeconds', () => {
  const states = [
    { name: 'a', phase: 'Pending' as const },
    { name: 'b', phase: 'Pending' as const },
  ];
  assert.deepEqual(afterKill(states, 'a'), [{ name: 'a', phase: 'Recreating', isKilled: true }, states[1]]);
  assert.deepEqual(afterKill(states, 'b', 'boom')[1], { name: 'b', phase: 'Failed', message: 'kill container error: boom' });
  assert.equal(terminationGraceSeconds(crr({ strategy: { terminationGracePeriodSeconds: 5 } }), 40), 5);
  assert.equal(terminationGraceSeconds(crr(), 40), 40);
  assert.equal(terminationGraceSeconds(crr(), undefined), 30);
});

test('preStop URL and remaining grace', () => {
  assert.deepEqual(preStopUrl({ port: 8080, path: 'quit' }, '10.0.0.1', []), { url: 'http://10.0.0.1:8080/quit' });
  assert.deepEqual(preStopUrl({ port: 'web', scheme: 'HTTPS' }, 'fd00::1', [{ name: 'web', containerPort: 443 }]), {
    url: 'https://[fd00::1]:443/',
  });
  assert.ok('error' in preStopUrl({ port: 'nope' }, '10.0.0.1', []));
  assert.ok('error' in preStopUrl({ port: 80 }, undefined, []));
  assert.equal(remainingGraceSeconds(30, 12_500), 18);
  assert.equal(remainingGraceSeconds(5, 10_000), 2);
});

test('killContainer: preStop time counts against the grace; a failing preStop does not stop the kill', async () => {
  const clock = new FakeClock(NOW);
  const rt = new FakeRuntime();
  rt.exec = async () => {
    await clock.sleep(4000);
    return { exitCode: 1, stdout: '', stderr: 'nope' };
  };
  const p = killContainer(
    { containerID: 'c1', containerName: 'a', preStop: { exec: { command: ['x'] } }, graceSeconds: 10 },
    { runtime: rt, clock, httpGet: async () => 200 },
  );
  await clock.advance(4000);
  const out = await p;
  assert.equal(out?.ok, false);
  assert.match(out!.message, /exited with 1: nope/);
  assert.deepEqual(rt.calls, ['exec c1 x 10', 'stop c1 6']);

  // A preStop that outlives the grace is abandoned; the stop gets the 2 s minimum.
  const rt2 = new FakeRuntime();
  const urls: string[] = [];
  const p2 = killContainer(
    { containerID: 'c2', containerName: 'a', preStop: { httpGet: { port: 80 } }, podIP: '10.1.1.1', graceSeconds: 3 },
    {
      runtime: rt2,
      clock,
      httpGet: (url, _h, signal) => {
        urls.push(url);
        return new Promise((_r, rej) => signal.addEventListener('abort', () => rej(new Error('aborted'))));
      },
    },
  );
  await clock.advance(3000);
  const out2 = await p2;
  assert.match(out2!.message, /did not finish within 3s/);
  assert.deepEqual(urls, ['http://10.1.1.1:80/']);
  assert.deepEqual(rt2.calls, ['stop c2 2']);

  // A failed stop is the kill's error.
  const rt3 = new FakeRuntime();
  rt3.stopError = 'gone wrong';
  await assert.rejects(
    killContainer({ containerID: 'c3', containerName: 'a', graceSeconds: 30 }, { runtime: rt3, clock, httpGet: async () => 200 }),
    /gone wrong/,
  );
  assert.deepEqual(rt3.calls, ['stop c3 30']);
});
