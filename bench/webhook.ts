// Webhook round-trip benchmark (figures printed, never asserted): the WebhookServer with every real
// registration (src/webhooks/index.ts) and a self-signed certificate, driven at a steady rate by a
// client in a separate process (bench/webhook-client.ts; over HTTP/2 as the API server, or
// `--protocol http/1.1` over a keep-alive HTTPS agent) with CloneSet CREATE
// reviews, alternating /mutate-apps-kruise-io-cloneset and /validate-apps-kruise-io-cloneset; then
// the same reviews in-process, and the shared shape step alone (p50/p99 per review).
// Traffic goes to 127.0.0.1 only; the run is bounded by --duration (plus a short warm-up).
// Usage: ./run.sh bench webhook [--rate 200] [--duration 30] [--warmup 3] [--protocol h2|http/1.1]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { benchArgs } from './args.ts';
import { pino } from 'pino';
import { resolveFeatureGates } from '../src/apis/features.ts';
import { registry } from '../src/runtime/metrics.ts';
import fjp from 'fast-json-patch';
import { WebhookServer } from '../src/runtime/webhook/server.ts';
import { admit } from '../src/runtime/webhook/admission.ts';
import { decodeAdmission } from '../src/runtime/webhook/decode.ts';
import { MAX_JSON_DEPTH, nestingExceeds } from '../src/runtime/webhook/http.ts';
import type { AdmissionRequest } from '../src/runtime/webhook/review.ts';
import { createCA, issueCert } from '../src/util/pki.ts';
import { allRegistrations } from '../src/webhooks/index.ts';
import { cloneSet, review } from './webhook-fixture.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    rate: { type: 'string', default: '200' },
    duration: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '3' },
    protocol: { type: 'string', default: 'h2' },
  },
});
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadBefore = load();

const features = resolveFeatureGates('');
const ca = await createCA('kruise-ts-bench-webhook-ca');
const leaf = await issueCert(ca, { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], server: true });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webhook-'));
const caFile = path.join(dir, 'ca.crt');
fs.writeFileSync(caFile, ca.certPem);

const server = new WebhookServer({
  registrations: allRegistrations,
  features,
  tls: { cert: leaf.certPem, key: leaf.keyPem },
  host: '127.0.0.1',
  port: 0,
  logger: pino({ level: 'silent' }),
});
await server.start();

// Server-side figures over the measured phase only (the client says when it begins).
const latencyHistogram = 'controller_runtime_webhook_latency_seconds';
async function serverHandlerSeconds(): Promise<{ sum: number; count: number }> {
  const m = await registry.getSingleMetric(latencyHistogram)!.get();
  let sum = 0;
  let count = 0;
  // Histogram values carry their series name (_bucket, _sum, _count).
  for (const v of m.values as Array<{ value: number; metricName?: string }>) {
    if (v.metricName === `${latencyHistogram}_sum`) sum += v.value;
    if (v.metricName === `${latencyHistogram}_count`) count += v.value;
  }
  return { sum, count };
}
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
let cpu0 = process.cpuUsage();
let elu0 = performance.eventLoopUtilization();
let handler0 = { sum: 0, count: 0 };
let wall0 = performance.now();

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    path.join(import.meta.dirname, 'webhook-client.ts'),
    '--port',
    String(server.port()),
    '--ca',
    caFile,
    '--rate',
    values.rate,
    '--duration',
    values.duration,
    '--warmup',
    values.warmup,
    '--protocol',
    values.protocol,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);

// The one JSON line bench/webhook-client.ts prints at the end.
interface LoadResult {
  sent: number;
  ok: number;
  bad: number;
  errors: number;
  firstError?: string;
  elapsed: number;
  achieved: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  maxLateness: number;
  clientCpuSeconds: number;
  sockets: number;
  bodyBytes: { mutate: number; validate: number };
  patchOps: number;
}
let result: LoadResult;
try {
  result = await new Promise<LoadResult>((resolve, reject) => {
    const deadline = setTimeout(
      () => {
        child.kill();
        reject(new Error('load generator overran its time'));
      },
      (Number(values.duration) + Number(values.warmup) + 60) * 1000,
    );
    let out: LoadResult | undefined;
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'warm') {
        void serverHandlerSeconds().then((h) => (handler0 = h));
        cpu0 = process.cpuUsage();
        elu0 = performance.eventLoopUtilization();
        wall0 = performance.now();
        loopDelay.reset();
        loopDelay.enable();
      } else {
        out = JSON.parse(line);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(deadline);
      if (code === 0 && out) resolve(out);
      else reject(new Error(`load generator exited with ${code}`));
    });
  });
} finally {
  loopDelay.disable();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

const cpu = process.cpuUsage(cpu0);
const wallEnd = performance.now();
const elu = performance.eventLoopUtilization(elu0);
const handler = await serverHandlerSeconds();

// The same work without TLS and HTTP: JSON.parse of the review, admit(), JSON.stringify of the answer.
const clonesetRegs = allRegistrations.filter((r) => r.group === 'apps.kruise.io' && r.resource === 'clonesets');
const mutateRegs = clonesetRegs.filter((r) => r.mutate);
const validateRegs = clonesetRegs.filter((r) => r.validate);
const fill = (body: string, i: number) => body.replace('__UID__', `uid-${i}`).replaceAll('__NAME__', `web-${i}`);
const mutateBody = review(cloneSet('web'));
const probe = await admit('mutate', mutateRegs, JSON.parse(fill(mutateBody, 0)).request as AdmissionRequest, { features });
const defaulted = fjp.applyPatch(cloneSet('web'), JSON.parse(Buffer.from(probe.patch ?? 'W10=', 'base64').toString())).newDocument;
Object.assign(defaulted.metadata, {
  uid: 'c0ffee00-0000-4000-8000-000000000000',
  generation: 1,
  creationTimestamp: '2025-01-01T00:00:00Z',
});
const validateBody = review(defaulted);
async function inProcess(type: 'mutate' | 'validate', regs: typeof allRegistrations, body: string): Promise<number> {
  const n = 2000;
  for (let i = 0; i < 200; i++) JSON.stringify(await admit(type, regs, JSON.parse(fill(body, i)).request, { features }));
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) JSON.stringify(await admit(type, regs, JSON.parse(fill(body, i)).request, { features }));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e3 / n;
}
const mutateCpuMs = await inProcess('mutate', mutateRegs, mutateBody);
const validateCpuMs = await inProcess('validate', validateRegs, validateBody);

// What the shared shape step adds to each review: the nesting scan of the body and decodeAdmission
// (envelope, then the object against the compiled CloneSet schema), timed alone per review, in
// wall time and in process CPU time (which a busy machine's preemption does not inflate).
type Percentiles = { p50: number; p99: number; mean: number };
function shapeStep(type: 'mutate' | 'validate', regs: typeof allRegistrations, body: string): { wall: Percentiles; cpu: Percentiles } {
  const n = 2000;
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 200 + n; i++) {
    const text = fill(body, i);
    const bytes = Buffer.from(text);
    const request = JSON.parse(text).request;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const deep = nestingExceeds(bytes, MAX_JSON_DEPTH);
    const decoded = decodeAdmission(type, regs, request);
    const t = Number(process.hrtime.bigint() - t0) / 1e6;
    const c = process.cpuUsage(c0);
    if (deep || decoded.denied) throw new Error(`the benchmark review was refused: ${JSON.stringify(decoded.denied)}`);
    if (i >= 200) {
      wall.push(t);
      cpu.push((c.user + c.system) / 1e3);
    }
  }
  const stats = (xs: number[]): Percentiles => {
    xs.sort((a, b) => a - b);
    return { p50: xs[Math.floor(n * 0.5)]!, p99: xs[Math.floor(n * 0.99)]!, mean: xs.reduce((a, b) => a + b, 0) / n };
  };
  return { wall: stats(wall), cpu: stats(cpu) };
}
const mutateShape = shapeStep('mutate', mutateRegs, mutateBody);
const validateShape = shapeStep('validate', validateRegs, validateBody);
const wall = (wallEnd - wall0) / 1000;
const handlerMean = ((handler.sum - handler0.sum) / Math.max(1, handler.count - handler0.count)) * 1000;
const ms = (n: number) => `${n.toFixed(2)} ms`;

const lines = [
  `webhook round trip over ${values.protocol}: CloneSet CREATE, mutate/validate alternating, ${values.rate} req/s target for ${values.duration} s (after ${values.warmup} s warm-up); node ${process.version}, ${os.cpus().length} CPUs`,
  `load average before: ${loadBefore}; after: ${load()}`,
  `request bodies: mutate ${result.bodyBytes.mutate} B, validate ${result.bodyBytes.validate} B; mutate answers a ${result.patchOps}-op JSON patch`,
  '',
  '| figure | value |',
  '|---|---|',
  `| requests sent / answered allowed / wrong / failed | ${result.sent} / ${result.ok} / ${result.bad} / ${result.errors} |`,
  `| achieved rate | ${result.achieved.toFixed(1)} req/s |`,
  `| latency p50 | ${ms(result.p50)} |`,
  `| latency p90 | ${ms(result.p90)} |`,
  `| latency p99 | ${ms(result.p99)} |`,
  `| latency p99.9 | ${ms(result.p999)} |`,
  `| latency max | ${ms(result.max)} |`,
  `| latency mean | ${ms(result.mean)} |`,
  `| client send lateness, max | ${ms(result.maxLateness)} |`,
  `| server handler time, mean (controller_runtime_webhook_latency_seconds) | ${ms(handlerMean)} |`,
  `| server CPU | ${(((cpu.user + cpu.system) / 1e6 / wall) * 100).toFixed(1)} % of one core (${((cpu.user + cpu.system) / 1e3 / Math.max(1, result.ok + result.bad)).toFixed(2)} ms CPU per request) |`,
  `| server event-loop utilization | ${(elu.utilization * 100).toFixed(1)} % |`,
  `| server event-loop delay p99 / max | ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms / ${(loopDelay.max / 1e6).toFixed(1)} ms |`,
  `| in-process CPU per review, no TLS/HTTP (parse + admit + stringify): mutate / validate | ${mutateCpuMs.toFixed(3)} ms / ${validateCpuMs.toFixed(3)} ms |`,
  ...(
    [
      ['mutate', mutateShape],
      ['validate', validateShape],
    ] as const
  ).flatMap(([type, { wall, cpu }]) => [
    `| shape step (nesting scan + decodeAdmission) per ${type} review, 2000 reviews: wall p50 / p99 / mean | ${wall.p50.toFixed(3)} / ${wall.p99.toFixed(3)} / ${wall.mean.toFixed(3)} ms |`,
    `| same, CPU time p50 / p99 / mean | ${cpu.p50.toFixed(3)} / ${cpu.p99.toFixed(3)} / ${cpu.mean.toFixed(3)} ms |`,
  ]),
  `| client CPU | ${((result.clientCpuSeconds / result.elapsed) * 100).toFixed(1)} % of one core; ${result.sockets} connections |`,
];
if (result.firstError) lines.push('', `first error: ${result.firstError}`);
process.stdout.write(lines.join('\n') + '\n');
