// The measured side of bench/informer.ts, in a fresh process so that RSS and CPU are the informer's
// alone: one SharedIndexInformer on pods (with one counting event handler, as every controller
// registers) from start to synced, then (--events N) the CPU of N watched pod updates: it prints
// {"ready":true} once synced, the parent then patches N pods (a warm-up round, not measured), then
// again on {"warm":true}, and the last update of that round ends the run.
// Prints one JSON line last. Run with --expose-gc for the retained-heap figure. --wire json reads
// everything as JSON (what the client did before pods were read as protobuf).
import fs from 'node:fs';
import { benchArgs } from './args.ts';
import { pino } from 'pino';
import { KubeClient, type ListOptions, type WatchOptions } from '../src/runtime/client.ts';
import { accessFromKubeconfigFile } from '../src/runtime/kubeconfig.ts';
import { newTransport, type Transport } from '../src/runtime/transport.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { Pods, type ResourceType } from '../src/runtime/resources.ts';
import { SharedIndexInformer } from '../src/runtime/informer.ts';
import type { ListerWatcher } from '../src/runtime/reflector.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    kubeconfig: { type: 'string' },
    qps: { type: 'string', default: '30' },
    burst: { type: 'string', default: '50' },
    // 0: one unpaged list (the whole collection in one response), as before paging.
    pageSize: { type: 'string', default: '500' },
    wire: { type: 'string', default: 'protobuf' },
    events: { type: 'string', default: '0' },
  },
});
if (!['protobuf', 'json'].includes(values.wire!)) throw new Error(`--wire: protobuf or json, not ${values.wire}`);

const kb = (line: string) => Number(/(\d+)\s*kB/.exec(line)?.[1] ?? NaN) * 1024;
function procStatus(): { hwm: number; rss: number } {
  const text = fs.readFileSync('/proc/self/status', 'utf8');
  const get = (k: string) => kb(text.split('\n').find((l) => l.startsWith(k + ':')) ?? '');
  return { hwm: get('VmHWM'), rss: get('VmRSS') };
}
const gc = () => {
  (globalThis as { gc?: () => void }).gc?.();
};
const cpuSeconds = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1e6;

gc();
const base = { mem: process.memoryUsage(), proc: procStatus(), cpu: process.cpuUsage() };

// The manager's client settings (--api-qps 30, --api-burst 50 by default).
const access = accessFromKubeconfigFile(values.kubeconfig!);
const transport = newTransport(new URL(access.server), access.tls);
/** --wire json: every request accepts JSON only, as the protobuf differential test's JSON client does. */
const jsonOnly: Transport = {
  exchange: (req) => transport.exchange({ ...req, headers: { ...req.headers, accept: 'application/json' } }),
  close: () => transport.close(),
};
const client = new KubeClient(
  { ...access, qps: Number(values.qps), burst: Number(values.burst) },
  values.wire === 'json' ? jsonOnly : transport,
);
const pages: number[] = [];
const lw: ListerWatcher = {
  async list<T extends KubeObject>(type: ResourceType, opts: ListOptions) {
    const t = performance.now();
    const page = await client.list<T>(type, opts);
    pages.push(performance.now() - t);
    return page;
  },
  watch: <T extends KubeObject>(type: ResourceType, opts: WatchOptions) => client.watch<T>(type, opts),
};

let peakRss = 0;
let peakHeap = 0;
const sample = () => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
};
const sampler = setInterval(sample, 10);

const informer = new SharedIndexInformer(lw, Pods, {
  logger: pino({ level: 'silent' }),
  reflector: { pageSize: Number(values.pageSize) },
});
let adds = 0;
const wanted = Number(values.events);
let updates = 0;
let roundDone = () => {};
const registration = informer.addEventHandler({
  onAdd: () => {
    adds++;
  },
  onUpdate: () => {
    if (++updates % wanted === 0) roundDone();
  },
});
const abort = new AbortController();
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const running = informer.run(abort.signal);

await informer.waitForSync();
const synced = { ms: performance.now() - t0, cpu: cpuSeconds(process.cpuUsage(cpu0)) };
sample();
while (!registration.hasSynced()) await new Promise((r) => setTimeout(r, 1));
const handlerSynced = { ms: performance.now() - t0, cpu: cpuSeconds(process.cpuUsage(cpu0)) };
sample();
clearInterval(sampler);
const atSync = { proc: procStatus(), mem: process.memoryUsage() };

gc();
gc();
const retained = process.memoryUsage();

let events: { count: number; ms: number; cpu: number } | undefined;
if (wanted > 0) {
  // A first round warms the decoders up (the JIT compiles them on other threads, in this process's
  // CPU); the second is measured, as a long-running manager sees its watch events.
  const round = () => new Promise<void>((resolve) => (roundDone = resolve));
  let done = round();
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  await done;
  done = round();
  const [e0, c0] = [performance.now(), process.cpuUsage()];
  process.stdout.write(`${JSON.stringify({ warm: true })}\n`);
  await done;
  events = { count: updates - wanted, ms: performance.now() - e0, cpu: cpuSeconds(process.cpuUsage(c0)) };
}

abort.abort();
await running;
await client.close();

process.stdout.write(
  JSON.stringify({
    objects: informer.lister.list().length,
    adds,
    pages: pages.length,
    pageMs: { total: pages.reduce((a, b) => a + b, 0), max: Math.max(...pages) },
    synced,
    handlerSynced,
    peakRssSampled: peakRss,
    peakHeapSampled: peakHeap,
    vmHWM: atSync.proc.hwm,
    rssAtSync: atSync.mem.rss,
    base: { rss: base.mem.rss, heapUsed: base.mem.heapUsed, hwm: base.proc.hwm, cpu: cpuSeconds(base.cpu) },
    events,
    retained: { rss: retained.rss, heapUsed: retained.heapUsed, external: retained.external, arrayBuffers: retained.arrayBuffers },
    gcAvailable: typeof (globalThis as { gc?: unknown }).gc === 'function',
  }) + '\n',
);
