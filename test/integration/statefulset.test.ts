// Advanced StatefulSet end to end on the local control plane, driven by the suite's manager
// (behaviour spec §4, issue #12's acceptance list): reserved ordinals, OrderedReady one at a time,
// scale down from the highest ordinal and through the scale subresource, a Parallel in-place
// rollout bounded by maxUnavailable and partition, and whenScaled=Delete claims.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { AdvancedStatefulSets, PersistentVolumeClaims } from '../../src/runtime/resources.ts';
import { apply, createNamespace, deleteNamespace, kubectl, testCluster, waitFor } from '../harness/cluster.ts';
import { allPods, isReady, ordinal, podsOf, stsManifest, waitOrdinals, type TestStatefulSet } from './statefulset-helpers.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('asts');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

const patchSpec = (name: string, spec: object) =>
  client.patch(AdvancedStatefulSets, name, { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });

const readySince = (p: { status?: { conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> } }) =>
  Date.parse(p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True')?.lastTransitionTime ?? '');

describe('Advanced StatefulSet', { concurrency: 3 }, () => {
  test('reserveOrdinals [1,"3-4"]: OrderedReady creates 0,2,5,6,7 one at a time; scale to 3 deletes the highest; kubectl scale works', async () => {
    // Each pod takes a moment to become Ready, so creating the next one early would show.
    const manifest = stsManifest('ordered', { replicas: 5, reserveOrdinals: [1, '3-4'] });
    (manifest.spec.template.metadata as { annotations?: Record<string, string> }).annotations = { 'sim.kruise-ts.io/start-delay': '1s' };
    let maxNotReady = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const pods = await podsOf(client, ns, 'ordered');
        maxNotReady = Math.max(maxNotReady, pods.filter((p) => !isReady(p)).length);
        await sleep(100);
      }
    })();
    await apply(manifest, ns);
    await waitOrdinals(client, ns, 'ordered', [0, 2, 5, 6, 7]);
    watching = false;
    await watcher;
    assert.equal(maxNotReady, 1, 'OrderedReady never has two pods starting at once');
    const pods = await podsOf(client, ns, 'ordered');
    for (let i = 1; i < pods.length; i++) {
      const created = Date.parse(pods[i].metadata.creationTimestamp ?? '');
      assert.ok(created >= readySince(pods[i - 1]), `${pods[i].metadata.name} created before ${pods[i - 1].metadata.name} was Ready`);
    }
    for (const p of pods) {
      assert.equal(p.spec?.hostname, p.metadata.name);
      assert.equal((p.spec as { subdomain?: string }).subdomain, 'ordered');
      assert.equal(p.metadata.labels?.['statefulset.kubernetes.io/pod-name'], p.metadata.name);
      assert.equal(p.metadata.labels?.['apps.kubernetes.io/pod-index'], String(ordinal(p)));
      assert.ok(p.metadata.labels?.['controller-revision-hash']);
    }

    await patchSpec('ordered', { replicas: 3 });
    await waitOrdinals(client, ns, 'ordered', [0, 2, 5]);

    await kubectl(['-n', ns, 'scale', 'asts/ordered', '--replicas=4']);
    const set = await waitOrdinals(client, ns, 'ordered', [0, 2, 5, 6]);
    assert.equal(set.status?.currentRevision, set.status?.updateRevision);
    const events = await kubectl([
      '-n',
      ns,
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=ordered',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    assert.match(events, /SuccessfulCreate/);
    assert.match(events, /SuccessfulDelete/);
  });

  test('Parallel, maxUnavailable 2, partition 2: in-place update of 6 pods updates exactly 4, highest first, UIDs kept, never more than 2 unavailable', async () => {
    const rollingUpdate = { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 2, partition: 2 };
    const manifest = stsManifest('inplace', {
      replicas: 6,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate },
    });
    (manifest.spec.template.metadata as { annotations?: Record<string, string> }).annotations = { 'sim.kruise-ts.io/start-delay': '1s' };
    await apply(manifest, ns);
    const before = await waitOrdinals(client, ns, 'inplace', [0, 1, 2, 3, 4, 5]);
    const uids = new Map((await podsOf(client, ns, 'inplace')).map((p) => [p.metadata.name, p.metadata.uid]));

    let maxUnavailable = 0;
    let observations = 0;
    const firstSeenUpdated = new Map<number, number>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const pods = await allPods(client, ns, 'inplace');
        const set = await client.get<TestStatefulSet>(AdvancedStatefulSets, 'inplace', { namespace: ns });
        const update = set.status?.updateRevision;
        observations++;
        maxUnavailable = Math.max(maxUnavailable, 6 - pods.filter((p) => isReady(p) && !p.metadata.deletionTimestamp).length);
        for (const p of pods) {
          if (
            update &&
            update !== before.status?.updateRevision &&
            p.metadata.labels?.['controller-revision-hash'] === update &&
            !firstSeenUpdated.has(ordinal(p))
          ) {
            firstSeenUpdated.set(ordinal(p), observations);
          }
        }
        await sleep(50);
      }
    })();
    await patchSpec('inplace', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
    const after = await waitOrdinals(client, ns, 'inplace', [0, 1, 2, 3, 4, 5], { updated: 4, timeoutMs: 90_000 });
    watching = false;
    await watcher;

    assert.notEqual(after.status?.updateRevision, before.status?.updateRevision);
    assert.ok(maxUnavailable <= 2, `at most 2 unavailable, saw ${maxUnavailable}`);
    assert.ok(maxUnavailable >= 1, 'the rollout was observed');
    const pods = await podsOf(client, ns, 'inplace');
    for (const p of pods) {
      assert.equal(p.metadata.uid, uids.get(p.metadata.name), `${p.metadata.name} kept its UID`);
      const updated = ordinal(p) >= 2;
      assert.equal(p.spec?.containers[0].image, updated ? 'nginx:2.0' : 'nginx:1.0', p.metadata.name);
      assert.equal(p.metadata.labels?.['controller-revision-hash'], updated ? after.status?.updateRevision : before.status?.updateRevision);
      if (updated) {
        assert.equal(p.status?.containerStatuses?.[0].restartCount, 1);
        assert.ok(p.metadata.annotations?.['apps.kruise.io/inplace-update-state']);
      }
    }
    // highest ordinals first: 5 and 4 were updated no later than 3 and 2
    const seen = (o: number) => firstSeenUpdated.get(o) ?? Infinity;
    assert.ok(Math.max(seen(5), seen(4)) <= Math.min(seen(3), seen(2)), `update order ${JSON.stringify([...firstSeenUpdated])}`);
    assert.equal(after.status?.currentRevision, before.status?.updateRevision, 'partition keeps the rollout from completing');
  });

  test('whenScaled=Delete: claims of scaled-away ordinals are deleted, the others kept', async () => {
    const manifest = stsManifest('claims', {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      reserveOrdinals: [0, '2-5'],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
      volumeClaimTemplates: [
        // A class nothing provisions: the claims stay unbound and the pods unscheduled, so no
        // pvc-protection finalizer holds a deleted claim (the cluster's default class would bind them).
        {
          metadata: { name: 'data' },
          spec: { storageClassName: 'unprovisioned', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    });
    await apply(manifest, ns);
    const claimNames = async () =>
      (await client.list<KubeObject>(PersistentVolumeClaims, { namespace: ns })).items
        .filter((c) => c.metadata.name?.startsWith('data-claims-') && !c.metadata.deletionTimestamp)
        .map((c) => c.metadata.name)
        .sort();
    // Unbound claims keep the pods Pending: creation is what counts.
    await waitFor('pods 1,6,7 and their claims', async () => {
      const pods = (await podsOf(client, ns, 'claims')).map(ordinal);
      return (
        JSON.stringify(pods) === '[1,6,7]' && JSON.stringify(await claimNames()) === '["data-claims-1","data-claims-6","data-claims-7"]'
      );
    });
    const pod1 = (await podsOf(client, ns, 'claims'))[0];
    assert.deepEqual((pod1.spec as { volumes?: unknown[] }).volumes?.[0], {
      name: 'data',
      persistentVolumeClaim: { claimName: 'data-claims-1' },
    });

    await patchSpec('claims', { replicas: 1 });
    await waitFor(
      'pods 6,7 and their claims gone',
      async () => {
        const pods = (await allPods(client, ns, 'claims')).map(ordinal);
        const claims = await claimNames();
        if (JSON.stringify(pods) !== '[1]' || JSON.stringify(claims) !== '["data-claims-1"]')
          throw new Error(`pods ${pods}, claims ${claims}`);
        return true;
      },
      60_000,
    );
    // A user deleting the claim of a Pending pod gets it recreated.
    await client.delete(PersistentVolumeClaims, 'data-claims-1', { namespace: ns });
    await waitFor('data-claims-1 recreated', async () => JSON.stringify(await claimNames()) === '["data-claims-1"]', 30_000);
  });

  test('preDelete hook holds a scaled-away pod in PreparingDelete until released; specified-delete recreates a pod under its name', async () => {
    const manifest = stsManifest('hooks', {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      lifecycle: { preDelete: { labelsHandler: { hold: 'true' } } },
    });
    (manifest.spec.template.metadata as { labels: Record<string, string> }).labels.hold = 'true';
    await apply(manifest, ns);
    await waitOrdinals(client, ns, 'hooks', [0, 1]);

    await patchSpec('hooks', { replicas: 1 });
    await waitFor('hooks-1 in PreparingDelete', async () => {
      const p = (await allPods(client, ns, 'hooks')).find((x) => x.metadata.name === 'hooks-1');
      return p?.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'PreparingDelete' && !p.metadata.deletionTimestamp;
    });
    await sleep(1500);
    assert.ok(
      (await podsOf(client, ns, 'hooks')).some((p) => p.metadata.name === 'hooks-1'),
      'a hooked pod is not deleted',
    );
    await kubectl(['-n', ns, 'label', 'pod', 'hooks-1', 'hold-']);
    await waitOrdinals(client, ns, 'hooks', [0]);

    const before = (await podsOf(client, ns, 'hooks'))[0];
    await kubectl(['-n', ns, 'label', 'pod', 'hooks-0', 'hold-', 'apps.kruise.io/specified-delete=true']);
    await waitFor(
      'hooks-0 recreated',
      async () => {
        const pods = await podsOf(client, ns, 'hooks');
        return pods.length === 1 && pods[0].metadata.uid !== before.metadata.uid && isReady(pods[0]);
      },
      60_000,
    );
    const [after] = await podsOf(client, ns, 'hooks');
    assert.equal(after.metadata.name, 'hooks-0');
    assert.equal(after.metadata.labels?.['apps.kruise.io/specified-delete'], undefined);
  });
});
