// CloneSet end to end on the local control plane, driven by the suite's Kruise TS manager: scaling
// (also through the scale subresource), ReCreate and in-place updates, partitions, deletion order,
// specified deletion under maxUnavailable / maxSurge.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { Pods, CloneSets } from '../../src/runtime/resources.ts';
import type { Pod } from '../../src/controllers/cloneset/pods.ts';
import { apply, createNamespace, deleteNamespace, kubectl, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { PodBoundsWatcher } from '../harness/pod-watchers.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('cs');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

const get = (name: string) => client.get<TestCloneSet>(CloneSets, name, { namespace: ns });
const patchSpec = (name: string, spec: object) =>
  client.patch(CloneSets, name, { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });

describe('CloneSet', { concurrency: 2 }, () => {
  test('scales 0 → 10 → 3, and to 5 through kubectl scale', async () => {
    await apply(cloneSetManifest('scale', { replicas: 0 }), ns);
    await waitSettled(client, ns, 'scale', 0);

    await patchSpec('scale', { replicas: 10 });
    let cs = await waitSettled(client, ns, 'scale', 10);
    assert.equal(cs.status.readyReplicas, 10);
    assert.equal(cs.status.availableReplicas, 10);
    assert.equal(cs.status.updatedReplicas, 10);
    assert.equal(cs.status.updatedReadyReplicas, 10);
    assert.equal(cs.status.currentRevision, cs.status.updateRevision);
    const pods = await podsOf(client, ns, 'scale');
    assert.equal(pods.length, 10);
    for (const p of pods) {
      assert.equal(p.metadata.ownerReferences?.[0]?.controller, true);
      assert.equal(p.metadata.ownerReferences?.[0]?.blockOwnerDeletion, true);
      assert.equal(p.metadata.name, `scale-${p.metadata.labels?.['apps.kruise.io/cloneset-instance-id']}`);
      assert.equal(p.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Normal');
      assert.ok(p.status?.conditions?.some((c) => c.type === 'InPlaceUpdateReady' && c.status === 'True'));
    }

    await patchSpec('scale', { replicas: 3 });
    cs = await waitSettled(client, ns, 'scale', 3);
    assert.equal(cs.status.availableReplicas, 3);
    assert.equal((await podsOf(client, ns, 'scale')).length, 3);

    await kubectl(['-n', ns, 'scale', 'clone/scale', '--replicas=5']);
    cs = await waitSettled(client, ns, 'scale', 5);
    assert.equal(cs.status.readyReplicas, 5);
    assert.equal((await podsOf(client, ns, 'scale')).length, 5);

    const events = await kubectl([
      '-n',
      ns,
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=scale',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    assert.match(events, /SuccessfulCreate/);
    assert.match(events, /SuccessfulDelete/);
  });

  test('pods with the KruisePodReady readiness gate get the condition and become Ready', async () => {
    const manifest = cloneSetManifest('gated', { replicas: 2 });
    (manifest.spec.template.spec as Record<string, unknown>).readinessGates = [{ conditionType: 'KruisePodReady' }];
    await apply(manifest, ns);
    await waitSettled(client, ns, 'gated', 2);
    for (const p of await podsOf(client, ns, 'gated')) {
      assert.ok(p.status?.conditions?.some((c) => c.type === 'KruisePodReady' && c.status === 'True'));
    }
  });

  test('a new CloneSet whose revision name is taken by another owner bumps collisionCount and settles', async () => {
    // The revision name the CloneSet hashes to, from a first CloneSet of the same name and spec.
    await apply(cloneSetManifest('collide', { replicas: 0 }), ns);
    const taken = (await waitSettled(client, ns, 'collide', 0)).status.updateRevision!;
    await client.delete(CloneSets, 'collide', { namespace: ns, propagationPolicy: 'Orphan' });
    await waitFor('the CloneSet gone', async () => !(await kubectl(['-n', ns, 'get', 'clonesets', '-o', 'name'])).includes('/collide'));
    await kubectl(['-n', ns, 'delete', 'controllerrevision', taken]);
    // The name taken by a revision another object owns (a ConfigMap, so the GC keeps it).
    const owner = JSON.parse(await kubectl(['-n', ns, 'create', 'configmap', 'collide-owner', '-o', 'json'])) as {
      metadata: { uid: string };
    };
    await apply(
      {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: taken,
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'collide-owner', uid: owner.metadata.uid, controller: true }],
        },
        revision: 1,
        data: {},
      },
      ns,
    );
    // Its status is empty when the collision is written: the CRD's required status fields must go
    // with collisionCount, or the API server refuses the write round after round.
    await apply(cloneSetManifest('collide', { replicas: 1 }), ns);
    const cs = await waitSettled(client, ns, 'collide', 1);
    assert.equal(cs.status.collisionCount, 1);
    assert.notEqual(cs.status.updateRevision, taken);
  });

  test('ReCreate update replaces every pod with the new image', async () => {
    await apply(cloneSetManifest('recreate', { replicas: 3 }), ns);
    await waitSettled(client, ns, 'recreate', 3);
    const before = new Set((await podsOf(client, ns, 'recreate')).map((p) => p.metadata.name));

    await patchSpec('recreate', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
    const cs = await waitSettled(client, ns, 'recreate', 3, { timeoutMs: 60_000 });
    assert.equal(cs.status.currentRevision, cs.status.updateRevision);
    const pods = await podsOf(client, ns, 'recreate');
    for (const p of pods) {
      assert.ok(!before.has(p.metadata.name), `${p.metadata.name} should be a new pod`);
      assert.equal(p.spec?.containers[0].image, 'nginx:2.0');
      assert.equal(p.metadata.labels?.['controller-revision-hash'], cs.status.updateRevision);
    }
  });

  test('InPlaceIfPossible update keeps pod identity and bumps the image', async () => {
    await apply(cloneSetManifest('inplace', { replicas: 3, podUpdatePolicy: 'InPlaceIfPossible' }), ns);
    await waitSettled(client, ns, 'inplace', 3);
    const identity = (p: Pod) => `${p.metadata.name}|${p.metadata.uid}|${p.spec?.nodeName}|${(p.status as { podIP?: string })?.podIP}`;
    const before = (await podsOf(client, ns, 'inplace')).map(identity);

    await patchSpec('inplace', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
    const cs = await waitSettled(client, ns, 'inplace', 3, { timeoutMs: 60_000 });
    const pods = await podsOf(client, ns, 'inplace');
    assert.deepEqual(pods.map(identity), before);
    for (const p of pods) {
      assert.equal(p.spec?.containers[0].image, 'nginx:2.0');
      assert.equal(p.status?.containerStatuses?.[0].image, 'nginx:2.0');
      assert.equal(p.status?.containerStatuses?.[0].restartCount, 1);
      assert.equal(p.metadata.labels?.['controller-revision-hash'], cs.status.updateRevision);
      assert.equal(p.metadata.labels?.['lifecycle.apps.kruise.io/state'], 'Normal');
      assert.ok(p.status?.conditions?.some((c) => c.type === 'InPlaceUpdateReady' && c.status === 'True'));
      assert.ok(p.metadata.annotations?.['apps.kruise.io/inplace-update-state']);
    }
    const events = await kubectl([
      '-n',
      ns,
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=inplace',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    assert.match(events, /SuccessfulUpdatePodInPlace/);
  });

  test('replicas 8 with partition "90%" updates exactly one pod', async () => {
    await apply(cloneSetManifest('pct', { replicas: 8, partition: '90%', podUpdatePolicy: 'InPlaceIfPossible' }), ns);
    await waitSettled(client, ns, 'pct', 8);
    await patchSpec('pct', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
    const cs = await waitSettled(client, ns, 'pct', 8, { updated: 1 });
    assert.equal(cs.status.expectedUpdatedReplicas, 1);
    await sleep(1500);
    const pods = await podsOf(client, ns, 'pct');
    assert.equal(pods.filter((p) => p.spec?.containers[0].image === 'nginx:2.0').length, 1);
    assert.equal((await get('pct')).status.updatedReplicas, 1);
  });

  test('scale-down deletes the pod with deletion cost -100 first', async () => {
    await apply(cloneSetManifest('cost', { replicas: 4 }), ns);
    await waitSettled(client, ns, 'cost', 4);
    const pods = await podsOf(client, ns, 'cost');
    const victim = pods[2].metadata.name!;
    await client.patch(
      Pods,
      victim,
      { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } } },
      { namespace: ns, patchType: 'application/merge-patch+json' },
    );
    for (const p of pods) {
      if (p.metadata.name !== victim) {
        await client.patch(
          Pods,
          p.metadata.name!,
          { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '100' } } },
          { namespace: ns, patchType: 'application/merge-patch+json' },
        );
      }
    }
    await patchSpec('cost', { replicas: 3 });
    await waitSettled(client, ns, 'cost', 3);
    const names = (await podsOf(client, ns, 'cost')).map((p) => p.metadata.name);
    assert.ok(!names.includes(victim), `${victim} should have been deleted, left: ${names}`);
    assert.deepEqual(
      names,
      pods.map((p) => p.metadata.name).filter((n) => n !== victim),
    );
  });

  test('podsToDelete and the specified-delete label replace the named pods', async () => {
    await apply(cloneSetManifest('specified', { replicas: 3 }), ns);
    await waitSettled(client, ns, 'specified', 3);
    const pods = await podsOf(client, ns, 'specified');
    const [first, second] = pods.map((p) => p.metadata.name!);

    await patchSpec('specified', { scaleStrategy: { podsToDelete: [first] } });
    await waitFor(`${first} replaced and podsToDelete truncated`, async () => {
      const cs = await get('specified');
      const names = (await podsOf(client, ns, 'specified')).map((p) => p.metadata.name);
      return names.length === 3 && !names.includes(first) && (cs.spec.scaleStrategy?.podsToDelete ?? []).length === 0;
    });
    await waitSettled(client, ns, 'specified', 3);

    await client.patch(
      Pods,
      second,
      { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } },
      { namespace: ns, patchType: 'application/merge-patch+json' },
    );
    await waitFor(`${second} replaced`, async () => {
      const names = (await podsOf(client, ns, 'specified')).map((p) => p.metadata.name);
      return names.length === 3 && !names.includes(second);
    });
    await waitSettled(client, ns, 'specified', 3);
  });

  test('specified deletion with maxSurge creates the replacement first', async () => {
    await apply(cloneSetManifest('surge', { replicas: 3, maxSurge: 1, maxUnavailable: 0 }), ns);
    await waitSettled(client, ns, 'surge', 3);
    const victim = (await podsOf(client, ns, 'surge'))[0].metadata.name!;
    // The victim stays until a fourth pod exists and is ready: watched event by event (polling missed
    // the short moment of 4 pods on a loaded machine).
    const watcher = new PodBoundsWatcher(client, ns, 'app=surge', { maxActive: 4, minReady: 3, maxNotReady: 1 });
    await watcher.start();
    try {
      await client.patch(
        Pods,
        victim,
        { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } },
        { namespace: ns, patchType: 'application/merge-patch+json' },
      );
      // Read from the watch itself, not a fresh list: a list can show the end state while events
      // before it (the surge pod's) are still on their way, and stopping then would drop them.
      await waitFor(`${victim} deleted, as the pod watch sees it`, async () => {
        const active = watcher.activeNames();
        return active.length === 3 && !active.includes(victim);
      });
    } finally {
      watcher.stop();
    }
    assert.deepEqual(watcher.violations, []);
    assert.equal(watcher.maxActive, 4, 'a surge pod beside the victim');
    await waitSettled(client, ns, 'surge', 3);
  });

  test('specified deletion with maxUnavailable 1 deletes before creating, one ready pod at a time', async () => {
    await apply(cloneSetManifest('unavail', { replicas: 4, maxUnavailable: 1 }), ns);
    await waitSettled(client, ns, 'unavail', 4);
    const names = (await podsOf(client, ns, 'unavail')).map((p) => p.metadata.name!);
    const victims = names.slice(0, 2);
    await Promise.all(
      victims.map((v) =>
        client.patch(
          Pods,
          v,
          { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } },
          { namespace: ns, patchType: 'application/merge-patch+json' },
        ),
      ),
    );
    // Never more than one ready pod short of 4, and never more than 4 pods.
    let minReady = 4;
    let maxPods = 0;
    await waitFor(
      'both victims replaced',
      async () => {
        const pods = await podsOf(client, ns, 'unavail');
        minReady = Math.min(minReady, pods.filter(isReady).length);
        maxPods = Math.max(maxPods, pods.length);
        return pods.length === 4 && pods.every(isReady) && !pods.some((p) => victims.includes(p.metadata.name!));
      },
      45_000,
      50,
    );
    assert.ok(minReady >= 3, `ready pods dropped to ${minReady}`);
    assert.ok(maxPods <= 4, `saw ${maxPods} pods`);
    await waitSettled(client, ns, 'unavail', 4);
  });
});

test('partition 80 → 60 → 40 → 20 → 0 on 100 replicas updates exactly the expected pods', { timeout: 240_000 }, async () => {
  await apply(cloneSetManifest('partition', { replicas: 100, partition: 80 }), ns);
  await waitSettled(client, ns, 'partition', 100, { timeoutMs: 90_000 });
  await patchSpec('partition', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
  for (const partition of [80, 60, 40, 20, 0]) {
    if (partition !== 80) await patchSpec('partition', { updateStrategy: { rollingUpdate: { partition } } });
    const cs = await waitSettled(client, ns, 'partition', 100, { updated: 100 - partition, timeoutMs: 90_000 });
    assert.equal(cs.status.expectedUpdatedReplicas, 100 - partition);
    const pods = await podsOf(client, ns, 'partition');
    assert.equal(pods.filter((p) => p.metadata.labels?.['controller-revision-hash'] === cs.status.updateRevision).length, 100 - partition);
    assert.equal(pods.filter((p) => p.spec?.containers[0].image === 'nginx:2.0').length, 100 - partition);
  }
});
