// Pod webhook latency through the real API server (figures printed, never asserted; recorded in
// docs/benchmarks.md). A local cluster and a manager — Kruise TS (child process, webhooks by URL),
// or OpenKruise v1.8.2 as the test peer (test/harness/upstream-peer.ts, a cluster of its own) —
// take pod creations at a steady rate in three phases, after one warm-up and in --rounds rounds (the
// median over the rounds is printed last; each phase starts once the previous one's pods are gone):
//   baseline   – a namespace labelled control-plane, outside the pod webhook (API server alone);
//   fast path  – 50 SidecarSets installed, none matching the pods;
//   injecting  – the same 50, one of which matches every pod (one sidecar injected).
// "Added" latency is a phase's percentile minus the baseline's. The manager's CPU time per 1000
// admissions comes from /proc/<pid>/stat across each phase. Pods name a scheduler that does not
// exist, so nothing schedules, runs or changes them, and are removed (grace 0) after each phase. (Not
// a node that does not exist: kube-controller-manager's PodGC patches and deletes such pods every
// 20 s, in whichever phase is running, for either manager.)
// Each phase also prints the manager's own share, from its controller_runtime_webhook_latency_seconds
// histogram (both managers export it, with the same buckets): the share of admissions it served
// within 10 ms, and the bucket its p99 falls in (request read to answer written, on its side).
// The Kruise TS manager runs with --trace-gc-nvp: each phase also prints its collections (major
// ones and scavenges, with their main-thread time) and the bytes allocated and promoted to the old
// generation per admission (everything the manager did in the phase, informers and controllers
// included, divided by the admissions).
// First, the same handler in process (no API server), for its own cost.
// Usage: ./run.sh bench pod-webhook [--cluster h-sidecarset-bench] [--rate 200] [--duration 10] [--rounds 3]
//        [--targets kruise-ts,upstream]   (upstream runs on the cluster <cluster>-upstream)
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchArgs } from './args.ts';
import { performance } from 'node:perf_hooks';
import { up, down, type ClusterState } from '../src/cluster/local-cluster.ts';
import { freePorts, stopProcesses, tail } from '../src/cluster/processes.ts';
import { startBenchManager, withoutWebhookProxy } from './workload.ts';
import { startUpstreamPeer } from '../test/harness/upstream-peer.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { resolveFeatureGates } from '../src/apis/features.ts';
import { admit } from '../src/runtime/webhook/admission.ts';
import { cpuSeconds, gcTrace, percentile, type GcStats } from './measure.ts';
import type { AdmissionCache } from '../src/runtime/webhook/types.ts';
import { registrations as podRegistrations } from '../src/webhooks/pod/index.ts';
import { mutateSidecarSet } from '../src/webhooks/sidecarset/index.ts';
import { fromKubeconfigFile, type KubeClient } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { Namespaces, Pods, SidecarSets, MutatingWebhookConfigurations } from '../src/runtime/resources.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    cluster: { type: 'string', default: 'h-sidecarset-bench' },
    rate: { type: 'string', default: '200' },
    duration: { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
    targets: { type: 'string', default: 'kruise-ts,upstream' },
    rounds: { type: 'string', default: '3' },
  },
});
const targets = values.targets.split(',');
const rate = Number(values.rate);
const duration = Number(values.duration);
const rounds = Number(values.rounds);
/** A request slower than this is counted, with the bursts it falls in (a stall of the whole machine or API server shows as few bursts). */
const SLOW_MS = 50;
const SETTLE_MS = 2000;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

// The handler alone, in process: admit() on /mutate-pod reviews with the 50 SidecarSets in a cache.
{
  const features = resolveFeatureGates('');
  const sidecarSets = Array.from({ length: 50 }, (_, i) => {
    const s: Record<string, unknown> & { spec: unknown } = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: `bench-${i}` },
      spec: { selector: { matchLabels: { [`bench-sidecar-${i}`]: 'on' } }, containers: [{ name: `sidecar-${i}`, image: 'busybox:1.36' }] },
    };
    mutateSidecarSet(s as never, { operation: 'CREATE', apiVersion: 'apps.kruise.io/v1beta1', userInfo: {}, dryRun: false, features });
    return s;
  });
  // Only SidecarSets are listed as SidecarSets (no PodUnavailableBudget, WorkloadSpread, …).
  const cache: AdmissionCache = {
    list: async (_apiVersion, kind) => (kind === 'SidecarSet' ? sidecarSets : []) as never[],
    get: async () => undefined,
  };
  const regs = podRegistrations.filter((r) => r.mutate);
  const profiler = new Session();
  profiler.connect();
  for (const [label, labels] of [
    ['fast path', {}],
    ['injecting', { 'bench-sidecar-7': 'on' }],
  ] as const) {
    const times: number[] = [];
    const review = (i: number) => ({
      uid: String(i),
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'default',
      operation: 'CREATE',
      userInfo: {},
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${i}`, namespace: 'default', labels: { app: 'bench', ...labels } },
        spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
      },
    });
    for (let i = 0; i < 3000; i++) {
      const t0 = performance.now();
      await admit('mutate', regs, review(i), { features, cache });
      if (i >= 500) times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.floor((p / 100) * times.length)]!.toFixed(3);
    // What the handler allocates, garbage included: V8's sampling heap profiler keeping the samples
    // of objects already collected, over 2000 more reviews.
    await profiler.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    for (let i = 0; i < 2000; i++) await admit('mutate', regs, review(i), { features, cache });
    const { profile } = (await profiler.post('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
    const sampled = (n: SamplingNode): number => n.selfSize + n.children.reduce((sum, c) => sum + sampled(c), 0);
    process.stdout.write(
      `in process, ${label}: /mutate-pod handler p50 ${q(50)} ms p99 ${q(99)} ms, ${(sampled(profile.head) / 2000 / 1024).toFixed(1)} KiB allocated per review (50 SidecarSets cached)\n`,
    );
  }
}

interface SamplingNode {
  selfSize: number;
  children: SamplingNode[];
}

interface Target {
  client: KubeClient;
  managerPid: number;
  /** The manager's metrics endpoint. */
  metricsUrl: string;
  /** The manager's collections (Kruise TS: its --trace-gc-nvp log). */
  gc?: ReturnType<typeof gcTrace>;
  /** The SidecarSet version the manager serves (v1.8.2 has no v1beta1 SidecarSet). */
  sidecarSetVersion: string;
  stop(): Promise<void>;
}

/** Kruise TS on the cluster `--cluster`: CRDs installed, manager started, webhooks registered by URL. */
async function startKruiseTs(): Promise<Target> {
  const { state, reused } = await up({ name: values.cluster, nodes: 1, log: () => undefined });
  const client = fromKubeconfigFile(state.kubeconfig, { qps: 5000, burst: 5000 });
  await installCRDs(client);
  // The API server calls the manager directly, as it calls upstream's (and as a Service reaches a
  // pod in a real cluster): without the announcement the manager does not register behind the local
  // cluster's webhook proxy, one more TLS hop and Node process on the same two cores.
  const proxyAnnouncement = await withoutWebhookProxy(client);
  const [webhookPort, metricsPort] = await freePorts(2);
  const manager = startBenchManager(state, webhookPort, ['--trace-gc-nvp'], { metricsPort });
  const stop = async () => {
    await stopProcesses([manager.pid], 5000);
    await proxyAnnouncement.restore();
    await client.close();
    if (!reused && !values.keep) await down(values.cluster, { quiet: true });
  };
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (manager.exited) throw new Error(`manager exited: ${tail(manager.logFile, 20)}`);
      const cfg = await client
        .get<KubeObject & { webhooks?: Array<{ name: string; clientConfig: { url?: string } }> }>(
          MutatingWebhookConfigurations,
          'kruise-mutating-webhook-configuration',
        )
        .catch(() => undefined);
      if (cfg?.webhooks?.some((w) => w.name === 'mpod.kb.io' && w.clientConfig.url?.includes(`:${webhookPort}/`))) break;
      if (Date.now() > deadline) throw new Error('the manager did not register its webhooks in 120s');
      await sleep(250);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    client,
    managerPid: manager.pid,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    gc: gcTrace(manager.logFile),
    sidecarSetVersion: 'v1beta1',
    stop,
  };
}

/** OpenKruise v1.8.2 on `<cluster>-upstream` (its CRDs and webhook configurations, its manager). */
async function startUpstream(): Promise<Target> {
  const name = `${values.cluster}-upstream`;
  const peer = await startUpstreamPeer({ cluster: name });
  const state: ClusterState = peer.cluster;
  const client = fromKubeconfigFile(state.kubeconfig, { qps: 5000, burst: 5000 });
  return {
    client,
    managerPid: peer.pid,
    metricsUrl: `http://127.0.0.1:${peer.metricsPort}/metrics`,
    sidecarSetVersion: 'v1alpha1',
    stop: async () => {
      await client.close();
      if (values.keep) await peer.stopManager();
      else await peer.stop();
    },
  };
}

async function measure(target: Target) {
  const { client } = target;
  for (const [name, labels] of [
    ['bench-excluded', { 'control-plane': 'bench' }],
    ['bench-pods', {}],
  ] as const) {
    await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }).catch(() => undefined);
  }
  for (let i = 0; i < 50; i++) {
    await client
      .create(
        { ...SidecarSets, version: target.sidecarSetVersion },
        {
          apiVersion: `apps.kruise.io/${target.sidecarSetVersion}`,
          kind: 'SidecarSet',
          metadata: { name: `bench-${i}` },
          spec: {
            selector: { matchLabels: { [`bench-sidecar-${i}`]: 'on' } },
            containers: [{ name: `sidecar-${i}`, image: 'busybox:1.36' }],
          },
        },
      )
      .catch(() => undefined);
  }
  // The webhook reads SidecarSets from the manager's cache; give it a moment to see all 50.
  await sleep(3000);

  const pod = (name: string, namespace: string, labels: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'bench', ...labels } },
    spec: { schedulerName: 'no-such-scheduler', containers: [{ name: 'main', image: 'nginx:1.0' }] },
  });

  async function phase(label: string, namespace: string, labels: Record<string, string>) {
    const latencies: number[] = [];
    const slowAt: number[] = [];
    let failed = 0;
    const total = rate * duration;
    const cpuBefore = cpuSeconds(target.managerPid);
    const servedBefore = await webhookLatency(target.metricsUrl);
    const gcMark = target.gc?.mark();
    const began = performance.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = began + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const t0 = performance.now();
      inflight.push(
        client.create(Pods, pod(`${label}-${i}`, namespace, labels)).then(
          () => {
            const ms = performance.now() - t0;
            latencies.push(ms);
            if (ms > SLOW_MS) slowAt.push(t0 - began);
          },
          () => void failed++,
        ),
      );
    }
    await Promise.all(inflight);
    const elapsed = (performance.now() - began) / 1000;
    const cpu = cpuSeconds(target.managerPid) - cpuBefore;
    const gc: GcStats | undefined = gcMark === undefined ? undefined : target.gc?.since(gcMark);
    const served = sinceThen(await webhookLatency(target.metricsUrl), servedBefore);
    await client.deleteCollection(Pods, { namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    await settle(namespace);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => percentile(latencies, p);
    return {
      label,
      sent: total,
      ok: latencies.length,
      failed,
      achievedRate: latencies.length / elapsed,
      p50: pct(50),
      p99: pct(99),
      cpuPer1000: (cpu / Math.max(1, latencies.length)) * 1000,
      gc,
      slow: slowAt.length,
      slowBursts: bursts(slowAt),
      served,
    };
  }

  // The next phase starts once the deleted pods are gone and their watch events have been
  // delivered to every watcher (the manager and the control plane's controllers), so that no phase
  // pays for the previous one's deletions.
  async function settle(namespace: string) {
    for (let i = 0; i < 60; i++) {
      const left = await client.list<KubeObject>(Pods, { namespace, limit: 1 }).catch(() => undefined);
      if (left && left.items.length === 0) break;
      await sleep(500);
    }
    await sleep(SETTLE_MS);
  }

  await phase('warmup', 'bench-pods', {});
  const results: Array<Awaited<ReturnType<typeof phase>>[]> = [];
  for (let round = 0; round < rounds; round++) {
    results.push([
      await phase('baseline', 'bench-excluded', {}),
      await phase('fastpath', 'bench-pods', {}),
      await phase('inject', 'bench-pods', { 'bench-sidecar-7': 'on' }),
    ]);
  }
  return results;
}

/** The webhook latency histogram's buckets summed over its webhooks: upper bound (s) → admissions at or under it. */
type Buckets = Map<number, number>;

async function webhookLatency(url: string): Promise<Buckets> {
  const text = await (await fetch(url)).text();
  const buckets: Buckets = new Map();
  for (const m of text.matchAll(/^controller_runtime_webhook_latency_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} (\S+)$/gm)) {
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
  }
  return buckets;
}

/** The admissions of one phase: within 10 ms (share), and the bucket bound of the p99 (ms). */
function sinceThen(after: Buckets, before: Buckets): { within10ms: number; p99AtMostMs: number } {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const count = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = count(Infinity);
  const p99 = bounds.find((le) => count(le) >= 0.99 * total) ?? Infinity;
  return { within10ms: total ? count(0.01) / total : NaN, p99AtMostMs: p99 * 1000 };
}

/** How many separate bursts the slow requests' send times fall into (a gap of over 100 ms splits them). */
function bursts(sendTimes: number[]): number {
  const sorted = [...sendTimes].sort((a, b) => a - b);
  return sorted.filter((t, i) => i === 0 || t - sorted[i - 1]! > 100).length;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

for (const name of targets) {
  const loadAtStart = load();
  const target = name === 'upstream' ? await startUpstream() : await startKruiseTs();
  try {
    const results = await measure(target);
    type Row = (typeof results)[number][number];
    const show = (r: Row, baseline: Row) =>
      `${r.label.padEnd(9)} ok ${r.ok}/${r.sent} (${r.achievedRate.toFixed(0)}/s) p50 ${r.p50.toFixed(2)} ms p99 ${r.p99.toFixed(2)} ms` +
      (r === baseline ? '' : ` | added p50 ${(r.p50 - baseline.p50).toFixed(2)} ms p99 ${(r.p99 - baseline.p99).toFixed(2)} ms`) +
      ` | over ${SLOW_MS} ms: ${r.slow} in ${r.slowBursts} bursts` +
      (r === baseline
        ? ''
        : ` | served by the manager: ${(r.served.within10ms * 100).toFixed(1)} % within 10 ms, p99 ≤ ${r.served.p99AtMostMs} ms`) +
      ` | manager CPU ${r.cpuPer1000.toFixed(3)} s per 1000` +
      (r.gc
        ? ` | GC: ${r.gc.majors} major (${r.gc.majorMs.toFixed(0)} ms, longest stop ${r.gc.majorMaxMs.toFixed(1)} ms),` +
          ` ${r.gc.scavenges} scavenges (${r.gc.scavengeMs.toFixed(0)} ms, longest ${r.gc.scavengeMaxMs.toFixed(1)} ms),` +
          ` per admission ${(r.gc.allocated / 1024 / Math.max(1, r.ok)).toFixed(0)} KiB allocated, ${(r.gc.promoted / 1024 / Math.max(1, r.ok)).toFixed(1)} KiB promoted`
        : '');
    process.stdout.write(
      `${name}: pod creations at ${rate}/s for ${duration}s per phase, ${rounds} rounds, 50 SidecarSets installed; load before ${loadAtStart}, after ${load()}, ${os.cpus().length} CPUs\n`,
    );
    results.forEach((round, i) => {
      process.stdout.write(` round ${i + 1}\n`);
      for (const r of round) process.stdout.write(`  ${show(r, round[0]!)}\n`);
    });
    const added = (phase: number, key: 'p50' | 'p99') => median(results.map((round) => round[phase]![key] - round[0]![key]));
    process.stdout.write(
      ` median over rounds: baseline p50 ${median(results.map((r) => r[0]!.p50)).toFixed(2)} / p99 ${median(results.map((r) => r[0]!.p99)).toFixed(2)} ms;` +
        ` added fastpath p50 ${added(1, 'p50').toFixed(2)} / p99 ${added(1, 'p99').toFixed(2)} ms;` +
        ` added inject p50 ${added(2, 'p50').toFixed(2)} / p99 ${added(2, 'p99').toFixed(2)} ms;` +
        ` CPU per 1000 fastpath ${median(results.map((r) => r[1]!.cpuPer1000)).toFixed(3)} / inject ${median(results.map((r) => r[2]!.cpuPer1000)).toFixed(3)} s;` +
        ` served by the manager within 10 ms fastpath ${(median(results.map((r) => r[1]!.served.within10ms)) * 100).toFixed(1)} / inject ${(median(results.map((r) => r[2]!.served.within10ms)) * 100).toFixed(1)} %\n`,
    );
  } finally {
    await target.stop();
  }
}
