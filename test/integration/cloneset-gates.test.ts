// CloneSet behaviour behind feature gates, on a cluster and manager of its own (the suite's shared
// manager runs the default gates): CloneSetPartitionRollback (raising the partition rolls updated
// pods back) and CloneSetShortHash (revision label = hash only, so 60+-character names work).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pods } from '../../src/runtime/client.ts';
import { CloneSets } from '../../src/controllers/cloneset/executor.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const REVISION_LABEL = 'controller-revision-hash';
const cluster = new OwnCluster(`${TEST_CLUSTER}-cs-gates`, 1, ['--feature-gates', 'CloneSetPartitionRollback=true,CloneSetShortHash=true']);
const ns = 'default';

before(async () => {
  await cluster.up();
  await cluster.startManager();
});

after(() => cluster.down());

const get = (name: string) => cluster.client.get<TestCloneSet>(CloneSets, name, { namespace: ns });
const patchSpec = (name: string, spec: object) =>
  cluster.client.patch(CloneSets, name, { spec }, { namespace: ns, patchType: 'application/merge-patch+json' });
const apply = (manifest: object) => cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
const shortHash = (revision: string) => revision.slice(revision.lastIndexOf('-') + 1);

test('partition 40 → 80 rolls 40 updated pods back to the current revision (CloneSetPartitionRollback)', { timeout: 240_000 }, async () => {
  const client = cluster.client;
  await apply(cloneSetManifest('rollback', { replicas: 100, partition: 100, podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: '20%' }));
  let cs = await waitSettled(client, ns, 'rollback', 100, { timeoutMs: 120_000 });
  const current = cs.status.currentRevision!;
  await patchSpec('rollback', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
  await patchSpec('rollback', { updateStrategy: { rollingUpdate: { partition: 40 } } });
  cs = await waitSettled(client, ns, 'rollback', 100, { updated: 60, timeoutMs: 120_000 });
  const update = cs.status.updateRevision!;
  assert.notEqual(update, current);
  const identities = new Map((await podsOf(client, ns, 'rollback')).map((p) => [p.metadata.name, p.metadata.uid]));

  await patchSpec('rollback', { updateStrategy: { rollingUpdate: { partition: 80 } } });
  cs = await waitSettled(client, ns, 'rollback', 100, { updated: 20, timeoutMs: 120_000 });
  assert.equal(cs.status.expectedUpdatedReplicas, 20);
  assert.equal(cs.status.updateRevision, update);
  assert.equal(cs.status.currentRevision, current, 'the current revision stays the old one');
  await sleep(1500);
  const pods = await podsOf(client, ns, 'rollback');
  assert.equal(pods.length, 100);
  // Rolled back in place: the very same pods, 80 at the old revision and image, 20 at the new.
  assert.deepEqual(new Map(pods.map((p) => [p.metadata.name, p.metadata.uid])), identities);
  const atUpdate = pods.filter((p) => shortHash(p.metadata.labels?.[REVISION_LABEL] ?? '') === shortHash(update));
  const atCurrent = pods.filter((p) => shortHash(p.metadata.labels?.[REVISION_LABEL] ?? '') === shortHash(current));
  assert.equal(atUpdate.length, 20);
  assert.equal(atCurrent.length, 80);
  assert.ok(atUpdate.every((p) => p.spec?.containers[0].image === 'nginx:2.0'));
  assert.ok(atCurrent.every((p) => p.spec?.containers[0].image === 'nginx:1.0' && p.status?.containerStatuses?.[0].image === 'nginx:1.0'));
  assert.ok(pods.every(isReady));
  assert.equal((await get('rollback')).status.updatedReplicas, 20);
  await cluster.kubectl(['-n', ns, 'delete', 'clonesets.apps.kruise.io', 'rollback', '--wait=false']);
});

test('a CloneSet with a 62-character name works under CloneSetShortHash: pods carry the short hash', { timeout: 120_000 }, async () => {
  const client = cluster.client;
  const name = `long-${'x'.repeat(52)}-name`;
  assert.equal(name.length, 62);
  const manifest = cloneSetManifest(name, { replicas: 3, podUpdatePolicy: 'InPlaceIfPossible' });
  // Label values stop at 63 characters: select on a shorter one.
  manifest.spec.selector = { matchLabels: { app: 'longname' } };
  manifest.spec.template.metadata.labels = { app: 'longname' };
  await apply(manifest);
  let cs = await waitFor('the long-named CloneSet settled', async () => {
    const c = await get(name);
    const pods = await podsOf(client, ns, 'longname');
    return c.status?.observedGeneration === c.metadata.generation && c.status.updatedReadyReplicas === 3 && pods.length === 3 && pods.every(isReady) ? c : undefined;
  }, 60_000, 250);
  const rev = cs.status.updateRevision!;
  assert.ok(rev.length > 63, `revision ${rev} is longer than a label value may be`);
  for (const p of await podsOf(client, ns, 'longname')) {
    assert.equal(p.metadata.labels?.[REVISION_LABEL], shortHash(rev));
    assert.equal(p.metadata.labels?.['pod-template-hash'], shortHash(rev));
    assert.equal(p.metadata.name?.length, name.length + 6);
  }

  await patchSpec(name, { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
  cs = await waitFor('the long-named CloneSet updated in place', async () => {
    const c = await get(name);
    const pods = await podsOf(client, ns, 'longname');
    return c.status?.observedGeneration === c.metadata.generation && c.status.updatedReadyReplicas === 3 && c.status.currentRevision === c.status.updateRevision
      && pods.length === 3 && pods.every((p) => isReady(p) && p.status?.containerStatuses?.[0].image === 'nginx:2.0') ? c : undefined;
  }, 60_000, 250);
  for (const p of await podsOf(client, ns, 'longname')) assert.equal(p.metadata.labels?.[REVISION_LABEL], shortHash(cs.status.updateRevision!));
});

test('pods labelled with the full revision name (the format before CloneSetShortHash) are still recognised', { timeout: 120_000 }, async () => {
  const client = cluster.client;
  await apply(cloneSetManifest('legacy', { replicas: 3, podUpdatePolicy: 'InPlaceIfPossible' }));
  let cs = await waitSettled(client, ns, 'legacy', 3);
  const full = cs.status.updateRevision!;
  const before = await podsOf(client, ns, 'legacy');
  assert.ok(before.every((p) => p.metadata.labels?.[REVISION_LABEL] === shortHash(full)));
  // Two pods as an older manager (or one without the gate) wrote them.
  const legacy = before.slice(0, 2).map((p) => p.metadata.name!);
  for (const n of legacy) {
    await client.patch(Pods, n, { metadata: { labels: { [REVISION_LABEL]: full } } }, { namespace: ns, patchType: 'application/merge-patch+json' });
  }
  await sleep(2000);
  cs = await waitSettled(client, ns, 'legacy', 3);
  assert.equal(cs.status.updatedReplicas, 3, 'full-name labels count as the update revision');
  const same = await podsOf(client, ns, 'legacy');
  assert.deepEqual(same.map((p) => p.metadata.uid), before.map((p) => p.metadata.uid), 'no pod was replaced');
  assert.ok(same.every((p) => p.spec?.containers[0].image === 'nginx:1.0' && !p.metadata.annotations?.['apps.kruise.io/inplace-update-state']), 'no pod was updated');

  // A rollout moves them like any other pod of the old revision.
  await patchSpec('legacy', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
  cs = await waitSettled(client, ns, 'legacy', 3, { timeoutMs: 60_000 });
  const after = await podsOf(client, ns, 'legacy');
  assert.deepEqual(after.map((p) => p.metadata.uid), before.map((p) => p.metadata.uid));
  for (const p of after) {
    assert.equal(p.metadata.labels?.[REVISION_LABEL], shortHash(cs.status.updateRevision!));
    assert.equal(p.spec?.containers[0].image, 'nginx:2.0');
  }
});
