// A CloneSet rollout survives its manager being SIGKILLed half-way: the restarted manager rebuilds
// everything from the API server and finishes with exactly the desired pods. This runs on a
// cluster of its own, because the suite's shared manager would otherwise keep reconciling while
// ours is dead. The second test kills it several times at random moments of a 200-pod rollout and
// checks the maxSurge / maxUnavailable bounds after every pod event a watch delivers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CloneSets } from '../../src/runtime/resources.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';
import { PodBoundsWatcher } from '../harness/pod-watchers.ts';

// 3 nodes: room for 200 pods plus surge at 110 pods a node.
const cluster = new OwnCluster(`${TEST_CLUSTER}-cs-restart`, 3);
let client: OwnCluster['client'];

before(async () => {
  await cluster.up();
  client = cluster.client;
});

after(() => cluster.down());

test('a manager SIGKILLed mid-rollout is restarted and completes it with no extra or missing pods', { timeout: 180_000 }, async () => {
  await cluster.startManager();
  const ns = 'default';
  const manifest = cloneSetManifest('restart', { replicas: 12, maxUnavailable: 2 });
  // Each new pod takes a moment to start, so the rollout spans several seconds.
  (manifest.spec.template.metadata as { annotations?: Record<string, string> }).annotations = { 'sim.kruise-ts.io/start-delay': '1s' };
  await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
  await waitSettled(client, ns, 'restart', 12, { timeoutMs: 60_000 });

  await client.patch(
    CloneSets,
    'restart',
    { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
    { namespace: ns, patchType: 'application/merge-patch+json' },
  );
  await waitFor(
    'the rollout under way',
    async () => {
      const cs = await client.get<TestCloneSet>(CloneSets, 'restart', { namespace: ns });
      return (cs.status.updatedReplicas ?? 0) >= 2 && cs.status.updatedReplicas < 10;
    },
    30_000,
    50,
  );
  await cluster.killManager();

  // While nobody reconciles, pods being deleted finish and nothing replaces them.
  await sleep(1000);
  await cluster.startManager();

  let maxPods = 0;
  const names = new Set<string>();
  await waitFor(
    'the rollout to complete after the restart',
    async () => {
      const pods = await podsOf(client, ns, 'restart');
      maxPods = Math.max(maxPods, pods.length);
      for (const p of pods) names.add(p.metadata.name!);
      const cs = await client.get<TestCloneSet>(CloneSets, 'restart', { namespace: ns });
      const s = cs.status;
      return (
        s.observedGeneration === cs.metadata.generation &&
        s.updatedReplicas === 12 &&
        s.updatedReadyReplicas === 12 &&
        s.replicas === 12 &&
        pods.length === 12 &&
        pods.every(isReady) &&
        s.currentRevision === s.updateRevision
      );
    },
    90_000,
    100,
  );
  assert.ok(maxPods <= 12, `saw ${maxPods} active pods, want at most 12`);

  await sleep(1500);
  const pods = await podsOf(client, ns, 'restart');
  assert.equal(pods.length, 12);
  assert.ok(pods.every((p) => p.spec?.containers[0].image === 'nginx:2.0'));
  const ids = new Set(pods.map((p) => p.metadata.labels?.['apps.kruise.io/cloneset-instance-id']));
  assert.equal(ids.size, 12);
  const all = await cluster.kubectl(['-n', ns, 'get', 'pods', '-l', 'app=restart', '-o', 'name']);
  assert.equal(all.trim().split('\n').length, 12, `pods in the API (terminating included): ${all}`);
});

test(
  '200-pod ReCreate rollout with maxSurge/maxUnavailable 10% survives several SIGKILLs: bounds hold throughout, no extra or missing pods',
  { timeout: 300_000 },
  async () => {
    const ns = 'default';
    const replicas = 200;
    const surge = 20;
    const unavailable = 20;
    if (!cluster.manager) await cluster.startManager();
    const manifest = cloneSetManifest('chaos', { replicas, maxSurge: '10%', maxUnavailable: '10%' });
    await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
    await waitSettled(client, ns, 'chaos', replicas, { timeoutMs: 120_000 });
    const oldNames = new Set((await podsOf(client, ns, 'chaos')).map((p) => p.metadata.name!));

    const watcher = new PodBoundsWatcher(client, ns, 'app=chaos', {
      maxActive: replicas + surge,
      minReady: replicas - unavailable,
      maxNotReady: unavailable + surge,
    });
    await watcher.start();
    try {
      await client.patch(
        CloneSets,
        'chaos',
        { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
        { namespace: ns, patchType: 'application/merge-patch+json' },
      );
      const done = async () => {
        const cs = await client.get<TestCloneSet>(CloneSets, 'chaos', { namespace: ns });
        const s = cs.status;
        return (
          s.observedGeneration === cs.metadata.generation &&
          s.updatedReplicas === replicas &&
          s.updatedReadyReplicas === replicas &&
          s.replicas === replicas &&
          s.currentRevision === s.updateRevision
        );
      };
      // Kill the manager at random moments while the rollout runs; each restart rebuilds from the API.
      const kills: string[] = [];
      for (let i = 0; i < 4; i++) {
        const delay = 1000 + Math.floor(Math.random() * 4000);
        await sleep(delay);
        if (await done()) break;
        const cs = await client.get<TestCloneSet>(CloneSets, 'chaos', { namespace: ns });
        kills.push(`after ${delay}ms at ${cs.status.updatedReplicas} updated`);
        await cluster.killManager();
        await sleep(Math.floor(Math.random() * 1500));
        await cluster.startManager();
      }
      assert.ok(kills.length >= 2, `the rollout ended before the manager was killed twice (kills: ${kills.join('; ')})`);
      await waitFor('the rollout to complete', done, 150_000, 250);
      await sleep(1500);

      const pods = await podsOf(client, ns, 'chaos');
      assert.equal(pods.length, replicas);
      assert.ok(pods.every(isReady));
      assert.ok(pods.every((p) => p.spec?.containers[0].image === 'nginx:2.0' && !oldNames.has(p.metadata.name!)));
      assert.equal(new Set(pods.map((p) => p.metadata.labels?.['apps.kruise.io/cloneset-instance-id'])).size, replicas);
      const all = await cluster.kubectl(['-n', ns, 'get', 'pods', '-l', 'app=chaos', '-o', 'name']);
      assert.equal(all.trim().split('\n').length, replicas, 'no pod left over in the API, terminating or not');
      assert.deepEqual(watcher.violations, [], `bounds broken (kills: ${kills.join('; ')})`);
      assert.ok(watcher.maxActive <= replicas + surge);
      console.log(
        `chaos rollout: ${kills.length} kills (${kills.join('; ')}); ${watcher.events} pod events, max ${watcher.maxActive} active, min ${watcher.minReady} ready, max ${watcher.maxNotReady} not ready`,
      );
    } finally {
      watcher.stop();
    }
  },
);
