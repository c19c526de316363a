// Which pods and PVCs a CloneSet acts on (upstream claimPods, which is handed only the pods the
// CloneSet already owns): an owned pod relabelled out of the selector is released (ownerRef
// removed, the pod lives on) and replaced; orphans, even matching ones, are never adopted (pods
// nor PVCs); pods of another controller are never touched. And the node cache read for
// topologySpreadConstraints ranking is synced before the first spread-aware scale-in after a
// manager start (on a cluster and manager of its own, so the manager can be restarted).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CloneSets, fromKubeconfigFile, Nodes, PersistentVolumeClaims, Pods, type KubeClient, type KubeObject, type OwnerReference } from '../../src/runtime/client.ts';
import type { Pod } from '../../src/controllers/cloneset/pods.ts';
import { apply, createNamespace, deleteNamespace, TEST_CLUSTER, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const INSTANCE_ID = 'apps.kruise.io/cloneset-instance-id';
const REVISION = 'controller-revision-hash';

const controllerRefOf = (cs: KubeObject): OwnerReference => ({
  apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: cs.metadata.name!, uid: cs.metadata.uid!, controller: true, blockOwnerDeletion: true,
});

function podManifest(name: string, labels: Record<string, string>, o: { owner?: OwnerReference; nodeName?: string } = {}) {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels, ...(o.owner ? { ownerReferences: [o.owner] } : {}) },
    spec: { containers: [{ name: 'main', image: 'nginx:1.0' }], ...(o.nodeName ? { nodeName: o.nodeName } : {}) },
  };
}

describe('CloneSet claiming', { concurrency: 2 }, () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = fromKubeconfigFile(testCluster().kubeconfig);
    ns = await createNamespace('csadopt');
  });

  after(async () => {
    await deleteNamespace(ns);
    await client.close();
  });

  const getPod = (name: string) => client.get<Pod & KubeObject>(Pods, name, { namespace: ns });
  const ownedBy = (p: Pod, cs: KubeObject) => p.metadata.ownerReferences?.some((r) => r.controller && r.uid === cs.metadata.uid) ?? false;

  test('an owned pod relabelled out of the selector is released (ownerRef removed, pod kept) and replaced', async () => {
    await apply(cloneSetManifest('release', { replicas: 2 }), ns);
    const cs = await waitSettled(client, ns, 'release', 2);
    const [victim] = await podsOf(client, ns, 'release');
    await client.patch(Pods, victim!.metadata.name!, { metadata: { labels: { app: 'released' } } }, { namespace: ns, patchType: 'application/merge-patch+json' });

    const released = await waitFor('the relabelled pod to be released', async () => {
      const p = await getPod(victim!.metadata.name!);
      return !ownedBy(p, cs) && p;
    }, 30_000);
    assert.equal(released.metadata.deletionTimestamp, undefined, 'a released pod is not deleted');
    assert.equal(released.metadata.ownerReferences, undefined, 'its only ownerReference is gone');
    await waitSettled(client, ns, 'release', 2);
    const pods = await podsOf(client, ns, 'release');
    assert.ok(pods.every((p) => ownedBy(p, cs)), 'the CloneSet has its 2 pods again, all its own');
    assert.ok(!pods.some((p) => p.metadata.name === victim!.metadata.name), 'the released pod is not among them');
  });

  test('a matching orphan pod is not adopted: the CloneSet creates its own replicas and leaves it alone', async () => {
    await apply(podManifest('adopt-orphan', { app: 'adopt' }), ns);
    await apply(cloneSetManifest('adopt', { replicas: 2 }), ns);
    const cs = await waitFor('the CloneSet to create 2 pods of its own', async () => {
      const c = await client.get<TestCloneSet>(CloneSets, 'adopt', { namespace: ns });
      const pods = await podsOf(client, ns, 'adopt');
      const own = pods.filter((p) => ownedBy(p, c) && isReady(p));
      return c.status?.replicas === 2 && c.status.readyReplicas === 2 && own.length === 2 && c;
    }, 45_000);
    await sleep(1000);
    const orphan = await getPod('adopt-orphan');
    assert.equal(orphan.metadata.ownerReferences, undefined);
    assert.equal(orphan.metadata.deletionTimestamp, undefined);
    assert.equal((await podsOf(client, ns, 'adopt')).length, 3, 'two owned pods and the orphan');
    assert.equal((await client.get<TestCloneSet>(CloneSets, 'adopt', { namespace: ns })).status.replicas, 2);
    assert.ok(cs.metadata.uid);
  });

  test('a matching pod of another controller is left alone', async () => {
    await apply(cloneSetManifest('foreign', { replicas: 1 }), ns);
    const cs = await waitSettled(client, ns, 'foreign', 1);
    const other: OwnerReference = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'someone-else', uid: '0c2f1e8e-0000-4000-8000-000000000001', controller: true };
    await apply(podManifest('foreign-pod', { app: 'foreign' }, { owner: other }), ns);
    await sleep(2000);
    const p = await getPod('foreign-pod');
    assert.deepEqual(p.metadata.ownerReferences?.map((r) => r.uid), [other.uid]);
    assert.equal(p.metadata.deletionTimestamp, undefined);
    const after = await client.get<TestCloneSet>(CloneSets, 'foreign', { namespace: ns });
    assert.equal(after.status.replicas, 1);
    assert.equal((await podsOf(client, ns, 'foreign')).filter((x) => ownedBy(x, cs)).length, 1);
  });

  test('a matching orphan PVC is not adopted or reused: the CloneSet creates its own', async () => {
    const manifest = cloneSetManifest('pvc', { replicas: 1 });
    (manifest.spec as Record<string, unknown>).volumeClaimTemplates = [{
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
    }];
    await apply({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim',
      metadata: { name: 'data-pvc-orphn', labels: { app: 'pvc', [INSTANCE_ID]: 'orphn' } },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
    }, ns);
    await apply(manifest, ns);
    const cs = await waitSettled(client, ns, 'pvc', 1);
    const [p] = await podsOf(client, ns, 'pvc');
    assert.notEqual(p!.metadata.labels?.[INSTANCE_ID], 'orphn');
    const pvcs = (await client.list<KubeObject>(PersistentVolumeClaims, { namespace: ns, labelSelector: 'app=pvc' })).items;
    const orphan = pvcs.find((c) => c.metadata.name === 'data-pvc-orphn')!;
    assert.equal(orphan.metadata.ownerReferences, undefined);
    const own = pvcs.filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === cs.metadata.uid));
    assert.deepEqual(own.map((c) => c.metadata.labels?.[INSTANCE_ID]), [p!.metadata.labels?.[INSTANCE_ID]]);
  });
});

describe('CloneSet node cache', () => {
  const cluster = new OwnCluster(`${TEST_CLUSTER}-cs-adopt`, 3);
  const ns = 'default';

  before(() => cluster.up());
  after(() => cluster.down());

  test('the first spread-aware scale-in after a manager start ranks with the synced node cache', { timeout: 180_000 }, async () => {
    const client = cluster.client;
    await cluster.startManager();
    const manifest = cloneSetManifest('spread', { replicas: 0 });
    (manifest.spec.template.spec as Record<string, unknown>).topologySpreadConstraints = [
      { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'spread' } } },
    ];
    await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
    const cs = await waitSettled(client, ns, 'spread', 0);
    const revision = cs.status.updateRevision!;

    // With the manager down (and its webhooks out of the way), hand the CloneSet three pods of its
    // own: two in zone a, the newest alone in zone b, and ask it for two.
    await cluster.killManager();
    await cluster.kubectl(['delete', 'mutatingwebhookconfigurations,validatingwebhookconfigurations', '--all']);
    const nodes = (await client.list<KubeObject>(Nodes)).items.map((n) => n.metadata.name!).sort();
    assert.ok(nodes.length >= 3, `3 nodes, got ${nodes}`);
    await cluster.kubectl(['label', 'node', nodes[0]!, nodes[1]!, 'zone=a', '--overwrite']);
    await cluster.kubectl(['label', 'node', nodes[2]!, 'zone=b', '--overwrite']);
    const owner = controllerRefOf(cs);
    const labels = (id: string) => ({ app: 'spread', [INSTANCE_ID]: id, [REVISION]: revision });
    const place = async (id: string, node: string) => {
      await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(podManifest(`spread-${id}`, labels(id), { owner, nodeName: node })));
      await waitFor(`pod spread-${id} ready`, async () => isReady(await client.get<Pod & KubeObject>(Pods, `spread-${id}`, { namespace: ns })), 30_000);
    };
    await place('a1', nodes[0]!);
    await place('a2', nodes[1]!);
    // Without node labels the pod ready for the shortest time goes first: make that the zone-b one.
    await sleep(1100);
    await place('b', nodes[2]!);
    await client.patch(CloneSets, 'spread', { spec: { replicas: 2 } }, { namespace: ns, patchType: 'application/merge-patch+json' });

    await cluster.startManager();
    await waitSettled(client, ns, 'spread', 2, { timeoutMs: 60_000 });
    const names = (await podsOf(client, ns, 'spread')).map((p) => p.metadata.name);
    assert.ok(names.includes('spread-b'), `the pod alone in zone b stays (zone a is the crowded one); left: ${names}`);
    assert.equal(names.filter((n) => n === 'spread-a1' || n === 'spread-a2').length, 1);
  });
});
