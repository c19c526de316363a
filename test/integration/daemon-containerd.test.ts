// A real `kruise daemon` process for one node on a real containerd, driven like a node of a real
// cluster: the mini kubelet registers the Node `containerd-node` (not a KWOK node, so neither KWOK
// nor the suite's simulated daemon touches it) and runs its API pods on the harness containerd; the
// suite's manager and its CRR/ImagePullJob webhooks and controllers run as for any node; the daemon
// reaches the containers only through CRI. Checked: a CRR kills one container of two (preStop exec
// hook first, SIGKILL after the grace period), orderedRecreate waits for the first container to run
// again, ImagePullJobs pull onto the node (and fail with containerd's reason), a PodProbeMarker exec
// probe runs through CRI ExecSync in the container's working directory and its result reaches the
// pod (condition, label), and a daemon pointed at a missing socket refuses to start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePorts, startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { CriClient } from '../../src/daemon/cri/client.ts';
import { CriRuntime, bareID, nanosToMs } from '../../src/daemon/runtime/cri-runtime.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import {
  Nodes,
  Pods,
  ContainerRecreateRequests,
  NodeImages,
  ImagePullJobs,
  NodePodProbes,
  PodProbeMarkers,
} from '../../src/runtime/resources.ts';
import { containerdUnavailableReason, startContainerd, type ContainerdEnv } from '../harness/containerd.ts';
import { MiniKubelet, type PodContainer, type Pod } from '../harness/mini-kubelet.ts';
import { createNamespace, deleteNamespace, kubectl, testCluster, waitFor } from '../harness/cluster.ts';

const skip = containerdUnavailableReason();
const NODE = 'containerd-node';

interface ContainerStatusView {
  name: string;
  containerID: string;
  restartCount: number;
  ready: boolean;
  lastState?: { terminated?: { exitCode?: number; containerID?: string } };
}
interface PodView extends Pod {
  status?: { containerStatuses?: ContainerStatusView[] };
}
interface CRR extends KubeObject {
  status?: {
    phase?: string;
    completionTime?: string;
    message?: string;
    containerRecreateStates?: Array<{ name: string; phase: string; message?: string }>;
  };
}
interface TagStatus {
  tag: string;
  phase: string;
  version?: number;
  imageID?: string;
  message?: string;
}
interface NodeImage extends KubeObject {
  status?: { imageStatuses?: Record<string, { tags: TagStatus[] }> };
}
interface PullJob extends KubeObject {
  status?: { desired?: number; succeeded?: number; failed?: number; failedNodes?: string[]; completionTime?: string };
}

describe('kruise daemon on containerd', { skip: skip && `skipped: ${skip}` }, () => {
  let env: ContainerdEnv;
  let client: KubeClient;
  let kubelet: MiniKubelet;
  let rt: CriRuntime;
  let cri: CriClient;
  let daemon: Started | undefined;
  let daemonLog: string;
  let ns: string;

  before(async () => {
    env = await startContainerd({ log: (l) => process.stderr.write(`${l}\n`) });
    const cluster = testCluster();
    client = fromKubeconfigFile(cluster.kubeconfig);
    ({ client: cri } = await CriClient.connect({ endpoint: env.endpoint }));
    rt = await CriRuntime.connect({ endpoint: env.endpoint });
    kubelet = await MiniKubelet.create({
      endpoint: env.endpoint,
      client,
      nodeName: NODE,
      logRoot: path.join(env.dir, 'pods'),
      restartBackoffMs: 300,
    });
    await kubelet.registerNode();
    kubelet.start();
    ns = await createNamespace('dctd');

    // The daemon exactly as a node would run it, as its own process.
    daemonLog = path.join(cluster.runDir, 'logs', `kruise-daemon-${NODE}.log`);
    const [port] = await freePorts(1);
    const d = startProcess(
      'kruise-daemon',
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'src/cli/kruise.ts'),
        'daemon',
        '--node-name',
        NODE,
        '--runtime-endpoint',
        env.endpoint,
        '--kubeconfig',
        cluster.kubeconfig,
        '--addr',
        `127.0.0.1:${port}`,
      ],
      daemonLog,
    );
    daemon = d;
    await waitFor(
      'the node daemon to be healthy',
      async () => {
        if (d.exited) throw new Error(`daemon exited (${JSON.stringify(d.exited)}): ${tail(daemonLog, 20)}`);
        return fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      60_000,
      250,
    );
  });

  after(async () => {
    if (daemon) await stopProcesses([daemon.pid], 10_000);
    await kubelet?.stop();
    await rt?.close();
    cri?.close();
    if (client) {
      if (ns) {
        // No kubelet is left to confirm the pods' deletion, which would hold the namespace.
        await kubectl(['-n', ns, 'delete', 'pods', '--all', '--grace-period=0', '--force', '--wait=false']).catch(() => undefined);
        await deleteNamespace(ns);
      }
      // The NodeImage goes with the Node (manager's NodeImage controller).
      await client.delete(Nodes, NODE).catch(() => undefined);
      await client.close();
    }
    await env?.stop();
  });

  const daemonTail = () => `\n--- ${daemonLog} ---\n${tail(daemonLog, 30)}`;

  /** Creates the pod on the node, runs it on containerd and waits until its status names every container. */
  async function runPod(name: string, containers: PodContainer[], extra: Partial<Pod['spec']> = {}): Promise<PodView> {
    const created = await client.create<Pod>(Pods, { metadata: { name, namespace: ns }, spec: { nodeName: NODE, containers, ...extra } });
    await kubelet.runPod(created);
    return waitFor(
      `pod ${name} running with every container ready`,
      async () => {
        const p = await client.get<PodView>(Pods, name, { namespace: ns });
        const st = p.status?.containerStatuses ?? [];
        return st.length === containers.length && st.every((s) => s.ready && s.containerID) ? p : undefined;
      },
      60_000,
      250,
    );
  }

  async function createCRR(name: string, podName: string, containers: string[], strategy: Record<string, unknown> = {}): Promise<void> {
    await client.create(ContainerRecreateRequests, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ContainerRecreateRequest',
      metadata: { name, namespace: ns },
      spec: {
        podName,
        containers: containers.map((c) => ({ name: c })),
        strategy,
        activeDeadlineSeconds: 300,
        ttlSecondsAfterFinished: 600,
      },
    });
  }

  async function completedCRR(name: string, timeoutMs = 60_000): Promise<CRR> {
    try {
      return await waitFor(
        `CRR ${name} Completed`,
        async () => {
          const crr = await client.get<CRR>(ContainerRecreateRequests, name, { namespace: ns });
          return crr.status?.phase === 'Completed' ? crr : undefined;
        },
        timeoutMs,
        200,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}${daemonTail()}`, { cause: err });
    }
  }

  /** CRI's own record of a container (kept by the mini kubelet as the one dead attempt). */
  const criStatus = (containerID: string) => cri.containerStatus(bareID(containerID));
  const mtimeMs = (file: string) => statSync(file).mtimeMs;

  test(
    'a CRR recreates one container of two: preStop first, SIGKILL after the grace, the other untouched',
    { timeout: 120_000 },
    async () => {
      const data = path.join(env.hostDir, `crr-${randomBytes(3).toString('hex')}`);
      const grace = 4;
      const before = await runPod(
        'web',
        [
          {
            // Ignores SIGTERM, so only the SIGKILL after the grace period ends it.
            name: 'app',
            image: env.images.busybox,
            command: ['sh', '-c', 'trap "" TERM; while :; do sleep 1; done'],
            env: [{ name: 'GREETING', value: 'hello' }],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop-ran > /data/prestop'] } } },
          },
          { name: 'sidecar', image: env.images.busybox, command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'] },
        ],
        { terminationGracePeriodSeconds: grace, volumes: [{ name: 'data', hostPath: { path: data } }] },
      );
      const old = Object.fromEntries(before.status!.containerStatuses!.map((s) => [s.name, s]));

      // The env the daemon reads back through CRI (verbose ContainerStatus) is the one the container got.
      const running = await rt.podContainers({ uid: before.metadata.uid!, namespace: ns, name: 'web' });
      assert.equal(running.find((c) => c.name === 'app')?.env?.GREETING, 'hello');

      await createCRR('crr-web', 'web', ['app']);
      const crr = await completedCRR('crr-web');
      assert.deepEqual(
        crr.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
        [['app', 'Succeeded']],
      );
      assert.ok(crr.status?.completionTime);

      // The preStop hook ran inside the old container and wrote into the hostPath volume.
      assert.equal(readFileSync(path.join(data, 'prestop'), 'utf8'), 'prestop-ran\n');
      // The stop took the grace period and ended in SIGKILL: from the hook's write to the old
      // container's exit, as CRI recorded it.
      const dead = await criStatus(old.app!.containerID);
      assert.equal(dead.exitCode, 137, 'killed by SIGKILL after ignoring SIGTERM');
      const stopMs = nanosToMs(dead.finishedAt)! - mtimeMs(path.join(data, 'prestop'));
      process.stderr.write(`preStop → container exit: ${stopMs.toFixed(0)} ms (grace ${grace}s)\n`);
      assert.ok(stopMs >= grace * 1000 - 150 && stopMs < grace * 1000 + 1200, `the kill took ${stopMs} ms with a ${grace}s grace period`);

      // CRI: app restarted once (attempt 1), the sidecar is the very same container.
      const after = await rt.podContainers({ uid: before.metadata.uid!, namespace: ns, name: 'web' });
      const now = Object.fromEntries(after.map((c) => [c.name, c]));
      assert.equal(now.app!.restartCount, 1);
      assert.equal(now.app!.state, 'running');
      assert.notEqual(now.app!.containerID, old.app!.containerID);
      assert.equal(now.sidecar!.containerID, old.sidecar!.containerID);
      assert.equal(now.sidecar!.restartCount, 0);
      // Pod status, as the kubelet reports it.
      const pod = await waitFor('pod status with app restarted', async () => {
        const p = await client.get<PodView>(Pods, 'web', { namespace: ns });
        return p.status?.containerStatuses?.find((s) => s.name === 'app')?.restartCount === 1 ? p : undefined;
      });
      const st = Object.fromEntries(pod.status!.containerStatuses!.map((s) => [s.name, s]));
      assert.equal(st.app!.containerID, now.app!.containerID);
      assert.equal(st.app!.lastState?.terminated?.containerID, old.app!.containerID);
      assert.equal(st.sidecar!.containerID, old.sidecar!.containerID);
      assert.equal(st.sidecar!.restartCount, 0);
    },
  );

  test('orderedRecreate stops the second container only after the first runs again', { timeout: 120_000 }, async () => {
    const data = path.join(env.hostDir, `ordered-${randomBytes(3).toString('hex')}`);
    const volume = { volumeMounts: [{ name: 'data', mountPath: '/data' }] };
    const before = await runPod(
      'ordered',
      [
        // Every start of a appends a line, so the file's mtime is when a last started.
        {
          name: 'a',
          image: env.images.busybox,
          command: ['sh', '-c', 'echo start >> /data/a-started; trap "exit 0" TERM; while :; do sleep 1; done'],
          ...volume,
        },
        {
          name: 'b',
          image: env.images.busybox,
          command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'],
          ...volume,
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo stopping > /data/b-prestop'] } } },
        },
      ],
      { terminationGracePeriodSeconds: 5, volumes: [{ name: 'data', hostPath: { path: data } }] },
    );
    const old = Object.fromEntries(before.status!.containerStatuses!.map((s) => [s.name, s]));

    await createCRR('crr-ordered', 'ordered', ['a', 'b'], { orderedRecreate: true });
    const crr = await completedCRR('crr-ordered');
    assert.deepEqual(
      crr.status?.containerRecreateStates?.map((s) => [s.name, s.phase]),
      [
        ['a', 'Succeeded'],
        ['b', 'Succeeded'],
      ],
    );

    const now = Object.fromEntries(
      (await rt.podContainers({ uid: before.metadata.uid!, namespace: ns, name: 'ordered' })).map((c) => [c.name, c]),
    );
    assert.deepEqual([now.a!.restartCount, now.b!.restartCount], [1, 1]);
    assert.equal(readFileSync(path.join(data, 'a-started'), 'utf8'), 'start\nstart\n', 'a started twice');
    // b's kill began (its preStop) after a's second start, and after CRI saw a running again.
    const aRestarted = nanosToMs((await criStatus(now.a!.containerID)).startedAt)!;
    const bKillBegan = mtimeMs(path.join(data, 'b-prestop'));
    assert.ok(bKillBegan > mtimeMs(path.join(data, 'a-started')), 'b was stopped before a started again');
    assert.ok(bKillBegan >= aRestarted, `b's kill began at ${bKillBegan}, before a was running again at ${aRestarted}`);
    // a's old container had exited before b's was touched.
    assert.ok(nanosToMs((await criStatus(old.a!.containerID)).finishedAt)! < bKillBegan);
  });

  async function pullJob(name: string, image: string): Promise<void> {
    await client.create(ImagePullJobs, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ImagePullJob',
      metadata: { name, namespace: ns },
      spec: {
        image,
        selector: { names: [NODE] },
        pullPolicy: { timeoutSeconds: 30, backoffLimit: 1 },
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 240 },
      },
    });
  }

  async function tagStatus(repo: string, tag: string): Promise<TagStatus | undefined> {
    const ni = await client.get<NodeImage>(NodeImages, NODE);
    return ni.status?.imageStatuses?.[repo]?.tags.find((t) => t.tag === tag);
  }

  test(
    "ImagePullJobs: the image is pulled into containerd; a missing tag fails with containerd's reason",
    { timeout: 240_000 },
    async () => {
      // A tag containerd has never seen (same content as busybox:1.0), so the pull is a real one.
      const tag = `prepull-${randomBytes(3).toString('hex')}`;
      const repo = `${env.registry}/busybox`;
      const ref = `${repo}:${tag}`;
      execFileSync(
        'skopeo',
        ['copy', '--quiet', '--src-tls-verify=false', '--dest-tls-verify=false', `docker://${env.images.busybox}`, `docker://${ref}`],
        { stdio: 'pipe' },
      );
      assert.equal(await rt.imageStatus(ref), undefined);

      // The manager creates the node's NodeImage only once the node has been Ready for its creation
      // delay (30 s by default); a job created before that finds no NodeImage by that name and
      // completes at once with nothing to pull, as upstream's does.
      await waitFor(`NodeImage ${NODE} created`, () => client.get<NodeImage>(NodeImages, NODE), 90_000, 500);
      await pullJob('pull-ok', ref);
      let ok: TagStatus;
      try {
        ok = await waitFor(
          `NodeImage ${NODE} tag ${tag} Succeeded`,
          async () => {
            const t = await tagStatus(repo, tag);
            if (t?.phase === 'Failed') throw new Error(`pull failed: ${t.message}`);
            return t?.phase === 'Succeeded' ? t : undefined;
          },
          60_000,
          250,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}${daemonTail()}`, { cause: err });
      }
      const image = await rt.imageStatus(ref);
      assert.ok(image, `containerd has ${ref}`);
      assert.equal(ok.imageID, image.id);
      assert.ok((await rt.listImages()).some((i) => i.repoTags.includes(ref)));
      const job = await waitFor(
        'pull-ok complete',
        async () => {
          const j = await client.get<PullJob>(ImagePullJobs, 'pull-ok', { namespace: ns });
          return j.status?.completionTime ? j : undefined;
        },
        30_000,
        500,
      );
      assert.deepEqual([job.status?.desired, job.status?.succeeded, job.status?.failed ?? 0], [1, 1, 0]);

      const missing = `missing-${randomBytes(3).toString('hex')}`;
      await pullJob('pull-missing', `${repo}:${missing}`);
      const failedJob = await waitFor(
        'pull-missing complete with the node failed',
        async () => {
          const j = await client.get<PullJob>(ImagePullJobs, 'pull-missing', { namespace: ns });
          return j.status?.completionTime ? j : undefined;
        },
        60_000,
        500,
      );
      assert.deepEqual(failedJob.status?.failedNodes, [NODE]);
      assert.equal(failedJob.status?.succeeded ?? 0, 0);
      const failed = await tagStatus(repo, missing);
      assert.equal(failed?.phase, 'Failed');
      // containerd's own words for a tag the registry does not have.
      assert.match(failed?.message ?? '', new RegExp(`${missing}.*not found`));
      assert.equal(await rt.imageStatus(`${repo}:${missing}`), undefined);
    },
  );

  test(
    'a PodProbeMarker exec probe runs `test -f ready` in the container’s working directory and reacts when the file appears',
    { timeout: 120_000 },
    async () => {
      const data = path.join(env.hostDir, `probe-${randomBytes(3).toString('hex')}`);
      mkdirSync(data, { recursive: true });
      const created = await client.create<Pod>(Pods, {
        metadata: { name: 'probed', namespace: ns, labels: { app: 'probed' } },
        spec: {
          nodeName: NODE,
          volumes: [{ name: 'data', hostPath: { path: data } }],
          containers: [
            {
              name: 'main',
              image: env.images.busybox,
              workingDir: '/work',
              command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'],
              volumeMounts: [{ name: 'data', mountPath: '/work' }],
            },
          ],
        },
      });
      await kubelet.runPod(created);
      // The manager's NodePodProbe controller gives the (Ready) node its NodePodProbe.
      await waitFor(`NodePodProbe ${NODE}`, () => client.get(NodePodProbes, NODE), 60_000, 500);
      await client.create(PodProbeMarkers, {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'PodProbeMarker',
        metadata: { name: 'ready-file', namespace: ns },
        spec: {
          selector: { matchLabels: { app: 'probed' } },
          probes: [
            {
              name: 'ready',
              containerName: 'main',
              probe: { exec: { command: ['test', '-f', 'ready'] }, periodSeconds: 1 },
              podConditionType: 'game.kruise.io/ready',
              markerPolicy: [{ state: 'Succeeded', labels: { 'probe.kruise.io/ready': 'true' } }],
            },
          ],
        },
      });
      type Marked = Pod & { status?: { conditions?: Array<{ type: string; status: string }> } };
      const marks = async () => {
        const p = await client.get<Marked>(Pods, 'probed', { namespace: ns });
        return {
          condition: p.status?.conditions?.find((c) => c.type === 'game.kruise.io/ready')?.status,
          label: p.metadata.labels?.['probe.kruise.io/ready'],
        };
      };
      const expectMarks = (what: string, condition: string, label: string | undefined) =>
        waitFor(
          what,
          async () => {
            const m = await marks();
            return m.condition === condition && m.label === label;
          },
          60_000,
          250,
        ).catch(async (err: Error) => {
          throw new Error(`${err.message}: last seen ${JSON.stringify(await marks())}${daemonTail()}`, { cause: err });
        });
      // No file yet: `test -f ready` exits 1 inside the container.
      await expectMarks('the probe Failed: condition False, no label', 'False', undefined);
      // The file appears in the container's working directory (the hostPath behind it).
      writeFileSync(path.join(data, 'ready'), '');
      await expectMarks('the probe Succeeded: condition True and the label', 'True', 'true');
      // And goes away again.
      rmSync(path.join(data, 'ready'));
      await expectMarks('the probe Failed again: condition False, label removed', 'False', undefined);
      await client.delete(PodProbeMarkers, 'ready-file', { namespace: ns });
    },
  );

  test('a daemon pointed at a socket that does not exist exits non-zero naming the endpoint', { timeout: 90_000 }, async () => {
    const endpoint = `unix://${path.join(env.dir, 'no-such.sock')}`;
    const res = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(repoRoot, 'src/cli/kruise.ts'),
          'daemon',
          '--node-name',
          NODE,
          '--runtime-endpoint',
          endpoint,
          '--kubeconfig',
          testCluster().kubeconfig,
          '--addr',
          '127.0.0.1:0',
        ],
        { timeout: 60_000, encoding: 'utf8' },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output: `${stdout}${stderr}` }),
      );
    });
    assert.notEqual(res.code, 0, `exit code ${res.code}: ${res.output}`);
    assert.equal(typeof res.code, 'number', `the daemon ended by itself, not by the test's timeout: ${res.output}`);
    assert.ok(res.output.includes(endpoint), `the message names ${endpoint}: ${res.output}`);
  });
});
