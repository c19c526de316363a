// BroadcastJob and AdvancedCronJob end to end on the suite's local control plane and manager.
// BroadcastJob: six KWOK nodes of this file's own (label type=kwok-bcj, tainted so no other test's
// pods land there; the job tolerates that taint), one more taint on the sixth: five pods, never
// more than `parallelism` active, Complete with 5 succeeded (KWOK's pod-complete stage ends pods a
// BroadcastJob owns; `sim.kruise-ts.io/exit-code` makes them fail), FailFast ending Failed, the TTL
// deleting the finished job. AdvancedCronJob: `*/1 * * * *` in Asia/Shanghai with Forbid, one
// child per minute and none while one is active, history trimmed (one live check of ≤ ~2 minutes;
// the rest is the planner's, on a test clock).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Node, Pod, KubeObject } from '../../src/apis/core-objects.ts';
import type { BroadcastJob } from '../../src/controllers/broadcastjob/plan.ts';
import type { AdvancedCronJob } from '../../src/controllers/advancedcronjob/plan.ts';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import { isNotFound } from '../../src/runtime/errors.ts';
import { AdvancedCronJobs, BroadcastJobs, Jobs, Nodes, Pods } from '../../src/runtime/resources.ts';
import { SharedInformerFactory } from '../../src/runtime/informer-factory.ts';
import { isPodActive } from '../../src/util/pod.ts';
import { targetNodeName } from '../../src/util/nodefit.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

const TEST_TAINT = { key: 'kruise-ts-test', value: 'bcj', effect: 'NoSchedule' };
const run = randomBytes(3).toString('hex');
const NODES = Array.from({ length: 6 }, (_, i) => `bcj-${run}-${i}`);

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('bcj');
  await Promise.all(
    NODES.map((name, i) =>
      client.create<Node>(Nodes, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          annotations: { 'kwok.x-k8s.io/node': 'fake' },
          labels: { type: 'kwok-bcj', 'bcj-run': run, 'kubernetes.io/hostname': name },
        },
        spec: { taints: i === 5 ? [TEST_TAINT, { key: 'dedicated', value: 'db', effect: 'NoSchedule' }] : [TEST_TAINT] },
      }),
    ),
  );
  await waitFor(
    'the BroadcastJob nodes Ready',
    async () => {
      const nodes = await client.list<Node>(Nodes, { labelSelector: `bcj-run=${run}` });
      return nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 6;
    },
    60_000,
  );
});

after(async () => {
  await deleteNamespace(ns);
  await Promise.all(NODES.map((n) => client.delete(Nodes, n).catch(() => undefined)));
  await client.close();
});

function broadcastJob(name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): BroadcastJob {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'BroadcastJob',
    metadata: { name, namespace: ns },
    spec: {
      template: {
        metadata: { labels: { app: name }, annotations },
        spec: {
          restartPolicy: 'Never',
          nodeSelector: { 'bcj-run': run },
          tolerations: [{ key: TEST_TAINT.key, operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: 'main', image: 'busybox:1.36', command: ['true'] }],
        },
      },
      ...spec,
    },
  } as BroadcastJob;
}

const getJob = (name: string) => client.get<BroadcastJob>(BroadcastJobs, name, { namespace: ns });

/** Watches a job's pods and records the most that were ever active at once. */
async function watchActive(name: string): Promise<{ maxActive: () => number; stop: () => void }> {
  const abort = new AbortController();
  const factory = new SharedInformerFactory(client, {});
  const informer = factory.informerFor<Pod>(Pods, { namespace: ns, labelSelector: `broadcastjob-name=${name}` });
  let max = 0;
  const check = () => {
    max = Math.max(max, informer.lister.list().filter((p) => isPodActive(p)).length);
  };
  informer.addEventHandler({ onAdd: check, onUpdate: check, onDelete: check });
  factory.start(abort.signal);
  await factory.waitForCacheSync(abort.signal);
  return { maxActive: () => max, stop: () => abort.abort() };
}

// Everything runs at once: the cron checks wait for minute boundaries, the rest fits in that wait.
describe('batch jobs', { concurrency: 4 }, () => {
  describe('BroadcastJob', { concurrency: 2 }, () => {
    test('6 nodes, one tainted: 5 pods, parallelism 2 never exceeded, Complete with 5 succeeded', { timeout: 120_000 }, async () => {
      const name = 'fanout';
      const watch = await watchActive(name);
      try {
        await client.create(BroadcastJobs, broadcastJob(name, { parallelism: 2, completionPolicy: { type: 'Always' } }));
        const done = await waitFor(
          'the job Complete',
          async () => {
            const j = await getJob(name);
            return j.status?.phase === 'completed' ? j : undefined;
          },
          90_000,
          500,
        );
        assert.equal(done.status?.succeeded, 5);
        assert.equal(done.status?.desired, 5);
        assert.equal(done.status?.active, 0);
        assert.equal(done.status?.failed, 0);
        const complete = done.status?.conditions?.find((c) => c.type === 'Complete');
        assert.equal(complete?.status, 'True');
        assert.equal(complete?.message, 'Job completed, 5 pods succeeded, 0 pods failed');
        assert.ok(done.status?.startTime && done.status.completionTime);
        const pods = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: `broadcastjob-name=${name}` })).items;
        assert.equal(pods.length, 5);
        assert.deepEqual(pods.map((p) => targetNodeName(p)).sort(), NODES.slice(0, 5).sort());
        assert.ok(pods.every((p) => p.spec?.nodeName === targetNodeName(p) && p.status?.phase === 'Succeeded'));
        assert.ok(pods.every((p) => p.metadata.labels?.['broadcastjob-controller-uid'] === done.metadata.uid));
        assert.ok(watch.maxActive() <= 2, `at most 2 active pods, saw ${watch.maxActive()}`);
        assert.ok(watch.maxActive() >= 1);
      } finally {
        watch.stop();
      }
    });

    test('a failing template under FailFast ends Failed; the TTL then deletes the job', { timeout: 120_000 }, async () => {
      const name = 'failing';
      await client.create(
        BroadcastJobs,
        broadcastJob(
          name,
          { parallelism: 1, failurePolicy: { type: 'FailFast' }, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3 } },
          { 'sim.kruise-ts.io/exit-code': '3' },
        ),
      );
      const failed = await waitFor(
        'the job Failed',
        async () => {
          const j = await getJob(name);
          return j.status?.phase === 'failed' ? j : undefined;
        },
        60_000,
        300,
      );
      const condition = failed.status?.conditions?.find((c) => c.type === 'Failed');
      assert.equal(condition?.status, 'True');
      assert.equal(condition?.message, 'failure policy is FailurePolicyTypeFailFast and failed pod is found');
      assert.ok((failed.status?.failed ?? 0) >= 1);
      assert.ok(failed.status?.completionTime);
      // Parallelism 1 and FailFast: the first failure stops the job before any other node runs.
      const pods = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: `broadcastjob-name=${name}` })).items;
      assert.ok(pods.length <= 2, `FailFast stops creating pods (${pods.length})`);
      await waitFor(
        'the finished job deleted after its TTL',
        async () =>
          getJob(name).then(
            () => false,
            (err) => isNotFound(err),
          ),
        30_000,
        500,
      );
    });
  });

  describe('AdvancedCronJob', { concurrency: 2 }, () => {
    test(
      '*/1 in Asia/Shanghai with Forbid: one child per minute, none while one is active, history trimmed',
      { timeout: 180_000 },
      async () => {
        const name = 'every-minute';
        await client.create<AdvancedCronJob>(AdvancedCronJobs, {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'AdvancedCronJob',
          metadata: { name, namespace: ns },
          spec: {
            schedule: '*/1 * * * *',
            timeZone: 'Asia/Shanghai',
            concurrencyPolicy: 'Forbid',
            successfulJobsHistoryLimit: 1,
            template: {
              broadcastJobTemplate: {
                metadata: { labels: { from: name } },
                spec: broadcastJob('x', { completionPolicy: { type: 'Always' } }).spec,
              },
            },
          },
        } as AdvancedCronJob);
        const children = async () =>
          (await client.list<BroadcastJob>(BroadcastJobs, { namespace: ns, labelSelector: `from=${name}` })).items.filter(
            (c) => !c.metadata.deletionTimestamp,
          );
        // Two minute boundaries pass: the first child completes, the second replaces it in history.
        const first = await waitFor('the first child', async () => (await children())[0], 70_000, 500);
        const scheduledAt = Date.parse(first.metadata.annotations?.['apps.kruise.io/scheduled-at'] ?? '');
        assert.equal(first.metadata.name, `${name}-${scheduledAt / 1000}`);
        assert.equal(new Date(scheduledAt).getUTCSeconds(), 0);
        assert.deepEqual(
          first.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
          [['AdvancedCronJob', name, true]],
        );
        const cron = await waitFor(
          'status with type and lastScheduleTime',
          async () => {
            const c = await client.get<AdvancedCronJob>(AdvancedCronJobs, name, { namespace: ns });
            return c.status?.lastScheduleTime ? c : undefined;
          },
          20_000,
        );
        assert.equal(cron.status?.type, 'BroadcastJob');
        assert.equal(Date.parse(cron.status!.lastScheduleTime!), scheduledAt);
        await waitFor(
          'the next minute’s child, and the first trimmed from history',
          async () => {
            const list = await children();
            return list.length === 1 && list[0]!.metadata.name === `${name}-${scheduledAt / 1000 + 60}`;
          },
          90_000,
          500,
        );
      },
    );

    test('Forbid: while a child is active the next start time is skipped', { timeout: 150_000 }, async () => {
      const name = 'forbid';
      await client.create<AdvancedCronJob>(AdvancedCronJobs, {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'AdvancedCronJob',
        metadata: { name, namespace: ns },
        spec: {
          schedule: '*/1 * * * *',
          timeZone: 'Asia/Shanghai',
          concurrencyPolicy: 'Forbid',
          template: {
            jobTemplate: {
              metadata: { labels: { from: name } },
              spec: {
                template: {
                  metadata: { annotations: { 'sim.kruise-ts.io/complete': 'false' } },
                  spec: {
                    restartPolicy: 'Never',
                    nodeSelector: { 'bcj-run': run },
                    tolerations: [{ key: TEST_TAINT.key, operator: 'Exists', effect: 'NoSchedule' }],
                    containers: [{ name: 'main', image: 'busybox:1.36' }],
                  },
                },
              },
            },
          },
        },
      } as AdvancedCronJob);
      const jobs = async () => (await client.list<KubeObject>(Jobs, { namespace: ns, labelSelector: `from=${name}` })).items;
      const first = await waitFor('the first Job', async () => (await jobs())[0], 70_000, 500);
      const scheduledAt = Date.parse(first.metadata.annotations?.['apps.kruise.io/scheduled-at'] ?? '');
      // Past the next minute boundary (plus the controller's reaction time), still only the first Job.
      const nextBoundary = scheduledAt + 60_000;
      await waitFor('the next start time to pass', async () => Date.now() > nextBoundary + 8_000, 80_000, 500);
      assert.deepEqual(
        (await jobs()).map((j) => j.metadata.name),
        [first.metadata.name],
      );
      const cron = await client.get<AdvancedCronJob>(AdvancedCronJobs, name, { namespace: ns });
      assert.deepEqual(
        cron.status?.active?.map((r) => r.name),
        [first.metadata.name],
      );
      await client.patch(AdvancedCronJobs, name, { spec: { paused: true } }, { namespace: ns, patchType: PatchType.Merge });
    });
  });
});
