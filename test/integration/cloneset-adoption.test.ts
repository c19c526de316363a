// Which pods and PVCs a CloneSet acts on (upstream claimPods, which is handed only the pods the
// CloneSet already owns): an owned pod relabelled out of the selector is released (ownerRef
// removed, the pod lives on) and replaced; orphans, even matching ones, are never adopted (pods
// nor PVCs); pods of another controller are never touched. And the node cache read for
// topologySpreadConstraints ranking is synced before the first spread-aware scale-in after a
// manager start (on a cluster and manager of its own, so the manager can be restarted).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject, OwnerReference } from '../../src/apis/core-objects.ts';
import { CloneSets, ConfigMaps, PersistentVolumeClaims, Pods } from '../../src/runtime/resources.ts';
import type { CloneSet } from '../../src/apis/apps/cloneset.ts';
import type { Pod } from '../../src/controllers/cloneset/pods.ts';
import { sortPodsForDeletion } from '../../src/controllers/cloneset/scale.ts';
import { apply, createNamespace, deleteNamespace, TEST_CLUSTER, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const INSTANCE_ID = 'apps.kruise.io/cloneset-instance-id';

function podManifest(name: string, labels: Record<string, string>, owner?: OwnerReference) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
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

  const getPod = (name: string) => client.get<Pod>(Pods, name, { namespace: ns });
  const ownedBy = (p: Pod, cs: KubeObject) => p.metadata.ownerReferences?.some((r) => r.controller && r.uid === cs.metadata.uid) ?? false;

  test('an owned pod relabelled out of the selector is released (ownerRef removed, pod kept) and replaced', async () => {
    await apply(cloneSetManifest('release', { replicas: 2 }), ns);
    const cs = await waitSettled(client, ns, 'release', 2);
    const [victim] = await podsOf(client, ns, 'release');
    await client.patch(
      Pods,
      victim!.metadata.name!,
      { metadata: { labels: { app: 'released' } } },
      { namespace: ns, patchType: 'application/merge-patch+json' },
    );

    const released = await waitFor(
      'the relabelled pod to be released',
      async () => {
        const p = await getPod(victim!.metadata.name!);
        return !ownedBy(p, cs) && p;
      },
      30_000,
    );
    assert.equal(released.metadata.deletionTimestamp, undefined, 'a released pod is not deleted');
    assert.equal(released.metadata.ownerReferences, undefined, 'its only ownerReference is gone');
    await waitSettled(client, ns, 'release', 2);
    const pods = await podsOf(client, ns, 'release');
    assert.ok(
      pods.every((p) => ownedBy(p, cs)),
      'the CloneSet has its 2 pods again, all its own',
    );
    assert.ok(!pods.some((p) => p.metadata.name === victim!.metadata.name), 'the released pod is not among them');
  });

  test('a matching orphan pod is not adopted: the CloneSet creates its own replicas and leaves it alone', async () => {
    await apply(podManifest('adopt-orphan', { app: 'adopt' }), ns);
    await apply(cloneSetManifest('adopt', { replicas: 2 }), ns);
    const cs = await waitFor(
      'the CloneSet to create 2 pods of its own',
      async () => {
        const c = await client.get<TestCloneSet>(CloneSets, 'adopt', { namespace: ns });
        const pods = await podsOf(client, ns, 'adopt');
        const own = pods.filter((p) => ownedBy(p, c) && isReady(p));
        return c.status?.replicas === 2 && c.status.readyReplicas === 2 && own.length === 2 && c;
      },
      45_000,
    );
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
    // Another controller's object must exist, or the garbage collector would delete its dependent.
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'someone-else' } }, ns);
    const cm = await client.get<KubeObject>(ConfigMaps, 'someone-else', { namespace: ns });
    const other: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'someone-else', uid: cm.metadata.uid!, controller: true };
    await apply(podManifest('foreign-pod', { app: 'foreign' }, other), ns);
    await sleep(2000);
    const p = await getPod('foreign-pod');
    assert.deepEqual(
      p.metadata.ownerReferences?.map((r) => r.uid),
      [other.uid],
    );
    assert.equal(p.metadata.deletionTimestamp, undefined);
    const after = await client.get<TestCloneSet>(CloneSets, 'foreign', { namespace: ns });
    assert.equal(after.status.replicas, 1);
    assert.equal((await podsOf(client, ns, 'foreign')).filter((x) => ownedBy(x, cs)).length, 1);
  });

  test('a matching orphan PVC is not adopted or reused: the CloneSet creates its own', async () => {
    const manifest = cloneSetManifest('pvc', { replicas: 1 });
    (manifest.spec as Record<string, unknown>).volumeClaimTemplates = [
      {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
      },
    ];
    await apply(
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data-pvc-orphn', labels: { app: 'pvc', [INSTANCE_ID]: 'orphn' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
      },
      ns,
    );
    await apply(manifest, ns);
    // No volume provisioner here, so the pod stays unscheduled: wait for it to exist, not to be ready.
    const { cs, p } = await waitFor(
      'the CloneSet to create its pod and claim',
      async () => {
        const c = await client.get<TestCloneSet>(CloneSets, 'pvc', { namespace: ns });
        const [pod] = await podsOf(client, ns, 'pvc');
        return c.status?.replicas === 1 && pod && { cs: c, p: pod };
      },
      30_000,
    );
    assert.notEqual(p.metadata.labels?.[INSTANCE_ID], 'orphn');
    const pvcs = (await client.list<KubeObject>(PersistentVolumeClaims, { namespace: ns, labelSelector: 'app=pvc' })).items;
    const orphan = pvcs.find((c) => c.metadata.name === 'data-pvc-orphn')!;
    assert.equal(orphan.metadata.ownerReferences, undefined);
    const own = pvcs.filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === cs.metadata.uid));
    assert.deepEqual(
      own.map((c) => c.metadata.labels?.[INSTANCE_ID]),
      [p.metadata.labels?.[INSTANCE_ID]],
    );
  });
});

describe('CloneSet node cache', () => {
  // KruiseDaemon off: otherwise the NodeImage controller declares a node informer at start-up and
  // the CloneSet shares it, synced; alone, the CloneSet opens it on first use.
  const cluster = new OwnCluster(`${TEST_CLUSTER}-cs-adopt`, 3, ['--feature-gates', 'KruiseDaemon=false']);
  const ns = 'default';

  before(() => cluster.up());
  after(() => cluster.down());

  test('the first spread-aware scale-in after a manager start ranks with the synced node cache', { timeout: 180_000 }, async () => {
    const client = cluster.client;
    await cluster.startManager();
    // One pod per node (hostname, DoNotSchedule); the zone constraint is what ranks the scale-in.
    const manifest = cloneSetManifest('spread', { replicas: 3 });
    (manifest.spec.template.spec as Record<string, unknown>).topologySpreadConstraints = [
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { app: 'spread' } },
      },
      { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'spread' } } },
    ];
    await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
    await waitSettled(client, ns, 'spread', 3, { timeoutMs: 60_000 });
    const cs = await client.get<TestCloneSet>(CloneSets, 'spread', { namespace: ns });
    const pods = await podsOf(client, ns, 'spread');
    assert.equal(new Set(pods.map((p) => p.spec?.nodeName)).size, 3, 'one pod per node');

    // Zones chosen so that ranking without nodes and ranking with them disagree: the pod the
    // controller would delete without node labels sits alone in zone b; the other two share zone a.
    const blind = sortPodsForDeletion(cs as CloneSet, pods, Date.now(), () => undefined)[0]!;
    const zoneOf = (node: string) => (node === blind.spec?.nodeName ? 'b' : 'a');
    const withNodes = sortPodsForDeletion(cs as CloneSet, pods, Date.now(), (node) => ({ zone: zoneOf(node) }))[0]!;
    assert.notEqual(withNodes.metadata.name, blind.metadata.name, 'the scenario tells the two rankings apart');

    // With the manager down (its webhooks out of the way), label the zones and ask for two pods.
    await cluster.killManager();
    await cluster.kubectl(['delete', 'mutatingwebhookconfigurations,validatingwebhookconfigurations', '--all']);
    for (const p of pods) await cluster.kubectl(['label', 'node', p.spec!.nodeName!, `zone=${zoneOf(p.spec!.nodeName!)}`, '--overwrite']);
    await client.patch(CloneSets, 'spread', { spec: { replicas: 2 } }, { namespace: ns, patchType: 'application/merge-patch+json' });

    await cluster.startManager();
    await waitSettled(client, ns, 'spread', 2, { timeoutMs: 60_000 });
    const left = (await podsOf(client, ns, 'spread')).map((p) => p.metadata.name);
    assert.ok(left.includes(blind.metadata.name), `the pod alone in zone b stays; left: ${left}`);
    assert.ok(!left.includes(withNodes.metadata.name), `a pod of crowded zone a went; left: ${left}`);
  });
});
