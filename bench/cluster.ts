// Local control plane benchmark (figures printed, never asserted):
//   - `cluster up`: a fresh cluster (cold: nothing running) and a reuse of a running one (warm);
//   - create→Running latency of a single pod at low load (p50/p99 over N pods, one at a time);
//   - sustained pod creates/s against the API server from a concurrent client (plateau rate).
// Usage: ./run.sh bench-cluster  or  ./run.sh bench cluster [--pods 3000] [--concurrency 64]
import { benchArgs } from './args.ts';
import { up, down } from '../src/cluster/local-cluster.ts';
import { fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject, Pod } from '../src/apis/core-objects.ts';
import { Pods, Namespaces } from '../src/runtime/resources.ts';
import { percentile } from './measure.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    pods: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '64' },
    latencySamples: { type: 'string', default: '30' },
    nodes: { type: 'string', default: '40' },
  },
});
const totalPods = Number(values.pods);
const concurrency = Number(values.concurrency);
const latencySamples = Number(values.latencySamples);
const quiet = () => undefined;
const name = `bench-${process.pid}`;
const pct = (xs: number[], p: number) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p,
  );

let t = Date.now();
const { state } = await up({ name, nodes: Number(values.nodes), log: quiet });
const coldUp = (Date.now() - t) / 1000;
t = Date.now();
await up({ name, nodes: Number(values.nodes), log: quiet });
const warmUp = (Date.now() - t) / 1000;

const client = fromKubeconfigFile(state.kubeconfig, { qps: 5000, burst: 5000 });
try {
  const ns = 'bench';
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (;;) {
    try {
      await client.get({ group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true }, 'default', {
        namespace: ns,
      });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const pod = (n: string): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: n, labels: { bench: 'true' } },
      spec: { containers: [{ name: 'c', image: 'nginx:1.27' }], terminationGracePeriodSeconds: 0 },
    }) as KubeObject;

  // Single-pod latency at low load: create, then watch that pod until it is Running.
  const latencies: number[] = [];
  for (let i = 0; i < latencySamples; i++) {
    const podName = `lat-${i}`;
    const list = await client.list(Pods, { namespace: ns, fieldSelector: `metadata.name=${podName}` });
    const abort = new AbortController();
    const began = performance.now();
    const running = (async () => {
      for await (const ev of client.watch<Pod>(Pods, {
        namespace: ns,
        fieldSelector: `metadata.name=${podName}`,
        resourceVersion: list.metadata?.resourceVersion,
        signal: abort.signal,
      })) {
        if (ev.type !== 'ERROR' && ev.object?.status?.phase === 'Running') return performance.now() - began;
      }
      throw new Error('watch ended');
    })();
    await client.create(Pods, pod(podName), { namespace: ns });
    latencies.push(await running);
    abort.abort();
  }

  // Sustained creates: `concurrency` workers create pods back to back; the rate is measured per second.
  let next = 0;
  const perSecond = new Map<number, number>();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < totalPods) {
        const i = next++;
        await client.create(Pods, pod(`load-${i}`), { namespace: ns });
        const s = Math.floor((performance.now() - start) / 1000);
        perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  // Plateau: the median of the full seconds, leaving out the ramp-up and the partial last second.
  const full = [...perSecond.entries()].filter(([s]) => s > 0 && s < Math.floor(elapsed)).map(([, n]) => n);
  const plateau = full.length ? pct(full, 50) : totalPods / elapsed;

  const lines = [
    `cluster up (fresh, ${values.nodes} nodes)         ${coldUp.toFixed(1)} s`,
    `cluster up (reuse of a running cluster)   ${(warmUp * 1000).toFixed(0)} ms`,
    `create→Running, single pod, low load      p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms (n=${latencySamples})`,
    `pod creates/s, ${concurrency} concurrent clients   plateau ${plateau.toFixed(0)}/s, mean ${(totalPods / elapsed).toFixed(0)}/s over ${totalPods} pods in ${elapsed.toFixed(1)} s`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
} finally {
  client.close();
  await down(name, { quiet: true, purge: true });
}
