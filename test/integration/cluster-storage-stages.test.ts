// The local cluster's default StorageClass and provisioner (src/cluster/storage.ts), and the KWOK
// stages for postStart hooks, unpullable images and in-place resize (config/kwok/stages.yaml,
// docs/local-cluster.md).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, createNamespace, deleteNamespace, kubectl, kubectlJson, waitFor } from '../harness/cluster.ts';

type Obj = any;
let ns: string;

before(async () => {
  ns = await createNamespace('storage');
});
after(async () => {
  await deleteNamespace(ns);
});

const claim = (name: string, storageClassName?: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(storageClassName ? { storageClassName } : {}) },
});
const podUsing = (name: string, claimName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    containers: [{ name: 'c', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
  },
});
const getClaim = (name: string) => kubectlJson<Obj>(['-n', ns, 'get', 'pvc', name]);

describe('default StorageClass and provisioner', { concurrency: 2 }, () => {
  test('a claim of the default class binds once a pod uses it, on that pod’s node; it expands, and is reclaimed', async () => {
    const classes = await kubectlJson<{ items: Obj[] }>(['get', 'storageclass']);
    const standard = classes.items.find((c) => c.metadata.name === 'standard');
    assert.equal(standard?.metadata.annotations['storageclass.kubernetes.io/is-default-class'], 'true');
    assert.equal(standard?.volumeBindingMode, 'WaitForFirstConsumer');

    await apply(claim('wffc'), ns);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await getClaim('wffc')).status.phase, 'Pending', 'WaitForFirstConsumer: no volume before a pod uses the claim');
    assert.equal((await getClaim('wffc')).spec.storageClassName, 'standard');

    await apply(podUsing('user', 'wffc'), ns);
    const bound = await waitFor(
      'claim bound',
      async () => ((await getClaim('wffc')).status.phase === 'Bound' ? getClaim('wffc') : null),
      60_000,
    );
    const pv = await kubectlJson<Obj>(['get', 'pv', bound.spec.volumeName]);
    const pod = await waitFor('pod running', async () => {
      const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'user']);
      return p.status.phase === 'Running' ? p : null;
    });
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values, [pod.spec.nodeName]);
    assert.equal(pv.metadata.annotations['pv.kubernetes.io/provisioned-by'], 'kruise-ts.io/local-volume');
    assert.equal(bound.status.capacity.storage, '1Gi');

    await kubectl(['-n', ns, 'patch', 'pvc', 'wffc', '--type=merge', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}']);
    await waitFor('claim expanded', async () => (await getClaim('wffc')).status.capacity?.storage === '2Gi', 60_000);
    assert.equal((await kubectlJson<Obj>(['get', 'pv', bound.spec.volumeName])).spec.capacity.storage, '2Gi');

    await kubectl(['-n', ns, 'delete', 'pod', 'user', '--wait=true']);
    await kubectl(['-n', ns, 'delete', 'pvc', 'wffc', '--wait=true']);
    await waitFor(
      'volume reclaimed',
      async () => !(await kubectl(['get', 'pv', bound.spec.volumeName, '--ignore-not-found', '-o', 'name'])).trim(),
      60_000,
    );
  });

  test('an Immediate class binds at once; a class without expansion refuses a resize', async () => {
    await apply({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: `fixed-${ns}` },
      provisioner: 'kruise-ts.io/local-volume',
      volumeBindingMode: 'Immediate',
      reclaimPolicy: 'Delete',
      allowVolumeExpansion: false,
    });
    try {
      await apply(claim('now', `fixed-${ns}`), ns);
      await waitFor('claim bound', async () => (await getClaim('now')).status.phase === 'Bound', 60_000);
      await assert.rejects(
        kubectl(['-n', ns, 'patch', 'pvc', 'now', '--type=merge', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}']),
        /only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/,
      );
    } finally {
      await kubectl(['delete', 'storageclass', `fixed-${ns}`]).catch(() => undefined);
    }
  });
});

describe('KWOK stages: postStart hooks and unpullable images', { concurrency: 2 }, () => {
  test('a container with a postStart `sleep 3` hook is not ready until 3 s after it started', async () => {
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'hooked' },
        spec: {
          containers: [
            { name: 'main', image: 'nginx' },
            { name: 'hooked', image: 'redis', lifecycle: { postStart: { exec: { command: ['/bin/sh', '-c', 'sleep 3'] } } } },
          ],
        },
      },
      ns,
    );
    const running = await waitFor('pod running', async () => {
      const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'hooked']);
      return p.status.phase === 'Running' ? p : null;
    });
    const status = (p: Obj, name: string) => p.status.containerStatuses.find((s: Obj) => s.name === name);
    assert.equal(status(running, 'main').ready, true);
    if (!status(running, 'hooked').ready) {
      assert.equal(running.status.conditions.find((c: Obj) => c.type === 'Ready').status, 'False');
    }
    const ready = await waitFor(
      'pod Ready',
      async () => {
        const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'hooked']);
        return p.status.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True') ? p : null;
      },
      30_000,
    );
    const startedAt = Date.parse(status(ready, 'hooked').state.running.startedAt);
    const readyAt = Date.parse(ready.status.conditions.find((c: Obj) => c.type === 'Ready').lastTransitionTime);
    assert.ok(readyAt - startedAt >= 3000, `ready ${readyAt - startedAt} ms after the start, the hook takes 3 s`);
    assert.equal(ready.status.conditions.find((c: Obj) => c.type === 'ContainersReady').status, 'True');
  });

  test('an image of a `.invalid` registry is never pulled: ErrImagePull then ImagePullBackOff; a pullable image starts the pod', async () => {
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'unpullable' },
        spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
      },
      ns,
    );
    // The e2e suites' unpullable image (Kubernetes' InvalidRegistryImage) likewise.
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'unpullable-e2e' },
        spec: { containers: [{ name: 'c', image: 'invalid.registry.k8s.io/invalid/alpine:3.1' }] },
      },
      ns,
    );
    for (const name of ['unpullable', 'unpullable-e2e']) {
      const waiting = await waitFor(
        `${name} ImagePullBackOff`,
        async () => {
          const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', name]);
          return p.status.containerStatuses?.[0]?.state.waiting?.reason === 'ImagePullBackOff' ? p : null;
        },
        30_000,
      );
      assert.equal(waiting.status.phase, 'Pending');
      assert.ok(!waiting.status.containerStatuses[0].imageID, 'no image was pulled');
    }

    await kubectl([
      '-n',
      ns,
      'patch',
      'pod',
      'unpullable',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27"}]',
    ]);
    const started = await waitFor('pod running', async () => {
      const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'unpullable']);
      return p.status.phase === 'Running' && p.status.containerStatuses[0].state.running ? p : null;
    });
    assert.equal(started.status.containerStatuses[0].image, 'nginx:1.27');
  });

  test('an in-place update to an unpullable image leaves the container waiting, the pod not Ready', async () => {
    await apply(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'badupdate' }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
      ns,
    );
    const before = await waitFor('pod Ready', async () => {
      const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'badupdate']);
      return p.status.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True') ? p : null;
    });
    await kubectl([
      '-n',
      ns,
      'patch',
      'pod',
      'badupdate',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/containers/0/image","value":"registry.invalid/nginx:2"}]',
    ]);
    const after = await waitFor(
      'pull failure',
      async () => {
        const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'badupdate']);
        const s = p.status.containerStatuses[0];
        return ['ErrImagePull', 'ImagePullBackOff'].includes(s.state.waiting?.reason) &&
          p.status.conditions.find((c: Obj) => c.type === 'Ready').status === 'False'
          ? p
          : null;
      },
      30_000,
    );
    const s = after.status.containerStatuses[0];
    assert.equal(s.ready, false);
    assert.equal(s.lastState.terminated.containerID, before.status.containerStatuses[0].containerID);
  });
});

describe('KWOK stage: in-place resize', () => {
  test('a pods/resize is applied: status resources follow, a RestartContainer policy restarts only that container', async () => {
    const resources = { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '1', memory: '1Gi' } };
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'resized' },
        spec: {
          containers: [
            { name: 'keeps', image: 'nginx', resources },
            { name: 'restarts', image: 'redis', resources, resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] },
          ],
        },
      },
      ns,
    );
    const status = (p: Obj, name: string) => p.status.containerStatuses.find((s: Obj) => s.name === name);
    const before = await waitFor('pod running', async () => {
      const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'resized']);
      return p.status.phase === 'Running' ? p : null;
    });
    assert.deepEqual(status(before, 'keeps').resources, {
      limits: { cpu: '1', memory: '1Gi' },
      requests: { cpu: '100m', memory: '100Mi' },
    });
    assert.deepEqual(status(before, 'keeps').allocatedResources, { cpu: '100m', memory: '100Mi' });

    const larger = { requests: { cpu: '200m', memory: '200Mi' } };
    await kubectl([
      '-n',
      ns,
      'patch',
      'pod',
      'resized',
      '--subresource=resize',
      '-p',
      JSON.stringify({
        spec: {
          containers: [
            { name: 'keeps', resources: larger },
            { name: 'restarts', resources: larger },
          ],
        },
      }),
    ]);
    const after = await waitFor(
      'resize applied',
      async () => {
        const p = await kubectlJson<Obj>(['-n', ns, 'get', 'pod', 'resized']);
        return p.status.containerStatuses.every((s: Obj) => s.resources?.requests?.cpu === '200m') ? p : null;
      },
      30_000,
    );
    assert.equal(after.metadata.uid, before.metadata.uid);
    for (const name of ['keeps', 'restarts']) {
      assert.deepEqual(status(after, name).allocatedResources, { cpu: '200m', memory: '200Mi' });
      assert.deepEqual(status(after, name).resources.limits, { cpu: '1', memory: '1Gi' });
    }
    assert.equal(status(after, 'keeps').restartCount, 0);
    assert.equal(status(after, 'keeps').containerID, status(before, 'keeps').containerID);
    assert.equal(status(after, 'restarts').restartCount, 1, 'memory changed under RestartContainer');
    assert.notEqual(status(after, 'restarts').containerID, status(before, 'restarts').containerID);
    assert.equal(status(after, 'restarts').lastState.terminated.containerID, status(before, 'restarts').containerID);
  });
});
