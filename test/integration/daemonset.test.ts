// Advanced DaemonSet end to end on a local control plane of its own (simulated KWOK nodes the
// tests add, label and taint, and a manager the last test SIGKILLs): placement on eligible nodes,
// partition / selector / maxSurge rollouts, in-place updates, nodes joining and leaving, and a
// 20-node rollout that survives its manager being killed with the budget held at every moment.
// Each test works on nodes of its own (label ads-group=<group>) and selects them by nodeSelector.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Node, Pod } from '../../src/apis/core-objects.ts';
import { AdvancedDaemonSets, Nodes, Pods } from '../../src/runtime/resources.ts';
import { targetNodeName } from '../../src/util/nodefit.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { PodStateWatcher } from '../harness/pod-watchers.ts';
import { isReady } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const cluster = new OwnCluster(`${TEST_CLUSTER}-ads`, 1);
let client: OwnCluster['client'];
const ns = 'default';

before(async () => {
  await cluster.up();
  client = cluster.client;
  await cluster.startManager();
});

after(() => cluster.down());

interface TestDaemonSet {
  metadata: { name: string; generation?: number };
  status?: {
    desiredNumberScheduled: number;
    currentNumberScheduled: number;
    numberReady: number;
    updatedNumberScheduled: number;
    numberAvailable?: number;
    numberMisscheduled: number;
    observedGeneration?: number;
    updateRevision?: string;
  };
}

const nodeName = (group: string, i: number) => `ads-${group}-${i}`;

async function addNodes(group: string, from: number, count: number, extra: Partial<Node['spec']> = {}): Promise<string[]> {
  const names = Array.from({ length: count }, (_, k) => nodeName(group, from + k));
  await Promise.all(
    names.map((name) =>
      client.create<Node>(Nodes, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          annotations: { 'kwok.x-k8s.io/node': 'fake' },
          labels: { 'kubernetes.io/hostname': name, type: 'kwok', 'ads-group': group },
        },
        spec: { ...extra },
        status: { allocatable: { cpu: '32', memory: '256Gi', pods: '110' }, capacity: { cpu: '32', memory: '256Gi', pods: '110' } },
      }),
    ),
  );
  await waitFor(
    `nodes ${names.join(',')} Ready`,
    async () => {
      const nodes = await client.list<Node>(Nodes, { labelSelector: `ads-group=${group}` });
      return names.every((n) =>
        nodes.items.find((x) => x.metadata.name === n)?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
    },
    60_000,
    200,
  );
  return names;
}

function manifest(
  name: string,
  group: string,
  rollingUpdate: object = {},
  extra: { annotations?: Record<string, string>; env?: object[] } = {},
) {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name, namespace: ns },
    spec: {
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate },
      template: {
        metadata: { labels: { app: name }, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
        spec: {
          nodeSelector: { 'ads-group': group },
          containers: [{ name: 'main', image: 'nginx:1.0', ...(extra.env ? { env: extra.env } : {}) }],
        },
      },
    },
  };
}

const apply = (obj: object) => cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(obj));
const getDs = (name: string) => client.get<TestDaemonSet>(AdvancedDaemonSets, name, { namespace: ns });
const patchDs = (name: string, patch: object) =>
  client.patch(AdvancedDaemonSets, name, patch, { namespace: ns, patchType: 'application/merge-patch+json' });
const setImage = (name: string, image: string, rollingUpdate?: object) =>
  patchDs(name, {
    spec: {
      template: { spec: { containers: [{ name: 'main', image }] } },
      ...(rollingUpdate ? { updateStrategy: { rollingUpdate } } : {}),
    },
  });

async function podsOf(name: string, includeTerminating = false): Promise<Pod[]> {
  const list = await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${name}` });
  return list.items.filter((p) => includeTerminating || !p.metadata.deletionTimestamp);
}

const byNode = (pods: readonly Pod[]) => new Map(pods.map((p) => [targetNodeName(p) ?? '', p]));
const podHash = (p: Pod | undefined) => p?.metadata.labels?.['controller-revision-hash'];

/** Waits until the DaemonSet observed its spec and runs exactly one ready pod on each of `nodes`. */
async function waitSettled(name: string, nodes: readonly string[], updated = nodes.length, timeoutMs = 60_000): Promise<Pod[]> {
  return waitFor(
    `DaemonSet ${name} settled on ${nodes.length} nodes (${updated} updated)`,
    async () => {
      const ds = await getDs(name);
      const s = ds.status;
      const pods = await podsOf(name, true);
      const ok =
        s &&
        s.observedGeneration === ds.metadata.generation &&
        s.desiredNumberScheduled === nodes.length &&
        s.currentNumberScheduled === nodes.length &&
        s.numberReady === nodes.length &&
        s.updatedNumberScheduled === updated &&
        pods.length === nodes.length &&
        pods.every(isReady) &&
        [...byNode(pods).keys()].sort().join() === [...nodes].sort().join();
      return ok ? pods : undefined;
    },
    timeoutMs,
    200,
  );
}

describe('Advanced DaemonSet', () => {
  test('6 nodes, one tainted NoSchedule: 5 pods; partition 2 updates 3 nodes in reverse lexical order; selector restricts the update', async () => {
    const nodes = await addNodes('a', 0, 5);
    await addNodes('a', 5, 1, { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] });
    await apply(manifest('place', 'a', { maxUnavailable: 1 }));
    let pods = await waitSettled('place', nodes);
    for (const p of pods) {
      const terms = p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
      assert.deepEqual(terms, [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec?.nodeName] }] }]);
      assert.ok(p.spec?.tolerations?.some((t) => t.key === 'node.kubernetes.io/unschedulable' && t.operator === 'Exists'));
      assert.equal(p.metadata.ownerReferences?.[0]?.kind, 'DaemonSet');
    }
    const firstHash = podHash(pods[0]);
    assert.equal((await getDs('place')).status?.updateRevision, firstHash);

    // partition 2: the 3 highest node names update, one at a time, highest first.
    const firstUpdated = new Map<string, number>();
    const watching = (async () => {
      for (let i = 0; i < 600 && firstUpdated.size < 3; i++) {
        for (const p of await podsOf('place')) {
          const n = targetNodeName(p) ?? '';
          if (podHash(p) !== firstHash && !firstUpdated.has(n)) firstUpdated.set(n, firstUpdated.size);
        }
        await sleep(50);
      }
    })();
    await setImage('place', 'nginx:2.0', { partition: 2 });
    pods = await waitSettled('place', nodes, 3);
    await watching;
    const newHash = (await getDs('place')).status?.updateRevision;
    assert.notEqual(newHash, firstHash);
    const updatedNodes = pods.filter((p) => podHash(p) === newHash).map((p) => targetNodeName(p));
    assert.deepEqual(updatedNodes.sort(), [nodeName('a', 2), nodeName('a', 3), nodeName('a', 4)]);
    assert.deepEqual(
      [...firstUpdated.entries()].sort((x, y) => x[1] - y[1]).map(([n]) => n),
      [nodeName('a', 4), nodeName('a', 3), nodeName('a', 2)],
    );
    await sleep(1500);
    assert.equal((await getDs('place')).status?.updatedNumberScheduled, 3, 'the partition holds');

    // selector: only the node labelled canary=true takes the next revision.
    await client.patch(
      Nodes,
      nodeName('a', 0),
      { metadata: { labels: { canary: 'true' } } },
      { patchType: 'application/merge-patch+json' },
    );
    await setImage('place', 'nginx:3.0', { partition: 0, selector: { matchLabels: { canary: 'true' } } });
    pods = await waitSettled('place', nodes, 1);
    const thirdHash = (await getDs('place')).status?.updateRevision;
    assert.equal(podHash(byNode(pods).get(nodeName('a', 0))), thirdHash);
    await sleep(1500);
    assert.equal((await getDs('place')).status?.updatedNumberScheduled, 1, 'nodes outside the selector keep their revision');
    assert.equal((await podsOf('place')).filter((p) => p.spec?.containers[0]?.image === 'nginx:3.0').length, 1);
  });

  test('maxSurge 1: a node runs its old and new pod together until the new one is available', async () => {
    const nodes = await addNodes('b', 0, 3);
    await apply(manifest('surge', 'b', { maxUnavailable: 0, maxSurge: 1 }, { annotations: { 'sim.kruise-ts.io/start-delay': '1s' } }));
    await waitSettled('surge', nodes);
    let sawTwo = 0;
    const violations: string[] = [];
    let stop = false;
    const watching = (async () => {
      while (!stop) {
        const pods = await podsOf('surge');
        const perNode = new Map<string, Pod[]>();
        for (const p of pods) perNode.set(targetNodeName(p) ?? '', [...(perNode.get(targetNodeName(p) ?? '') ?? []), p]);
        const doubled = [...perNode.values()].filter((l) => l.length > 1);
        if (doubled.length > 0) sawTwo++;
        if (doubled.length > 1 || doubled.some((l) => l.length > 2))
          violations.push(`surge beyond 1: ${[...perNode].map(([n, l]) => `${n}:${l.length}`).join(' ')}`);
        // Never fewer ready pods than nodes: the old pod goes only once the new one is available.
        const readyNodes = [...perNode.values()].filter((l) => l.some(isReady)).length;
        if (readyNodes < nodes.length) violations.push(`only ${readyNodes} nodes with a ready pod`);
        await sleep(50);
      }
    })();
    await setImage('surge', 'nginx:2.0');
    await waitSettled('surge', nodes, 3);
    stop = true;
    await watching;
    assert.deepEqual(violations.slice(0, 5), []);
    assert.ok(sawTwo > 0, 'a node ran two pods during the surge');
  });

  test('InPlaceIfPossible: an image change keeps pod UIDs, a non-image change recreates', async () => {
    const nodes = await addNodes('c', 0, 2);
    await apply(manifest('inplace', 'c', { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 1 }));
    let pods = await waitSettled('inplace', nodes);
    assert.ok(pods.every((p) => p.spec?.readinessGates?.some((g) => g.conditionType === 'InPlaceUpdateReady')));
    const uids = pods.map((p) => p.metadata.uid).sort();
    await setImage('inplace', 'nginx:2.0');
    pods = await waitSettled('inplace', nodes, 2);
    assert.deepEqual(pods.map((p) => p.metadata.uid).sort(), uids, 'same pods, updated in place');
    assert.ok(pods.every((p) => p.spec?.containers[0]?.image === 'nginx:2.0'));
    assert.ok(pods.every((p) => p.status?.conditions?.some((c) => c.type === 'InPlaceUpdateReady' && c.status === 'True')));

    await patchDs('inplace', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0', env: [{ name: 'X', value: '1' }] }] } } },
    });
    pods = await waitSettled('inplace', nodes, 2);
    assert.ok(
      pods.every((p) => !uids.includes(p.metadata.uid)),
      'a non-image change recreates the pods',
    );
  });

  test('a node added gets its pod; a node that stops matching loses it', async () => {
    const nodes = await addNodes('d', 0, 2);
    await apply(manifest('follow', 'd'));
    await waitSettled('follow', nodes);
    const added = await addNodes('d', 2, 1);
    await waitSettled('follow', [...nodes, ...added]);
    await client.patch(
      Nodes,
      nodeName('d', 0),
      { metadata: { labels: { 'ads-group': 'gone' } } },
      { patchType: 'application/merge-patch+json' },
    );
    const pods = await waitSettled('follow', [nodeName('d', 1), ...added]);
    assert.ok(!byNode(pods).has(nodeName('d', 0)));
  });

  test(
    'a 20-node rollout survives SIGKILLs of the manager: no extra or missing pods, maxUnavailable held at every observed moment',
    { timeout: 240_000 },
    async () => {
      const maxUnavailable = 3;
      const nodes = await addNodes('k', 0, 20);
      await apply(manifest('chaos', 'k', { maxUnavailable }, { annotations: { 'sim.kruise-ts.io/start-delay': '1s' } }));
      await waitSettled('chaos', nodes, 20, 90_000);

      const watcher = new NodeBudgetWatcher('app=chaos', nodes, maxUnavailable);
      await watcher.start();
      try {
        await setImage('chaos', 'nginx:2.0');
        const done = async () => {
          const ds = await getDs('chaos');
          return (
            ds.status?.observedGeneration === ds.metadata.generation &&
            ds.status?.updatedNumberScheduled === 20 &&
            ds.status.numberAvailable === 20
          );
        };
        const kills: number[] = [];
        for (let i = 0; i < 3; i++) {
          await sleep(700 + Math.floor(Math.random() * 1800));
          if (await done()) break;
          kills.push((await getDs('chaos')).status?.updatedNumberScheduled ?? -1);
          await cluster.killManager();
          await sleep(300 + Math.floor(Math.random() * 700));
          await cluster.startManager();
        }
        assert.ok(kills.length > 0, 'the manager was killed at least once mid-rollout');
        await waitSettled('chaos', nodes, 20, 120_000);
        await sleep(1000);
        const pods = await podsOf('chaos', true);
        assert.equal(pods.length, 20, 'exactly one pod per node, none terminating');
        assert.equal(new Set(pods.map((p) => targetNodeName(p))).size, 20);
        assert.ok(pods.every((p) => p.spec?.containers[0]?.image === 'nginx:2.0'));
        assert.deepEqual(watcher.violations, [], `killed at updated=${kills.join(',')}`);
        assert.ok(watcher.events > 40, `observed ${watcher.events} pod events`);
      } finally {
        watcher.stop();
      }
    },
  );
});

/**
 * Every state of the DaemonSet's pods, event by event, as a pod watch sees them: at no moment may
 * a node run two live pods (no surge configured) or more than maxUnavailable nodes lack an
 * available pod.
 */
class NodeBudgetWatcher extends PodStateWatcher {
  constructor(
    selector: string,
    private readonly nodes: readonly string[],
    private readonly maxUnavailable: number,
  ) {
    super(client, ns, selector, nodes.length);
  }

  protected judge(live: readonly Pod[]): string | undefined {
    const perNode = new Map<string, Pod[]>();
    for (const p of live) perNode.set(targetNodeName(p) ?? '', [...(perNode.get(targetNodeName(p) ?? '') ?? []), p]);
    const doubled = [...perNode].filter(([, l]) => l.length > 1).map(([n]) => n);
    const unavailable = this.nodes.filter((n) => !(perNode.get(n) ?? []).some(isReady)).length;
    if (doubled.length > 0 || unavailable > this.maxUnavailable) {
      return `${unavailable} nodes without a ready pod, nodes with 2 pods: ${doubled.join(',')}`;
    }
    return undefined;
  }
}
