// Load generator for bench/webhook.ts, run as its own process so that its CPU is not the server's.
// Open loop: request i is due at start + i/rate whatever happened to earlier ones; CloneSet CREATE
// reviews alternate between /mutate-apps-kruise-io-cloneset (the object as sent) and
// /validate-apps-kruise-io-cloneset (the object after defaulting, as the API server sends it once the
// mutating webhooks have run). To 127.0.0.1 only, over one HTTP/2 connection as the API server sends
// reviews (`--protocol h2`, the default), or a keep-alive HTTPS agent (`--protocol http/1.1`).
// Protocol on stdout: one line "warm" when the measured phase starts, then one JSON result line.
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { benchArgs } from './args.ts';
import { randomUUID } from 'node:crypto';
import fjp from 'fast-json-patch';
import { cloneSet, review } from './webhook-fixture.ts';
import { percentile } from './measure.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    port: { type: 'string' },
    ca: { type: 'string' },
    rate: { type: 'string', default: '200' },
    duration: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '3' },
    protocol: { type: 'string', default: 'h2' },
  },
});
const port = Number(values.port);
const rate = Number(values.rate);
const durationS = Number(values.duration);
const warmupS = Number(values.warmup);
const ca = fs.readFileSync(values.ca!, 'utf8');
if (values.protocol !== 'h2' && values.protocol !== 'http/1.1') throw new Error(`--protocol: h2 or http/1.1, not ${values.protocol}`);
const agent = new https.Agent({ keepAlive: true, ca, maxSockets: 64 });
const session = values.protocol === 'h2' ? http2.connect(`https://127.0.0.1:${port}`, { ca }) : undefined;

interface Answer {
  status: number;
  body: string;
  ms: number;
}

function post(path: string, body: string): Promise<Answer> {
  return session ? postH2(session, path, body) : postHttp1(path, body);
}

function postH2(session: http2.ClientHttp2Session, path: string, body: string): Promise<Answer> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', accept: 'application/json' });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - began }));
    stream.on('error', reject);
    stream.end(body);
  });
}

function postHttp1(path: string, body: string): Promise<Answer> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - began }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const MUTATE = '/mutate-apps-kruise-io-cloneset';
const VALIDATE = '/validate-apps-kruise-io-cloneset';

// What the API server would send the validating webhook: the object with the mutating patch applied
// and the fields storage fills in before validation.
const raw = cloneSet('web');
const first = JSON.parse((await post(MUTATE, review(raw).replace('__UID__', 'probe').replaceAll('__NAME__', 'web'))).body);
if (!first.response?.allowed) throw new Error(`mutate probe not allowed: ${JSON.stringify(first.response)}`);
const patch = first.response.patch ? JSON.parse(Buffer.from(first.response.patch, 'base64').toString()) : [];
const defaulted = fjp.applyPatch(structuredClone(raw), patch).newDocument;
Object.assign(defaulted.metadata, { uid: randomUUID(), generation: 1, creationTimestamp: '2025-01-01T00:00:00Z' });
const probe = JSON.parse((await post(VALIDATE, review(defaulted).replace('__UID__', 'probe').replaceAll('__NAME__', 'web'))).body);
if (!probe.response?.allowed) throw new Error(`validate probe not allowed: ${JSON.stringify(probe.response)}`);

const templates = [
  { path: MUTATE, body: review(raw) },
  { path: VALIDATE, body: review(defaulted) },
];

interface Phase {
  latencies: number[];
  lateness: number[];
  ok: number;
  bad: number;
  errors: number;
  sent: number;
  firstError?: string;
}

async function run(seconds: number): Promise<Phase & { elapsed: number }> {
  const phase: Phase = { latencies: [], lateness: [], ok: 0, bad: 0, errors: 0, sent: 0 };
  const total = Math.round(seconds * rate);
  const interval = 1000 / rate;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t = templates[i % 2]!;
    const uid = randomUUID();
    const body = t.body.replace('__UID__', uid).replaceAll('__NAME__', `web-${i}`);
    const sentAt = performance.now();
    phase.sent++;
    pending.push(
      post(t.path, body).then(
        (a) => {
          // Latency as the caller sees it: from when the request was due (late sends count against us).
          phase.lateness.push(sentAt - due);
          phase.latencies.push(a.ms + (sentAt - due));
          const r = a.status === 200 ? JSON.parse(a.body).response : undefined;
          if (r && r.uid === uid && r.allowed) phase.ok++;
          else {
            phase.bad++;
            phase.firstError ??= a.body.slice(0, 300);
          }
        },
        (err) => {
          phase.errors++;
          phase.firstError ??= String(err);
        },
      ),
    );
  }
  await Promise.all(pending);
  return { ...phase, elapsed: (performance.now() - start) / 1000 };
}

await run(warmupS);
process.stdout.write('warm\n');
const cpu0 = process.cpuUsage();
const r = await run(durationS);
const cpu = process.cpuUsage(cpu0);
const sorted = [...r.latencies].sort((a, b) => a - b);
const pct = (p: number) => percentile(sorted, p);
const sockets = session ? 1 : Object.values(agent.sockets).flat().length + Object.values(agent.freeSockets).flat().length;
process.stdout.write(
  JSON.stringify({
    sent: r.sent,
    ok: r.ok,
    bad: r.bad,
    errors: r.errors,
    firstError: r.firstError,
    elapsed: r.elapsed,
    achieved: (r.ok + r.bad) / r.elapsed,
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    p999: pct(99.9),
    max: sorted.at(-1),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    maxLateness: Math.max(...r.lateness),
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    sockets,
    bodyBytes: { mutate: Buffer.byteLength(templates[0]!.body), validate: Buffer.byteLength(templates[1]!.body) },
    patchOps: patch.length,
  }) + '\n',
);
agent.destroy();
session?.close();
