// The HTTPS admission server of kruise-manager: AdmissionReview v1 in, AdmissionReview out, with the
// answers controller-runtime's admission package gives (kruise-manager is built on it):
//   - mutate: the registration's Defaulter runs on a private copy of the object and the difference
//     is answered as a base64 RFC 6902 JSON patch (PatchResponseFromRaw); no change, no patch;
//   - validate: field errors deny with admission.Errored(422, aggregate) → status {code: 422,
//     message}; none allow with status {code: 200};
//   - a handler that throws or outlives the request timeout → admission.Errored(500, err);
//   - an empty, oversized (413), non-JSON or undecodable request → Errored(400/413) —
//     always inside an HTTP 200 AdmissionReview, as controller-runtime answers.
// DELETE requests carry no object: validators get the object being deleted (oldObject) as `obj`.
// Several registrations may share a path (pods and pods/eviction both use /validate-pod); the
// request's resource picks the one that runs.
//
// Also served: /convert (CRD ConversionReview, delegated to a handler function) and /healthz.
// The serving certificate is reloaded when its files change (watch plus a poll, since Secret
// volumes swap a symlink), without dropping the listener.

import fs from 'node:fs';
import https from 'node:https';
import type http from 'node:http';
import path from 'node:path';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import fjp from 'fast-json-patch';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { FeatureGates } from '../../apis/features.ts';
import { aggregateMessage, fieldErrorsMessage } from '../../apis/field-errors.ts';
import { decodeErrors } from '../../apis/validate.ts';
import { AdmissionDenied, type AdmissionContext, type AdmissionReader, type Operation, type UserInfo, type WebhookRegistration } from './types.ts';
import { logger as rootLogger, type Logger } from '../log.ts';
import { registry } from '../metrics.ts';

// ---------------------------------------------------------------------------------------------
// Wire types

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: any;
  oldObject?: any;
  dryRun?: boolean;
  options?: unknown;
}

export interface ResultStatus {
  code?: number;
  reason?: string;
  message?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: ResultStatus;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: string;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: any[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: any[];
  result: { status: 'Success' | 'Failure'; message?: string };
}

export interface ConversionReview {
  apiVersion: string;
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}

/** Converts the objects of a review (src/apis/conversion); throwing answers a Failure result. */
export type ConversionHandler = (review: ConversionReview & { request: ConversionRequest }) =>
  ConversionResponse | Promise<ConversionResponse>;

// ---------------------------------------------------------------------------------------------
// Paths and names (kubebuilder markers of pkg/webhook/**, config/webhook/manifests.yaml)

export type WebhookType = 'mutate' | 'validate';

// Upstream paths that do not follow the <group-with-dashes>-<singular> pattern.
const pathStemOverrides: Record<string, string> = {
  'apiextensions.k8s.io/customresourcedefinitions': 'customresourcedefinition',
  'networking.k8s.io/ingresses': 'ingress',
  'apps.kruise.io/ephemeraljobs': 'apps-kruise-io-v1alpha1-ephemeraljob',
};

/** clonesets → cloneset, ingresses → ingress, pods/eviction → pod. */
export function singularOf(resource: string): string {
  const base = resource.split('/')[0]!;
  if (base.endsWith('sses')) return base.slice(0, -2);
  return base.endsWith('s') ? base.slice(0, -1) : base;
}

/**
 * kruise-manager's path for a registration: /mutate-apps-kruise-io-cloneset, /validate-pod,
 * /validate-apps-deployment, /validate-policy-kruise-io-podunavailablebudget… Upstream serves all
 * versions of a kind on one unversioned path.
 */
export function webhookPath(type: WebhookType, reg: Pick<WebhookRegistration, 'group' | 'resource'>): string {
  const base = reg.resource.split('/')[0]!;
  const stem = pathStemOverrides[`${reg.group}/${base}`]
    ?? [...(reg.group ? [reg.group.replace(/\./g, '-')] : []), singularOf(base)].join('-');
  return `/${type}-${stem}`;
}

/** The webhook's name in the configuration, e.g. mcloneset.kb.io, vbuiltindeployment.kb.io, vpodeviction.kb.io. */
export function webhookName(type: WebhookType, reg: Pick<WebhookRegistration, 'group' | 'resource'>): string {
  const [base, sub] = reg.resource.split('/');
  const builtin = reg.group === 'apps' ? 'builtin' : '';
  return `${type === 'mutate' ? 'm' : 'v'}${builtin}${singularOf(base!)}${sub ?? ''}.kb.io`;
}

/** Registrations whose feature gate (if any) is on. */
export function enabledRegistrations(regs: readonly WebhookRegistration[], features: FeatureGates): WebhookRegistration[] {
  return regs.filter((r) => !r.gate || features[r.gate]);
}

// ---------------------------------------------------------------------------------------------
// Metrics (controller-runtime pkg/webhook/internal/metrics)

const requestLatency = new Histogram({
  name: 'controller_runtime_webhook_latency_seconds',
  help: 'Histogram of the latency of processing admission requests',
  labelNames: ['webhook'] as const,
  registers: [registry],
});

const requestTotal = new Counter({
  name: 'controller_runtime_webhook_requests_total',
  help: 'Total number of admission requests by HTTP status code.',
  labelNames: ['webhook', 'code'] as const,
  registers: [registry],
});

const requestInFlight = new Gauge({
  name: 'controller_runtime_webhook_requests_in_flight',
  help: 'Current number of admission requests being served.',
  labelNames: ['webhook'] as const,
  registers: [registry],
});

// ---------------------------------------------------------------------------------------------
// Admission logic (transport-free, so it is testable on plain objects)

export interface AdmissionOptions {
  features: FeatureGates;
  reader?: AdmissionReader;
  /** ms a handler may take before the request is answered with an error; default 10 s. */
  timeoutMs?: number;
}

export function errored(code: number, message: string, uid = ''): AdmissionResponse {
  return { uid, allowed: false, status: { code, message } };
}

function contextOf(req: AdmissionRequest, opts: AdmissionOptions): AdmissionContext {
  const kind = req.kind ?? { group: '', version: '', kind: '' };
  return {
    operation: req.operation,
    apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version,
    namespace: req.namespace || undefined,
    name: req.name || undefined,
    userInfo: req.userInfo ?? {},
    dryRun: req.dryRun === true,
    features: opts.features,
    reader: opts.reader,
  };
}

/** The registration among those sharing a path that serves this request's resource. */
function pickRegistration(regs: readonly WebhookRegistration[], req: AdmissionRequest): WebhookRegistration | undefined {
  const res = req.resource ? req.resource.resource + (req.subResource ? `/${req.subResource}` : '') : undefined;
  const match = regs.find((r) => r.group === req.resource?.group && r.resource === res);
  if (match) return match;
  return regs.length === 1 ? regs[0] : undefined;
}

/** Runs one admission request through the registrations of one path. */
export async function admit(type: WebhookType, regs: readonly WebhookRegistration[], req: AdmissionRequest, opts: AdmissionOptions): Promise<AdmissionResponse> {
  const uid = req.uid;
  const reg = pickRegistration(regs, req);
  if (!reg) {
    const r = req.resource;
    return errored(400, `no webhook handles ${r ? `${r.resource}.${r.group}` : 'an unknown resource'}${req.subResource ? `/${req.subResource}` : ''}`, uid);
  }
  const ctx = contextOf(req, opts);
  const malformed = req.object ? decodeErrors(req.object) : [];
  if (malformed.length) return errored(400, aggregateMessage(malformed), uid);
  const run = async (): Promise<AdmissionResponse> => {
    if (type === 'mutate') {
      if (!reg.mutate || req.object == null) return { uid, allowed: true };
      const original = req.object;
      const copy = structuredClone(original);
      await reg.mutate(copy, ctx);
      // A JSON round trip drops undefined-valued keys the defaulter left, as serialization would.
      const ops = fjp.compare(original, JSON.parse(JSON.stringify(copy)));
      if (!ops.length) return { uid, allowed: true };
      return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
    }
    if (!reg.validate) return { uid, allowed: true, status: { code: 200 } };
    const obj = req.object ?? req.oldObject;
    const old = req.oldObject ?? undefined;
    const errs = await reg.validate(obj, old, ctx);
    if (errs.length) return { uid, allowed: false, status: { code: 422, message: fieldErrorsMessage(errs) } };
    return { uid, allowed: true, status: { code: 200 } };
  };
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<AdmissionResponse>((resolve) => {
    timer = setTimeout(() => resolve(errored(500, `admission handler did not answer within ${timeoutMs / 1000}s`, uid)), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([run(), timeout]);
  } catch (err) {
    // A deliberate refusal carries upstream's code (400/403/...); anything else is our failure.
    if (err instanceof AdmissionDenied) return errored(err.code, err.message, uid);
    return errored(500, err instanceof Error ? err.message : String(err), uid);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// The server

export type TLSSource =
  /** Files in a directory (kruise writes tls.crt/tls.key next to cert.pem/key.pem); watched and reloaded. */
  | { certDir: string; certName?: string; keyName?: string }
  /** PEM in memory; replace with setCertificate(). */
  | { cert: string; key: string };

export interface WebhookServerOptions extends AdmissionOptions {
  registrations: readonly WebhookRegistration[];
  convert?: ConversionHandler;
  tls: TLSSource;
  /** Default all interfaces. */
  host?: string;
  /** Default 9876 (kruise-manager's WEBHOOK_PORT default); 0 picks a free port. */
  port?: number;
  /** Largest request body accepted; default 7 MiB like controller-runtime. */
  maxBodyBytes?: number;
  /** How often the certificate files are re-read besides change notifications; default 10 s. */
  certPollMs?: number;
  logger?: Logger;
}

const DEFAULT_MAX_BODY = 7 * 1024 * 1024;

export class WebhookServer {
  private readonly opts: WebhookServerOptions;
  private readonly log: Logger;
  private readonly routes = new Map<string, { type: WebhookType; regs: WebhookRegistration[] }>();
  private readonly server: https.Server;
  private readonly maxBody: number;
  private certDigest = '';
  private watcher: fs.FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(opts: WebhookServerOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? rootLogger).child({ component: 'webhook-server' });
    this.maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
    for (const reg of enabledRegistrations(opts.registrations, opts.features)) {
      for (const type of ['mutate', 'validate'] as const) {
        if (!(type === 'mutate' ? reg.mutate : reg.validate)) continue;
        const p = webhookPath(type, reg);
        const route = this.routes.get(p) ?? { type, regs: [] };
        route.regs.push(reg);
        this.routes.set(p, route);
      }
    }
    const { cert, key } = this.readCertificate();
    this.certDigest = digest(cert, key);
    this.server = https.createServer({ cert, key, minVersion: 'TLSv1.2' }, (req, res) => {
      this.handle(req, res).catch((err) => {
        this.log.error({ err }, 'webhook request failed');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
    // The API server gives up after the webhook's timeoutSeconds (≤ 30 s); don't hold sockets longer.
    this.server.requestTimeout = 60_000;
    this.server.headersTimeout = 30_000;
  }

  /** The paths served, e.g. for building the webhook configurations. */
  paths(): string[] {
    return [...this.routes.keys()].sort();
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('webhook server already started');
    this.started = true;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port ?? 9876, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.watchCertificate();
    this.log.info({ port: this.port(), paths: this.paths() }, 'webhook server listening');
  }

  port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  listening(): boolean {
    return this.server.listening;
  }

  async close(): Promise<void> {
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.reloadTimer);
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    // In-flight reviews get a moment to finish; the API server retries or applies failurePolicy.
    const force = setTimeout(() => this.server.closeAllConnections(), 5_000);
    force.unref();
    await closed;
    clearTimeout(force);
  }

  /** Replaces the serving certificate (in-memory TLS source, or a push from the cert manager). */
  setCertificate(cert: string, key: string): void {
    const d = digest(cert, key);
    if (d === this.certDigest) return;
    this.server.setSecureContext({ cert, key, minVersion: 'TLSv1.2' });
    this.certDigest = d;
    this.log.info('webhook serving certificate loaded');
  }

  /** Re-reads the certificate files; a missing or broken pair keeps the current one. */
  reloadCertificate(): boolean {
    if (!('certDir' in this.opts.tls)) return false;
    try {
      const { cert, key } = this.readCertificate();
      tls.createSecureContext({ cert, key }); // throws on a mismatched or unparsable pair
      this.setCertificate(cert, key);
      return true;
    } catch (err) {
      this.log.warn({ err }, 'could not reload the webhook certificate, keeping the current one');
      return false;
    }
  }

  private readCertificate(): { cert: string; key: string } {
    const src = this.opts.tls;
    if (!('certDir' in src)) return { cert: src.cert, key: src.key };
    return {
      cert: fs.readFileSync(path.join(src.certDir, src.certName ?? 'tls.crt'), 'utf8'),
      key: fs.readFileSync(path.join(src.certDir, src.keyName ?? 'tls.key'), 'utf8'),
    };
  }

  private watchCertificate(): void {
    const src = this.opts.tls;
    if (!('certDir' in src)) return;
    const schedule = () => {
      clearTimeout(this.reloadTimer);
      this.reloadTimer = setTimeout(() => this.reloadCertificate(), 100);
      this.reloadTimer.unref();
    };
    try {
      this.watcher = fs.watch(src.certDir, schedule);
      this.watcher.on('error', (err) => this.log.warn({ err }, 'certificate directory watch failed; polling only'));
    } catch (err) {
      this.log.warn({ err }, 'cannot watch the certificate directory; polling only');
    }
    this.poll = setInterval(() => this.reloadCertificate(), this.opts.certPollMs ?? 10_000);
    this.poll.unref();
  }

  // --- HTTP ------------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? '/', 'https://x').pathname;
    if (pathname === '/healthz' || pathname === '/readyz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (pathname === '/convert' && this.opts.convert) return this.handleConvert(req, res, this.opts.convert);
    const route = this.routes.get(pathname);
    if (!route) {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const labels = { webhook: pathname };
    const began = process.hrtime.bigint();
    requestInFlight.inc(labels);
    let code = 200;
    try {
      const { review, response } = await this.admissionReview(req, res, route);
      const out: AdmissionReview = { apiVersion: review?.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
      if (response.status?.code && response.status.code >= 400) {
        this.log.debug({ path: pathname, uid: response.uid, status: response.status }, 'admission request not allowed');
      }
      writeJson(res, 200, out);
    } catch (err) {
      code = 500;
      throw err;
    } finally {
      requestInFlight.dec(labels);
      requestTotal.inc({ ...labels, code: String(code) });
      requestLatency.observe(labels, Number(process.hrtime.bigint() - began) / 1e9);
    }
  }

  private async admissionReview(
    req: http.IncomingMessage, res: http.ServerResponse, route: { type: WebhookType; regs: WebhookRegistration[] },
  ): Promise<{ review?: AdmissionReview; response: AdmissionResponse }> {
    const body = await readBody(req, this.maxBody);
    if (body === 'too-large') {
      res.setHeader('connection', 'close');
      return { response: errored(413, `request entity is too large; limit is ${this.maxBody} bytes`) };
    }
    if (!body.length) return { response: errored(400, 'request body is empty') };
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (contentType !== 'application/json') return { response: errored(400, `contentType=${contentType}, expected application/json`) };
    let review: AdmissionReview;
    try {
      review = JSON.parse(body.toString('utf8'));
    } catch (err) {
      return { response: errored(400, `couldn't decode the AdmissionReview: ${(err as Error).message}`) };
    }
    if (review?.kind !== 'AdmissionReview' || typeof review.request !== 'object' || review.request === null) {
      return { response: errored(400, 'the body is not an AdmissionReview with a request') };
    }
    return { review, response: await admit(route.type, route.regs, review.request, this.opts) };
  }

  private async handleConvert(req: http.IncomingMessage, res: http.ServerResponse, convert: ConversionHandler): Promise<void> {
    const body = await readBody(req, this.maxBody);
    if (body === 'too-large') {
      res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' }).end(`request entity is too large; limit is ${this.maxBody} bytes`);
      return;
    }
    let review: ConversionReview;
    try {
      review = JSON.parse(body.toString('utf8'));
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`couldn't decode the ConversionReview: ${(err as Error).message}`);
      return;
    }
    if (review?.kind !== 'ConversionReview' || typeof review.request !== 'object' || review.request === null) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('conversion request is nil');
      return;
    }
    const request = review.request;
    let response: ConversionResponse;
    const timeoutMs = this.opts.timeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      response = await Promise.race([
        Promise.resolve().then(() => convert({ ...review, request })),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`conversion did not finish within ${timeoutMs / 1000}s`)), timeoutMs);
          timer.unref();
        }),
      ]);
      response = { ...response, uid: request.uid };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error({ err, uid: request.uid, desiredAPIVersion: request.desiredAPIVersion }, 'conversion failed');
      response = { uid: request.uid, convertedObjects: [], result: { status: 'Failure', message } };
    } finally {
      clearTimeout(timer);
    }
    writeJson(res, 200, { apiVersion: review.apiVersion, kind: 'ConversionReview', response });
  }
}

/**
 * The body, or 'too-large' once it passes limit. The rest of an oversized body is read and
 * discarded (the request timeout bounds it) so the answer can still be delivered.
 */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => { if (!over) resolve(Buffer.concat(chunks)); });
    req.on('error', (err) => { if (!over) reject(err); });
  });
}

function writeJson(res: http.ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }).end(data);
}

function digest(cert: string, key: string): string {
  return createHash('sha256').update(cert).update('\0').update(key).digest('hex');
}

/**
 * A readiness check for the manager's /readyz (upstream pkg/webhook/util/health): the webhook
 * server answers /healthz over TLS that verifies against the CA the API server is given.
 */
export function webhookReadinessCheck(opts: { port: number; host?: string; ca: () => string | Buffer; timeoutMs?: number }): () => Promise<void> {
  return () => new Promise<void>((resolve, reject) => {
    const req = https.request({
      host: opts.host ?? 'localhost',
      port: opts.port,
      path: '/healthz',
      method: 'GET',
      ca: opts.ca(),
      timeout: opts.timeoutMs ?? 5_000,
    }, (res) => {
      res.resume();
      if (res.statusCode === 200) resolve();
      else reject(new Error(`webhook server /healthz answered ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(new Error('webhook server /healthz timed out')));
    req.on('error', reject);
    req.end();
  });
}
