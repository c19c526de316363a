// Informer ingest benchmark (figures printed, never asserted): a dedicated local cluster holding
// `pods` Pod objects, then — in a fresh child process each run (bench/informer-child.ts), so that RSS
// and CPU are the informer's only — one SharedIndexInformer on pods, with one counting handler, from
// start to synced: wall time, CPU-seconds, peak RSS (sampled every 10 ms, and the kernel's VmHWM)
// and the heap still held after GC (the cache itself); then the CPU of --events watched updates (after as many unmeasured ones, to warm up)
// (the parent patches that many pods' labels once the child is synced).
// The pods carry schedulerName "bench-unscheduled", which no scheduler serves: they stay Pending and
// untouched (no binding, no KWOK status churn, no pod GC), yet pass admission like any pod.
// Usage: ./run.sh bench informer [--pods 50000] [--concurrency 128] [--runs 3] [--qps 30] [--burst 50] [--page-size 500] [--variants paged,unpaged,json] [--events 2000]
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { benchArgs } from './args.ts';
import { up, down } from '../src/cluster/local-cluster.ts';
import { fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { PatchType } from '../src/runtime/client.ts';
import { Namespaces, Pods } from '../src/runtime/resources.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    pods: { type: 'string', default: '50000' },
    concurrency: { type: 'string', default: '128' },
    runs: { type: 'string', default: '3' },
    qps: { type: 'string', default: '30' },
    burst: { type: 'string', default: '50' },
    'page-size': { type: 'string', default: '500' },
    // Comma-separated list modes: paged (the reflector's default, limit = --page-size, continue
    // tokens followed), unpaged (pageSize 0: the whole list in one response, as the first list at
    // resourceVersion "0" is answered), json (unpaged, pods read as JSON instead of protobuf).
    variants: { type: 'string', default: 'paged,unpaged,json' },
    // Watched pod updates measured per run after the sync (0: none).
    events: { type: 'string', default: '2000' },
  },
});
const totalPods = Number(values.pods);
const variants = values.variants.split(',');
variants.forEach(childArgs); // an unknown one fails now, not after creating the pods
const events = Number(values.events);
const concurrency = Number(values.concurrency);
const runs = Number(values.runs);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const mib = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
const name = `bench-informer-${process.pid}`;
const ns = 'bench';
const loadBefore = load();

// A pod of the size controllers really cache: labels and annotations, an app container with env,
// resources, probes and mounts, a sidecar; the API server adds the service-account volume, default
// tolerations and the usual defaults.
function pod(i: number): KubeObject {
  const app = `app-${i % 100}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${app}-${i.toString(36).padStart(5, '0')}`,
      labels: {
        app,
        'apps.kruise.io/cloneset-instance-id': i.toString(36),
        'controller-revision-hash': `${app}-7c9f8d6b5`,
        'pod-template-hash': '7c9f8d6b5',
      },
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9102' },
    },
    spec: {
      schedulerName: 'bench-unscheduled',
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'main',
          image: `registry.example.com/shop/${app}:1.42.3`,
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'metrics', containerPort: 9102 },
          ],
          env: [
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          ],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
        {
          name: 'log-shipper',
          image: 'registry.example.com/infra/fluent-bit:3.1',
          resources: { requests: { cpu: '10m', memory: '32Mi' } },
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    },
  } as KubeObject;
}

interface ChildResult {
  objects: number;
  adds: number;
  pages: number;
  pageMs: { total: number; max: number };
  synced: { ms: number; cpu: number };
  handlerSynced: { ms: number; cpu: number };
  peakRssSampled: number;
  peakHeapSampled: number;
  vmHWM: number;
  rssAtSync: number;
  base: { rss: number; heapUsed: number; hwm: number; cpu: number };
  events?: { count: number; ms: number; cpu: number };
  retained: { rss: number; heapUsed: number; external: number; arrayBuffers: number };
}

function childArgs(variant: string): string[] {
  if (variant === 'paged') return ['--pageSize', values['page-size']];
  if (variant === 'unpaged') return ['--pageSize', '0'];
  if (variant === 'json') return ['--pageSize', '0', '--wire', 'json'];
  throw new Error(`unknown variant ${variant} (paged, unpaged, json)`);
}

/** Patches the labels of the first `n` pods (by name order of creation), `round` making each a change. */
async function touchPods(n: number, round: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        const i = next++;
        await client.patch(
          Pods,
          pod(i).metadata.name!,
          { metadata: { labels: { 'bench-touch': String(round) } } },
          { namespace: ns, patchType: PatchType.Merge },
        );
      }
    }),
  );
}

let touches = 0;
function runChild(kubeconfig: string, variant: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        path.join(import.meta.dirname, 'informer-child.ts'),
        '--kubeconfig',
        kubeconfig,
        '--qps',
        values.qps,
        '--burst',
        values.burst,
        ...childArgs(variant),
        '--events',
        String(events),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    const touched = new Set<string>();
    child.stdout!.on('data', (d) => {
      out += d;
      for (const signal of ['"ready":true', '"warm":true']) {
        if (touched.has(signal) || !out.includes(signal)) continue;
        touched.add(signal);
        touchPods(events, ++touches).catch((err: unknown) => {
          child.kill();
          reject(err as Error);
        });
      }
    });
    const deadline = setTimeout(() => child.kill(), 600_000);
    child.on('exit', (code) => {
      clearTimeout(deadline);
      try {
        if (code !== 0) throw new Error(`informer child exited with ${code}`);
        resolve(JSON.parse(out.trim().split('\n').at(-1)!));
      } catch (err) {
        reject(err);
      }
    });
  });
}

const quiet = () => undefined;
const { state } = await up({ name, nodes: 1, log: quiet });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 5000, burst: 5000 });
try {
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
  const sample = await client.create<KubeObject>(Pods, pod(totalPods), { namespace: ns });
  const { managedFields: _, ...metaWithout } = sample.metadata;
  const podBytes = Buffer.byteLength(JSON.stringify(sample));
  const podBytesCached = Buffer.byteLength(JSON.stringify({ ...sample, metadata: metaWithout }));
  await client.delete(Pods, sample.metadata.name!, { namespace: ns, gracePeriodSeconds: 0 });

  let next = 0;
  let failures = 0;
  const createStart = performance.now();
  const progress = setInterval(
    () =>
      process.stderr.write(
        `created ${next}/${totalPods} (${(next / ((performance.now() - createStart) / 1000)).toFixed(0)}/s), load ${load()}\n`,
      ),
    15_000,
  );
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < totalPods) {
        const i = next++;
        for (let attempt = 0; ; attempt++) {
          try {
            await client.create(Pods, pod(i), { namespace: ns });
            break;
          } catch (err) {
            failures++;
            if (attempt >= 5) throw err;
            await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
          }
        }
      }
    }),
  );
  clearInterval(progress);
  const createSeconds = (performance.now() - createStart) / 1000;
  const listed = await client.list(Pods, { namespace: ns, limit: 1 });
  const count = (listed.metadata.remainingItemCount ?? 0) + listed.items.length;

  const byVariant = new Map<string, ChildResult[]>(variants.map((v) => [v, []]));
  // Interleaved, so that a change in machine load hits every variant alike.
  for (let r = 0; r < runs; r++) for (const v of variants) byVariant.get(v)!.push(await runChild(state.kubeconfig, v));

  const med = (rs: ChildResult[], f: (r: ChildResult) => number) => {
    const xs = rs.map(f).sort((a, b) => a - b);
    return { med: xs[Math.floor(xs.length / 2)]!, min: xs[0]!, max: xs.at(-1)! };
  };
  const row = (label: string, f: (r: ChildResult) => number, fmt: (n: number) => string) =>
    `| ${label} | ${variants
      .map((v) => {
        const m = med(byVariant.get(v)!, f);
        return `${fmt(m.med)} (${fmt(m.min)} – ${fmt(m.max)})`;
      })
      .join(' | ')} |`;
  const s = (n: number) => `${(n / 1000).toFixed(2)} s`;
  const cpuS = (n: number) => `${n.toFixed(2)} s`;
  const lines = [
    `informer ingest: ${count} pods in one namespace (created at ${(totalPods / createSeconds).toFixed(0)}/s by ${concurrency} concurrent clients in ${createSeconds.toFixed(0)} s, ${failures} retried creates); node ${process.version}, ${os.cpus().length} CPUs`,
    `pod object: ${(podBytes / 1024).toFixed(1)} KiB as served, ${(podBytesCached / 1024).toFixed(1)} KiB without managedFields (what the cache keeps)`,
    `informer client: qps ${values.qps}, burst ${values.burst} (the manager's defaults); list pages per sync: ${variants.map((v) => `${v} ${byVariant.get(v)![0]!.pages}`).join(', ')}`,
    `lists are consistent reads (resourceVersion unset); paged = limit ${values['page-size']} with continue tokens (the reflector's default), unpaged = no limit, one response (what the first list at resourceVersion "0" got)`,
    `load average before: ${loadBefore}; after creating pods: ${load()}`,
    '',
    `| figure (fresh process per run, ${runs} runs; median (min – max)) | ${variants.join(' | ')} |`,
    `|---|${variants.map(() => '---').join('|')}|`,
    row('time to informer.hasSynced()', (r) => r.synced.ms, s),
    row('time to handler hasSynced() (all onAdd delivered)', (r) => r.handlerSynced.ms, s),
    row('  of which waiting on list pages', (r) => r.pageMs.total, s),
    row('CPU-seconds, start → informer synced', (r) => r.synced.cpu, cpuS),
    row('CPU-seconds, start → handler synced', (r) => r.handlerSynced.cpu, cpuS),
    row('peak RSS, sampled every 10 ms', (r) => r.peakRssSampled, mib),
    row('peak RSS, VmHWM', (r) => r.vmHWM, mib),
    row('RSS of the process before the informer started (node + tsx + imports)', (r) => r.base.rss, mib),
    row('heap used before the informer started', (r) => r.base.heapUsed, mib),
    row('heap used after sync + GC (the cache)', (r) => r.retained.heapUsed, mib),
    row(
      '  per pod',
      (r) => (r.retained.heapUsed - r.base.heapUsed) / r.objects,
      (n) => `${(n / 1024).toFixed(2)} KiB`,
    ),
    row('RSS after sync + GC', (r) => r.retained.rss, mib),
    ...(events > 0
      ? [
          row(
            `CPU per watched pod update (${events} label patches, after ${events} to warm up)`,
            (r) => (r.events!.cpu * 1e6) / r.events!.count,
            (n) => `${n.toFixed(0)} µs`,
          ),
          row(`  the ${events} updates, first patch → last event`, (r) => r.events!.ms, s),
        ]
      : []),
    '',
    `objects in cache / onAdd calls: ${[...byVariant.values()]
      .flat()
      .map((r) => `${r.objects}/${r.adds}`)
      .join(', ')}`,
    `load average after: ${load()}`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
} finally {
  await client.close();
  await down(name, { quiet: true });
}
