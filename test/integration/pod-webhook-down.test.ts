// What happens to pod creation while the manager is down (docs/pod-webhook.md): /mutate-pod is
// failurePolicy Fail, so a pod a SidecarSet could apply to is refused rather than created without
// its sidecar; kube-system, the manager's namespace and `control-plane` namespaces are outside the
// webhook and always admitted. Once the manager is back, creation works and injects again. On a
// cluster of its own: stopping the suite's shared manager would fail every other test's pods.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/apis/core-objects.ts';
import { Namespaces, Pods, SidecarSets } from '../../src/runtime/resources.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const cluster = new OwnCluster(`${TEST_CLUSTER}-pod-webhook`, 1);

before(() => cluster.up());
after(() => cluster.down());

const pod = (name: string, namespace: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
});

test(
  'with the manager stopped, pods in webhook namespaces are refused and pods in excluded namespaces admitted',
  { timeout: 180_000 },
  async () => {
    const { client } = cluster;
    await cluster.startManager();
    await client.create(Namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'infra', labels: { 'control-plane': 'true' } },
    });
    await client.create(SidecarSets, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: 'everywhere' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image: 'busybox:1.36' }] },
    });
    // The pod webhook reads SidecarSets from its own informer cache, not the controller's: wait
    // until a dry-run pod comes back injected, not merely until the controller wrote a status.
    await waitFor('the pod webhook to see the SidecarSet', async () => {
      const probe = await client.create<Pod>(Pods, pod('probe', 'default'), { dryRun: true });
      return probe.spec!.containers.length === 2;
    });
    const before = await client.create<Pod>(Pods, pod('before', 'default'));
    assert.deepEqual(
      before.spec!.containers.map((c) => c.name),
      ['agent', 'main'],
    );

    await cluster.killManager();
    await assert.rejects(client.create(Pods, pod('while-down', 'default')), (err: Error) => {
      assert.match(err.message, /failed calling webhook "mpod\.kb\.io"/);
      return true;
    });
    for (const namespace of ['kube-system', 'kruise-system', 'infra']) {
      const admitted = await client.create<Pod>(Pods, pod(`while-down-${namespace}`, namespace));
      assert.deepEqual(
        admitted.spec!.containers.map((c) => c.name),
        ['main'],
        `${namespace} is outside the pod webhook`,
      );
    }

    await cluster.startManager();
    const after = await waitFor('pod creation admitted again', () => client.create<Pod>(Pods, pod('after', 'default')), 30_000, 500);
    assert.deepEqual(
      after.spec!.containers.map((c) => c.name),
      ['agent', 'main'],
    );
  },
);
