// Fuzzed objects of every Kruise kind through a real API server (issue #34): the in-process webhook
// fuzz (test/unit/webhooks/fuzz.test.ts) proves the handlers; this proves the whole admission path a
// user meets — the CRD's schema, then the manager's webhooks over the network. Each object is a
// seeded pick from the same corpus (test/harness/fuzz-corpus.ts: every field of every examples/
// sample given a wrong type or deleted, random schema paths set to bad values), plus
// ContainerRecreateRequests naming pods no pod can be, sent as a server-side dry-run create (the
// webhooks run, nothing is stored). Used by test/integration/apiserver-fuzz.test.ts (a smoke count)
// and bench/chaos.ts (10,000).

import { gvrFor, kinds } from '../../src/apis/registry.ts';
import { accessFromKubeconfigFile } from '../../src/runtime/kubeconfig.ts';
import { newTransport } from '../../src/runtime/transport.ts';
import { hashSeed, mutations, samples, seededRandom, type Mutation, type Sample } from './fuzz-corpus.ts';

export interface FuzzOutcome {
  sent: number;
  admitted: number;
  refused: number;
  /** Answers of 500 or more: from a webhook, or the API server failing to call one. */
  serverErrors: FuzzCase[];
  /**
   * Webhook refusals of a wrong-typed field (or an impossible CRR pod name) whose message names
   * neither that field nor another one it refused first. The API server's own refusals (its decoding
   * and the CRD schema, before any webhook) are worded by Kubernetes and not counted.
   */
  unnamed: FuzzCase[];
  /** How many of the refusals name a field (`path: …` as Kubernetes words field errors). */
  refusalsNamingAField: number;
  /** Refusals by the manager's webhooks (the rest came from the API server's schema check). */
  webhookRefusals: number;
}

export interface FuzzCase {
  case: string;
  code: number;
  message: string;
}

/** Pod names no pod can have: each must be refused naming spec.podName, never a 500. */
const BAD_POD_NAMES = ['a/b', '..', '.', 'Pod-A', '%2e%2e', 'a?b=c', 'a#b', 'x'.repeat(254), 'a b', '-a'];

/** Every mutation of every sample, in a stable order, plus the bad CRR pod names. */
function corpus(seed: number): Array<{ sample: Sample; mutation: Mutation }> {
  const out: Array<{ sample: Sample; mutation: Mutation }> = [];
  for (const sample of samples()) {
    const random = seededRandom(hashSeed(`${sample.def.kind}/${sample.version}/${sample.source}`, seed));
    for (const mutation of mutations(sample, random, 50)) {
      // Every object goes to the run's namespace (its URL names it), so a mutated namespace would be undone.
      if (!/^(set|delete) metadata\.namespace\b/.test(mutation.name)) out.push({ sample, mutation });
    }
    if (sample.def.kind === 'ContainerRecreateRequest') {
      for (const podName of BAD_POD_NAMES) {
        const object = structuredClone(sample.object);
        object.spec.podName = podName;
        out.push({
          sample,
          mutation: { name: `set spec.podName = ${JSON.stringify(podName).slice(0, 40)}`, object, refusedField: 'spec.podName' },
        });
      }
    }
  }
  return out;
}

// Kubernetes' field errors start with the field's path: `spec.replicas: Invalid value: …`.
const NAMES_A_FIELD =
  /(^|[\s:[,])[A-Za-z][\w-]*(\[[^\]]*\]|\.[A-Za-z][\w-]*)*: (Invalid value|Required value|Unsupported value|Forbidden|Duplicate value|Too long|Too many|Not found)/;

/**
 * Sends `count` fuzzed objects (a seeded pick, every kind and served version represented) as
 * dry-run creates into `namespace`, `concurrency` at a time.
 */
export async function fuzzThroughApiServer(opts: {
  kubeconfig: string;
  namespace: string;
  count: number;
  seed: number;
  concurrency?: number;
}): Promise<FuzzOutcome> {
  const access = accessFromKubeconfigFile(opts.kubeconfig);
  const base = new URL(access.server);
  const transport = newTransport(base, access.tls);
  const headers = async (): Promise<Record<string, string>> => ({
    accept: 'application/json',
    'content-type': 'application/json',
    ...(access.auth ? await access.auth() : {}),
  });
  const send = async (method: 'GET' | 'POST', url: URL, body?: string): Promise<{ status: number; text: string }> => {
    const res = await transport.exchange({ method, url, headers: await headers(), body, timeoutMs: 60_000 });
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk as Buffer);
    return { status: res.status, text: Buffer.concat(chunks).toString('utf8') };
  };
  try {
    return await fuzz(opts, base, send);
  } finally {
    transport.close();
  }
}

async function fuzz(
  opts: { namespace: string; count: number; seed: number; concurrency?: number },
  base: URL,
  send: (method: 'GET' | 'POST', url: URL, body?: string) => Promise<{ status: number; text: string }>,
): Promise<FuzzOutcome> {
  // The kinds and versions this cluster serves (its CRDs' version set), from discovery.
  const served = new Set<string>();
  for (const apiVersion of new Set(kinds.flatMap((k) => k.versions.map((v) => `${k.group}/${v.name}`)))) {
    const { status, text } = await send('GET', new URL(`/apis/${apiVersion}`, base));
    if (status !== 200) continue;
    for (const r of (JSON.parse(text) as { resources: Array<{ name: string }> }).resources) served.add(`${apiVersion}/${r.name}`);
  }
  const all = corpus(opts.seed).filter(({ sample }) => served.has(`${sample.object.apiVersion}/${sample.def.plural}`));
  const random = seededRandom(opts.seed);
  // Every kind first (one of each, in order), then random picks.
  const picks: number[] = [];
  const firstOfKind = new Map<string, number>();
  all.forEach(
    ({ sample }, i) =>
      firstOfKind.has(sample.object.apiVersion + sample.def.kind) || firstOfKind.set(sample.object.apiVersion + sample.def.kind, i),
  );
  picks.push(...[...firstOfKind.values()].slice(0, opts.count));
  while (picks.length < opts.count) picks.push(Math.floor(random() * all.length));

  const outcome: FuzzOutcome = {
    sent: 0,
    admitted: 0,
    refused: 0,
    serverErrors: [],
    unnamed: [],
    refusalsNamingAField: 0,
    webhookRefusals: 0,
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < picks.length) {
      const n = next++;
      const { sample, mutation } = all[picks[n]!]!;
      const object = structuredClone(mutation.object);
      const metadata =
        typeof object.metadata === 'object' && object.metadata !== null && !Array.isArray(object.metadata) ? object.metadata : undefined;
      const namespaced = sample.def.scope === 'Namespaced';
      if (metadata && namespaced) metadata.namespace = opts.namespace;
      const gvr = gvrFor(sample.object.apiVersion as string, sample.def.kind)!;
      const url = new URL(base.href);
      url.pathname = `/apis/${gvr.group}/${gvr.version}/${namespaced ? `namespaces/${opts.namespace}/` : ''}${gvr.resource}`;
      url.search = 'dryRun=All';
      const res = await send('POST', url, JSON.stringify(object));
      const text = res.text;
      outcome.sent++;
      if (res.status < 300) {
        outcome.admitted++;
        continue;
      }
      let message = text;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {
        // not a Status: kept as text
      }
      const fuzzCase: FuzzCase = {
        case: `${sample.def.kind} ${sample.version} #${n}: ${mutation.name}`,
        code: res.status,
        message: message.slice(0, 400),
      };
      if (res.status >= 500) {
        outcome.serverErrors.push(fuzzCase);
        continue;
      }
      outcome.refused++;
      const byWebhook = /admission webhook "[^"]+" denied the request/.test(message);
      if (byWebhook) outcome.webhookRefusals++;
      if (NAMES_A_FIELD.test(message)) outcome.refusalsNamingAField++;
      // Refused for its own field, or for another one it names first; a refusal of the whole kind
      // (403: its feature gate is off) is about no field.
      const namesItsField = message.includes(mutation.refusedField ?? '') || NAMES_A_FIELD.test(message) || res.status === 403;
      if (byWebhook && mutation.refusedField !== undefined && !namesItsField) outcome.unnamed.push(fuzzCase);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  return outcome;
}
