// kruise-daemon in simulated mode on the local cluster: CRRs on KWOK pods (single, ordered with a
// preStop, a failing kill under failurePolicy Ignore, a daemon SIGKILLed mid-request) and image
// pre-pulling through ImagePullJob → NodeImage (a pull that succeeds, one that fails after its
// retries). The suite's setup starts the daemon; when it has not (an older setup, a daemon killed
// by hand), the test starts one itself.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopProcesses } from '../../src/cluster/processes.ts';
import { simulatedDaemonPids, startSimulatedDaemon } from '../harness/simulated-daemon.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { Pods, ContainerRecreateRequests, NodeImages } from '../../src/runtime/resources.ts';
import { apply, createNamespace, deleteNamespace, kubectl, testCluster, waitFor } from '../harness/cluster.ts';

let ns: string;
let client: KubeClient;

const daemonPids = () => simulatedDaemonPids(testCluster().kubeconfig);
const startDaemon = () => startSimulatedDaemon(testCluster().kubeconfig, path.join(testCluster().runDir, 'logs', 'kruise-daemon.log'));

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  if (daemonPids().length === 0) await startDaemon();
  ns = await createNamespace('daemon');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

interface TestPod extends KubeObject {
  spec: { nodeName?: string };
  status?: {
    phase?: string;
    containerStatuses?: Array<{
      name: string;
      containerID: string;
      restartCount: number;
      state?: { running?: unknown };
      lastState?: { terminated?: { containerID?: string } };
    }>;
  };
}
interface TestCRR extends KubeObject {
  spec: { containers: Array<{ name: string; statusContext?: { containerID: string; restartCount: number } }> };
  status?: {
    phase?: string;
    completionTime?: string;
    message?: string;
    containerRecreateStates?: Array<{ name: string; phase: string; message?: string; isKilled?: boolean }>;
    containerStatusSnapshot?: Array<{ name: string; ready: boolean; restartCount: number; containerID?: string }>;
  };
}

async function runningPod(
  name: string,
  containers: Array<Record<string, unknown>>,
  annotations: Record<string, string> = {},
): Promise<TestPod> {
  await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec: { containers } }, ns);
  return waitFor(
    `pod ${name} running`,
    async () => {
      const p = await client.get<TestPod>(Pods, name, { namespace: ns });
      return p.status?.phase === 'Running' && p.status.containerStatuses?.length === containers.length ? p : undefined;
    },
    30_000,
  );
}

const restarts = (pod: TestPod) => Object.fromEntries((pod.status?.containerStatuses ?? []).map((s) => [s.name, s.restartCount]));

async function createCRR(name: string, podName: string, containers: string[], strategy: Record<string, unknown> = {}): Promise<void> {
  await kubectl(
    ['-n', ns, 'create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ContainerRecreateRequest',
      metadata: { name },
      spec: {
        podName,
        containers: containers.map((c) => ({ name: c })),
        strategy,
        activeDeadlineSeconds: 300,
        ttlSecondsAfterFinished: 600,
      },
    }),
  );
}

async function completedCRR(name: string, timeoutMs = 45_000): Promise<TestCRR> {
  return waitFor(
    `CRR ${name} Completed`,
    async () => {
      const crr = await client.get<TestCRR>(ContainerRecreateRequests, name, { namespace: ns });
      return crr.status?.phase === 'Completed' ? crr : undefined;
    },
    timeoutMs,
    250,
  );
}

// KRUISE_TS_TEST_REPEAT=N runs the CRR scenarios N times over, four at a time, to show they are
// stable (e.g. KRUISE_TS_TEST_REPEAT=20 ./run.sh test integration daemon-sim); the suite runs them once.
const REPEAT = Math.max(1, Number(process.env.KRUISE_TS_TEST_REPEAT ?? 1) || 1);

describe('ContainerRecreateRequests on KWOK pods', { concurrency: REPEAT > 1 ? 4 : 1 }, () => {
  for (let run = 0; run < REPEAT; run++) {
    const suffix = REPEAT > 1 ? ` (run ${run + 1})` : '';
    /** Pod and CRR names, distinct per run. */
    const n = (name: string) => (REPEAT > 1 ? `${name}-${run}` : name);
    test(`a CRR on a KWOK pod restarts the container and completes${suffix}`, { timeout: 90_000 }, async () => {
      const before = await runningPod(n('one'), [{ name: 'main', image: 'nginx:1.0' }]);
      await createCRR(n('crr-one'), n('one'), ['main']);
      const crr = await completedCRR(n('crr-one'));
      assert.deepEqual(
        crr.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
        [['main', 'Succeeded']],
      );
      assert.ok(crr.status?.completionTime);
      const pod = await client.get<TestPod>(Pods, n('one'), { namespace: ns });
      const st = pod.status!.containerStatuses![0];
      assert.equal(st.restartCount, 1);
      assert.notEqual(st.containerID, before.status!.containerStatuses![0].containerID);
      assert.equal(st.lastState?.terminated?.containerID, before.status!.containerStatuses![0].containerID);
      assert.ok(st.state?.running, 'KWOK leaves the restarted container running');
      // KWOK does not overwrite the restart later.
      await sleep(1500);
      assert.equal(restarts(await client.get<TestPod>(Pods, n('one'), { namespace: ns })).main, 1);
    });

    test(
      `orderedRecreate restarts two containers one after the other and runs the preStop exec${suffix}`,
      { timeout: 90_000 },
      async () => {
        await runningPod(n('two'), [
          { name: 'a', image: 'nginx:1.0', lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'echo bye'] } } } },
          { name: 'b', image: 'redis:1.0' },
        ]);
        await createCRR(n('crr-two'), n('two'), ['a', 'b'], { orderedRecreate: true });
        const crr = await completedCRR(n('crr-two'));
        assert.deepEqual(
          crr.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
          [
            ['a', 'Succeeded'],
            ['b', 'Succeeded'],
          ],
        );
        assert.deepEqual(restarts(await client.get<TestPod>(Pods, n('two'), { namespace: ns })), { a: 1, b: 1 });
        await waitFor(
          'the preStop exec event',
          async () => {
            const events = JSON.parse(await kubectl(['-n', ns, 'get', 'events.events.k8s.io', '-o', 'json'])) as {
              items: Array<{ reason?: string; regarding?: { name?: string }; note?: string }>;
            };
            return events.items.find((e) => e.reason === 'SimulatedExec' && e.regarding?.name === n('two') && e.note?.includes('echo bye'));
          },
          15_000,
        );
      },
    );

    test(
      `failurePolicy Ignore: a container whose kill fails is Failed, the others still recreate${suffix}`,
      { timeout: 90_000 },
      async () => {
        await runningPod(
          n('ign'),
          [
            { name: 'bad', image: 'nginx:1.0' },
            { name: 'good', image: 'redis:1.0' },
          ],
          { 'sim.kruise-ts.io/kill-error': 'bad' },
        );
        await createCRR(n('crr-ign'), n('ign'), ['bad', 'good'], { failurePolicy: 'Ignore' });
        const crr = await completedCRR(n('crr-ign'));
        const states = Object.fromEntries((crr.status?.containerRecreateStates ?? []).map((s) => [s.name, s]));
        assert.equal(states.bad.phase, 'Failed');
        assert.match(states.bad.message ?? '', /^kill container error: .*simulated failure/);
        assert.equal(states.good.phase, 'Succeeded');
        assert.deepEqual(restarts(await client.get<TestPod>(Pods, n('ign'), { namespace: ns })), { bad: 0, good: 1 });
      },
    );

    test(
      `a CRR made through v1alpha1 with unreadyGracePeriodSeconds keeps containerStatusSnapshot (read as v1beta1) after completing, with every container's ID${suffix}`,
      { timeout: 90_000 },
      async () => {
        await runningPod(n('snap'), [
          { name: 'a', image: 'nginx:1.0' },
          { name: 'b', image: 'redis:1.0' },
        ]);
        await kubectl(
          ['-n', ns, 'create', '-f', '-'],
          JSON.stringify({
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'ContainerRecreateRequest',
            metadata: { name: n('crr-snap') },
            spec: {
              podName: n('snap'),
              containers: [{ name: 'a' }, { name: 'b' }],
              strategy: { unreadyGracePeriodSeconds: 1 },
              activeDeadlineSeconds: 300,
              ttlSecondsAfterFinished: 600,
            },
          }),
        );
        const crr = await completedCRR(n('crr-snap'));
        assert.equal(crr.status?.message ?? '', '');
        assert.deepEqual(
          crr.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
          [
            ['a', 'Succeeded'],
            ['b', 'Succeeded'],
          ],
        );
        const pod = await client.get<TestPod>(Pods, n('snap'), { namespace: ns });
        const want = ['a', 'b'].map((name) => {
          const s = pod.status!.containerStatuses!.find((x) => x.name === name)!;
          assert.equal(s.restartCount, 1);
          return { name, ready: true, restartCount: 1, containerID: s.containerID };
        });
        // The snapshot the daemon completed on stays as it was: nothing rewrites status afterwards.
        for (let i = 0; i < 10; i++) {
          const now = await client.get<TestCRR>(ContainerRecreateRequests, n('crr-snap'), { namespace: ns });
          assert.deepEqual(now.status?.containerStatusSnapshot, want, `snapshot after completion (read ${i})`);
          await sleep(300);
        }
      },
    );

    test(
      `a CRR whose pod is deleted while it recreates completes with "pod has gone", never a JavaScript error${suffix}`,
      { timeout: 90_000 },
      async () => {
        await runningPod(n('gone'), [
          { name: 'a', image: 'nginx:1.0' },
          { name: 'b', image: 'redis:1.0' },
        ]);
        // minStartedSeconds keeps the request open after the first kill.
        await createCRR(n('crr-gone'), n('gone'), ['a', 'b'], { orderedRecreate: true, minStartedSeconds: 30 });
        await waitFor(
          'container a restarted',
          async () => restarts(await client.get<TestPod>(Pods, n('gone'), { namespace: ns })).a === 1,
          30_000,
          100,
        );
        await kubectl(['-n', ns, 'delete', 'pod', n('gone'), '--grace-period=0', '--force', '--wait=false']);
        const crr = await completedCRR(n('crr-gone'));
        assert.equal(crr.status?.message, 'pod has gone');
        for (const s of crr.status?.containerRecreateStates ?? []) {
          assert.doesNotMatch(s.message ?? '', /Cannot read|undefined|TypeError|kill container error/, `state of ${s.name}`);
        }
      },
    );
  }
});

test('a daemon SIGKILLed mid-CRR is restarted and the CRR completes, each container restarted once', { timeout: 120_000 }, async () => {
  await runningPod('kill', [
    { name: 'a', image: 'nginx:1.0' },
    { name: 'b', image: 'redis:1.0' },
  ]);
  // minStartedSeconds keeps the request open between the two kills.
  await createCRR('crr-kill', 'kill', ['a', 'b'], { orderedRecreate: true, minStartedSeconds: 6 });
  await waitFor(
    'container a restarted',
    async () => restarts(await client.get<TestPod>(Pods, 'kill', { namespace: ns })).a === 1,
    30_000,
    100,
  );
  await stopProcesses(daemonPids(), 0);
  assert.deepEqual(daemonPids(), []);
  await sleep(1000);
  await startDaemon();
  const crr = await completedCRR('crr-kill', 60_000);
  assert.deepEqual(
    crr.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
    [
      ['a', 'Succeeded'],
      ['b', 'Succeeded'],
    ],
  );
  assert.deepEqual(restarts(await client.get<TestPod>(Pods, 'kill', { namespace: ns })), { a: 1, b: 1 });
});

interface TagStatus {
  tag: string;
  phase: string;
  version?: number;
  imageID?: string;
  message?: string;
  progress?: number;
}
interface TestNodeImage extends KubeObject {
  spec?: { images?: Record<string, { tags: Array<{ tag: string; version?: number }> }> };
  status?: { imageStatuses?: Record<string, { tags: TagStatus[] }>; firstSyncStatus?: { status?: string } };
}

async function pullJob(name: string, image: string, node: string): Promise<void> {
  await apply(
    {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ImagePullJob',
      metadata: { name },
      spec: {
        image,
        selector: { names: [node] },
        pullPolicy: { timeoutSeconds: 30, backoffLimit: 2 },
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 120 },
      },
    },
    ns,
  );
}

async function tagStatus(node: string, image: string, tag: string): Promise<{ spec?: number; status?: TagStatus }> {
  const ni = await client.get<TestNodeImage>(NodeImages, node);
  return {
    spec: ni.spec?.images?.[image]?.tags.find((t) => t.tag === tag)?.version,
    status: ni.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag),
  };
}

test('an ImagePullJob tag is pulled on the node: NodeImage status Succeeded with the spec version', { timeout: 120_000 }, async () => {
  const node = 'kwok-node-0';
  const image = `example.com/${ns}/app`;
  await pullJob('pull-ok', `${image}:1.0`, node);
  const t = await waitFor(
    'tag 1.0 Succeeded',
    async () => {
      const s = await tagStatus(node, image, '1.0');
      return s.status?.phase === 'Succeeded' ? s : undefined;
    },
    90_000,
    250,
  );
  assert.equal(t.status!.version, t.spec);
  assert.equal(t.status!.progress, 100);
  assert.match(t.status!.imageID ?? '', /^sha256:[0-9a-f]{64}$/);
  const ni = await client.get<TestNodeImage>(NodeImages, node);
  assert.equal(ni.status?.firstSyncStatus?.status, 'Succeeded');
});

test("an impossible image ends Failed with the registry's reason after its retries", { timeout: 120_000 }, async () => {
  const node = 'kwok-node-1';
  const image = `registry.invalid/${ns}/app`;
  const started = Date.now();
  await pullJob('pull-bad', `${image}:1.0`, node);
  const t = await waitFor(
    'tag 1.0 Failed',
    async () => {
      const s = await tagStatus(node, image, '1.0');
      return s.status?.phase === 'Failed' ? s : undefined;
    },
    90_000,
    250,
  );
  assert.equal(t.status!.version, t.spec);
  assert.match(t.status!.message ?? '', /lookup registry\.invalid: no such host/);
  // backoffLimit 2: two waits (1 s, 2 s) before the last attempt.
  assert.ok(Date.now() - started >= 3000, 'the failure came after the backoff');
});
