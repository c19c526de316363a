// WorkQueue throughput benchmark (figures printed, never asserted), on the real clock:
//   - dedup: `adds` adds spread round-robin over `keys` distinct keys while `workers` workers Get/Done;
//   - no dedup: `adds` adds of distinct keys, same workers.
// Workers either call done() as soon as get() resolves ("instant" reconcile: they keep up, so few adds
// find their key still queued) or after one event-loop turn ("1 hop", like a reconcile that awaits
// one I/O: the queue fills and most adds are folded into a queued key). Unnamed queues report no
// metrics; "metrics on" uses a named queue (prom-client), as every controller has.
// The producer adds in batches of `batch` and yields to the event loop between batches, as informer
// events arrive. A round ends when every add has been made and the queue is drained; adds/s = adds /
// that time; "reconciles" is how many keys workers got (adds − reconciles were deduplicated).
// Usage: ./run.sh bench workqueue [--adds 1000000] [--keys 10000] [--workers 8] [--batch 1000] [--runs 3]
import os from 'node:os';
import { benchArgs } from './args.ts';
import { WorkQueue } from '../src/runtime/workqueue.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    adds: { type: 'string', default: '1000000' },
    keys: { type: 'string', default: '10000' },
    workers: { type: 'string', default: '8' },
    batch: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
  },
});
const adds = Number(values.adds);
const distinct = Number(values.keys);
const workers = Number(values.workers);
const batch = Number(values.batch);
const runs = Number(values.runs);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Round {
  seconds: number;
  processed: number;
  cpuSeconds: number;
}

let queueSerial = 0;

async function round(keyOf: (i: number) => string, named: boolean, hop: boolean): Promise<Round> {
  const queue = new WorkQueue(named ? { name: `bench_${process.pid}_${queueSerial++}` } : {});
  let processed = 0;
  let producing = true;
  let idleResolve: (() => void) | undefined;
  const drained = new Promise<void>((resolve) => (idleResolve = resolve));
  const checkDrained = () => {
    if (!producing && queue.len() === 0 && processingNone()) idleResolve?.();
  };
  let inFlight = 0;
  const processingNone = () => inFlight === 0;

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const pool = Array.from({ length: workers }, async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      inFlight++;
      processed++;
      // No real work: the queue is what is measured.
      if (hop) await yieldToLoop();
      queue.done(key);
      inFlight--;
      checkDrained();
    }
  });
  for (let i = 0; i < adds; i++) {
    queue.add(keyOf(i));
    if ((i + 1) % batch === 0) await yieldToLoop();
  }
  producing = false;
  checkDrained();
  await drained;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  queue.shutDown();
  await Promise.all(pool);
  return { seconds, processed, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

// Keys are built up front so string building is not part of the measured loop.
const dedupKeys = Array.from({ length: distinct }, (_, i) => `default/cloneset-${i}`);
const uniqueKeys = Array.from({ length: adds }, (_, i) => `default/pod-${i}`);

const dedup = (i: number) => dedupKeys[i % distinct]!;
const unique = (i: number) => uniqueKeys[i]!;
const scenarios: Array<{ label: string; keyOf: (i: number) => string; named: boolean; hop: boolean }> = [
  { label: `dedup, ${distinct} keys, instant reconcile`, keyOf: dedup, named: false, hop: false },
  { label: `dedup, ${distinct} keys, instant reconcile, metrics on`, keyOf: dedup, named: true, hop: false },
  { label: `dedup, ${distinct} keys, 1-hop reconcile`, keyOf: dedup, named: false, hop: true },
  { label: `dedup, ${distinct} keys, 1-hop reconcile, metrics on`, keyOf: dedup, named: true, hop: true },
  { label: 'no dedup, instant reconcile', keyOf: unique, named: false, hop: false },
  { label: 'no dedup, instant reconcile, metrics on', keyOf: unique, named: true, hop: false },
  { label: 'no dedup, 1-hop reconcile', keyOf: unique, named: false, hop: true },
];

const loadBefore = load();
// One untimed warm-up round so the JIT has seen every path.
await round(dedup, false, true);
await round(unique, true, false);

const lines: string[] = [];
lines.push(
  `workqueue: ${adds} adds per round, ${workers} workers doing Get/Done, producer batch ${batch}, ${runs} runs each (median [min–max]); node ${process.version}, ${os.cpus().length} CPUs`,
);
lines.push(`load average before: ${loadBefore}`);
lines.push('');
lines.push('| scenario | adds/s | reconciles/s | reconciles (of adds) | CPU-s per round |');
lines.push('|---|---|---|---|---|');
for (const s of scenarios) {
  const results: Round[] = [];
  for (let r = 0; r < runs; r++) {
    if (global.gc) global.gc();
    results.push(await round(s.keyOf, s.named, s.hop));
  }
  const rates = results.map((r) => adds / r.seconds).sort((a, b) => a - b);
  const getRates = results.map((r) => r.processed / r.seconds).sort((a, b) => a - b);
  const med = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
  const fmt = (n: number) => `${(n / 1e6).toFixed(2)} M`;
  const processed = results.map((r) => r.processed);
  const cpu = results.map((r) => r.cpuSeconds).sort((a, b) => a - b);
  lines.push(
    `| ${s.label} | ${fmt(med(rates))} [${fmt(rates[0]!)}–${fmt(rates.at(-1)!)}] | ${fmt(med(getRates))} | ${Math.min(...processed)}–${Math.max(...processed)} | ${med(cpu).toFixed(2)} |`,
  );
}
lines.push('');
lines.push(`load average after: ${load()}`);
process.stdout.write(lines.join('\n') + '\n');
