// PodUnavailableBudget end to end on the local control plane (issue #14's acceptance, spec §16):
// a budget of maxUnavailable 2 over a 10-pod CloneSet admits exactly 2 of 20 concurrent evictions
// (as `kubectl drain` sends them) and refuses 18 with upstream's message; once the replacements are
// Ready the next 2 pass. The same for plain DELETE. An in-place rollout of the CloneSet allowing
// 100% unavailable still never has more than 2 pods updating at once (the suite runs with
// PodUnavailableBudgetUpdateGate on).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { StatusError } from '../../src/runtime/errors.ts';
import { PodUnavailableBudgets, Pods } from '../../src/runtime/resources.ts';
import type { Pod } from '../../src/apis/core-objects.ts';
import type { StoredPub } from '../../src/util/pub.ts';
import { apply, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  // No retries: a refused eviction must surface once, not be retried as a 429.
  client = fromKubeconfigFile(testCluster().kubeconfig, { maxRetries: 0 });
  ns = await createNamespace('pub');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

// Replacements of disrupted pods take a few seconds to become Ready (simulated start delay), so a
// burst is judged against the budget before it refills.
const cloneSet = (name: string, replicas: number, startDelay?: string) => ({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'CloneSet',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name }, ...(startDelay ? { annotations: { 'sim.kruise-ts.io/start-delay': startDelay } } : {}) },
      spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
    },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: '100%' } },
  },
});

const budget = (name: string, target: string, maxUnavailable: number) => ({
  apiVersion: 'policy.kruise.io/v1beta1',
  kind: 'PodUnavailableBudget',
  metadata: { name },
  spec: { targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: target }, maxUnavailable },
});

const isReady = (p: Pod) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

async function livePods(app: string): Promise<Pod[]> {
  const list = await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${app}` });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** The CloneSet's 10 pods Ready, annotated with the budget, and the budget allowing 2 again. */
async function settled(app: string, pubName: string): Promise<Pod[]> {
  await waitFor(
    `${pubName}: 10 Ready pods and unavailableAllowed 2`,
    async () => {
      const pods = await livePods(app);
      const pub = await client.get<StoredPub>(PodUnavailableBudgets, pubName, { namespace: ns });
      const ok =
        pods.length === 10 &&
        pods.every((p) => isReady(p) && p.metadata.annotations?.['pub.kruise.io/related-pub'] === pubName) &&
        pub.status?.unavailableAllowed === 2 &&
        pub.status.currentAvailable === 10 &&
        pub.status.desiredAvailable === 8 &&
        pub.status.totalReplicas === 10;
      return ok && pub;
    },
    90_000,
    500,
  );
  return livePods(app);
}

/** Runs every disruption at once; returns the refusals' messages. */
async function burst(pods: Pod[], disrupt: (p: Pod) => Promise<unknown>): Promise<{ admitted: number; refused: string[] }> {
  const results = await Promise.allSettled(pods.map(disrupt));
  const refused: string[] = [];
  let admitted = 0;
  for (const r of results) {
    if (r.status === 'fulfilled') admitted++;
    else refused.push(r.reason instanceof StatusError ? r.reason.message : String(r.reason));
  }
  return { admitted, refused };
}

const PUB_MESSAGE = /podunavailablebudget\.policy\.kruise\.io "(web|del)-pub" is forbidden: pub unavailable allowed is negative/;

describe('PodUnavailableBudget', { concurrency: 3 }, () => {
  test('20 concurrent evictions over 10 pods with maxUnavailable 2: exactly 2 admitted, 18 refused; then 2 more once Ready', async () => {
    await apply(cloneSet('web', 10, '8s'), ns);
    await apply(budget('web-pub', 'web', 2), ns);
    const pods = await settled('web', 'web-pub');
    // 20 evictions: each pod twice.
    const first = await burst([...pods, ...pods], (p) => client.evict(ns, p.metadata.name!));
    // The same pod evicted twice in the burst may pass twice (it is already recorded), or find it
    // already deleted (the API server answers 404 before any webhook): count pods.
    const live = new Set((await livePods('web')).map((p) => p.metadata.name));
    const evicted = pods.map((p) => p.metadata.name!).filter((name) => !live.has(name));
    assert.equal(evicted.length, 2, `evicted pods: ${evicted.join(', ')}`);
    assert.ok(first.refused.length >= 16, `refused ${first.refused.length}`);
    const goneAlready = new RegExp(`^pods "(${evicted.join('|')})" not found$`);
    for (const m of first.refused) if (!goneAlready.test(m)) assert.match(m, PUB_MESSAGE);
    const pub = await client.get<StoredPub>(PodUnavailableBudgets, 'web-pub', { namespace: ns });
    assert.equal(pub.status?.unavailableAllowed, 0);

    const again = await settled('web', 'web-pub');
    const second = await burst(again, (p) => client.evict(ns, p.metadata.name!));
    assert.equal(second.admitted, 2);
    assert.equal(second.refused.length, 8);
  });

  test('plain DELETE: 10 concurrent deletions admit exactly 2; a dry run takes no budget', async () => {
    await apply(cloneSet('del', 10, '8s'), ns);
    await apply(budget('del-pub', 'del', 2), ns);
    const pods = await settled('del', 'del-pub');
    await client.delete(Pods, pods[0]!.metadata.name!, { namespace: ns, dryRun: true });
    const pub = await client.get<StoredPub>(PodUnavailableBudgets, 'del-pub', { namespace: ns });
    assert.equal(pub.status?.unavailableAllowed, 2, 'dry run took budget');
    const first = await burst(pods, (p) => client.delete(Pods, p.metadata.name!, { namespace: ns }));
    assert.equal(first.admitted, 2);
    assert.equal(first.refused.length, 8);
    for (const m of first.refused) assert.match(m, PUB_MESSAGE);
    const again = await settled('del', 'del-pub');
    const second = await burst(again, (p) => client.delete(Pods, p.metadata.name!, { namespace: ns }));
    assert.equal(second.admitted, 2);
  });

  test('an in-place rollout with maxUnavailable 100% never has more than 2 of 10 pods updating at once', async () => {
    await apply(cloneSet('roll', 10), ns);
    await apply(budget('roll-pub', 'roll', 2), ns);
    await settled('roll', 'roll-pub');
    const updated = (p: Pod) => p.spec?.containers[0]?.image === 'nginx:2.0';
    let maxUpdating = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const pods = await livePods('roll');
        maxUpdating = Math.max(maxUpdating, pods.filter((p) => !isReady(p)).length);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const rolled = cloneSet('roll', 10);
    rolled.spec.template.spec.containers[0]!.image = 'nginx:2.0';
    await apply(rolled, ns);
    await waitFor(
      'all 10 pods updated in place and Ready',
      async () => {
        const pods = await livePods('roll');
        return pods.length === 10 && pods.every((p) => updated(p) && isReady(p));
      },
      150_000,
      500,
    );
    watching = false;
    await watcher;
    assert.ok(maxUpdating <= 2, `${maxUpdating} pods were updating at once`);
    assert.ok(maxUpdating >= 1, 'the sampler never saw a pod updating');
  });
});
