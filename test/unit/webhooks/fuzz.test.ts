// Fuzz test of the webhook server's request handling (issue #10): thousands of generated invalid
// requests for every Kruise kind and served version, through the real handler in-process
// (WebhookHandler.answer: body in, HTTP answer out), with every real registration and gate on.
// Every answer must be a proper AdmissionReview (or ConversionReview) whose denials are 4xx with a
// message that is not a JavaScript error; no handler may throw (controller_runtime_webhook_panics_total
// stays put); a wrong JSON type where the schema declares one must be refused naming the field.
// Seeded (FUZZ_SEED=<n> generates another corpus, FUZZ_MUTATIONS=<n> more random mutations per
// sample); failures are collected and reported together.
import { describe, it, beforeEach, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { handleConversionReview, type ConversionReview } from '../../../src/apis/conversion/index.ts';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import { kinds, type KindDefinition } from '../../../src/apis/registry.ts';
import { MAX_JSON_DEPTH, WebhookHandler, type WebhookAnswer } from '../../../src/runtime/webhook/http.ts';
import { webhookPanics } from '../../../src/runtime/webhook/metrics.ts';
import { webhookPath } from '../../../src/runtime/webhook/paths.ts';
import { INTERNAL_ERROR_MESSAGE } from '../../../src/runtime/webhook/response.ts';
import type { AdmissionReview } from '../../../src/runtime/webhook/review.ts';
import type { AdmissionReader, Operation } from '../../../src/runtime/webhook/types.ts';
import { allRegistrations } from '../../../src/webhooks/index.ts';
import {
  BAD_VALUES,
  fieldName,
  hashSeed,
  mutations,
  nested,
  nestedText,
  samples,
  seededRandom,
  setAt,
  type Mutation,
  type Sample,
} from '../../harness/fuzz-corpus.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
// Random schema-path mutations per sample, on top of one type swap and one deletion per field it has.
const RANDOM_PER_SAMPLE = Number(process.env.FUZZ_MUTATIONS ?? 50);

// Every gate on but the one that switches defaulting off: the most handler code runs.
const features = Object.fromEntries(
  Object.keys(FEATURE_GATE_DEFAULTS).map((g) => [g, g !== 'TemplateNoDefaults' && g !== 'EnableExternalCerts']),
) as unknown as FeatureGates;

// The objects handlers look up: a running pod with the CRR example's containers on a node; nothing else.
const reader: AdmissionReader = {
  async get<T>(_apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | null> {
    if (kind === 'Pod') {
      return {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, uid: 'pod-uid', labels: { app: 'sample' } },
        spec: {
          nodeName: 'node-1',
          containers: [
            { name: 'app', image: 'nginx' },
            { name: 'sidecar', image: 'busybox' },
          ],
        },
        status: {
          phase: 'Running',
          containerStatuses: [
            { name: 'app', containerID: 'containerd://a', restartCount: 0, ready: true },
            { name: 'sidecar', containerID: 'containerd://b', restartCount: 1, ready: true },
          ],
        },
      } as T;
    }
    if (kind === 'Node') return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: {} } } as T;
    return null;
  },
  async list<T>(): Promise<T[]> {
    return [];
  },
};

const JS_ERROR =
  /TypeError|RangeError|ReferenceError|SyntaxError|Cannot read propert|Cannot set propert|Cannot create property|Cannot convert|is not a function|is not iterable|is not defined|Maximum call stack|\[object Object\]|of undefined|of null/;

interface Failure {
  case: string;
  problem: string;
}

const panicCount = async () => (await webhookPanics.get()).values[0]?.value ?? 0;

describe('webhook fuzz', () => {
  const handler = new WebhookHandler({
    registrations: allRegistrations,
    features,
    reader,
    logger: pino({ level: 'silent' }),
    convert: (review) => handleConversionReview(review).response!,
  });
  const failures: Failure[] = [];
  let cases = 0;
  let panicsBefore = 0;

  beforeEach(async () => {
    failures.length = 0;
    cases = 0;
    panicsBefore = await panicCount();
  });

  /** Fails the running test with every failed case (the first 40 shown) and any handler exception. */
  async function report(t: TestContext): Promise<void> {
    t.diagnostic(`${cases} requests`);
    const panics = (await panicCount()) - panicsBefore;
    const shown = failures
      .slice(0, 400)
      .map((f) => `  ${f.case}\n    → ${f.problem}`)
      .join('\n');
    assert.equal(failures.length, 0, `${failures.length} of ${cases} fuzz cases failed (seed ${SEED}):\n${shown}`);
    assert.equal(panics, 0, `${panics} handler exceptions (controller_runtime_webhook_panics_total)`);
    assert.ok(cases > 0);
  }

  /** Checks one AdmissionReview answer; `refusedField` must be named in a 400 denial. */
  function checkAdmission(name: string, answer: WebhookAnswer, uid: string, refusedField?: string): void {
    cases++;
    const fail = (problem: string): void => void failures.push({ case: name, problem });
    if (answer.status !== 200) return fail(`HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
    let review: AdmissionReview;
    try {
      review = JSON.parse(answer.body);
    } catch {
      return fail(`not JSON: ${answer.body.slice(0, 200)}`);
    }
    const res = review.response;
    if (review.kind !== 'AdmissionReview' || !res || typeof res.allowed !== 'boolean' || res.uid !== uid) {
      return fail(`not an AdmissionReview response for uid ${uid}: ${answer.body.slice(0, 200)}`);
    }
    const code = res.status?.code;
    const message = res.status?.message ?? '';
    if (code !== undefined && code >= 500) return fail(`code ${code}: ${message}`);
    if (message === INTERNAL_ERROR_MESSAGE) return fail('a handler threw (see the panics metric)');
    if (JS_ERROR.test(message)) return fail(`JS error leaked: ${message}`);
    if (!res.allowed && (!code || code < 400 || !message))
      return fail(`denial without a 4xx code and message: ${JSON.stringify(res.status)}`);
    if (refusedField !== undefined) {
      if (res.allowed || code !== 400 || !message.includes(`${refusedField}: Invalid value`)) {
        return fail(`expected a 400 naming ${refusedField}, got ${JSON.stringify(res)}`);
      }
    }
  }

  const post = (p: string, body: string | Buffer, contentType = 'application/json') =>
    handler.answer(p, typeof body === 'string' ? Buffer.from(body) : body, contentType);

  function reviewBody(
    def: KindDefinition,
    version: string,
    operation: Operation,
    uid: string,
    object: unknown,
    oldObject?: unknown,
  ): string {
    const metadata = (object ?? oldObject) as { metadata?: { name?: unknown; namespace?: unknown } } | null;
    const name = typeof metadata?.metadata?.name === 'string' ? metadata.metadata.name : 'fuzz';
    const namespace = def.scope === 'Namespaced' ? 'default' : undefined;
    return JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        operation,
        name,
        namespace,
        kind: { group: def.group, version, kind: def.kind },
        resource: { group: def.group, version, resource: def.plural },
        userInfo: { username: 'fuzz', groups: ['system:authenticated'] },
        object: object ?? null,
        oldObject: oldObject ?? null,
      },
    });
  }

  /** The paths serving a kind, with the operations each registration takes. */
  function routesFor(def: KindDefinition): { path: string; operations: readonly Operation[] }[] {
    return allRegistrations
      .filter((r) => r.group === def.group && r.resource === def.plural && (!r.gate || features[r.gate]))
      .flatMap((r) =>
        (['mutate', 'validate'] as const)
          .filter((t) => (t === 'mutate' ? r.mutate : r.validate))
          .map((t) => ({ path: webhookPath(t, r), operations: r.operations })),
      );
  }

  async function admitAll(sample: Sample, m: Mutation, label: string): Promise<void> {
    for (const route of routesFor(sample.def)) {
      for (const op of route.operations) {
        const uid = `${label}-${cases}`;
        const tag = `${sample.def.kind} ${sample.version} (${sample.source}) ${route.path} ${op}: ${m.name}`;
        if (op === 'CREATE') {
          checkAdmission(tag, await post(route.path, reviewBody(sample.def, sample.version, op, uid, m.object)), uid, m.refusedField);
        } else if (op === 'UPDATE') {
          // Every other mutation is the stored object instead of the new one.
          const asOld = cases % 2 === 1;
          const body = asOld
            ? reviewBody(sample.def, sample.version, op, uid, sample.object, m.object)
            : reviewBody(sample.def, sample.version, op, uid, m.object, sample.object);
          checkAdmission(`${tag}${asOld ? ' (as oldObject)' : ''}`, await post(route.path, body), uid, m.refusedField);
        } else if (op === 'DELETE') {
          checkAdmission(tag, await post(route.path, reviewBody(sample.def, sample.version, op, uid, null, m.object)), uid, m.refusedField);
        }
      }
    }
  }

  const all = samples();

  it('has a sample for every kind and version a webhook serves', () => {
    for (const def of kinds) {
      if (!routesFor(def).length) continue;
      for (const v of def.versions) {
        assert.ok(
          all.some((s) => s.def === def && s.version === v.name),
          `no examples/ object of ${def.kind} ${v.name}`,
        );
      }
    }
  });

  for (const sample of all) {
    if (!routesFor(sample.def).length) continue;
    it(`${sample.def.kind} ${sample.version} (${sample.source}): mutated objects`, async (t) => {
      const random = seededRandom(hashSeed(sample.source, SEED));
      await admitAll(sample, { name: 'the sample itself', object: sample.object }, 'valid');
      for (const m of mutations(sample, random, RANDOM_PER_SAMPLE)) await admitAll(sample, m, 'm');
      await report(t);
    });
  }

  it('the objects quoted in issue #10 are refused with 400 naming the field', async (t) => {
    const quoted: [string, string, (string | number)[], unknown][] = [
      ['CloneSet', 'v1alpha1', ['spec', 'template', 'spec', 'containers', 0, 'image'], -1745],
      ['CloneSet', 'v1beta1', ['spec', 'template', 'spec'], '1e9'],
      ['CloneSet', 'v1beta1', ['spec', 'volumeClaimTemplates'], -1],
      ['CloneSet', 'v1alpha1', ['spec', 'template', 'spec', 'containers'], 'nginx'],
      ['SidecarSet', 'v1beta1', ['spec', 'volumes'], ''],
      ['BroadcastJob', 'v1alpha1', ['spec', 'template'], '%'],
    ];
    for (const [kind, version, at, value] of quoted) {
      const sample = all.find((s) => s.def.kind === kind && s.version === version)!;
      const object = structuredClone(sample.object);
      setAt(object, at, value);
      await admitAll(
        sample,
        { name: `issue #10: ${fieldName(at)} = ${JSON.stringify(value)}`, object, refusedField: fieldName(at) },
        'issue',
      );
    }
    await report(t);
  });

  it('nesting: 100,000 levels are refused before parsing, naming the limit; just under the limit is handled', async (t) => {
    const deep = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"deep","operation":"CREATE","object":${nestedText(100_000)}}}`;
    for (const p of ['/mutate-apps-kruise-io-cloneset', '/validate-apps-kruise-io-cloneset']) {
      const answer = await post(p, deep);
      checkAdmission(`100,000-deep object on ${p}`, answer, '');
      assert.match(
        JSON.parse(answer.body).response.status.message,
        new RegExp(`JSON nesting exceeds the limit of ${MAX_JSON_DEPTH} levels`),
      );
    }
    // Untyped fields may nest: a pod's securityContext, a subset patch, a distributed resource.
    const room = MAX_JSON_DEPTH - 20;
    const places: [string, string, (string | number)[]][] = [
      ['CloneSet', 'v1beta1', ['spec', 'template', 'spec', 'containers', 0, 'securityContext', 'x']],
      ['WorkloadSpread', 'v1beta1', ['spec', 'subsets', 0, 'patch', 'metadata']],
      ['UnitedDeployment', 'v1beta1', ['spec', 'topology', 'subsets', 0, 'patch', 'spec']],
      ['ResourceDistribution', 'v1beta1', ['spec', 'resource', 'data']],
    ];
    for (const [kind, version, at] of places) {
      const sample = all.find((s) => s.def.kind === kind && s.version === version)!;
      for (const shape of ['object', 'array'] as const) {
        const object = structuredClone(sample.object);
        let node: any = object;
        for (const k of at.slice(0, -1)) node = node[k] ??= {};
        node[at.at(-1)!] = nested(room, 1, shape);
        await admitAll(sample, { name: `${room}-deep ${shape} at ${at.join('.')}`, object }, 'deep');
      }
    }
    await report(t);
  });

  it('envelopes: missing or null objects, wrong request types, garbage bodies', async (t) => {
    const cs = all.find((s) => s.def.kind === 'CloneSet' && s.version === 'v1alpha1')!;
    const good = JSON.parse(reviewBody(cs.def, cs.version, 'CREATE', 'env', cs.object));
    const variants: [string, unknown][] = [
      ['request missing', { ...good, request: undefined }],
      ['request null', { ...good, request: null }],
      ['request a string', { ...good, request: 'x' }],
      ['review an array', [good]],
      ['review a number', 5],
      ['review null', null],
      ['kind missing', { ...good, kind: undefined }],
    ];
    for (const [field, values] of [
      ['object', [null, undefined, 'x', 5, [], [cs.object], true]],
      ['oldObject', ['x', 5, []]],
      ['uid', [5, null, {}, []]],
      ['operation', ['EXPLODE', 5, null, '']],
      ['kind', ['x', 5, null, { group: 5 }, { version: [] }]],
      ['resource', ['x', { resource: 5 }, null]],
      ['userInfo', ['x', { groups: 'a' }, { groups: [5] }, { extra: { a: 'b' } }]],
      ['dryRun', ['yes', 1]],
      ['namespace', [5, {}]],
      ['name', [5, []]],
      ['subResource', [5]],
    ] as const) {
      for (const v of values)
        variants.push([`request.${field} = ${JSON.stringify(v)}`, { ...good, request: { ...good.request, [field]: v } }]);
    }
    for (const op of ['UPDATE', 'DELETE'] as const) {
      variants.push([
        `${op} without oldObject`,
        { ...good, request: { ...good.request, operation: op, object: op === 'DELETE' ? null : cs.object, oldObject: null } },
      ]);
    }
    variants.push(['kind version not served', { ...good, request: { ...good.request, kind: { ...good.request.kind, version: 'v9' } } }]);
    for (const [name, review] of variants) {
      for (const p of ['/mutate-apps-kruise-io-cloneset', '/validate-apps-kruise-io-cloneset']) {
        const r = review as any;
        const uid = r?.kind === 'AdmissionReview' && typeof r.request?.uid === 'string' ? r.request.uid : '';
        checkAdmission(`${name} on ${p}`, await post(p, JSON.stringify(review) ?? ''), uid);
      }
    }
    const raw: [string, string | Buffer, string?][] = [
      ['empty body', ''],
      ['garbage', '{nope'],
      ['binary', Buffer.from([0xff, 0xfe, 0x00, 0x7b])],
      ['a bare string', '"x"'],
      ['wrong content type', JSON.stringify(good), 'text/plain'],
      ['unclosed', '{"request":{"uid":"x"'],
      ['deep arrays', '['.repeat(100_000)],
      ['closing brackets', ']}'.repeat(1000)],
      ['strings with brackets', JSON.stringify({ ...good, request: { ...good.request, name: '{['.repeat(10_000) } })],
    ];
    for (const [name, body, contentType] of raw) {
      const answer = await post('/validate-apps-kruise-io-cloneset', body, contentType);
      const uid = name === 'strings with brackets' ? 'env' : '';
      checkAdmission(`${name}`, answer, uid);
    }
    const tooLarge = await handler.answer('/validate-apps-kruise-io-cloneset', 'too-large', 'application/json');
    checkAdmission('too large', tooLarge, '');
    await report(t);
  });

  it('/convert: mutated objects and envelopes answer ConversionReviews, never an error', async (t) => {
    const checkConversion = (name: string, answer: WebhookAnswer, textAllowed = false) => {
      cases++;
      const fail = (problem: string): void => void failures.push({ case: `/convert ${name}`, problem });
      if (answer.status !== 200) {
        if (!(textAllowed && answer.status === 400)) fail(`HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
        if (JS_ERROR.test(answer.body)) fail(`JS error leaked: ${answer.body}`);
        return;
      }
      const review: ConversionReview = JSON.parse(answer.body);
      const result = review.response?.result;
      if (review.kind !== 'ConversionReview' || !result) return fail(`not a ConversionReview: ${answer.body.slice(0, 200)}`);
      if (result.status === 'Failure') {
        if (result.message === INTERNAL_ERROR_MESSAGE) return fail('the converter threw (see the panics metric)');
        if (!result.message || JS_ERROR.test(result.message)) return fail(`bad failure message: ${result.message}`);
      }
    };
    const conv = (desired: unknown, objects: unknown) =>
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'c', desiredAPIVersion: desired, objects },
      });
    for (const sample of all) {
      if (sample.def.versions.length < 2) continue;
      const other = sample.def.versions.find((v) => v.name !== sample.version)!.name;
      const random = seededRandom(hashSeed(`convert ${sample.source}`, SEED));
      for (const m of mutations(sample, random, 20)) {
        const answer = await post('/convert', conv(`${sample.def.group}/${other}`, [m.object]));
        checkConversion(`${sample.def.kind} ${sample.version} → ${other}: ${m.name}`, answer);
        if (m.refusedField && !JSON.parse(answer.body).response.result.message?.includes(`${m.refusedField}: Invalid value`)) {
          failures.push({
            case: `/convert ${sample.def.kind} ${sample.version}: ${m.name}`,
            problem: `expected a Failure naming ${m.refusedField}: ${answer.body.slice(0, 300)}`,
          });
        }
      }
    }
    const cs = all.find((s) => s.def.kind === 'CloneSet')!.object;
    for (const desired of [null, 5, '', 'apps.kruise.io/v9', 'v1', 'x/y/z', ...BAD_VALUES.slice(0, 5)])
      checkConversion(`desired ${JSON.stringify(desired)}`, await post('/convert', conv(desired, [cs])));
    for (const objects of [
      null,
      'x',
      5,
      {},
      [null],
      [5],
      ['x'],
      [[]],
      [{}],
      [{ apiVersion: 5 }],
      [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: 'x' }],
    ]) {
      checkConversion(`objects ${JSON.stringify(objects)}`, await post('/convert', conv('apps.kruise.io/v1beta1', objects)));
    }
    for (const [name, body] of [
      ['empty', ''],
      ['garbage', '{x'],
      ['not a review', '{"kind":"Pod"}'],
      ['request string', '{"kind":"ConversionReview","request":"x"}'],
      ['deep', nestedText(100_000)],
    ] as const) {
      checkConversion(name, await post('/convert', body), true);
    }
    checkConversion(
      'uid a number',
      await post(
        '/convert',
        JSON.stringify({ kind: 'ConversionReview', request: { uid: 5, desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [] } }),
      ),
    );
    await report(t);
  });
});
