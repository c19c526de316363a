// The daemon prober: thresholds and status (pure), the probers (exec through the runtime, tcp and
// http against real local servers), and the sub-controller against the in-memory API server.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  countResult,
  nextStatus,
  probeTargets,
  probeTiming,
  resultChanged,
  type ProbeResult,
  type StoredNPP,
} from '../../../src/daemon/podprobe/plan.ts';
import { runProbe } from '../../../src/daemon/podprobe/prober.ts';
import { podProbeController } from '../../../src/daemon/podprobe/controller.ts';
import { simulatedExitCode, SIM_EXEC_EXIT_CODES_ANNOTATION } from '../../../src/daemon/simulated/runtime.ts';
import { singleNodeScope } from '../../../src/daemon/scope.ts';
import { defaultFeatureGates } from '../../../src/apis/features.ts';
import { SharedInformerFactory } from '../../../src/runtime/informer-factory.ts';
import { logger } from '../../../src/runtime/log.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { realClock } from '../../../src/util/clock.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from '../runtime/fake-apiserver.ts';
import { FakeRuntime } from './fake-runtime.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const exec = { exec: { command: ['test', '-f', 'ready'] } };

function npp(probes: Array<{ name: string; probe?: object }>, status?: StoredNPP['status']): StoredNPP {
  return {
    metadata: { name: 'n1', uid: 'npp', resourceVersion: '1' },
    spec: {
      podProbes: [
        {
          name: 'pod',
          namespace: 'ns',
          uid: 'u1',
          IP: '127.0.0.1',
          probes: probes.map((p) => ({ name: p.name, containerName: 'main', probe: p.probe ?? exec })),
        },
      ],
    },
    ...(status ? { status } : {}),
  };
}

describe('plan', () => {
  test('timing floors and defaults (upstream: period 10 s, timeout 1 s, initial delay ≥ 1 s, thresholds ≥ 1)', () => {
    assert.deepEqual(probeTiming({}), { periodMs: 10_000, timeoutSeconds: 1, initialDelayMs: 1000, success: 1, failure: 1 });
    assert.deepEqual(
      probeTiming({ periodSeconds: 3, timeoutSeconds: 2, initialDelaySeconds: 5, successThreshold: 2, failureThreshold: 0 }),
      {
        periodMs: 3000,
        timeoutSeconds: 2,
        initialDelayMs: 5000,
        success: 2,
        failure: 1,
      },
    );
  });
  test('a result is reported once it has come threshold times in a row', () => {
    const probe = { successThreshold: 2, failureThreshold: 3 };
    let run = { count: 0 } as Parameters<typeof countResult>[0];
    const seq = (['Succeeded', 'Succeeded', 'Failed', 'Failed', 'Succeeded', 'Failed', 'Failed', 'Failed'] as const).map((r) => {
      const c = countResult(run, r, probe);
      run = c.run;
      return c.report;
    });
    assert.deepEqual(seq, [false, true, false, false, false, false, false, true]);
  });
  test('targets: one per listed probe of each pod', () => {
    const t = [...probeTargets(npp([{ name: 'm#a' }, { name: 'm#b' }])).values()];
    assert.deepEqual(
      t.map((x) => [x.node, x.podName, x.podUID, x.podIP, x.containerName, x.probeName]),
      [
        ['n1', 'pod', 'u1', '127.0.0.1', 'main', 'm#a'],
        ['n1', 'pod', 'u1', '127.0.0.1', 'main', 'm#b'],
      ],
    );
  });
  test('results change on state or message, or when the last report is 10 minutes old', () => {
    const prev = { state: 'Succeeded', message: '', probedAt: T0 } as ProbeResult;
    assert.equal(resultChanged(prev, { state: 'Succeeded', message: '', probedAt: T0 + 599_000 }), false);
    assert.equal(resultChanged(prev, { state: 'Succeeded', message: '', probedAt: T0 + 600_000 }), true);
    assert.equal(resultChanged(prev, { state: 'Failed', message: '', probedAt: T0 + 1 }), true);
    assert.equal(resultChanged(prev, { state: 'Succeeded', message: 'x', probedAt: T0 + 1 }), true);
  });
  test('status: results written in, stale states dropped, lastTransitionTime kept while the state holds, unchanged → undefined', () => {
    const cur = npp([{ name: 'm#a' }]);
    const target = probeTargets(cur).values().next().value!;
    const first = nextStatus(cur, [{ target, state: 'Succeeded', message: '', probedAt: T0 }], T0);
    assert.deepEqual(first, {
      podProbeStatuses: [
        {
          namespace: 'ns',
          name: 'pod',
          uid: 'u1',
          probeStates: [
            { name: 'm#a', state: 'Succeeded', lastProbeTime: '2025-01-01T00:00:00Z', lastTransitionTime: '2025-01-01T00:00:00Z' },
          ],
        },
      ],
    });
    const stored = { ...cur, status: first };
    assert.equal(nextStatus(stored, [{ target, state: 'Succeeded', message: '', probedAt: T0 }], T0 + 5000), undefined);
    const later = nextStatus(stored, [{ target, state: 'Succeeded', message: '', probedAt: T0 + 700_000 }], T0 + 700_000);
    assert.equal(later?.podProbeStatuses?.[0].probeStates?.[0].lastProbeTime, '2025-01-01T00:11:40Z');
    assert.equal(later?.podProbeStatuses?.[0].probeStates?.[0].lastTransitionTime, '2025-01-01T00:00:00Z');
    const flipped = nextStatus(stored, [{ target, state: 'Failed', message: 'no', probedAt: T0 + 9000 }], T0 + 9000);
    assert.deepEqual(flipped?.podProbeStatuses?.[0].probeStates?.[0], {
      name: 'm#a',
      state: 'Failed',
      lastProbeTime: '2025-01-01T00:00:09Z',
      lastTransitionTime: '2025-01-01T00:00:09Z',
      message: 'no',
    });
    // The probe left the spec: its state goes, and the pod's entry with it.
    assert.deepEqual(nextStatus({ ...npp([]), status: first }, [], T0), {});
  });
});

describe('probers', () => {
  test('exec: exit 0 succeeds with the output; non-zero fails; a runtime error fails with its message', async () => {
    const rt = new FakeRuntime();
    rt.exec = async () => ({ exitCode: 0, stdout: 'fine\n', stderr: '' });
    assert.deepEqual(await runProbe({ probe: { ...exec, timeoutSeconds: 3 }, containerID: 'c1', podIP: '', runtime: rt }), {
      state: 'Succeeded',
      message: 'fine\n',
    });
    assert.deepEqual(rt.calls, ['exec c1 test -f ready 3']);
    rt.exec = async () => ({ exitCode: 1, stdout: '', stderr: '' });
    assert.deepEqual(await runProbe({ probe: exec, containerID: 'c1', podIP: '', runtime: rt }), {
      state: 'Failed',
      message: 'command exited with 1',
    });
    rt.exec = async () => {
      throw new Error('rpc error: container not running');
    };
    assert.deepEqual(await runProbe({ probe: exec, containerID: 'c1', podIP: '', runtime: rt }), {
      state: 'Failed',
      message: 'rpc error: container not running',
    });
  });
  test('tcpSocket: connects to the pod IP; a closed port fails', async () => {
    const server = net.createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const rt = new FakeRuntime();
    try {
      assert.equal(
        (await runProbe({ probe: { tcpSocket: { port } }, containerID: '', podIP: '127.0.0.1', runtime: rt })).state,
        'Succeeded',
      );
    } finally {
      await new Promise((r) => server.close(r));
    }
    const closed = await runProbe({ probe: { tcpSocket: { port } }, containerID: '', podIP: '127.0.0.1', runtime: rt });
    assert.equal(closed.state, 'Failed');
    assert.match(closed.message, /dial tcp 127\.0\.0\.1:\d+: connect ECONNREFUSED/);
  });
  test('httpGet: 2xx/3xx succeed, others fail; headers and path are sent', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.url} ${req.headers['x-probe']}`);
      res.statusCode = req.url === '/ok' ? 200 : req.url === '/moved' ? 302 : 503;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const rt = new FakeRuntime();
    const get = (path: string) =>
      runProbe({
        probe: { httpGet: { port, path, httpHeaders: [{ name: 'X-Probe', value: 'kruise' }] } },
        containerID: '',
        podIP: '127.0.0.1',
        runtime: rt,
      });
    try {
      assert.equal((await get('/ok')).state, 'Succeeded');
      assert.equal((await get('/moved')).state, 'Succeeded');
      assert.deepEqual(await get('/down'), { state: 'Failed', message: 'HTTP probe failed with statuscode: 503' });
      assert.deepEqual(seen, ['/ok kruise', '/moved kruise', '/down kruise']);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

test('simulated exec: exit codes by command from the pod annotation', () => {
  const pod = { metadata: { annotations: { [SIM_EXEC_EXIT_CODES_ANNOTATION]: JSON.stringify({ 'test -f ready': 1, 'sh -c x': 'bad' }) } } };
  assert.equal(simulatedExitCode(pod, ['test', '-f', 'ready']), 1);
  assert.equal(simulatedExitCode(pod, ['sh', '-c', 'x']), 0);
  assert.equal(simulatedExitCode(pod, ['true']), 0);
  assert.equal(simulatedExitCode({ metadata: { annotations: { [SIM_EXEC_EXIT_CODES_ANNOTATION]: '{' } } }, ['true']), 0);
});

describe('sub-controller', () => {
  const NPPS = 'apps.kruise.io/v1alpha1/nodepodprobes';
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  async function startProber(rt: FakeRuntime, writes: string[], events: string[]): Promise<void> {
    const abort = new AbortController();
    const informers = new SharedInformerFactory(client, {});
    const sub = podProbeController(
      {
        client: {
          ...client,
          updateStatus: async (type, obj, opts) => {
            writes.push(JSON.stringify((obj as StoredNPP).status?.podProbeStatuses?.[0]?.probeStates?.map((s) => s.state)));
            return client.updateStatus(type, obj, opts);
          },
        } as KubeClient,
        informers,
        scope: singleNodeScope('n1', rt),
        recorder: { event: (_o, _t, reason) => void events.push(reason) },
        clock: realClock,
        logger: logger.child({}, { level: 'silent' }),
        features: defaultFeatureGates({}),
      },
      { random: () => 0 },
    );
    informers.start(abort.signal);
    await informers.waitForCacheSync(abort.signal);
    sub.start();
    stop = async () => {
      abort.abort();
      await sub.stop();
    };
  }

  const running = () => [
    { containerID: 'containerd://c1', name: 'main', restartCount: 0, state: 'running' as const, startedAt: Date.now() - 60_000 },
  ];

  test('runs the listed exec probe, reports Succeeded, flips to Failed, and writes status only on change', async () => {
    const rt = new FakeRuntime();
    rt.containers = running();
    let exitCode = 0;
    rt.exec = async () => ({ exitCode, stdout: '', stderr: '' });
    server.put(NPPS, npp([{ name: 'm#a', probe: { ...exec, periodSeconds: 1 } }]));
    const writes: string[] = [];
    const events: string[] = [];
    await startProber(rt, writes, events);
    const stateOf = () => server.getObject(NPPS, 'n1')?.status?.podProbeStatuses?.[0]?.probeStates?.[0]?.state;
    await waitFor(() => stateOf() === 'Succeeded', 'Succeeded reported');
    exitCode = 1;
    await waitFor(() => stateOf() === 'Failed', 'Failed reported');
    // Probes keep running every second; the status is not rewritten while nothing changes.
    const before = writes.length;
    await new Promise((r) => setTimeout(r, 2500));
    assert.ok(rt.calls.filter((c) => c.startsWith('exec')).length >= 4);
    assert.equal(writes.length, before);
    assert.deepEqual(events, ['KruiseProbeSucceeded', 'KruiseProbeFailed']);
    // The probe leaves the spec: its worker stops and its state is cleared.
    server.put(NPPS, { ...server.getObject(NPPS, 'n1')!, spec: { podProbes: [] } });
    await waitFor(() => (server.getObject(NPPS, 'n1')?.status?.podProbeStatuses ?? []).length === 0, 'state cleared');
    const runs = rt.calls.length;
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(rt.calls.length, runs, 'no more probe runs');
  });

  test('a restarted daemon keeps the stored state until its first result (no Unknown blip)', async () => {
    const rt = new FakeRuntime();
    rt.containers = running();
    rt.exec = async () => ({ exitCode: 0, stdout: '', stderr: '' });
    const stored = {
      podProbeStatuses: [
        {
          name: 'pod',
          namespace: 'ns',
          uid: 'u1',
          probeStates: [
            { name: 'm#a', state: 'Succeeded' as const, lastProbeTime: '2025-01-01T00:00:00Z', lastTransitionTime: '2025-01-01T00:00:00Z' },
          ],
        },
      ],
    };
    server.put(NPPS, npp([{ name: 'm#a', probe: { ...exec, periodSeconds: 1 } }], stored));
    const writes: string[] = [];
    await startProber(rt, writes, []);
    await waitFor(
      () => server.getObject(NPPS, 'n1')?.status?.podProbeStatuses?.[0]?.probeStates?.[0]?.lastProbeTime !== '2025-01-01T00:00:00Z',
      'a fresh result',
    );
    assert.deepEqual(writes, ['["Succeeded"]']);
    assert.equal(server.getObject(NPPS, 'n1')?.status?.podProbeStatuses?.[0]?.probeStates?.[0]?.lastTransitionTime, '2025-01-01T00:00:00Z');
  });
});
