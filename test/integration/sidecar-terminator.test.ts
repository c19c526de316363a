// The Job sidecar terminator on the suite's shared manager (gate SidecarTerminator, behaviour spec
// §18.3). The simulated kubelet finishes whole Job pods at once, so these pods are plain
// restartPolicy Never pods whose main container the test marks as exited while the sidecar runs on;
// the suite's simulated kruise-daemon then stops the sidecar as the CRR asks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { Nodes, Pods, ContainerRecreateRequests } from '../../src/runtime/resources.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;
const nodesToDelete: string[] = [];

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('st');
});

after(async () => {
  for (const n of nodesToDelete) await client.delete(Nodes, n).catch(() => undefined);
  await deleteNamespace(ns);
  await client.close();
});

type Obj = KubeObject & { spec?: any; status?: any };

async function jobLikePod(name: string, sidecarEnv: Array<{ name: string; value: string }>, nodeName?: string): Promise<Obj> {
  await client.create(Pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      restartPolicy: 'Never',
      ...(nodeName ? { nodeName } : {}),
      containers: [
        { name: 'main', image: 'busybox:1.36' },
        { name: 'sidecar', image: 'envoy:1.30', env: sidecarEnv },
      ],
    },
  } as KubeObject);
  const running = await waitFor(`pod ${name} running`, async () => {
    const p = await client.get<Obj>(Pods, name, { namespace: ns });
    return p.status?.phase === 'Running' && p.status.containerStatuses?.length === 2 ? p : undefined;
  });
  // The main container exits 0; the sidecar keeps running.
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const containerStatuses = running.status.containerStatuses.map((s: any) =>
    s.name === 'main'
      ? {
          ...s,
          ready: false,
          started: false,
          state: { terminated: { exitCode: 0, reason: 'Completed', containerID: s.containerID, startedAt: now, finishedAt: now } },
        }
      : s,
  );
  await client.patch(
    Pods,
    name,
    { status: { containerStatuses } },
    { namespace: ns, patchType: PatchType.StrategicMerge, subresource: 'status' },
  );
  return running;
}

describe('sidecar terminator', { concurrency: 3 }, () => {
  test(
    'normal node: a CRR sidecar-termination-<uid> kills the sidecar (forceRecreate, failurePolicy Ignore)',
    { timeout: 60_000 },
    async () => {
      const pod = await jobLikePod('job-a', [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }]);
      const crr = await waitFor('the sidecar termination CRR', () =>
        client.get<Obj>(ContainerRecreateRequests, `sidecar-termination-${pod.metadata.uid}`, { namespace: ns }).catch(() => undefined),
      );
      const sidecarStatus = pod.status.containerStatuses.find((s: any) => s.name === 'sidecar');
      assert.deepEqual(crr.spec.containers, [
        { name: 'sidecar', statusContext: { containerID: sidecarStatus.containerID, restartCount: 0 } },
      ]);
      assert.deepEqual(crr.spec.strategy, { failurePolicy: 'Ignore', forceRecreate: true, terminationGracePeriodSeconds: 30 });
      assert.equal(crr.spec.podName, 'job-a');
      assert.deepEqual(
        crr.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
        [['Pod', 'job-a', pod.metadata.uid, true]],
      );
      assert.equal(crr.metadata.labels?.['crr.apps.kruise.io/pod-uid'], pod.metadata.uid);
      // The suite's simulated kruise-daemon stops the sidecar; under restartPolicy Never it stays
      // exited (no restart), and with every container done the kubelet ends the pod Succeeded.
      const done = await waitFor(
        'CRR Completed and the pod Succeeded',
        async () => {
          const [c, p] = await Promise.all([
            client.get<Obj>(ContainerRecreateRequests, crr.metadata.name!, { namespace: ns }),
            client.get<Obj>(Pods, 'job-a', { namespace: ns }),
          ]);
          return c.status?.phase === 'Completed' && p.status.phase === 'Succeeded' ? { c, p } : undefined;
        },
        30_000,
      );
      assert.equal(done.c.status.containerRecreateStates?.[0]?.phase, 'Succeeded');
      const sidecar = done.p.status.containerStatuses.find((s: any) => s.name === 'sidecar');
      assert.equal(sidecar.state.terminated?.exitCode, 0);
      assert.equal(sidecar.restartCount, 0, 'not restarted under restartPolicy Never');
    },
  );

  test(
    'ignore-exit-code sidecar: the pod is marked Succeeded (SidecarTerminated) before the sidecar is killed',
    { timeout: 60_000 },
    async () => {
      const pod = await jobLikePod('job-b', [
        { name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' },
        { name: 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE', value: 'true' },
      ]);
      const done = await waitFor('pod Succeeded by the sidecar terminator', async () => {
        const p = await client.get<Obj>(Pods, 'job-b', { namespace: ns });
        return p.status.phase === 'Succeeded' ? p : undefined;
      });
      const cond = done.status.conditions.find((c: any) => c.type === 'SidecarTerminated');
      assert.equal(cond?.status, 'True');
      assert.equal(cond?.message, 'Terminated by Sidecar Terminator');
      // The webhook admits a CRR for this terminal pod because the terminator finished it.
      const crr = await waitFor('the sidecar termination CRR', () =>
        client.get<Obj>(ContainerRecreateRequests, `sidecar-termination-${pod.metadata.uid}`, { namespace: ns }).catch(() => undefined),
      );
      assert.deepEqual(
        crr.spec.containers.map((c: any) => c.name),
        ['sidecar'],
      );
    },
  );

  test('virtual-kubelet node: the sidecar image is swapped in place, no CRR', { timeout: 60_000 }, async () => {
    const nodeName = `vk-${ns}`;
    await client.create(Nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: nodeName,
        annotations: { 'kwok.x-k8s.io/node': 'fake' },
        labels: { type: 'virtual-kubelet', 'kubernetes.io/hostname': nodeName },
      },
      // As virtual-kubelet providers do: without it the scheduler would put the other tests' pods
      // here, where no CRR kills a sidecar (seen in CI). job-vk names the node and is not scheduled.
      spec: { taints: [{ key: 'virtual-kubelet.io/provider', value: 'kwok', effect: 'NoSchedule' }] },
    } as KubeObject);
    nodesToDelete.push(nodeName);
    await waitFor('virtual node Ready', async () => {
      const n = await client.get<Obj>(Nodes, nodeName);
      return n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
    });
    const pod = await jobLikePod(
      'job-vk',
      [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', value: 'busybox:exit' }],
      nodeName,
    );
    const swapped = await waitFor('sidecar image swapped', async () => {
      const p = await client.get<Obj>(Pods, 'job-vk', { namespace: ns });
      return p.spec.containers.find((c: any) => c.name === 'sidecar').image === 'busybox:exit' ? p : undefined;
    });
    assert.equal(swapped.spec.containers.find((c: any) => c.name === 'main').image, 'busybox:1.36');
    // The simulated kubelet restarts it with that image, as a real one would.
    await waitFor('sidecar running the swapped image', async () => {
      const p = await client.get<Obj>(Pods, 'job-vk', { namespace: ns });
      return p.status.containerStatuses.find((s: any) => s.name === 'sidecar').image === 'busybox:exit';
    });
    await assert.rejects(client.get(ContainerRecreateRequests, `sidecar-termination-${pod.metadata.uid}`, { namespace: ns }), /not found/);
  });
});
