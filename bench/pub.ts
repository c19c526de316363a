// PodUnavailableBudget decisions under concurrent evictions (figures printed, never asserted;
// recorded in docs/benchmarks.md). On a local cluster's real API server: one budget with
// unavailableAllowed 2, then 50 concurrent eviction decisions through the webhook's decision step
// (PubBudgetGuard.admit: cache read, per-budget queue, status PUT with resourceVersion), split over
// two guards as two manager replicas would be, so cross-replica conflicts happen too. Each round
// checks zero overspend (exactly 2 admitted, the stored status recording exactly those 2), then
// resets the budget. Latency is per decision (what the webhook adds to an eviction, without the
// API server → webhook HTTPS hop).
// Usage: ./run.sh bench pub [--cluster h-pub-bench] [--rounds 100] [--concurrency 50] [--keep]
import { benchArgs } from './args.ts';
import { performance } from 'node:perf_hooks';
import { up, down } from '../src/cluster/local-cluster.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../src/runtime/client.ts';
import { ignoreNotFound } from '../src/runtime/errors.ts';
import { Namespaces, PodUnavailableBudgets } from '../src/runtime/resources.ts';
import { PubBudgetGuard, type PubStore } from '../src/runtime/pub-budget.ts';
import { SharedInformerFactory } from '../src/runtime/informer-factory.ts';
import type { Pod } from '../src/apis/core-objects.ts';
import type { StoredPub } from '../src/util/pub.ts';
import { percentile } from './measure.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    cluster: { type: 'string', default: 'h-pub-bench' },
    rounds: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '50' },
    keep: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const NS = 'pub-bench';

function store(client: KubeClient, informers: SharedInformerFactory): PubStore {
  const informer = informers.informerFor<StoredPub>(PodUnavailableBudgets, { namespace: NS });
  return {
    cached: async (ns, name) => informer.lister.get(ns, name),
    fetch: (ns, name) => ignoreNotFound(client.get<StoredPub>(PodUnavailableBudgets, name, { namespace: ns })),
    writeStatus: (pub) => client.updateStatus<StoredPub>(PodUnavailableBudgets, pub),
  };
}

const pod = (i: number): Pod => ({
  metadata: { name: `p${i}`, namespace: NS, annotations: { 'pub.kruise.io/related-pub': 'budget' } },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

async function main(): Promise<void> {
  const { state, reused } = await up({ name: values.cluster!, nodes: 1 });
  const client = fromKubeconfigFile(state.kubeconfig, { qps: 0 });
  try {
    await installCRDs(client);
    await client.create(Namespaces, { metadata: { name: NS } }).catch(() => undefined);
    await ignoreNotFound(client.delete(PodUnavailableBudgets, 'budget', { namespace: NS }));
    await client.create(PodUnavailableBudgets, {
      metadata: { name: 'budget', namespace: NS },
      spec: { selector: { matchLabels: { app: 'bench' } }, maxUnavailable: 2 },
    } as StoredPub);
    const stop = new AbortController();
    const replicas = [0, 1].map(() => {
      const informers = new SharedInformerFactory(client);
      informers.start(stop.signal);
      return { informers, guard: new PubBudgetGuard({ store: store(client, informers), inPlacePodVerticalScaling: false }) };
    });
    await Promise.all(replicas.map((r) => r.informers.waitForCacheSync(stop.signal)));

    const latencies: number[] = [];
    let overspent = 0;
    let underspent = 0;
    let refusedByConflict = 0;
    const started = performance.now();
    for (let round = 0; round < rounds; round++) {
      // Reset: allowed 2, nothing recorded.
      const current = await client.get<StoredPub>(PodUnavailableBudgets, 'budget', { namespace: NS });
      const reset = await client.updateStatus<StoredPub>(PodUnavailableBudgets, {
        ...current,
        status: { unavailableAllowed: 2, currentAvailable: concurrency, desiredAvailable: concurrency - 2, totalReplicas: concurrency },
      });
      for (const r of replicas) {
        r.guard.forget(`${NS}/budget`);
        r.guard.remember(`${NS}/budget`, reset);
      }
      const decisions = await Promise.all(
        Array.from({ length: concurrency }, async (_, i) => {
          const t0 = performance.now();
          const d = await replicas[i % 2]!.guard.admit(pod(round * concurrency + i), 'EVICT', false);
          latencies.push(performance.now() - t0);
          return d;
        }),
      );
      const admitted = decisions.filter((d) => d.allowed).length;
      refusedByConflict += decisions.filter((d) => !d.allowed && !/allowed is negative/.test(d.message)).length;
      const after = await client.get<StoredPub>(PodUnavailableBudgets, 'budget', { namespace: NS });
      const recorded = Object.keys(after.status?.disruptedPods ?? {}).length;
      if (admitted > 2 || recorded > 2 || (after.status?.unavailableAllowed ?? 0) < 0) overspent++;
      if (admitted < 2) underspent++;
    }
    const seconds = (performance.now() - started) / 1000;
    stop.abort();
    await Promise.all(replicas.map((r) => r.informers.whenStopped()));
    latencies.sort((a, b) => a - b);
    const out = {
      rounds,
      concurrency,
      decisions: latencies.length,
      overspentRounds: overspent,
      roundsAdmittingFewerThan2: underspent,
      refusedByConflictRetriesExhausted: refusedByConflict,
      latencyMs: {
        p50: +percentile(latencies, 50).toFixed(1),
        p99: +percentile(latencies, 99).toFixed(1),
        max: +latencies.at(-1)!.toFixed(1),
      },
      seconds: +seconds.toFixed(1),
    };
    console.log(JSON.stringify(out, null, 2));
  } finally {
    await client.close();
    if (!reused && !values.keep) await down(values.cluster!);
  }
}

await main();
