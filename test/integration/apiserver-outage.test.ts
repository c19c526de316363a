// One manager, leader election on, a CloneSet rollout in progress, and a 25 s kube-apiserver outage:
// the manager loses the lease (renew deadline 10 s), stops its controllers, drops its caches and
// campaigns again; once the API server is back it leads again on fresh caches and finishes the
// rollout — same process, no extra or missing pods, one leadership loss counted. Its own cluster:
// stopping the suite cluster's API server would break every other test running beside it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { restartComponent } from '../../src/cluster/local-cluster.ts';
import { freePorts, isAlive } from '../../src/cluster/processes.ts';
import { CloneSets } from '../../src/runtime/resources.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const REPLICAS = 10;
const [metricsPort] = await freePorts(1);
const cluster = new OwnCluster(`${TEST_CLUSTER}-outage`, 1, [
  '--enable-leader-election=true',
  '--identity=outage-manager',
  '--metrics-addr',
  `127.0.0.1:${metricsPort}`,
]);
let client: OwnCluster['client'];

before(async () => {
  await cluster.up();
  client = cluster.client;
});

after(() => cluster.down());

async function metric(name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

test('a 25 s API server outage mid-rollout: the same manager process finishes it', { timeout: 180_000 }, async () => {
  const manager = await cluster.startManager();
  await waitFor('the manager to lead', async () => (await metric('leader_election_master_status')) === 1, 30_000, 200);
  const ns = 'default';
  const manifest = cloneSetManifest('outage', { replicas: REPLICAS, maxUnavailable: 2 });
  await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
  await waitSettled(client, ns, 'outage', REPLICAS, { timeoutMs: 60_000 });

  await client.patch(
    CloneSets,
    'outage',
    // Each new pod takes a moment to start, so the rollout spans the outage.
    {
      spec: {
        template: {
          metadata: { annotations: { 'sim.kruise-ts.io/start-delay': '2s' } },
          spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] },
        },
      },
    },
    { namespace: ns, patchType: 'application/merge-patch+json' },
  );
  await waitFor(
    'the rollout under way',
    async () => {
      const cs = await client.get<TestCloneSet>(CloneSets, 'outage', { namespace: ns });
      return (cs.status.updatedReplicas ?? 0) >= 1 && cs.status.updatedReplicas < REPLICAS - 2;
    },
    30_000,
    50,
  );
  assert.equal(await metric('kruise_manager_leadership_lost_total'), 0);

  const outageStarted = Date.now();
  await restartComponent(cluster.name, 'kube-apiserver', { downForMs: 25_000 });
  const outageSeconds = (Date.now() - outageStarted) / 1000;
  assert.ok(outageSeconds >= 25, `outage lasted ${outageSeconds}s`);
  assert.ok(isAlive(manager.pid) && !manager.exited, 'the manager process survived the outage');
  assert.equal(await metric('kruise_manager_leadership_lost_total'), 1);

  let maxPods = 0;
  await waitFor(
    'the rollout to complete after the outage',
    async () => {
      const pods = await podsOf(client, ns, 'outage');
      maxPods = Math.max(maxPods, pods.length);
      const cs = await client.get<TestCloneSet>(CloneSets, 'outage', { namespace: ns });
      const s = cs.status;
      return (
        s.observedGeneration === cs.metadata.generation &&
        s.updatedReadyReplicas === REPLICAS &&
        s.replicas === REPLICAS &&
        pods.length === REPLICAS &&
        pods.every(isReady) &&
        s.currentRevision === s.updateRevision
      );
    },
    90_000,
    100,
  );
  assert.ok(maxPods <= REPLICAS, `saw ${maxPods} active pods, want at most ${REPLICAS}`);
  assert.equal(cluster.manager?.pid, manager.pid, 'no manager restart');
  assert.ok(isAlive(manager.pid) && !manager.exited);
  assert.equal(await metric('kruise_manager_leadership_lost_total'), 1);
  assert.equal(await metric('leader_election_master_status'), 1);
  const pods = await podsOf(client, ns, 'outage');
  assert.ok(pods.every((p) => p.spec?.containers[0]?.image === 'nginx:2.0'));
  const all = await cluster.kubectl(['-n', ns, 'get', 'pods', '-l', 'app=outage', '-o', 'name']);
  assert.equal(all.trim().split('\n').length, REPLICAS, `pods in the API (terminating included): ${all}`);
});
