import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CriClient, CriError, normalizeEndpoint } from '../../../src/daemon/cri/client.ts';
import { CriRuntime, bareID, envFromVerboseInfo, nanosToMs } from '../../../src/daemon/runtime/cri-runtime.ts';
import { RuntimeUnavailableError } from '../../../src/daemon/runtime/types.ts';
import { startFakeCri, grpcError, type Handler } from './cri-fake.ts';

const VERSION = { version: '0.1.0', runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' };
const ms = (t: number) => String(BigInt(t) * 1_000_000n);
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

function container(id: string, sandbox: string, name: string, attempt: number, state: string, createdAt = T0) {
  return {
    id,
    podSandboxId: sandbox,
    metadata: { name, attempt },
    image: { image: 'reg/busybox:1.0' },
    imageRef: 'sha256:img',
    state,
    createdAt: ms(createdAt),
    labels: { 'io.kubernetes.container.name': name, 'io.kubernetes.pod.uid': 'uid-1' },
    annotations: {},
  };
}

function runtimeHandlers(extra: Record<string, Handler> = {}): Record<string, Handler> {
  return { Version: () => VERSION, ...extra };
}

test('Version answers for runtime.v1 and names the runtime', async () => {
  const fake = await startFakeCri({ runtime: runtimeHandlers() });
  const rt = await CriRuntime.connect({ endpoint: fake.endpoint });
  try {
    assert.equal(rt.name, 'containerd');
    assert.deepEqual(await rt.version(), { runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' });
    assert.equal(fake.calls[0]![1].version, 'v1');
  } finally {
    await rt.close();
    await fake.stop();
  }
});

test('podContainers keeps the highest attempt per container and maps status and times', async () => {
  const sandboxes = [
    {
      id: 'sb-old',
      metadata: { name: 'p', uid: 'uid-1', namespace: 'ns', attempt: 0 },
      state: 'SANDBOX_NOTREADY',
      createdAt: ms(T0),
      labels: {},
      annotations: {},
    },
    {
      id: 'sb-new',
      metadata: { name: 'p', uid: 'uid-1', namespace: 'ns', attempt: 1 },
      state: 'SANDBOX_READY',
      createdAt: ms(T0 + 1000),
      labels: {},
      annotations: {},
    },
  ];
  const containers: Record<string, any[]> = {
    'sb-old': [container('app-0', 'sb-old', 'app', 0, 'CONTAINER_EXITED'), container('side-0', 'sb-old', 'sidecar', 0, 'CONTAINER_EXITED')],
    'sb-new': [
      container('app-2', 'sb-new', 'app', 2, 'CONTAINER_RUNNING', T0 + 5000),
      container('app-1', 'sb-new', 'app', 1, 'CONTAINER_EXITED', T0 + 2000),
    ],
  };
  const statuses: Record<string, any> = {
    'app-2': {
      id: 'app-2',
      metadata: { name: 'app', attempt: 2 },
      state: 'CONTAINER_RUNNING',
      createdAt: ms(T0 + 5000),
      startedAt: ms(T0 + 5100),
      finishedAt: '0',
      exitCode: 0,
      image: { image: 'reg/busybox:1.0' },
      imageRef: 'reg/busybox@sha256:abc',
    },
    'side-0': {
      id: 'side-0',
      metadata: { name: 'sidecar', attempt: 0 },
      state: 'CONTAINER_EXITED',
      createdAt: ms(T0),
      startedAt: ms(T0 + 10),
      finishedAt: ms(T0 + 900),
      exitCode: 137,
      image: { image: 'reg/busybox:1.0' },
      imageRef: 'reg/busybox@sha256:abc',
    },
  };
  const fake = await startFakeCri({
    runtime: runtimeHandlers({
      ListPodSandbox: (req) => {
        assert.deepEqual(req.filter.labelSelector, { 'io.kubernetes.pod.uid': 'uid-1' });
        return { items: sandboxes };
      },
      ListContainers: (req) => ({ containers: containers[req.filter.podSandboxId] ?? [] }),
      ContainerStatus: (req) => ({ status: statuses[req.containerId] }),
    }),
  });
  const rt = await CriRuntime.connect({ endpoint: fake.endpoint });
  try {
    const got = await rt.podContainers({ uid: 'uid-1', namespace: 'ns', name: 'p' });
    assert.deepEqual(got, [
      {
        containerID: 'containerd://app-2',
        name: 'app',
        restartCount: 2,
        state: 'running',
        startedAt: T0 + 100 + 5000,
        finishedAt: undefined,
        exitCode: undefined,
        image: 'reg/busybox:1.0',
        imageRef: 'reg/busybox@sha256:abc',
      },
      {
        containerID: 'containerd://side-0',
        name: 'sidecar',
        restartCount: 0,
        state: 'exited',
        startedAt: T0 + 10,
        finishedAt: T0 + 900,
        exitCode: 137,
        image: 'reg/busybox:1.0',
        imageRef: 'reg/busybox@sha256:abc',
      },
    ]);
    assert.deepEqual(
      fake.calls
        .filter(([rpc]) => rpc === 'ContainerStatus')
        .map(([, r]) => r.containerId)
        .sort(),
      ['app-2', 'side-0'],
    );
  } finally {
    await rt.close();
    await fake.stop();
  }
});

test('podContainers asks for verbose status and reports the env the container was started with', async () => {
  // What containerd 1.6 answers: info.info is JSON holding the CRI ContainerConfig (envs) and the
  // OCI spec; the CRI config is what the kubelet resolved, so it is the one read.
  const containerdInfo = JSON.stringify({
    sandboxID: 'sb',
    pid: 42,
    config: {
      metadata: { name: 'app', attempt: 0 },
      envs: [{ key: 'POD_LABEL', value: 'v1' }, { key: 'EMPTY' }, { key: 'DUP', value: 'a' }, { key: 'DUP', value: 'b' }],
    },
    runtimeSpec: { process: { env: ['PATH=/bin', 'POD_LABEL=v1'] } },
  });
  const fake = await startFakeCri({
    runtime: runtimeHandlers({
      ListPodSandbox: () => ({ items: [{ id: 'sb', metadata: { name: 'p', uid: 'u', namespace: 'n' }, createdAt: ms(T0) }] }),
      ListContainers: () => ({
        containers: [container('c1', 'sb', 'app', 0, 'CONTAINER_RUNNING'), container('c2', 'sb', 'plain', 0, 'CONTAINER_RUNNING')],
      }),
      ContainerStatus: (req) => ({
        status: {
          id: req.containerId,
          metadata: { name: req.containerId === 'c1' ? 'app' : 'plain', attempt: 0 },
          state: 'CONTAINER_RUNNING',
          startedAt: ms(T0),
        },
        info: req.containerId === 'c1' ? { info: containerdInfo } : {},
      }),
    }),
  });
  const rt = await CriRuntime.connect({ endpoint: fake.endpoint });
  try {
    const [app, plain] = await rt.podContainers({ uid: 'u', namespace: 'n', name: 'p' });
    assert.deepEqual(app!.env, { POD_LABEL: 'v1', EMPTY: '', DUP: 'b' });
    assert.equal(plain!.env, undefined, 'no verbose info: the env is unknown, not empty');
    assert.ok(!('env' in plain!));
    assert.ok(fake.calls.filter(([rpc]) => rpc === 'ContainerStatus').every(([, r]) => r.verbose === true));
  } finally {
    await rt.close();
    await fake.stop();
  }
});

test("envFromVerboseInfo: CRI-O's OCI spec env as a fallback; unusable info means unknown", () => {
  // CRI-O's verbose info has no CRI config, only the OCI runtime spec.
  const crio = JSON.stringify({
    pid: 7,
    sandboxID: 'x',
    runtimeSpec: { process: { env: ['PATH=/usr/bin', 'A=1=2', 'B=', 'junk', '=nokey'] } },
  });
  assert.deepEqual(envFromVerboseInfo({ info: crio }), { PATH: '/usr/bin', A: '1=2', B: '' });
  assert.deepEqual(envFromVerboseInfo({ info: JSON.stringify({ config: { envs: [] } }) }), {});
  assert.equal(envFromVerboseInfo({}), undefined);
  assert.equal(envFromVerboseInfo({ info: 'not json' }), undefined);
  assert.equal(envFromVerboseInfo({ info: JSON.stringify({ pid: 1 }) }), undefined);
  assert.equal(envFromVerboseInfo({ info: 'null' }), undefined);
});

test('a container removed between list and status is reported from the listing', async () => {
  const fake = await startFakeCri({
    runtime: runtimeHandlers({
      ListPodSandbox: () => ({ items: [{ id: 'sb', metadata: { name: 'p', uid: 'u', namespace: 'n' }, createdAt: ms(T0) }] }),
      ListContainers: () => ({ containers: [container('c1', 'sb', 'app', 3, 'CONTAINER_EXITED')] }),
      ContainerStatus: () => {
        throw grpcError(grpc.status.NOT_FOUND, 'container "c1" not found');
      },
    }),
  });
  const rt = await CriRuntime.connect({ endpoint: fake.endpoint });
  try {
    assert.deepEqual(await rt.podContainers({ uid: 'u', namespace: 'n', name: 'p' }), [
      { containerID: 'containerd://c1', name: 'app', restartCount: 3, state: 'exited', image: 'reg/busybox:1.0', imageRef: 'sha256:img' },
    ]);
  } finally {
    await rt.close();
    await fake.stop();
  }
});

test('execSync and stopContainer take pod-status container IDs and pass timeouts through', async () => {
  const fake = await startFakeCri({
    runtime: runtimeHandlers({
      ExecSync: (req) => ({ stdout: Buffer.from(`ran ${req.cmd.join(' ')}`), stderr: Buffer.from('warn'), exitCode: 3 }),
      StopContainer: () => ({}),
    }),
  });
  const rt = await CriRuntime.connect({ endpoint: fake.endpoint });
  try {
    assert.deepEqual(await rt.execSync('containerd://abc', ['sh', '-c', 'exit 3'], 5), {
      exitCode: 3,
      stdout: 'ran sh -c exit 3',
      stderr: 'warn',
    });
    await rt.stopContainer('abc', 7);
    const [exec, stop] = fake.calls.slice(1);
    assert.deepEqual(exec, ['ExecSync', { containerId: 'abc', cmd: ['sh', '-c', 'exit 3'], timeout: '5' }]);
    assert.deepEqual(stop, ['StopContainer', { containerId: 'abc', timeout: '7' }]);
  } finally {
    await rt.close();
    await fake.stop();
  }
});

test('pullImage tries each auth in order, passes the sandbox config and reports 0 then 100', async () => {
  const fake = await startFakeCri({
    runtime: runtimeHandlers(),
    image: {
      PullImage: (req) => {
        if (req.auth?.username !== 'good') throw grpcError(grpc.status.UNKNOWN, 'failed to pull: 401 Unauthorized');
        return { imageRef: 'sha256:pulled' };
      },
    },
  });
  const rt = await CriRuntime.connect({ endpoint: fake.endpoint });
  try {
    const progress: number[] = [];
    const res = await rt.pullImage({
      image: 'reg/app:1',
      auths: [
        { username: 'bad', password: 'x' },
        { username: 'good', password: 'y', serverAddress: 'reg' },
      ],
      sandboxConfig: { labels: { l: '1' }, annotations: { a: '2' } },
      onProgress: (p) => progress.push(p),
    });
    assert.deepEqual(res, { imageRef: 'sha256:pulled' });
    assert.deepEqual(progress, [0, 100]);
    const pulls = fake.calls.filter(([rpc]) => rpc === 'PullImage').map(([, r]) => r);
    assert.deepEqual(
      pulls.map((r) => r.auth.username),
      ['bad', 'good'],
    );
    assert.equal(pulls[1].image.image, 'reg/app:1');
    assert.equal(pulls[1].auth.serverAddress, 'reg');
    assert.deepEqual(pulls[1].sandboxConfig.labels, { l: '1' });
    assert.deepEqual(pulls[1].sandboxConfig.annotations, { a: '2' });

    await assert.rejects(
      rt.pullImage({ image: 'reg/app:2', auths: [{ username: 'bad' }] }),
      (err: unknown) => err instanceof CriError && /401 Unauthorized/.test(err.message),
    );
    await rt.pullImage({ image: 'reg/app:1', auths: [{ username: 'good' }] });
    assert.equal(fake.calls.at(-1)![1].sandboxConfig, null, 'no sandbox config when none is given');
  } finally {
    await rt.close();
    await fake.stop();
  }
});

test('imageStatus and listImages map CRI images; a missing image is undefined', async () => {
  const img = { id: 'sha256:1', repoTags: ['reg/busybox:1.0'], repoDigests: ['reg/busybox@sha256:d'], size: '1234567' };
  const fake = await startFakeCri({
    runtime: runtimeHandlers(),
    image: {
      ImageStatus: (req) => ({ image: req.image.image === 'reg/busybox:1.0' ? img : null }),
      ListImages: () => ({ images: [img] }),
    },
  });
  const rt = await CriRuntime.connect({ endpoint: fake.endpoint });
  try {
    const expected = { id: 'sha256:1', repoTags: ['reg/busybox:1.0'], repoDigests: ['reg/busybox@sha256:d'], size: 1234567 };
    assert.deepEqual(await rt.imageStatus('reg/busybox:1.0'), expected);
    assert.equal(await rt.imageStatus('reg/other:1'), undefined);
    assert.deepEqual(await rt.listImages(), [expected]);
  } finally {
    await rt.close();
    await fake.stop();
  }
});

test('a runtime that serves only CRI v1alpha2 is refused with a message saying v1 is required', async () => {
  const fake = await startFakeCri({}); // no runtime.v1 services: every call is UNIMPLEMENTED
  try {
    await assert.rejects(CriRuntime.connect({ endpoint: fake.endpoint }), (err: unknown) => {
      assert.ok(err instanceof RuntimeUnavailableError);
      assert.match(err.message, new RegExp(`${fake.endpoint} speaks only CRI v1alpha2`));
      assert.match(err.message, /CRI v1 is required, e.g. containerd >= 1\.6/);
      return true;
    });
    // Probing reports it too, rather than "nothing found".
    await assert.rejects(CriRuntime.connect({ candidates: ['unix:///nonexistent/a.sock', fake.endpoint] }), /speaks only CRI v1alpha2/);
  } finally {
    await fake.stop();
  }
});

test('probing skips missing and dead sockets and picks the first runtime that answers', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cri-probe-'));
  const notASocket = path.join(dir, 'file.sock');
  writeFileSync(notASocket, '');
  const fake = await startFakeCri({ runtime: runtimeHandlers() });
  try {
    const rt = await CriRuntime.connect({ candidates: [`unix://${path.join(dir, 'missing.sock')}`, notASocket, fake.endpoint] });
    assert.equal(rt.endpoint, fake.endpoint);
    await rt.close();
  } finally {
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('nothing reachable: the error lists every path tried', async () => {
  const candidates = ['unix:///nonexistent/containerd.sock', '/nonexistent/crio.sock'];
  await assert.rejects(CriClient.connect({ candidates }), (err: unknown) => {
    assert.ok(err instanceof RuntimeUnavailableError);
    assert.match(err.message, /no CRI v1 container runtime found; pass --runtime-endpoint/);
    assert.match(err.message, /\/nonexistent\/containerd\.sock \(no socket\), \/nonexistent\/crio\.sock \(no socket\)/);
    return true;
  });
  await assert.rejects(
    CriClient.connect({ endpoint: 'unix:///nonexistent/x.sock', timeoutMs: 500 }),
    (err: unknown) =>
      err instanceof RuntimeUnavailableError &&
      /container runtime at unix:\/\/\/nonexistent\/x\.sock is not reachable/.test(err.message) &&
      !/Resolution note/.test(err.message),
  );
});

test('endpoint and ID helpers', () => {
  assert.deepEqual(normalizeEndpoint('/run/a.sock'), { target: 'unix:///run/a.sock', socketPath: '/run/a.sock' });
  assert.deepEqual(normalizeEndpoint('unix:///run/a.sock'), { target: 'unix:///run/a.sock', socketPath: '/run/a.sock' });
  assert.deepEqual(normalizeEndpoint('unix:/run/a.sock'), { target: 'unix:///run/a.sock', socketPath: '/run/a.sock' });
  assert.throws(() => normalizeEndpoint('tcp://1.2.3.4:1'), RuntimeUnavailableError);
  assert.equal(bareID('containerd://abc'), 'abc');
  assert.equal(bareID('abc'), 'abc');
  assert.equal(nanosToMs('0'), undefined);
  assert.equal(nanosToMs('1767323045123456789'), 1767323045123);
});
