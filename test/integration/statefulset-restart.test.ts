// An Advanced StatefulSet rollout survives its manager being SIGKILLed at random moments: every
// restarted manager rebuilds from the API server, the maxUnavailable budget holds at every pod
// event a watch delivers, and the rollout ends with exactly the ordinals it should have. A cluster
// of its own, because the suite's shared manager would otherwise keep reconciling while ours is
// dead. (The 100-pod version is bench/asts-restart.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdvancedStatefulSets } from '../../src/runtime/resources.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';
import { PodBoundsWatcher } from '../harness/pod-watchers.ts';
import { allPods, ordinal, stsManifest, waitOrdinals, type TestStatefulSet } from './statefulset-helpers.ts';

const cluster = new OwnCluster(`${TEST_CLUSTER}-asts-restart`, 1);

before(() => cluster.up());
after(() => cluster.down());

test(
  '20-pod Parallel ReCreate rollout, maxUnavailable 3, survives SIGKILLs: budget held throughout, no extra or missing pods',
  { timeout: 240_000 },
  async () => {
    const client = cluster.client;
    const ns = 'default';
    const replicas = 20;
    const budget = 3;
    const all = Array.from({ length: replicas }, (_, i) => i);
    await cluster.startManager();
    const manifest = stsManifest('chaos', {
      replicas,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: budget } },
    });
    // Each new pod takes a moment to start, so the rollout spans several seconds.
    (manifest.spec.template.metadata as { annotations?: Record<string, string> }).annotations = { 'sim.kruise-ts.io/start-delay': '1s' };
    await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
    await waitOrdinals(client, ns, 'chaos', all, { timeoutMs: 90_000 });

    const watcher = new PodBoundsWatcher(client, ns, 'app=chaos', {
      maxActive: replicas,
      minReady: replicas - budget,
      maxNotReady: budget,
    });
    await watcher.start();
    try {
      await client.patch(
        AdvancedStatefulSets,
        'chaos',
        { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
        { namespace: ns, patchType: 'application/merge-patch+json' },
      );
      const updated = async () =>
        (await client.get<TestStatefulSet>(AdvancedStatefulSets, 'chaos', { namespace: ns })).status?.updatedReplicas ?? 0;
      const kills: string[] = [];
      for (let i = 0; i < 3; i++) {
        await sleep(500 + Math.floor(Math.random() * 2500));
        const n = await updated();
        if (n >= replicas) break;
        await cluster.killManager();
        kills.push(`at ${n} updated`);
        await sleep(500 + Math.floor(Math.random() * 1000));
        await cluster.startManager();
      }
      const set = await waitOrdinals(client, ns, 'chaos', all, { timeoutMs: 120_000 });
      await waitFor('the rollout to complete', async () => {
        const s = (await client.get<TestStatefulSet>(AdvancedStatefulSets, 'chaos', { namespace: ns })).status;
        return s?.currentRevision === s?.updateRevision;
      });
      await sleep(1000);
      const pods = await allPods(client, ns, 'chaos');
      assert.deepEqual(pods.map(ordinal), all, 'exactly ordinals 0..19 exist, none terminating or extra');
      assert.ok(pods.every((p) => p.spec?.containers[0].image === 'nginx:2.0'));
      assert.ok(pods.every((p) => p.metadata.labels?.['controller-revision-hash'] === set.status?.updateRevision));
      assert.deepEqual(watcher.violations, [], `budget broken (kills: ${kills.join('; ')})`);
      console.log(
        `asts chaos rollout: ${kills.length} kills (${kills.join('; ')}); ${watcher.events} pod events, min ${watcher.minReady} ready, max ${watcher.maxNotReady} not ready`,
      );
    } finally {
      watcher.stop();
    }
  },
);
