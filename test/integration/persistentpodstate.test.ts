// PersistentPodState on the suite's shared manager and pod webhook (spec §14, issue #16's
// acceptance): an Advanced StatefulSet asking for a generated PersistentPodState (required zone,
// preferred node) has its pod's place recorded; the pod deleted and recreated prefers its node, and
// with that node cordoned returns to its recorded zone, never another; scaled away, its state goes.
// The test's own KWOK nodes (two in one zone, one in another) are tainted so no other test's pods
// land on them, and the real kube-scheduler does the placing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { AdvancedStatefulSets, Nodes, PersistentPodStates, Pods, StatefulSets } from '../../src/runtime/resources.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

type Obj = KubeObject & { spec?: any; status?: any };

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';
const run = randomBytes(3).toString('hex');
const [nodeA, nodeB, nodeC] = ['a', 'b', 'c'].map((n) => `pps-${run}-${n}`) as [string, string, string];
const [zone1, zone2] = [`pps-${run}-z1`, `pps-${run}-z2`];

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('pps');
});

after(async () => {
  await deleteNamespace(ns);
  for (const n of [nodeA, nodeB, nodeC]) await client.delete(Nodes, n).catch(() => undefined);
  await client.close();
});

async function createNode(name: string, zone: string, unschedulable: boolean): Promise<void> {
  await client.create(Nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { [HOST]: name, [ZONE]: zone, 'kubernetes.io/os': 'linux', 'pps-test': run },
    },
    spec: { unschedulable, taints: [{ key: 'pps-test', value: run, effect: 'NoSchedule' }] },
    status: { allocatable: { cpu: '32', memory: '256Gi', pods: '110' }, capacity: { cpu: '32', memory: '256Gi', pods: '110' } },
  } as KubeObject);
}

const cordon = (name: string, unschedulable: boolean) =>
  client.patch(Nodes, name, { spec: { unschedulable } }, { patchType: PatchType.Merge });

const isReady = (p: Obj) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

/** Deletes web-0 and returns its ready replacement. */
async function recreate(previousUid: string): Promise<Obj> {
  await client.delete(Pods, 'web-0', { namespace: ns, gracePeriodSeconds: 0 });
  return waitFor(
    'web-0 recreated and ready',
    async () => {
      const p = await client.get<Obj>(Pods, 'web-0', { namespace: ns }).catch(() => undefined);
      return p && p.metadata.uid !== previousUid && !p.metadata.deletionTimestamp && isReady(p) ? p : undefined;
    },
    45_000,
  );
}

const recordedState = (node: string, zone: string) => ({ nodeName: node, nodeTopologyLabels: { [HOST]: node, [ZONE]: zone } });

describe('PersistentPodState', { concurrency: 2 }, () => {
  test(
    'a recreated Advanced StatefulSet pod prefers its recorded node and is held to its recorded zone',
    { timeout: 120_000 },
    async () => {
      await createNode(nodeA, zone1, false);
      await createNode(nodeB, zone1, true);
      await createNode(nodeC, zone2, true);
      await waitFor('the test nodes Ready', async () => {
        const ready = await Promise.all(
          [nodeA, nodeB, nodeC].map(async (n) =>
            (await client.get<Obj>(Nodes, n)).status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'),
          ),
        );
        return ready.every(Boolean);
      });

      const set = await client.create<Obj>(AdvancedStatefulSets, {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'StatefulSet',
        metadata: {
          name: 'web',
          namespace: ns,
          annotations: {
            'kruise.io/auto-generate-persistent-pod-state': 'true',
            'kruise.io/required-persistent-topology': ZONE,
            'kruise.io/preferred-persistent-topology': HOST,
          },
        },
        spec: {
          replicas: 1,
          serviceName: 'web',
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              nodeSelector: { 'pps-test': run },
              tolerations: [{ key: 'pps-test', operator: 'Equal', value: run, effect: 'NoSchedule' }],
              containers: [{ name: 'main', image: 'nginx:1.0' }],
            },
          },
        },
      } as KubeObject);

      // The generated PersistentPodState, controlled by the set, records where web-0 runs (the only schedulable node, A).
      const generated = await waitFor('the generated PersistentPodState recording web-0', async () => {
        const pps = await client.get<Obj>(PersistentPodStates, 'web', { namespace: ns }).catch(() => undefined);
        if (pps?.status?.podStates?.['web-0']) return pps;
        const pod = await client.get<Obj>(Pods, 'web-0', { namespace: ns }).catch(() => undefined);
        throw new Error(`status ${JSON.stringify(pps?.status)}; web-0 on ${pod?.spec?.nodeName}, ready ${pod && isReady(pod)}`);
      });
      assert.deepEqual(generated.spec, {
        targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'web' },
        requiredPersistentTopology: { keys: [ZONE] },
        preferredPersistentTopology: [{ weight: 100, preference: { keys: [HOST] } }],
      });
      assert.deepEqual(
        generated.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
        [['StatefulSet', 'web', set.metadata.uid, true]],
      );
      assert.deepEqual(generated.status.podStates['web-0'], recordedState(nodeA, zone1));
      const first = await client.get<Obj>(Pods, 'web-0', { namespace: ns });
      assert.equal(first.spec.nodeName, nodeA);
      assert.equal(first.metadata.annotations?.['kruise.io/injected-persistent-pod-state'], undefined);

      // All three nodes open: the recreated pod carries the recorded zone and node, and goes back to A.
      await cordon(nodeB, false);
      await cordon(nodeC, false);
      const second = await recreate(first.metadata.uid!);
      assert.equal(second.metadata.annotations?.['kruise.io/injected-persistent-pod-state'], 'web');
      assert.deepEqual(second.spec.nodeSelector, { 'pps-test': run, [ZONE]: zone1 });
      assert.deepEqual(second.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution, [
        { weight: 100, preference: { matchExpressions: [{ key: HOST, operator: 'In', values: [nodeA] }] } },
      ]);
      assert.equal(second.spec.nodeName, nodeA, 'the preferred (recorded) node');

      // Node A cordoned: the pod must stay in zone 1 (B), never zone 2 (C); the state follows it.
      await cordon(nodeA, true);
      const third = await recreate(second.metadata.uid!);
      assert.equal(third.spec.nodeName, nodeB, 'the other node of the recorded zone');
      await waitFor('the state moved to node B', async () => {
        const pps = await client.get<Obj>(PersistentPodStates, 'web', { namespace: ns });
        return pps.status?.podStates?.['web-0']?.nodeName === nodeB;
      });

      // Scaled away: the pod's state is forgotten (WhenScaled).
      await client.patch(AdvancedStatefulSets, 'web', { spec: { replicas: 0 } }, { namespace: ns, patchType: PatchType.Merge });
      await waitFor(
        'the state of web-0 removed after scale-down',
        async () => {
          const pps = await client.get<Obj>(PersistentPodStates, 'web', { namespace: ns });
          return !pps.status?.podStates?.['web-0'];
        },
        45_000,
      );
    },
  );

  test('an apps/v1 StatefulSet: generated PersistentPodState, and the recreated pod is held to its zone', { timeout: 90_000 }, async () => {
    await client.create(StatefulSets, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {
        name: 'native',
        namespace: ns,
        annotations: { 'kruise.io/auto-generate-persistent-pod-state': 'true', 'kruise.io/required-persistent-topology': ZONE },
      },
      spec: {
        replicas: 1,
        serviceName: 'native',
        selector: { matchLabels: { app: 'native' } },
        template: { metadata: { labels: { app: 'native' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
      },
    } as KubeObject);
    const recorded = await waitFor('the apps/v1 StatefulSet pod recorded', async () => {
      const pps = await client.get<Obj>(PersistentPodStates, 'native', { namespace: ns }).catch(() => undefined);
      return pps?.status?.podStates?.['native-0'];
    });
    assert.deepEqual(Object.keys(recorded.nodeTopologyLabels), [ZONE]);
    const first = await client.get<Obj>(Pods, 'native-0', { namespace: ns });
    await client.delete(Pods, 'native-0', { namespace: ns, gracePeriodSeconds: 0 });
    const second = await waitFor('native-0 recreated and scheduled', async () => {
      const p = await client.get<Obj>(Pods, 'native-0', { namespace: ns }).catch(() => undefined);
      return p && p.metadata.uid !== first.metadata.uid && p.spec.nodeName ? p : undefined;
    });
    assert.deepEqual(second.spec.nodeSelector, { [ZONE]: recorded.nodeTopologyLabels[ZONE] });
    assert.equal(second.metadata.annotations?.['kruise.io/injected-persistent-pod-state'], 'native');
    const placed = await client.get<Obj>(Nodes, second.spec.nodeName);
    assert.equal(placed.metadata.labels?.[ZONE], recorded.nodeTopologyLabels[ZONE]);

    // The workload goes (its pods orphaned): so do its recorded states.
    await client.delete(StatefulSets, 'native', { namespace: ns, propagationPolicy: 'Orphan' });
    await waitFor('states cleared once the StatefulSet is gone', async () => {
      const pps = await client.get<Obj>(PersistentPodStates, 'native', { namespace: ns }).catch(() => undefined);
      return !pps || !pps.status?.podStates;
    });
  });
});
