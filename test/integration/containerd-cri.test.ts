// CriRuntime against a real containerd (test/harness/containerd.ts) with pods run by the mini
// kubelet, whose status lands in the test cluster's API server as a real kubelet's would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CriRuntime } from '../../src/daemon/runtime/cri-runtime.ts';
import { CriError } from '../../src/daemon/cri/client.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { Nodes, Pods } from '../../src/runtime/resources.ts';
import { containerdUnavailableReason, startContainerd, type ContainerdEnv } from '../harness/containerd.ts';
import { MiniKubelet, waitForContainer, type Pod } from '../harness/mini-kubelet.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

const skip = containerdUnavailableReason();

describe('CRI runtime on containerd', { skip }, () => {
  let env: ContainerdEnv;
  let rt: CriRuntime;
  let client: KubeClient;
  let kubelet: MiniKubelet;
  let ns: string;

  before(async () => {
    env = await startContainerd({ log: (l) => process.stderr.write(`${l}\n`) });
    rt = await CriRuntime.connect({ endpoint: env.endpoint });
    client = fromKubeconfigFile(testCluster().kubeconfig);
    ns = await createNamespace('ctd');
    kubelet = await MiniKubelet.create({
      endpoint: env.endpoint,
      client,
      nodeName: `mini-kubelet-${randomBytes(3).toString('hex')}`,
      logRoot: path.join(env.dir, 'pods'),
      restartBackoffMs: 300,
    });
    await kubelet.registerNode();
    kubelet.start();
  });

  after(async () => {
    await kubelet?.stop();
    await rt?.close();
    if (client) {
      if (ns) await deleteNamespace(ns);
      if (kubelet) await client.delete(Nodes, kubelet.nodeName).catch(() => undefined);
      await client.close();
    }
    await env?.stop();
  });

  test('Version names containerd and CRI v1', async () => {
    const v = await rt.version();
    assert.equal(v.runtimeName, 'containerd');
    assert.equal(v.runtimeApiVersion, 'v1');
    assert.equal(rt.name, 'containerd');
  });

  test('pulls from the local registry; the image shows in imageStatus and listImages', async () => {
    const progress: number[] = [];
    const { imageRef } = await rt.pullImage({
      image: env.images.busybox,
      sandboxConfig: { labels: { test: 'pull' } },
      onProgress: (p) => progress.push(p),
    });
    assert.match(imageRef, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(progress, [0, 100]);
    const status = await rt.imageStatus(env.images.busybox);
    assert.equal(status?.id, imageRef);
    assert.ok(status.repoTags.includes(env.images.busybox));
    assert.ok(status.size > 0);
    assert.ok((await rt.listImages()).some((i) => i.id === imageRef));
    assert.equal(await rt.imageStatus(`${env.registry}/busybox:missing`), undefined);
  });

  test("pulling an image the registry does not have fails with containerd's reason", async () => {
    await assert.rejects(rt.pullImage({ image: `${env.registry}/nothing-here:1.0` }), (err: unknown) => {
      assert.ok(err instanceof CriError, String(err));
      assert.match(err.message, /CRI PullImage: .*nothing-here:1\.0.*not found/);
      return true;
    });
  });

  test('a pod run by the mini kubelet: podContainers, execSync, stop after timeout and restart', async () => {
    const hostData = path.join(env.hostDir, 'data');
    const created = await client.create<Pod>(Pods, {
      metadata: { name: 'web', namespace: ns },
      spec: {
        nodeName: kubelet.nodeName,
        terminationGracePeriodSeconds: 2,
        volumes: [{ name: 'data', hostPath: { path: hostData } }],
        containers: [
          // Ignores SIGTERM, so only the SIGKILL after the stop timeout ends it.
          {
            name: 'app',
            image: env.images.busybox,
            command: ['sh', '-c', 'trap "" TERM; while :; do sleep 1; done'],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
          { name: 'sidecar', image: env.images.busybox, command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'] },
        ],
      },
    });
    await kubelet.runPod(created);
    const podRef = { uid: created.metadata.uid!, namespace: ns, name: 'web' };

    const first = await rt.podContainers(podRef);
    assert.deepEqual(
      first.map((c) => [c.name, c.state, c.restartCount]),
      [
        ['app', 'running', 0],
        ['sidecar', 'running', 0],
      ],
    );
    const app = first[0]!;
    assert.match(app.containerID, /^containerd:\/\/[0-9a-f]{64}$/);
    assert.ok(app.startedAt && Math.abs(app.startedAt - Date.now()) < 60_000, `startedAt ${app.startedAt}`);
    assert.equal(app.image, env.images.busybox);

    const exec = await rt.execSync(
      app.containerID,
      ['sh', '-c', 'echo written-by-exec > /data/hook; cat /data/hook; echo err >&2; exit 3'],
      10,
    );
    assert.deepEqual(exec, { exitCode: 3, stdout: 'written-by-exec\n', stderr: 'err\n' });
    assert.equal(readFileSync(path.join(hostData, 'hook'), 'utf8'), 'written-by-exec\n');

    const began = Date.now();
    await rt.stopContainer(app.containerID, 2);
    const took = Date.now() - began;
    assert.ok(took >= 1900, `stop returned after ${took}ms, before the 2s timeout`);

    const restarted = await waitForContainer(kubelet, created, 'app', (s) => s.restartCount === 1 && s.ready);
    assert.equal(restarted.lastState.terminated?.exitCode, 137, 'killed by SIGKILL after the timeout');
    const second = await rt.podContainers(podRef);
    const app2 = second.find((c) => c.name === 'app')!;
    assert.equal(app2.restartCount, 1);
    assert.equal(app2.state, 'running');
    assert.notEqual(app2.containerID, app.containerID);
    assert.equal(second.find((c) => c.name === 'sidecar')!.restartCount, 0);

    // What an API-side controller sees: the kubelet-style status the mini kubelet wrote.
    const status = await waitFor('pod status with app restarted once', async () => {
      const pod = await client.get<
        Pod & { status?: { containerStatuses?: Array<{ name: string; restartCount: number; containerID: string; ready: boolean }> } }
      >(Pods, 'web', { namespace: ns });
      const s = pod.status?.containerStatuses?.find((c) => c.name === 'app');
      return s?.restartCount === 1 && s.ready ? s : undefined;
    });
    assert.equal(status.containerID, app2.containerID);
  });
});
