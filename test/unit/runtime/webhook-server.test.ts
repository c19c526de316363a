import { describe, it, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import http2 from 'node:http2';
import { X509Certificate } from 'node:crypto';
import { pino } from 'pino';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { invalid, required } from '../../../src/apis/field-errors.ts';
import { FakeClock } from '../../../src/util/clock.ts';
import { createCA, issueCert, type CertAuthority } from '../../../src/util/pki.ts';
import { registry } from '../../../src/runtime/metrics.ts';
import { MAX_CONCURRENT_STREAMS, SERVING_TIMEOUTS, WebhookServer } from '../../../src/runtime/webhook/server.ts';
import { admit } from '../../../src/runtime/webhook/admission.ts';
import { webhookReadinessCheck } from '../../../src/runtime/webhook/health.ts';
import { webhookPanics } from '../../../src/runtime/webhook/metrics.ts';
import { webhookName, webhookPath } from '../../../src/runtime/webhook/paths.ts';
import { INTERNAL_ERROR_MESSAGE } from '../../../src/runtime/webhook/response.ts';
import type { AdmissionRequest, AdmissionReview } from '../../../src/runtime/webhook/review.ts';
import { AdmissionDenied, type AdmissionContext, type WebhookRegistration } from '../../../src/runtime/webhook/types.ts';

const silent = pino({ level: 'silent' });
const features = { ...FEATURE_GATE_DEFAULTS };

const cloneset: WebhookRegistration = {
  group: 'apps.kruise.io',
  resource: 'clonesets',
  versions: ['v1alpha1', 'v1beta1'],
  operations: ['CREATE', 'UPDATE', 'DELETE'],
  mutate: (obj) => {
    obj.spec.replicas ??= 1;
    obj.metadata.labels = { ...obj.metadata.labels, 'a/b': 'defaulted' };
  },
  validate: (obj) => (obj.spec.replicas < 0 ? [invalid('spec.replicas', obj.spec.replicas, 'must be greater than or equal to 0')] : []),
};

function request(over: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u-1',
    kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet' },
    resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'clonesets' },
    operation: 'CREATE',
    namespace: 'ns',
    name: 'cs',
    userInfo: { username: 'alice' },
    object: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', metadata: { name: 'cs', namespace: 'ns' }, spec: {} },
    ...over,
  };
}

const decodePatch = (p?: string) => JSON.parse(Buffer.from(p!, 'base64').toString());

/** A temporary certificate directory (tls.crt/tls.key for localhost and 127.0.0.1) and its CA. */
async function servingCertDir(prefix: string): Promise<{ dir: string; ca: CertAuthority }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const ca = await createCA('test-ca');
  const serving = await issueCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  fs.writeFileSync(path.join(dir, 'tls.crt'), serving.certPem);
  fs.writeFileSync(path.join(dir, 'tls.key'), serving.keyPem);
  return { dir, ca };
}

/** POSTs `body` on an HTTP/2 session; resolves with the status and the text answered. */
function h2Post(
  session: http2.ClientHttp2Session,
  p: string,
  body: string | Buffer,
  contentType = 'application/json',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': p, 'content-type': contentType });
    let status = 0;
    let text = '';
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (text += c));
    stream.on('end', () => resolve({ status, text }));
    stream.on('error', reject);
    stream.end(body);
  });
}

/** Resolves once the session is sent a GOAWAY, with the ms it took. */
function goawayAfter(session: http2.ClientHttp2Session, started = Date.now()): Promise<number> {
  return new Promise((resolve) => session.once('goaway', () => resolve(Date.now() - started)));
}

describe('webhook paths and names follow kruise-manager', () => {
  it('paths', () => {
    assert.equal(webhookPath('mutate', cloneset), '/mutate-apps-kruise-io-cloneset');
    assert.equal(webhookPath('validate', cloneset), '/validate-apps-kruise-io-cloneset');
    assert.equal(webhookPath('mutate', { group: '', resource: 'pods' }), '/mutate-pod');
    assert.equal(webhookPath('validate', { group: '', resource: 'pods/eviction' }), '/validate-pod');
    assert.equal(webhookPath('validate', { group: 'apps', resource: 'deployments' }), '/validate-apps-deployment');
    assert.equal(
      webhookPath('validate', { group: 'policy.kruise.io', resource: 'podunavailablebudgets' }),
      '/validate-policy-kruise-io-podunavailablebudget',
    );
    assert.equal(
      webhookPath('validate', { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' }),
      '/validate-customresourcedefinition',
    );
    assert.equal(webhookPath('validate', { group: 'networking.k8s.io', resource: 'ingresses' }), '/validate-ingress');
    assert.equal(
      webhookPath('validate', { group: 'apps.kruise.io', resource: 'ephemeraljobs' }),
      '/validate-apps-kruise-io-v1alpha1-ephemeraljob',
    );
  });
  it('names', () => {
    assert.equal(webhookName('mutate', cloneset), 'mcloneset.kb.io');
    assert.equal(webhookName('validate', { group: '', resource: 'pods/eviction' }), 'vpodeviction.kb.io');
    assert.equal(webhookName('validate', { group: 'apps', resource: 'statefulsets' }), 'vbuiltinstatefulset.kb.io');
  });
});

describe('admit', () => {
  const opts = { features };

  it("mutate answers the defaulter's changes as a JSON patch, and no patch when nothing changed", async () => {
    const res = await admit('mutate', [cloneset], request(), opts);
    assert.equal(res.allowed, true);
    assert.equal(res.uid, 'u-1');
    assert.equal(res.patchType, 'JSONPatch');
    assert.deepEqual(
      decodePatch(res.patch).sort((a: any, b: any) => a.path.localeCompare(b.path)),
      [
        { op: 'add', path: '/metadata/labels', value: { 'a/b': 'defaulted' } },
        { op: 'add', path: '/spec/replicas', value: 1 },
      ],
    );
    const same = await admit(
      'mutate',
      [cloneset],
      request({ object: { metadata: { labels: { 'a/b': 'defaulted' } }, spec: { replicas: 3 } } }),
      opts,
    );
    assert.deepEqual(same, { uid: 'u-1', allowed: true });
    assert.deepEqual(await admit('mutate', [cloneset], request({ operation: 'DELETE', object: null }), opts), {
      uid: 'u-1',
      allowed: true,
    });
  });

  it('the defaulter works on a copy', async () => {
    const req = request();
    await admit('mutate', [cloneset], req, opts);
    assert.deepEqual((req.object as any).spec, {});
  });

  it('validate denies with code 422 and the field errors message, allows with code 200', async () => {
    const denied = await admit('validate', [cloneset], request({ object: { metadata: {}, spec: { replicas: -1 } } }), opts);
    assert.deepEqual(denied, {
      uid: 'u-1',
      allowed: false,
      status: { code: 422, message: 'spec.replicas: Invalid value: -1: must be greater than or equal to 0' },
    });
    const ok = await admit('validate', [cloneset], request({ object: { metadata: {}, spec: { replicas: 1 } } }), opts);
    assert.deepEqual(ok, { uid: 'u-1', allowed: true, status: { code: 200 } });
  });

  it('validators get the context, and on DELETE the deleted object', async () => {
    let seen: [any, any, AdmissionContext] | undefined;
    const reg: WebhookRegistration = {
      ...cloneset,
      validate: (o, old, ctx) => {
        seen = [o, old, ctx];
        return [];
      },
    };
    const old = { metadata: { name: 'cs' }, spec: { replicas: 2 } };
    await admit('validate', [reg], request({ operation: 'DELETE', object: null, oldObject: old, dryRun: true }), {
      features,
      reader: undefined,
    });
    assert.equal(seen![0], old);
    assert.equal(seen![1], old);
    assert.deepEqual(
      { ...seen![2], features: undefined },
      {
        operation: 'DELETE',
        apiVersion: 'apps.kruise.io/v1beta1',
        namespace: 'ns',
        name: 'cs',
        oldObject: old,
        userInfo: { username: 'alice' },
        dryRun: true,
        features: undefined,
        reader: undefined,
        cache: undefined,
        pubBudget: undefined,
        writer: undefined,
      },
    );
  });

  it('a handler that throws is denied with a generic message and counted as a panic; a timeout answers 500', async () => {
    const panics = async () => (await webhookPanics.get()).values[0]?.value ?? 0;
    const before = await panics();
    const boom: WebhookRegistration = {
      ...cloneset,
      validate: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'x')");
      },
    };
    assert.deepEqual(await admit('validate', [boom], request(), { features, logger: silent }), {
      uid: 'u-1',
      allowed: false,
      status: { code: 422, message: INTERNAL_ERROR_MESSAGE },
    });
    assert.equal(await panics(), before + 1);
    const denied: WebhookRegistration = {
      ...cloneset,
      validate: () => {
        throw new AdmissionDenied('failed to find Pod p: lister not synced', 500);
      },
    };
    assert.deepEqual(await admit('validate', [denied], request(), opts), {
      uid: 'u-1',
      allowed: false,
      status: { code: 500, message: 'failed to find Pod p: lister not synced' },
    });
    const slow: WebhookRegistration = { ...cloneset, mutate: () => new Promise(() => {}) };
    const res = await admit('mutate', [slow], request(), { features, timeoutMs: 20 });
    assert.equal(res.allowed, false);
    assert.equal(res.status?.code, 500);
    assert.match(res.status!.message!, /did not answer within/);
  });

  it('registrations sharing a path are picked by resource and subresource', async () => {
    const calls: string[] = [];
    const pods: WebhookRegistration = {
      group: '',
      resource: 'pods',
      versions: ['v1'],
      operations: ['UPDATE', 'DELETE'],
      validate: () => {
        calls.push('pods');
        return [];
      },
    };
    const eviction: WebhookRegistration = {
      group: '',
      resource: 'pods/eviction',
      versions: ['v1'],
      operations: ['CREATE'],
      validate: () => {
        calls.push('eviction');
        return [required('x')];
      },
    };
    const podReq = (sub?: string) =>
      request({
        resource: { group: '', version: 'v1', resource: 'pods' },
        subResource: sub,
        kind: { group: '', version: 'v1', kind: 'Pod' },
      });
    assert.equal((await admit('validate', [pods, eviction], podReq('eviction'), opts)).allowed, false);
    assert.equal((await admit('validate', [pods, eviction], podReq(), opts)).allowed, true);
    assert.deepEqual(calls, ['eviction', 'pods']);
    const other = await admit('validate', [pods, eviction], request(), opts);
    assert.equal(other.status?.code, 400);
  });
});

describe('WebhookServer over HTTPS', () => {
  let dir: string;
  let server: WebhookServer;
  let caPem: string;
  let port: number;

  before(async () => {
    let ca: CertAuthority;
    ({ dir, ca } = await servingCertDir('whs-'));
    caPem = ca.certPem;
    const gated: WebhookRegistration = {
      group: 'apps.kruise.io',
      resource: 'imagepulljobs',
      versions: ['v1beta1'],
      operations: ['CREATE'],
      gate: 'ImagePullJobGate',
      validate: () => [],
    };
    server = new WebhookServer({
      registrations: [cloneset, gated],
      features,
      tls: { certDir: dir },
      host: '127.0.0.1',
      port: 0,
      logger: silent,
      maxBodyBytes: 64 * 1024,
      certPollMs: 60_000,
      convert: (review) => {
        if (review.request.desiredAPIVersion === 'bad/v1')
          return { uid: 'ignored', convertedObjects: [], result: { status: 'Failure', message: 'unsupported version bad/v1' } };
        if (review.request.desiredAPIVersion === 'bug/v1') throw new TypeError('review.request.objects.map is not a function');
        return {
          uid: 'ignored',
          convertedObjects: review.request.objects.map((o: any) => ({ ...o, apiVersion: review.request.desiredAPIVersion })),
          result: { status: 'Success' },
        };
      },
    });
    await server.start();
    port = server.port();
  });
  after(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function call(
    p: string,
    body: string | Buffer | undefined,
    headers: Record<string, string> = { 'content-type': 'application/json' },
    method = 'POST',
  ): Promise<{ status: number; text: string; peerCert: X509Certificate }> {
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port, path: p, method, ca: caPem, headers, agent: false }, (res) => {
        const peer = (res.socket as import('node:tls').TLSSocket).getPeerX509Certificate()!;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text, peerCert: peer }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const review = (req: AdmissionRequest): string =>
    JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });

  it("serves the enabled registrations' paths only", () => {
    assert.deepEqual(server.paths(), ['/mutate-apps-kruise-io-cloneset', '/validate-apps-kruise-io-cloneset']);
  });

  it('answers AdmissionReviews with patches and denials', async () => {
    const m = await call('/mutate-apps-kruise-io-cloneset', review(request()));
    assert.equal(m.status, 200);
    const out: AdmissionReview = JSON.parse(m.text);
    assert.equal(out.apiVersion, 'admission.k8s.io/v1');
    assert.equal(out.kind, 'AdmissionReview');
    assert.equal(out.response!.uid, 'u-1');
    assert.equal(out.response!.patchType, 'JSONPatch');
    const v = JSON.parse(
      (await call('/validate-apps-kruise-io-cloneset', review(request({ object: { metadata: {}, spec: { replicas: -2 } } })))).text,
    );
    assert.deepEqual(v.response.status, { code: 422, message: 'spec.replicas: Invalid value: -2: must be greater than or equal to 0' });
  });

  it('keeps an idle connection open longer than the 5 s Node default (the API server reuses them for 90 s; a POST on a closed one fails)', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const post = () =>
      new Promise<boolean>((resolve, reject) => {
        const req = https.request(
          { host: '127.0.0.1', port, path: '/validate-apps-kruise-io-cloneset', method: 'POST', ca: caPem, agent },
          (res) => {
            res.resume();
            res.on('end', () => resolve(req.reusedSocket));
          },
        );
        req.setHeader('content-type', 'application/json');
        req.on('error', reject);
        req.end(review(request()));
      });
    try {
      assert.equal(await post(), false);
      await new Promise((r) => setTimeout(r, 6000));
      assert.equal(await post(), true, 'the second review went over the idle connection');
    } finally {
      agent.destroy();
    }
  });

  it('speaks HTTP/2 to a client offering h2 (as OpenKruise does), many reviews at once on one connection, and HTTP/1.1 to others', async () => {
    const tlsMod = await import('node:tls');
    const alpn = (offered: string[]) =>
      new Promise<string | false>((resolve, reject) => {
        const socket = tlsMod.connect({ host: '127.0.0.1', port, ca: caPem, ALPNProtocols: offered }, () => {
          resolve(socket.alpnProtocol ?? false);
          socket.end();
        });
        socket.on('error', reject);
      });
    assert.equal(await alpn(['h2', 'http/1.1']), 'h2');
    assert.equal(await alpn(['http/1.1']), 'http/1.1');

    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: caPem });
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once('remoteSettings', resolve));
      assert.equal(settings.maxConcurrentStreams, MAX_CONCURRENT_STREAMS);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => h2Post(session, '/mutate-apps-kruise-io-cloneset', review(request({ uid: `u-${i}` })))),
      );
      assert.deepEqual(
        answers.map((a) => [a.status, JSON.parse(a.text).response.uid]),
        answers.map((_, i) => [200, `u-${i}`]),
      );
      const denied = await h2Post(
        session,
        '/validate-apps-kruise-io-cloneset',
        review(request({ object: { metadata: {}, spec: { replicas: -2 } } })),
      );
      assert.equal(JSON.parse(denied.text).response.status.code, 422);
      assert.deepEqual(await h2Post(session, '/nowhere', '{}'), { status: 404, text: '404 page not found\n' });
      assert.deepEqual(await h2Post(session, '/healthz', ''), { status: 200, text: 'ok' });
    } finally {
      session.close();
    }
  });

  it('bad requests are answered inside an AdmissionReview like controller-runtime', async () => {
    const empty = JSON.parse((await call('/validate-apps-kruise-io-cloneset', '')).text);
    assert.deepEqual(empty.response.status, { code: 400, message: 'request body is empty' });
    const ct = JSON.parse((await call('/validate-apps-kruise-io-cloneset', '{}', { 'content-type': 'text/plain' })).text);
    assert.equal(ct.response.status.message, 'contentType=text/plain, expected application/json');
    const garbage = JSON.parse((await call('/validate-apps-kruise-io-cloneset', '{nope')).text);
    assert.equal(garbage.response.status.code, 400);
    const big = await call('/validate-apps-kruise-io-cloneset', Buffer.alloc(200 * 1024, 'a'));
    assert.equal(big.status, 200);
    assert.equal(JSON.parse(big.text).response.status.code, 413);
    assert.equal((await call('/validate-apps-kruise-io-imagepulljob', review(request()))).status, 404);
  });

  it('bad requests over HTTP/2 get the same answers, and their connection serves on', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: caPem });
    try {
      const path = '/validate-apps-kruise-io-cloneset';
      const status = async (body: string | Buffer, contentType?: string) =>
        JSON.parse((await h2Post(session, path, body, contentType)).text).response.status;
      assert.deepEqual(await status(''), { code: 400, message: 'request body is empty' });
      assert.equal((await status('{}', 'text/plain')).message, 'contentType=text/plain, expected application/json');
      assert.equal((await status('{nope')).code, 400);
      assert.equal((await status(Buffer.alloc(200 * 1024, 'a'))).code, 413);
      assert.equal((await h2Post(session, '/validate-apps-kruise-io-imagepulljob', review(request()))).status, 404);
      assert.equal(JSON.parse((await h2Post(session, path, review(request()))).text).response.allowed, true);
    } finally {
      session.close();
    }
  });

  it('/healthz answers ok and the readiness check verifies TLS against the CA', async () => {
    const h = await call('/healthz', undefined, {}, 'GET');
    assert.deepEqual([h.status, h.text], [200, 'ok']);
    await webhookReadinessCheck({ port, host: '127.0.0.1', ca: () => caPem })();
    const other = await createCA('other');
    await assert.rejects(webhookReadinessCheck({ port, host: '127.0.0.1', ca: () => other.certPem })());
  });

  it('/convert delegates to the conversion handler and reports failures in the result', async () => {
    const conv = (desired: string) =>
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'c-1', desiredAPIVersion: desired, objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet' }] },
      });
    const ok = JSON.parse((await call('/convert', conv('apps.kruise.io/v1beta1'))).text);
    assert.equal(ok.kind, 'ConversionReview');
    assert.deepEqual(ok.response, {
      uid: 'c-1',
      convertedObjects: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet' }],
      result: { status: 'Success' },
    });
    const bad = JSON.parse((await call('/convert', conv('bad/v1'))).text);
    assert.deepEqual(bad.response, {
      uid: 'c-1',
      convertedObjects: [],
      result: { status: 'Failure', message: 'unsupported version bad/v1' },
    });
    const bug = JSON.parse((await call('/convert', conv('bug/v1'))).text);
    assert.deepEqual(bug.response, { uid: 'c-1', convertedObjects: [], result: { status: 'Failure', message: INTERNAL_ERROR_MESSAGE } });
    const shape = JSON.parse(
      (
        await call(
          '/convert',
          JSON.stringify({ kind: 'ConversionReview', request: { uid: 'c-2', desiredAPIVersion: 'x/v1', objects: 'all' } }),
        )
      ).text,
    );
    assert.deepEqual(shape.response.result, {
      status: 'Failure',
      message: 'request.objects: Invalid value: "string": request.objects in body must be of type array: "string"',
    });
    assert.equal((await call('/convert', '{}')).status, 400);
  });

  it('records controller-runtime webhook metrics', async () => {
    await call('/validate-apps-kruise-io-cloneset', review(request({ object: { metadata: {}, spec: { replicas: 1 } } })));
    const text = await registry.metrics();
    assert.match(text, /controller_runtime_webhook_requests_total\{webhook="\/validate-apps-kruise-io-cloneset",code="200"\} \d+/);
    assert.match(text, /controller_runtime_webhook_latency_seconds_count\{webhook="\/validate-apps-kruise-io-cloneset"\} \d+/);
    assert.match(text, /controller_runtime_webhook_requests_in_flight\{webhook="\/validate-apps-kruise-io-cloneset"\} 0/);
  });

  it("counts a review's latency from its headers, reading its body included (as controller-runtime does)", async () => {
    const path_ = '/validate-apps-kruise-io-cloneset';
    const latencySum = async () =>
      Number(
        (await registry.metrics()).match(
          /controller_runtime_webhook_latency_seconds_sum\{webhook="\/validate-apps-kruise-io-cloneset"\} (\S+)/,
        )?.[1] ?? 0,
      );
    const before = await latencySum();
    const body = review(request({ object: { metadata: {}, spec: { replicas: 1 } } }));
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: caPem });
    try {
      const answered = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':method': 'POST', ':path': path_, 'content-type': 'application/json' });
        stream.on('response', (headers) => resolve(Number(headers[':status'])));
        stream.on('error', reject);
        stream.resume();
        // Half the body now, the rest 300 ms later: a slow sender is the review's time.
        stream.write(body.slice(0, 10));
        setTimeout(() => stream.end(body.slice(10)), 300);
      });
      assert.equal(answered, 200);
    } finally {
      session.close();
    }
    // The server sees the headers some milliseconds after they are sent (more on a loaded machine);
    // counted from the body read, as before, this review took about a millisecond.
    assert.ok((await latencySum()) - before >= 0.15, `latency counted ${(await latencySum()) - before} s`);
  });

  it('reloads the certificate when the files change, and keeps the old one if the new pair is broken', async () => {
    const before = (await call('/healthz', undefined, {}, 'GET')).peerCert;
    const ca2 = await createCA('test-ca');
    const next = await issueCert(ca2, { commonName: 'localhost', ipAddresses: ['127.0.0.1'] });
    fs.writeFileSync(path.join(dir, 'tls.crt'), next.certPem);
    assert.equal(server.reloadCertificate(), false, 'a cert without its key is rejected');
    fs.writeFileSync(path.join(dir, 'tls.key'), next.keyPem);
    caPem = ca2.certPem;
    // The directory watch picks the pair up by itself.
    const deadline = Date.now() + 5000;
    let after: X509Certificate | undefined;
    while (Date.now() < deadline) {
      try {
        after = (await call('/healthz', undefined, {}, 'GET')).peerCert;
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    assert.ok(after, 'server presents the new certificate');
    assert.notEqual(after!.fingerprint256, before.fingerprint256);
    assert.equal(after!.fingerprint256, new X509Certificate(next.certPem).fingerprint256);
  });
});

test("the server's waits run on its clock: the certificate reload and poll, the drain, an admission's timeout", async () => {
  const { dir } = await servingCertDir('whs-clock-');
  const clock = new FakeClock();
  const slow: WebhookRegistration = { ...cloneset, mutate: () => new Promise<void>(() => {}) };
  const server = new WebhookServer({
    registrations: [slow],
    features,
    tls: { certDir: dir },
    host: '127.0.0.1',
    port: 0,
    logger: silent,
    certPollMs: 60_000,
    clock,
  });
  await server.start();
  try {
    const served = () =>
      new Promise<string>((resolve, reject) => {
        const req = https.request(
          { host: '127.0.0.1', port: server.port(), path: '/healthz', rejectUnauthorized: false, agent: false },
          (res) => {
            res.resume();
            resolve((res.socket as import('node:tls').TLSSocket).getPeerX509Certificate()!.fingerprint256);
          },
        );
        req.on('error', reject);
        req.end();
      });
    const first = await served();
    const ca2 = await createCA('test-ca');
    const next = await issueCert(ca2, { commonName: 'localhost', ipAddresses: ['127.0.0.1'] });
    fs.writeFileSync(path.join(dir, 'tls.crt'), next.certPem);
    fs.writeFileSync(path.join(dir, 'tls.key'), next.keyPem);
    await new Promise((r) => setTimeout(r, 200)); // the directory watch's notifications arrive
    assert.equal(await served(), first, 'nothing reloads while the clock stands still');
    await clock.advance(60_000);
    assert.equal(await served(), new X509Certificate(next.certPem).fingerprint256);

    let answered = false;
    const answer = admit('mutate', [slow], request(), { features, logger: silent, timeoutMs: 10_000, clock }).then((r) => {
      answered = true;
      return r;
    });
    await clock.advance(9_999);
    assert.equal(answered, false);
    await clock.advance(1);
    assert.equal((await answer).status?.code, 500);

    let drained = false;
    const drain = server.drain(5_000).then(() => (drained = true));
    await clock.advance(4_999);
    assert.equal(drained, false);
    await clock.advance(1);
    await drain;
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a Kruise object with a wrongly typed field is refused before any handler runs, naming the field', async () => {
  let called = false;
  const regs = [
    {
      group: 'apps.kruise.io',
      resource: 'containerrecreaterequests',
      versions: ['v1beta1'],
      operations: ['CREATE' as const],
      mutate: () => {
        called = true;
      },
    },
  ];
  const res = await admit(
    'mutate',
    regs,
    {
      uid: 'u',
      operation: 'CREATE',
      namespace: 'ns',
      name: 'bad',
      kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'ContainerRecreateRequest' },
      resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'containerrecreaterequests' },
      object: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'bad' },
        spec: { podName: 'p', containers: 'app' },
      },
    } as any,
    { features: FEATURE_GATE_DEFAULTS },
  );
  assert.equal(called, false);
  assert.equal(res.allowed, false);
  assert.equal(res.status?.code, 400);
  assert.equal(res.status?.message, 'spec.containers: Invalid value: "string": spec.containers in body must be of type array: "string"');
});

describe('WebhookServer drops slow clients', () => {
  let dir: string;
  let server: WebhookServer;
  let port: number;
  const timeouts = { handshakeMs: 800, headersMs: 600, requestMs: 1_200, checkIntervalMs: 200, keepAliveMs: 1_500 };

  before(async () => {
    ({ dir } = await servingCertDir('whs-slow-'));
    server = new WebhookServer({
      registrations: [cloneset],
      features,
      tls: { certDir: dir },
      host: '127.0.0.1',
      port: 0,
      logger: silent,
      timeouts,
    });
    await server.start();
    port = server.port();
  });
  after(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Opens a TLS connection, writes `sent`, and resolves with the ms until the server closed it. */
  async function heldFor(sent: string): Promise<number> {
    const tlsMod = await import('node:tls');
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = tlsMod.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => socket.write(sent));
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Date.now() - started));
      setTimeout(() => reject(new Error('the server kept the connection open for 10 s')), 10_000).unref();
    });
  }

  it('a request whose headers never finish is disconnected within the header bound', async () => {
    const ms = await heldFor('POST /validate-apps-kruise-io-cloneset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n');
    assert.ok(ms >= timeouts.headersMs - 100 && ms < timeouts.headersMs + timeouts.checkIntervalMs + 1_000, `closed after ${ms} ms`);
  });

  it('a request whose body never finishes is disconnected within the request bound', async () => {
    const ms = await heldFor(
      'POST /validate-apps-kruise-io-cloneset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"kind":',
    );
    assert.ok(ms >= timeouts.requestMs - 100 && ms < timeouts.requestMs + timeouts.checkIntervalMs + 1_000, `closed after ${ms} ms`);
  });

  it('a connection that never starts TLS is dropped within the handshake bound', async () => {
    const net = await import('node:net');
    const ms = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Date.now() - started));
    });
    assert.ok(ms >= timeouts.handshakeMs - 100 && ms < timeouts.handshakeMs + 1_000, `closed after ${ms} ms`);
  });

  it('an HTTP/2 connection that opens no stream is dropped within the header bound', async () => {
    const started = Date.now();
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    const ms = await new Promise<number>((resolve) => session.once('close', () => resolve(Date.now() - started)));
    assert.ok(ms >= timeouts.headersMs - 100 && ms < timeouts.headersMs + 1_000, `closed after ${ms} ms`);
  });

  it('an HTTP/2 stream whose body never finishes is reset within the request bound, its connection kept', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    try {
      const started = Date.now();
      const stream = session.request({
        ':method': 'POST',
        ':path': '/validate-apps-kruise-io-cloneset',
        'content-type': 'application/json',
      });
      stream.write('{"kind":');
      stream.on('error', () => undefined);
      const ms = await new Promise<number>((resolve) => stream.once('close', () => resolve(Date.now() - started)));
      assert.equal(stream.rstCode, http2.constants.NGHTTP2_CANCEL);
      assert.ok(ms >= timeouts.requestMs - 100 && ms < timeouts.requestMs + 1_000, `reset after ${ms} ms`);
      assert.equal((await h2Post(session, '/healthz', '')).status, 200);
    } finally {
      session.close();
    }
  });

  it('an idle HTTP/2 connection is sent a GOAWAY after the keep-alive bound', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    try {
      assert.equal((await h2Post(session, '/healthz', '')).status, 200);
      const ms = await goawayAfter(session);
      assert.ok(ms >= timeouts.keepAliveMs - 100 && ms < timeouts.keepAliveMs + 1_000, `GOAWAY after ${ms} ms`);
    } finally {
      session.destroy();
    }
  });

  it('defaults: 10 s for the handshake and the headers, 30 s for a whole request (the API server’s longest webhook timeout)', () => {
    assert.deepEqual(SERVING_TIMEOUTS, {
      handshakeMs: 10_000,
      headersMs: 10_000,
      requestMs: 30_000,
      keepAliveMs: 95_000,
      checkIntervalMs: 1_000,
    });
  });
});

describe('WebhookServer drains before closing', () => {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: request() });

  /** A started server on a certificate directory of its own; close() stops it and removes the directory. */
  async function startServer(prefix: string): Promise<{ server: WebhookServer; ca: CertAuthority; close(): Promise<void> }> {
    const { dir, ca } = await servingCertDir(prefix);
    const server = new WebhookServer({
      registrations: [cloneset],
      features,
      tls: { certDir: dir },
      host: '127.0.0.1',
      port: 0,
      logger: silent,
    });
    await server.start();
    return {
      server,
      ca,
      async close() {
        await server.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  it('answers on pooled and new connections while draining, each answer handing its connection back (Connection: close)', async () => {
    const { server, ca, close } = await startServer('whs-drain-');
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const post = (via: https.Agent | false) =>
      new Promise<{ status: number; connection?: string; reused: boolean; closed: Promise<void> }>((resolve, reject) => {
        const req = https.request(
          { host: '127.0.0.1', port: server.port(), path: '/mutate-apps-kruise-io-cloneset', method: 'POST', ca: ca.certPem, agent: via },
          (res) => {
            res.resume();
            const closed = new Promise<void>((done) => (res.socket.destroyed ? done() : res.socket.once('close', () => done())));
            res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, reused: req.reusedSocket, closed }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      const first = await post(agent);
      assert.deepEqual([first.status, first.connection], [200, 'keep-alive']);
      assert.equal(server.isDraining(), false);

      const drained = server.drain(600);
      assert.equal(server.isDraining(), true);
      // The review the API server sends on its pooled connection is answered, and the connection closes.
      const pooled = await post(agent);
      assert.deepEqual([pooled.status, pooled.connection, pooled.reused], [200, 'close', true]);
      await pooled.closed;
      // A new connection (endpoints not yet updated) is still accepted.
      const fresh = await post(false);
      assert.deepEqual([fresh.status, fresh.connection], [200, 'close']);
      assert.equal(server.listening(), true);
      await drained;
    } finally {
      agent.destroy();
      await close();
    }
  });

  it('sends each HTTP/2 connection a GOAWAY, and still answers the first review of a new one before sending it one', async () => {
    const { server, ca, close } = await startServer('whs-drain2-');
    const url = `https://127.0.0.1:${server.port()}`;
    const pooled = http2.connect(url, { ca: ca.certPem });
    let fresh: http2.ClientHttp2Session | undefined;
    try {
      assert.equal((await h2Post(pooled, '/mutate-apps-kruise-io-cloneset', body)).status, 200);
      const pooledAway = goawayAfter(pooled);
      const drained = server.drain(600);
      assert.ok((await pooledAway) < 200, 'the pooled connection is sent a GOAWAY at once');
      fresh = http2.connect(url, { ca: ca.certPem });
      const freshAway = goawayAfter(fresh);
      const answer = await h2Post(fresh, '/mutate-apps-kruise-io-cloneset', body);
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.text).response.allowed, true);
      await freshAway;
      assert.equal(server.listening(), true);
      await drained;
    } finally {
      pooled.destroy();
      fresh?.destroy();
      await close();
    }
  });
});
