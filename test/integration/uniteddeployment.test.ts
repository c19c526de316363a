// UnitedDeployment end to end on the local control plane (behaviour spec §9, issue #15's acceptance):
// 10 replicas over subsets a (min 2, max 4), b (max 3) and c, one zone each, allocated 4/3/3 into
// CloneSets whose pods land in their zone; a template change rolls every subset workload while
// manual partitions hold pods back per subset; under the Adaptive strategy a subset whose pods cannot
// be scheduled is marked Schedulable=False and its replicas move to another subset.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { CloneSets, Nodes, Pods, UnitedDeployments } from '../../src/runtime/resources.ts';
import type { Pod } from '../../src/apis/core-objects.ts';
import { apply, componentLogs, createNamespace, deleteNamespace, kubectl, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('ud');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

interface Workload {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: Array<{ kind: string; name: string }> };
  spec: { replicas: number; updateStrategy?: { rollingUpdate?: { partition?: number } } };
  status?: { replicas?: number; readyReplicas?: number; updatedReplicas?: number };
}

interface UD {
  metadata: { generation?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updatedRevision?: string;
    subsetStatuses?: Array<{
      name: string;
      replicas?: number;
      partition?: number;
      conditions?: Array<{ type: string; status: string; reason?: string }>;
    }>;
  };
}

const zoneTerm = (zone: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] });

function udManifest(name: string, image: string, topology: object, extra: object = {}) {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'UnitedDeployment',
    metadata: { name },
    spec: {
      replicas: 10,
      selector: { matchLabels: { app: name } },
      template: {
        cloneSetTemplate: {
          metadata: { labels: { app: name } },
          spec: {
            selector: { matchLabels: { app: name } },
            template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
            updateStrategy: { rollingUpdate: { maxUnavailable: '100%' } },
          },
        },
      },
      topology,
      ...extra,
    },
  };
}

const subsetOf = (o: { metadata: { labels?: Record<string, string> } }) => o.metadata.labels?.['apps.kruise.io/subset-name'] ?? '';

async function workloads(ud: string): Promise<Map<string, Workload>> {
  const list = await client.list<Workload & { metadata: { namespace?: string } }>(CloneSets, { namespace: ns });
  const owned = list.items.filter((w) => w.metadata.ownerReferences?.some((r) => r.kind === 'UnitedDeployment' && r.name === ud));
  return new Map(owned.map((w) => [subsetOf(w), w as Workload]));
}

const replicasOf = (m: Map<string, Workload>) => Object.fromEntries([...m].map(([k, w]) => [k, w.spec.replicas]).sort());

async function readyPods(ud: string): Promise<Pod[]> {
  const list = await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${ud}` });
  return list.items.filter(
    (p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

const getUD = (name: string) => client.get<UD & { metadata: { name?: string } }>(UnitedDeployments, name, { namespace: ns });

describe('UnitedDeployment', { concurrency: 2 }, () => {
  test('10 replicas over a (min 2, max 4), b (max 3), c: 4/3/3 CloneSets in their zones; a template change rolls each subset up to its partition', async () => {
    const topology = {
      subsets: [
        { name: 'a', nodeSelectorTerm: zoneTerm('zone-a'), minReplicas: 2, maxReplicas: 4 },
        { name: 'b', nodeSelectorTerm: zoneTerm('zone-b'), maxReplicas: 3 },
        { name: 'c', nodeSelectorTerm: zoneTerm('zone-c') },
      ],
    };
    try {
      await apply(udManifest('web', 'nginx:1.0', topology), ns);
      const sets = await waitFor('three subset CloneSets', async () => {
        const m = await workloads('web');
        return m.size === 3 ? m : undefined;
      });
      assert.deepEqual(replicasOf(sets), { a: 4, b: 3, c: 3 }, 'min/max allocation of spec §9.3');
      for (const [subset, w] of sets) assert.match(w.metadata.name, new RegExp(`^web-${subset}-[a-z0-9]{5}$`));

      const pods = await waitFor(
        '10 ready pods',
        async () => {
          const p = await readyPods('web');
          return p.length === 10 ? p : undefined;
        },
        60_000,
      );
      const nodes = await client.list<{ metadata: { name?: string; labels?: Record<string, string> } }>(Nodes);
      const zoneOf = new Map(nodes.items.map((n) => [n.metadata.name, n.metadata.labels?.['topology.kubernetes.io/zone']]));
      for (const p of pods)
        assert.equal(zoneOf.get(p.spec?.nodeName), `zone-${subsetOf(p)}`, `${p.metadata.name} runs in its subset's zone`);

      const settled = await waitFor('UD status: 10 ready', async () => {
        const ud = await getUD('web');
        return ud.status?.readyReplicas === 10 && ud.status.observedGeneration === ud.metadata.generation ? ud : undefined;
      });
      assert.equal(settled.status!.replicas, 10);
      assert.equal(settled.status!.currentRevision, settled.status!.updatedRevision);
      assert.deepEqual(
        settled.status!.subsetStatuses!.map((s) => [s.name, s.replicas, s.partition]),
        [
          ['a', 4, 0],
          ['b', 3, 0],
          ['c', 3, 0],
        ],
      );

      // New image with partitions a: 4 (all held back), b: 1; c has none.
      await client.patch(
        UnitedDeployments,
        'web',
        {
          spec: {
            template: { cloneSetTemplate: { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } } },
            updateStrategy: { type: 'Manual', manualUpdate: { partitions: { a: 4, b: 1 } } },
          },
        },
        { namespace: ns, patchType: 'application/merge-patch+json' },
      );
      const rolled = await waitFor(
        'subset pods at nginx:2.0: a 0, b 2, c 3',
        async () => {
          const ready = await readyPods('web');
          const count: Record<string, number> = { a: 0, b: 0, c: 0 };
          for (const p of ready) if (p.spec?.containers[0].image === 'nginx:2.0') count[subsetOf(p)]++;
          return ready.length === 10 && count.a === 0 && count.b === 2 && count.c === 3 ? count : undefined;
        },
        60_000,
      );
      assert.deepEqual(rolled, { a: 0, b: 2, c: 3 });
      const after = await workloads('web');
      const ud = await getUD('web');
      for (const [subset, w] of after) {
        assert.equal(
          w.metadata.labels?.['apps.kruise.io/controller-revision-hash'],
          ud.status?.updatedRevision,
          `${subset} workload at the new revision`,
        );
        assert.equal(w.spec.updateStrategy?.rollingUpdate?.partition, { a: 4, b: 1, c: 0 }[subset]);
      }
      const status = await waitFor('UD status: 5 updated', async () => {
        const u = await getUD('web');
        return u.status?.updatedReplicas === 5 ? u : undefined;
      });
      assert.notEqual(status.status!.currentRevision, status.status!.updatedRevision, 'not every pod is updated yet');

      // The scale subresource: 8 replicas → a 4, b 3, c 1.
      await kubectl(['-n', ns, 'scale', 'ud/web', '--replicas=8']);
      const scaled = await waitFor('subsets scaled to 8', async () => {
        const m = await workloads('web');
        return m.get('c')?.spec.replicas === 1 ? m : undefined;
      });
      assert.deepEqual(replicasOf(scaled), { a: 4, b: 3, c: 1 });
      const scale = JSON.parse(
        await kubectl(['-n', ns, 'get', '--raw', `/apis/apps.kruise.io/v1beta1/namespaces/${ns}/uniteddeployments/web/scale`]),
      );
      assert.equal(scale.spec.replicas, 8);
      assert.equal(scale.status.selector, 'app=web');
    } catch (err) {
      console.error(componentLogs(40));
      throw err;
    }
  });

  test('Adaptive: a subset whose pods cannot be scheduled turns Schedulable=False and its replicas move to another subset', async () => {
    const topology = {
      subsets: [
        { name: 'nowhere', nodeSelectorTerm: zoneTerm('zone-missing'), maxReplicas: 3 },
        { name: 'here', nodeSelectorTerm: zoneTerm('zone-a') },
      ],
      scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 2, unschedulableDuration: 300 } },
    };
    try {
      await apply(
        { ...udManifest('adapt', 'nginx:1.0', topology), spec: { ...udManifest('adapt', 'nginx:1.0', topology).spec, replicas: 5 } },
        ns,
      );
      const first = await waitFor('two subset CloneSets', async () => {
        const m = await workloads('adapt');
        return m.size === 2 ? m : undefined;
      });
      assert.deepEqual(replicasOf(first), { here: 2, nowhere: 3 });
      const moved = await waitFor(
        'replicas moved off the unschedulable subset',
        async () => {
          const m = await workloads('adapt');
          return m.get('nowhere')?.spec.replicas === 0 && m.get('here')?.spec.replicas === 5 ? m : undefined;
        },
        45_000,
      );
      assert.deepEqual(replicasOf(moved), { here: 5, nowhere: 0 });
      // The status is written after the workloads in the same round: wait for it.
      const cond = await waitFor('subset nowhere Schedulable=False', async () => {
        const ud = await getUD('adapt');
        const c = ud.status?.subsetStatuses?.find((s) => s.name === 'nowhere')?.conditions?.find((x) => x.type === 'Schedulable');
        return c?.status === 'False' ? c : undefined;
      });
      assert.equal(cond.reason, 'reschedule');
      await waitFor('5 ready pods in zone-a', async () => ((await readyPods('adapt')).length === 5 ? true : undefined), 45_000);
    } catch (err) {
      console.error(componentLogs(40));
      throw err;
    }
  });
});
