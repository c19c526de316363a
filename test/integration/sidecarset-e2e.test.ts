// OpenKruise v1.8.2's own e2e cases of the SidecarSet cold upgrade (test/e2e/apps/sidecarset.go),
// step for step on the suite's manager: "sidecarSet upgrade cold sidecar container image only" and
// "sidecarSet upgrade cold sidecar container image, and paused". A Deployment's pods, the e2e's
// SidecarSet (v1alpha1, an init container, a sidecar with a command), the image changed right after
// the pods came up. Each SidecarSet selects a label only its test's pods carry.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Pod } from '../../src/apis/core-objects.ts';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import { Deployments, Namespaces, Pods, SidecarSets } from '../../src/runtime/resources.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { apply, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;
const sidecarSetsToDelete: string[] = [];

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('sse2e');
});

after(async () => {
  for (const name of sidecarSetsToDelete) await client.delete(SidecarSets, name).catch(() => undefined);
  await deleteNamespace(ns);
  await client.close();
});

type SidecarSetObj = KubeObject & { spec?: any; status?: any };
type Counts = { matchedPods: number; updatedPods: number; updatedReadyPods: number; readyPods: number };

const sidecar = (image: string) => ({
  name: 'nginx-sidecar',
  image,
  imagePullPolicy: 'IfNotPresent',
  command: ['tail', '-f', '/dev/null'],
  podInjectPolicy: 'BeforeAppContainer',
  shareVolumePolicy: { type: 'enabled' },
});

/** tester.NewBaseSidecarSet with its first container only, created as the e2e does (v1alpha1). */
async function createSidecarSet(name: string, app: string, spec: Record<string, unknown>): Promise<void> {
  await apply({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, labels: { app: 'sidecar' } },
    spec: {
      initContainers: [{ name: 'init-sidecar', image: 'busybox:1.36', command: ['/bin/sh', '-c', 'sleep 1'] }],
      containers: [sidecar('nginx:1.0')],
      selector: { matchLabels: { app } },
      ...spec,
    },
  });
  sidecarSetsToDelete.push(name);
  await sleep(1000);
}

/** tester.NewBaseDeployment with 2 replicas, and WaitForDeploymentRunning. */
async function createDeployment(app: string): Promise<void> {
  await apply(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: app },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app } },
        template: {
          metadata: { labels: { app } },
          spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['/bin/sh', '-c', 'sleep 10000000'] }] },
        },
      },
    },
    ns,
  );
  await waitFor(`Deployment ${app} running`, async () => {
    const d = await client.get<KubeObject & { status?: any }>(Deployments, app, { namespace: ns });
    const s = d.status ?? {};
    return s.observedGeneration === d.metadata.generation && s.updatedReplicas === 2 && s.readyReplicas === 2 && s.replicas === 2;
  });
}

/** tester.GetSelectorPods: the pods not being deleted. */
const selectorPods = async (app: string) =>
  (await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${app}` })).items.filter((p) => !p.metadata.deletionTimestamp);

const setSidecarSet = (name: string, spec: Record<string, unknown>) =>
  client.patch(SidecarSets, name, { spec }, { patchType: PatchType.Merge });

/** tester.WaitForSidecarSetUpgradeComplete (here within a minute). */
async function upgradeComplete(name: string, want: Counts): Promise<void> {
  let last: unknown;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = await client.get<SidecarSetObj>(SidecarSets, name);
    const { matchedPods, updatedPods, updatedReadyPods, readyPods } = s.status ?? {};
    last = { generation: s.metadata.generation, ...s.status };
    if (
      s.status?.observedGeneration === s.metadata.generation &&
      isDeepStrictEqual({ matchedPods, updatedPods, updatedReadyPods, readyPods }, want)
    )
      return;
    if (Date.now() > deadline) throw new Error(`SidecarSet ${name}: want ${JSON.stringify(want)}, last status ${JSON.stringify(last)}`);
    await sleep(1000);
  }
}

describe('SidecarSet: OpenKruise v1.8.2 e2e cold upgrade cases', { concurrency: 1 }, () => {
  test('sidecarSet upgrade cold sidecar container image only', async () => {
    const app = `cold-${ns}`;
    const name = `cold-${ns}`;
    await createSidecarSet(name, app, {
      namespace: '',
      namespaceSelector: { matchLabels: { inject: app } },
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 2 },
    });
    await createDeployment(app);
    const plain = await selectorPods(app);
    for (const p of plain) assert.equal(p.spec!.containers.length, 1);

    await client.patch(Namespaces, ns, { metadata: { labels: { inject: app } } }, { patchType: PatchType.Merge });
    for (const p of plain) await client.delete(Pods, p.metadata.name!, { namespace: ns });
    await sleep(5000);
    for (const p of await selectorPods(app)) {
      assert.equal(p.spec!.containers.length, 2);
      assert.equal(p.spec!.containers[0]!.image, 'nginx:1.0');
    }

    await setSidecarSet(name, { containers: [sidecar('busybox:1.36')] });
    await upgradeComplete(name, { matchedPods: 2, updatedPods: 2, updatedReadyPods: 2, readyPods: 2 });
    for (const p of await selectorPods(app)) {
      assert.equal(p.spec!.containers[0]!.image, 'busybox:1.36');
      assert.equal(p.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable')?.status, 'True');
    }
  });

  test('sidecarSet upgrade cold sidecar container image, and paused', async () => {
    const app = `paused-${ns}`;
    const name = `paused-${ns}`;
    await createSidecarSet(name, app, { namespace: ns, updateStrategy: { type: 'RollingUpdate' } });
    await createDeployment(app);

    await setSidecarSet(name, { containers: [sidecar('busybox:1.36')] });
    await sleep(5000);
    await setSidecarSet(name, { updateStrategy: { type: 'RollingUpdate', paused: true } });
    await upgradeComplete(name, { matchedPods: 2, updatedPods: 1, updatedReadyPods: 1, readyPods: 2 });

    await setSidecarSet(name, { updateStrategy: { type: 'RollingUpdate', paused: false } });
    await upgradeComplete(name, { matchedPods: 2, updatedPods: 2, updatedReadyPods: 2, readyPods: 2 });
  });
});
