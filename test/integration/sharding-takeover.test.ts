// The takeover from OpenKruise v1.8.2 with sharding on (issue 37, docs/sharding.md "Takeover and
// hand-back"), on a cluster of its own with the upstream binary: v1.8.2 creates three CloneSets and
// their pods settle; it stops, Kruise TS's CRDs go on, and two Kruise TS replicas start with
// --sharding. The sharder labels each CloneSet, its pods and its revisions with one shard, and that
// label (with the sharder's note on each CloneSet of how far its children's relabelling went) is the
// only change: no pod created or deleted, no spec, other label or annotation of a pod, revision or
// CloneSet changed, no CloneSet generation bumped — the CloneSet webhook answers the label patch of
// a CloneSet v1.8.2 stored without a patch, as upstream's does. The writes it cost are reported.
// Then the hand-back's cleanup: `kruise sharding unlabel` takes every object back to what v1.8.2 left.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { down } from '../../src/cluster/local-cluster.ts';
import { stopProcesses } from '../../src/cluster/processes.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import { ControllerRevisions, Leases, Namespaces, Pods, type ResourceType } from '../../src/runtime/resources.ts';
import { removeShardLabels } from '../../src/cli/sharding.ts';
import { shardLabels } from '../../src/util/shard-ring.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { startManagerProcess, type ManagerProcess } from '../harness/managers.ts';
import { startUpstreamPeer, type RunningPeer } from '../harness/upstream-peer.ts';

const CLUSTER = `${TEST_CLUSTER}-shard-takeover`;
const NAMESPACE = 'taken-over';
const CLONESETS = ['web-a', 'web-b', 'web-c'];
const REPLICAS = 2;
const LABELS = shardLabels('kruise-manager');
/** The window after every object carries its shard label, for a late relabel or a churned pod to show. */
const WINDOW_MS = 10_000;
/** v1.8.2 serves CloneSets at v1alpha1 only; so does the snapshot, before and after. */
const CloneSetsV1alpha1: ResourceType = {
  group: 'apps.kruise.io',
  version: 'v1alpha1',
  resource: 'clonesets',
  kind: 'CloneSet',
  namespaced: true,
};

let peer: RunningPeer | undefined;
let client: KubeClient;
const managers: ManagerProcess[] = [];

before(async () => {
  peer = await startUpstreamPeer({ cluster: CLUSTER });
  client = fromKubeconfigFile(peer.cluster.kubeconfig, { qps: 100, burst: 200 });
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
});

after(async () => {
  await stopProcesses(
    managers.filter((m) => !m.proc.exited).map((m) => m.proc.pid),
    5000,
  );
  await peer?.stopManager().catch(() => undefined);
  await client?.close();
  if (process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(CLUSTER, { quiet: true, purge: true }).catch(() => undefined);
});

interface Seen {
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  rest: unknown;
}

/** Every pod, revision and CloneSet of the namespace: its labels apart, what a takeover must not touch. */
async function snapshot(): Promise<Map<string, Seen>> {
  const out = new Map<string, Seen>();
  const take = async (type: ResourceType, rest: (o: KubeObject & Record<string, unknown>) => unknown) => {
    for (const o of (await client.listAll<KubeObject & Record<string, unknown>>(type, { namespace: NAMESPACE })).items) {
      const m = o.metadata;
      out.set(`${type.resource}/${m.name}`, {
        uid: m.uid!,
        resourceVersion: m.resourceVersion!,
        labels: m.labels ?? {},
        rest: rest(o),
      });
    }
  };
  await take(Pods, (p) => ({ annotations: p.metadata.annotations, owners: p.metadata.ownerReferences, spec: p.spec }));
  await take(ControllerRevisions, (r) => ({
    annotations: r.metadata.annotations,
    owners: r.metadata.ownerReferences,
    revision: r.revision,
  }));
  // The sharder notes on a CloneSet it assigns how far its children's relabelling went (LABELS.children).
  await take(CloneSetsV1alpha1, (c) => {
    const { [LABELS.children]: _children, ...annotations } = c.metadata.annotations ?? {};
    return { annotations: Object.keys(annotations).length ? annotations : undefined, generation: c.metadata.generation, spec: c.spec };
  });
  return out;
}

const ownerShard = (key: string, seen: Seen, all: Map<string, Seen>): string | undefined => {
  if (key.startsWith('clonesets/')) return seen.labels[LABELS.shard];
  const owner = (seen.rest as { owners?: Array<{ kind: string; name: string }> }).owners?.find((r) => r.kind === 'CloneSet');
  return owner ? all.get(`clonesets/${owner.name}`)?.labels[LABELS.shard] : undefined;
};

/** Whether every object carries a shard label, the same as its CloneSet's. */
function allLabelled(all: Map<string, Seen>): boolean {
  return [...all].every(
    ([key, seen]) => seen.labels[LABELS.shard] !== undefined && seen.labels[LABELS.shard] === ownerShard(key, seen, all),
  );
}

test('OpenKruise v1.8.2 → two sharded Kruise TS replicas: the shard label is the only change', { timeout: 8 * 60_000 }, async (t) => {
  for (const name of CLONESETS) {
    await client.create(CloneSetsV1alpha1, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name, namespace: NAMESPACE },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
      },
    } as KubeObject);
  }
  await waitFor(
    'the CloneSets to settle under v1.8.2',
    async () => {
      const items = (await client.list<KubeObject & { status?: Record<string, number> }>(CloneSetsV1alpha1, { namespace: NAMESPACE }))
        .items;
      return (
        items.length === CLONESETS.length &&
        items.every((c) => c.status?.observedGeneration === c.metadata.generation && c.status?.updatedReadyReplicas === REPLICAS)
      );
    },
    180_000,
    500,
  );
  const before = await snapshot();
  assert.equal(before.size, CLONESETS.length * (REPLICAS + 2), 'per CloneSet: its pods, one revision and itself');

  await peer!.stopManager();
  await installCRDs(client);
  const flags = [
    '--sharding=true',
    '--leader-election-lease-duration=4s',
    '--leader-election-renew-deadline=3s',
    '--leader-election-retry-period=1s',
  ];
  managers.push(await startManagerProcess(peer!.cluster, 'shard-a', flags), await startManagerProcess(peer!.cluster, 'shard-b', flags));
  await waitFor(
    'every CloneSet, pod and revision to carry its shard label',
    async () => {
      for (const m of managers) if (m.proc.exited) throw new Error(`${m.id} exited ${JSON.stringify(m.proc.exited)}`);
      return allLabelled(await snapshot());
    },
    120_000,
    500,
  );
  await sleep(WINDOW_MS);
  const afterTakeover = await snapshot();
  assert.ok(allLabelled(afterTakeover), 'still labelled, each with its CloneSet shard');

  assert.deepEqual([...afterTakeover.keys()].sort(), [...before.keys()].sort(), 'the same pods, revisions and CloneSets');
  const written: Record<string, number> = {};
  for (const [key, was] of before) {
    const now = afterTakeover.get(key)!;
    assert.equal(now.uid, was.uid, `${key} kept its uid`);
    const { [LABELS.shard]: shard, ...otherLabels } = now.labels;
    assert.ok(shard, `${key} has a shard`);
    assert.deepEqual(otherLabels, was.labels, `${key}: no label but the shard label changed`);
    assert.deepEqual(now.rest, was.rest, `${key}: spec, annotations and owners unchanged`);
    const resource = key.split('/')[0]!;
    if (now.resourceVersion !== was.resourceVersion) written[resource] = (written[resource] ?? 0) + 1;
  }
  const shards = new Set(CLONESETS.map((name) => afterTakeover.get(`clonesets/${name}`)!.labels[LABELS.shard]));
  t.diagnostic(
    `objects written (resourceVersion moved), by resource: ${JSON.stringify(written)} of ${before.size}; shards holding the CloneSets: ${[...shards].sort().join(', ')}`,
  );
  for (const m of managers) assert.equal(m.proc.exited, undefined, `${m.id} ran throughout`);

  // Sharding turned off, then the cleanup (`kruise sharding unlabel`): the sharded managers stop and
  // one replica starts without --sharding (the webhooks must be served: the CloneSet webhook's
  // failurePolicy is Fail). A dry run changes nothing; the run takes every object back to its
  // labels and annotations as v1.8.2 left them, with one patch each, and deletes the ring's shard
  // Leases.
  await stopProcesses(
    managers.map((m) => m.proc.pid),
    5000,
  );
  managers.push(await startManagerProcess(peer!.cluster, 'unsharded', []));
  await waitFor(
    "the CloneSet webhook to answer through the cluster's webhook proxy",
    () =>
      client
        .patch(CloneSetsV1alpha1, CLONESETS[0]!, { metadata: {} }, { namespace: NAMESPACE, patchType: PatchType.Merge, dryRun: true })
        .then(
          () => true,
          () => false,
        ),
    60_000,
    500,
  );
  const shardLeases = async () =>
    (await client.list<KubeObject>(Leases, { namespace: 'kruise-system', labelSelector: `${LABELS.ring}=kruise-manager` })).items.map(
      (l) => l.metadata.name,
    );
  // A stopping shard releases its Lease (empties its holder) and leaves it.
  assert.ok((await shardLeases()).length >= 1, 'the shard Leases are left behind');
  const dry = await removeShardLabels(client, { ring: 'kruise-manager', leaseNamespace: 'kruise-system', dryRun: true });
  assert.deepEqual(dry.unlabelled, {
    pods: CLONESETS.length * REPLICAS,
    controllerrevisions: CLONESETS.length,
    clonesets: CLONESETS.length,
  });
  assert.ok(allLabelled(await snapshot()), 'a dry run leaves the labels');
  assert.ok((await shardLeases()).length >= 1, 'and the shard Leases');
  const done = await removeShardLabels(client, { ring: 'kruise-manager', leaseNamespace: 'kruise-system' });
  assert.deepEqual(done.unlabelled, dry.unlabelled);
  const handedBack = await snapshot();
  for (const [key, was] of before) {
    const now = handedBack.get(key)!;
    assert.deepEqual(now.labels, was.labels, `${key}: the labels v1.8.2 left`);
    assert.deepEqual(now.rest, was.rest, `${key}: spec, annotations and owners unchanged`);
  }
  for (const c of (await client.list<KubeObject>(CloneSetsV1alpha1, { namespace: NAMESPACE })).items) {
    assert.equal(c.metadata.annotations?.[LABELS.children], undefined, `${c.metadata.name}: no children note`);
  }
  assert.deepEqual(await shardLeases(), [], 'no shard Lease left');
});
