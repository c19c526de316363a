// CloneSet behaviour behind feature gates, on a cluster and manager of its own (the suite's shared
// manager runs the default gates): CloneSetPartitionRollback (raising the partition rolls updated
// pods back), CloneSetShortHash (revision label = hash only, so 60+-character names work) and
// PreDownloadImageForInPlaceUpdate (ImagePullJobs for the new images). Every rollout here also runs
// under CloneSetEventHandlerOptimization, which drops pod updates that cannot change a decision:
// the rollouts completing is what shows it drops nothing that matters.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject, Stored } from '../../src/apis/core-objects.ts';
import { isNotFound } from '../../src/runtime/errors.ts';
import { ControllerRevisions, Pods, CloneSets, ImagePullJobs } from '../../src/runtime/resources.ts';
import type { ImagePullJob } from '../../src/apis/apps/imagepulljob.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const REVISION_LABEL = 'controller-revision-hash';
const cluster = new OwnCluster(`${TEST_CLUSTER}-cs-gates`, 1, [
  '--feature-gates',
  'CloneSetPartitionRollback=true,CloneSetShortHash=true,PreDownloadImageForInPlaceUpdate=true,CloneSetEventHandlerOptimization=true',
]);
const ns = 'default';

before(async () => {
  await cluster.up();
  // The launch-priority test needs it: the simulated runtime starts a container held at its
  // barrier only once the key exists.
  await Promise.all([cluster.startManager(), cluster.startDaemon()]);
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
  // Ready pods may still report the image they ran before the rollback: wait for the runtime.
  const pods = await waitFor(
    'the rolled-back pods to run nginx:1.0',
    async () => {
      const ps = await podsOf(client, ns, 'rollback');
      const rolledBack = ps.filter((p) => p.spec?.containers[0].image === 'nginx:1.0');
      return rolledBack.length === 80 && rolledBack.every((p) => p.status?.containerStatuses?.[0].image === 'nginx:1.0' && isReady(p))
        ? ps
        : undefined;
    },
    30_000,
    250,
  );
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
  let cs = await waitFor(
    'the long-named CloneSet settled',
    async () => {
      const c = await get(name);
      const pods = await podsOf(client, ns, 'longname');
      return c.status?.observedGeneration === c.metadata.generation &&
        c.status.updatedReadyReplicas === 3 &&
        pods.length === 3 &&
        pods.every(isReady)
        ? c
        : undefined;
    },
    60_000,
    250,
  );
  const rev = cs.status.updateRevision!;
  assert.ok(rev.length > 63, `revision ${rev} is longer than a label value may be`);
  for (const p of await podsOf(client, ns, 'longname')) {
    assert.equal(p.metadata.labels?.[REVISION_LABEL], shortHash(rev));
    assert.equal(p.metadata.labels?.['pod-template-hash'], shortHash(rev));
    assert.equal(p.metadata.name?.length, name.length + 6);
  }

  await patchSpec(name, { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
  cs = await waitFor(
    'the long-named CloneSet updated in place',
    async () => {
      const c = await get(name);
      const pods = await podsOf(client, ns, 'longname');
      return c.status?.observedGeneration === c.metadata.generation &&
        c.status.updatedReadyReplicas === 3 &&
        c.status.currentRevision === c.status.updateRevision &&
        pods.length === 3 &&
        pods.every((p) => isReady(p) && p.status?.containerStatuses?.[0].image === 'nginx:2.0')
        ? c
        : undefined;
    },
    60_000,
    250,
  );
  for (const p of await podsOf(client, ns, 'longname'))
    assert.equal(p.metadata.labels?.[REVISION_LABEL], shortHash(cs.status.updateRevision!));
});

test(
  'pods labelled with the full revision name (the format before CloneSetShortHash) are still recognised',
  { timeout: 120_000 },
  async () => {
    const client = cluster.client;
    await apply(cloneSetManifest('legacy', { replicas: 3, podUpdatePolicy: 'InPlaceIfPossible' }));
    let cs = await waitSettled(client, ns, 'legacy', 3);
    const full = cs.status.updateRevision!;
    const before = await podsOf(client, ns, 'legacy');
    assert.ok(before.every((p) => p.metadata.labels?.[REVISION_LABEL] === shortHash(full)));
    // Two pods as an older manager (or one without the gate) wrote them.
    const legacy = before.slice(0, 2).map((p) => p.metadata.name!);
    for (const n of legacy) {
      await client.patch(
        Pods,
        n,
        { metadata: { labels: { [REVISION_LABEL]: full } } },
        { namespace: ns, patchType: 'application/merge-patch+json' },
      );
    }
    // Nothing must happen: give the controller time to (wrongly) act on the relabelled pods. There is
    // no event to wait for, since correct behaviour changes nothing; the window is what is tested.
    await sleep(2000);
    cs = await waitSettled(client, ns, 'legacy', 3);
    assert.equal(cs.status.updatedReplicas, 3, 'full-name labels count as the update revision');
    const same = await podsOf(client, ns, 'legacy');
    assert.deepEqual(
      same.map((p) => p.metadata.uid),
      before.map((p) => p.metadata.uid),
      'no pod was replaced',
    );
    assert.ok(
      same.every((p) => p.spec?.containers[0].image === 'nginx:1.0' && !p.metadata.annotations?.['apps.kruise.io/inplace-update-state']),
      'no pod was updated',
    );

    // A rollout moves them like any other pod of the old revision.
    await patchSpec('legacy', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
    cs = await waitSettled(client, ns, 'legacy', 3, { timeoutMs: 60_000 });
    const after = await podsOf(client, ns, 'legacy');
    assert.deepEqual(
      after.map((p) => p.metadata.uid),
      before.map((p) => p.metadata.uid),
    );
    for (const p of after) {
      assert.equal(p.metadata.labels?.[REVISION_LABEL], shortHash(cs.status.updateRevision!));
      assert.equal(p.spec?.containers[0].image, 'nginx:2.0');
    }
  },
);

test(
  'an in-place image change pre-downloads the new image through an ImagePullJob, deleted once the rollout is done',
  { timeout: 180_000 },
  async () => {
    const client = cluster.client;
    // v1alpha1 with the annotation, as OpenKruise users write it; it reaches the controller as
    // inPlaceUpdateStrategy.imagePreDownloadParallelism through conversion.
    const manifest = cloneSetManifest('predl', { replicas: 6, partition: 6, podUpdatePolicy: 'InPlaceIfPossible' });
    await apply({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'predl', annotations: { 'apps.kruise.io/image-predownload-parallelism': '3' } },
      spec: {
        ...manifest.spec,
        updateStrategy: { type: 'InPlaceIfPossible', partition: 6 },
      },
    });
    let cs = await waitSettled(client, ns, 'predl', 6, { timeoutMs: 60_000 });
    const current = cs.status.currentRevision!;
    await patchSpec('predl', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
    cs = await waitFor(
      'a new update revision',
      async () => {
        const c = await get('predl');
        if (!c.status.updateRevision || c.status.updateRevision === current) throw new Error(JSON.stringify(c.status));
        return c;
      },
      30_000,
      200,
    );
    const update = cs.status.updateRevision!;

    const job = await waitFor(
      'the pre-download ImagePullJob',
      () => client.get<Stored<ImagePullJob>>(ImagePullJobs, `${update}-main`, { namespace: ns }),
      30_000,
      250,
    );
    assert.equal(job.spec?.image, 'nginx:2.0');
    assert.equal(job.spec?.parallelism, 3);
    assert.deepEqual(job.spec?.completionPolicy, { type: 'Always', ttlSecondsAfterFinished: 600 });
    assert.equal(job.spec?.pullPolicy?.timeoutSeconds, 600);
    assert.deepEqual(job.spec?.podSelector?.matchExpressions?.[0], {
      key: REVISION_LABEL,
      operator: 'NotIn',
      values: [update, shortHash(update)],
    });
    assert.equal(job.metadata.ownerReferences?.[0]?.uid, cs.metadata.uid);
    assert.equal(job.metadata.ownerReferences?.[0]?.controller, true);
    const rev = await client.get<KubeObject>(ControllerRevisions, update, { namespace: ns });
    assert.equal(rev.metadata.labels?.['apps.kruise.io/pre-predownload-created'], 'true');

    await patchSpec('predl', { updateStrategy: { rollingUpdate: { partition: 0 } } });
    await waitSettled(client, ns, 'predl', 6, { timeoutMs: 90_000 });
    // Deleted by the CloneSet; the ImagePullJob controller then releases its finalizer.
    await waitFor(
      'the ImagePullJob to be deleted once the revisions converge',
      async () => {
        try {
          const j = await client.get<KubeObject>(ImagePullJobs, `${update}-main`, { namespace: ns });
          if (j.metadata.deletionTimestamp) return true;
          throw new Error('still there');
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      },
      30_000,
      250,
    );
    await cluster.kubectl(['-n', ns, 'delete', 'clonesets.apps.kruise.io', 'predl', '--wait=false']);
  },
);

test(
  'two containers with different launch priorities update in place in two batches under the event-handler optimization',
  { timeout: 120_000 },
  async () => {
    const client = cluster.client;
    const manifest = cloneSetManifest('prio', { replicas: 2, podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: '100%' });
    manifest.spec.template.metadata = {
      labels: { app: 'prio' },
      annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' },
    } as typeof manifest.spec.template.metadata;
    manifest.spec.template.spec.containers = [
      { name: 'first', image: 'nginx:1.0' },
      { name: 'second', image: 'redis:1.0' },
    ];
    await apply(manifest);
    await waitSettled(client, ns, 'prio', 2, { timeoutMs: 60_000 });
    await patchSpec('prio', {
      template: {
        spec: {
          containers: [
            { name: 'first', image: 'nginx:2.0' },
            { name: 'second', image: 'redis:2.0' },
          ],
        },
      },
    });
    await waitSettled(client, ns, 'prio', 2, { timeoutMs: 60_000 });
    const pods = await podsOf(client, ns, 'prio');
    for (const p of pods) {
      assert.deepEqual(p.status?.containerStatuses?.map((c) => c.image).sort(), ['nginx:2.0', 'redis:2.0']);
    }
    await cluster.kubectl(['-n', ns, 'delete', 'clonesets.apps.kruise.io', 'prio', '--wait=false']);
  },
);
