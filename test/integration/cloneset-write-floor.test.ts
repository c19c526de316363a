// Writes that carry nothing: a CloneSet rollout must not write its status from a stale cached copy
// (each such write is refused with 409 Conflict; OpenKruise v1.8.2 has 0–1 per rollout). Counted from
// the API server's apiserver_request_total on a cluster of its own, where this manager is the only
// writer of CloneSets.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CloneSets } from '../../src/runtime/client.ts';
import { TEST_CLUSTER } from '../harness/cluster.ts';
import { cloneSetManifest, waitSettled } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const cluster = new OwnCluster(`${TEST_CLUSTER}-cs-writes`, 3);

before(() => cluster.up());
after(() => cluster.down());

/** PUT clonesets/status answered 409, so far. */
async function statusConflicts(): Promise<number> {
  const text = await cluster.kubectl(['get', '--raw', '/metrics']);
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (/resource="clonesets"/.test(line) && /subresource="status"/.test(line) && /verb="PUT"/.test(line) && /code="409"/.test(line))
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}

test('an in-place rollout of 100 pods writes the CloneSet status without 409 conflicts', { timeout: 240_000 }, async () => {
  await cluster.startManager();
  const ns = 'default';
  await cluster.kubectl(
    ['-n', ns, 'apply', '-f', '-'],
    JSON.stringify(cloneSetManifest('floor', { replicas: 100, maxUnavailable: '20%' })),
  );
  await waitSettled(cluster.client, ns, 'floor', 100, { timeoutMs: 120_000 });
  const before = await statusConflicts();
  await cluster.client.patch(
    CloneSets,
    'floor',
    { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
    { namespace: ns, patchType: 'application/merge-patch+json' },
  );
  await waitSettled(cluster.client, ns, 'floor', 100, { updated: 100, timeoutMs: 120_000 });
  const conflicts = (await statusConflicts()) - before;
  assert.ok(conflicts <= 1, `${conflicts} PUT clonesets/status answered 409 during the rollout`);
});
