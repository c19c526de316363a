// `rollout plan` is exact (issue #36): the whole rollout it forecasts, round by round, is what the
// controller then does on the local cluster, pod by pod — for CloneSet (the case: six
// replicas, partition 2, maxUnavailable 1, `rollout plan --set image=…` then `set image`), Advanced
// StatefulSet and Advanced DaemonSet. A pod watch records the order in which pods leave their old
// revision (deleted, or updated in place); the plan's rounds, flattened, must be that order, and the
// pods the partition keeps must be the pods left.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, Pod } from '../../src/apis/core-objects.ts';
import { runKubectlKruise } from '../../src/cli/kubectl/main.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { SharedInformerFactory } from '../../src/runtime/informer-factory.ts';
import { AdvancedDaemonSets, Pods } from '../../src/runtime/resources.ts';
import { unwrapDeleted } from '../../src/runtime/store.ts';
import { apply, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, waitSettled } from './cloneset-helpers.ts';
import { stsManifest, waitOrdinals } from './statefulset-helpers.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('plan-exact');
});
after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

async function kruise(args: string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const io = { out: (t: string) => void (stdout += t), err: (t: string) => void (stderr += t), isTTY: false };
  const code = await runKubectlKruise(['--kubeconfig', testCluster().kubeconfig, '-n', ns, ...args], io);
  assert.equal(code, 0, `kubectl kruise ${args.join(' ')}: ${stderr}`);
  return stdout;
}

interface Forecast {
  revisions: { update: string };
  rollout: { rounds: Array<{ round: number; moved: Array<{ pod: string }> }>; end: string; kept: string[] };
}

const revisionOf = (p: Pod) => p.metadata.labels?.['controller-revision-hash'] ?? '';

/** The order in which the app's pods leave their old revision: a deletion starts, or the revision label changes in place. */
async function watchDepartures(app: string, oldRevision: (p: Pod) => boolean) {
  const order: string[] = [];
  const left = (p: Pod) => {
    if (!order.includes(p.metadata.name!)) order.push(p.metadata.name!);
  };
  const factory = new SharedInformerFactory(client, {});
  const informer = factory.informerFor<Pod>(Pods, { namespace: ns, labelSelector: `app=${app}` });
  informer.addEventHandler({
    onAdd: () => undefined,
    onUpdate: (was, now) => {
      if (!oldRevision(was)) return;
      if (now.metadata.deletionTimestamp || !oldRevision(now)) left(now);
    },
    onDelete: (o) => {
      const p = unwrapDeleted(o);
      if (oldRevision(p)) left(p);
    },
  });
  const abort = new AbortController();
  factory.start(abort.signal);
  await factory.waitForCacheSync(abort.signal);
  return { order, stop: () => abort.abort() };
}

async function compare(kind: string, app: string, settle: () => Promise<unknown>) {
  const forecast = JSON.parse(
    await kruise(['rollout', 'plan', `${kind}/${app}`, '--set', 'image=main=nginx:2.0', '-o', 'json']),
  ) as Forecast;
  const planned = forecast.rollout.rounds.flatMap((r) => r.moved.map((m) => m.pod));
  const update = forecast.revisions.update;
  const watch = await watchDepartures(app, (p) => revisionOf(p) !== '' && !update.endsWith(revisionOf(p)) && revisionOf(p) !== update);
  await kruise(['set', 'image', `${kind}/${app}`, 'main=nginx:2.0']);
  await settle();
  watch.stop();
  assert.deepEqual(watch.order, planned, `${kind}/${app}: the controller's order against the plan's rounds`);
  assert.equal(forecast.rollout.end, 'partition');
  const live = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${app}` })).items.filter(
    (p) => !p.metadata.deletionTimestamp && p.spec?.containers[0]?.image !== 'nginx:2.0',
  );
  assert.deepEqual(live.map((p) => p.metadata.name).sort(), forecast.rollout.kept);
  return forecast;
}

describe('rollout plan forecasts the whole rollout, pod by pod', { concurrency: 3 }, () => {
  test('CloneSet: 6 replicas, partition 2, maxUnavailable 1 (the issue), recreate', async () => {
    await apply(cloneSetManifest('web', { replicas: 6, partition: 2, maxUnavailable: 1 }), ns);
    await waitSettled(client, ns, 'web', 6, { timeoutMs: 90_000 });
    const f = await compare('cloneset', 'web', () => waitSettled(client, ns, 'web', 6, { updated: 4, timeoutMs: 90_000 }));
    assert.equal(f.rollout.rounds.length, 4);
  });

  test('Advanced StatefulSet: 5 replicas, partition 2, maxUnavailable 1', async () => {
    const rollingUpdate = { partition: 2, maxUnavailable: 1 };
    await apply(stsManifest('db', { replicas: 5, updateStrategy: { type: 'RollingUpdate', rollingUpdate } }), ns);
    await waitOrdinals(client, ns, 'db', [0, 1, 2, 3, 4], { timeoutMs: 90_000 });
    const f = await compare('asts', 'db', () => waitOrdinals(client, ns, 'db', [0, 1, 2, 3, 4], { updated: 3, timeoutMs: 90_000 }));
    assert.deepEqual(f.rollout.kept, ['db-0', 'db-1']);
  });

  test('Advanced DaemonSet: 3 nodes, partition 1, maxUnavailable 1', async () => {
    const nodes = ['kwok-node-0', 'kwok-node-1', 'kwok-node-2'];
    await apply(
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'DaemonSet',
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: {
              // The suite's own nodes only (other files may add nodes to the shared cluster).
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] }],
                  },
                },
              },
              containers: [{ name: 'main', image: 'nginx:1.0' }],
            },
          },
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, partition: 1 } },
        },
      },
      ns,
    );
    const settled = (updated: number) =>
      waitFor(
        `DaemonSet agent: 3 ready, ${updated} updated`,
        async () => {
          const ds = await client.get<KubeObject & { status?: Record<string, number | string> }>(AdvancedDaemonSets, 'agent', {
            namespace: ns,
          });
          const s = ds.status ?? {};
          return s.observedGeneration === ds.metadata.generation && s.numberReady === 3 && s.updatedNumberScheduled === updated
            ? ds
            : undefined;
        },
        90_000,
      );
    await settled(3);
    const f = await compare('ads', 'agent', () => settled(2));
    assert.equal(f.rollout.rounds.length, 2);
  });
});
