// Writes that carry nothing, counted from the API server's apiserver_request_total on a cluster of
// its own, where this manager is the only writer of CloneSets and the only client patching pods
// themselves (KWOK writes their status):
//   - a CloneSet rollout must not write its status from a stale cached copy (each such write is
//     refused with 409 Conflict; OpenKruise v1.8.2 has 0–1 per rollout);
//   - a pod's lifecycle label change rides on the pods/status patch of its conditions when both are
//     due (workload-writes.ts writeLifecycleWithConditions): scale-up patches no pod itself, an
//     in-place update patches each pod once (its spec), where upstream patches twice.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CloneSets } from '../../src/runtime/resources.ts';
import { TEST_CLUSTER } from '../harness/cluster.ts';
import { cloneSetManifest, waitSettled } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const cluster = new OwnCluster(`${TEST_CLUSTER}-cs-writes`, 3);

before(() => cluster.up());
after(() => cluster.down());

/** Requests so far whose apiserver_request_total labels match every pattern. */
async function requests(...patterns: RegExp[]): Promise<number> {
  const text = await cluster.kubectl(['get', '--raw', '/metrics']);
  let n = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('apiserver_request_total{') && patterns.every((p) => p.test(line)))
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

/** PUT clonesets/status answered 409. */
const statusConflicts = () => requests(/resource="clonesets"/, /subresource="status"/, /verb="PUT"/, /code="409"/);
/** PATCH of pods themselves (not their status) that went through (an in-place patch refused with 409 is retried). */
const podPatches = () => requests(/resource="pods"/, /subresource=""/, /verb="PATCH"/, /code="200"/);

test(
  '100 pods scale up and update in place without 409s on the CloneSet status or lifecycle-only pod patches',
  { timeout: 240_000 },
  async () => {
    await cluster.startManager();
    const ns = 'default';
    const patchesBeforeScaleUp = await podPatches();
    await cluster.kubectl(
      ['-n', ns, 'apply', '-f', '-'],
      JSON.stringify(cloneSetManifest('floor', { replicas: 100, maxUnavailable: '20%' })),
    );
    await waitSettled(cluster.client, ns, 'floor', 100, { timeoutMs: 120_000 });
    const scaleUpPatches = (await podPatches()) - patchesBeforeScaleUp;
    assert.ok(scaleUpPatches <= 5, `${scaleUpPatches} PATCH pods for 100 new pods (their state label goes with their first condition)`);
    const before = await statusConflicts();
    const patchesBeforeRollout = await podPatches();
    await cluster.client.patch(
      CloneSets,
      'floor',
      { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
      { namespace: ns, patchType: 'application/merge-patch+json' },
    );
    await waitSettled(cluster.client, ns, 'floor', 100, { updated: 100, timeoutMs: 120_000 });
    const conflicts = (await statusConflicts()) - before;
    assert.ok(conflicts <= 1, `${conflicts} PUT clonesets/status answered 409 during the rollout`);
    const rolloutPatches = (await podPatches()) - patchesBeforeRollout;
    assert.ok(
      rolloutPatches <= 105,
      `${rolloutPatches} PATCH pods for 100 in-place updates (one each: Updating → Normal goes with InPlaceUpdateReady=True)`,
    );
  },
);
