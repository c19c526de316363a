// The HTTPS admission server of kruise-manager: AdmissionReview v1 in, AdmissionReview out, with the
// answers controller-runtime's admission package gives (kruise-manager is built on it):
//   - mutate: the registration's Defaulter runs on a private copy of the object and the difference
//     is answered as a base64 RFC 6902 JSON patch (PatchResponseFromRaw); no change, no patch;
//   - validate: field errors deny with admission.Errored(422, aggregate) → status {code: 422,
//     message}; none allow with status {code: 200};
//   - a handler that outlives the request timeout → admission.Errored(500, err);
//   - an empty, oversized (413), too deeply nested, non-JSON or undecodable request → Errored(400/413) —
//     always inside an HTTP 200 AdmissionReview, as controller-runtime answers.
// Before any handler runs, one shared step decodes the request the way upstream's Go webhooks do
// (src/apis/decode.ts): the AdmissionRequest envelope, then object and oldObject against their
// kind's schema at the request's version, pod templates included; a wrong type, a null object or
// an out-of-range integer is refused with 400 naming the field, so handlers only ever see the
// shapes they are written for. A handler that throws anyway is a bug: the request is denied with
// a generic message (the error and its stack go to the log, never to the client) and counted in
// controller_runtime_webhook_panics_total, which the fuzz test (test/unit/webhooks/fuzz.test.ts)
// requires to stay at zero.
// DELETE requests carry no object: validators get the object being deleted (oldObject) as `obj`.
// Several registrations may share a path (pods and pods/eviction both use /validate-pod); the
// request's resource picks the one that runs.
//
// Also served: /convert (CRD ConversionReview, delegated to a handler function) and /healthz.
// The serving certificate is reloaded when its files change (watch plus a poll, since Secret
// volumes swap a symlink), without dropping the listener.

import type { PubBudgetGuard } from '../pub-budget.ts';
import fs from 'node:fs';
import https from 'node:https';
import type http from 'node:http';
import path from 'node:path';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import fjp from 'fast-json-patch';
import { Counter, Gauge, Histogram } from 'prom-client';
import { Type } from '@sinclair/typebox';
import type { FeatureGates } from '../../apis/features.ts';
import { ShapeDecoder, decoderFor, type Decoded } from '../../apis/decode.ts';
import { aggregateMessage, fieldErrorsMessage } from '../../apis/field-errors.ts';
import { kinds, parseApiVersion, type KindDefinition } from '../../apis/registry.ts';
import {
  AdmissionDenied,
  type AdmissionCache,
  type AdmissionWriter,
  type AdmissionContext,
  type AdmissionReader,
  type Operation,
  type UserInfo,
  type WebhookRegistration,
} from './types.ts';
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
  object?: unknown;
  oldObject?: unknown;
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
  objects: unknown[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: unknown[];
  result: { status: 'Success' | 'Failure'; message?: string };
}

export interface ConversionReview {
  apiVersion: string;
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}

/**
 * Converts the objects of a review (src/apis/conversion), answering deliberate failures as a Failure
 * result; a throw is a bug, answered as a Failure with a generic message and logged.
 */
export type ConversionHandler = (
  review: ConversionReview & { request: ConversionRequest },
) => ConversionResponse | Promise<ConversionResponse>;

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
  const stem =
    pathStemOverrides[`${reg.group}/${base}`] ?? [...(reg.group ? [reg.group.replace(/\./g, '-')] : []), singularOf(base)].join('-');
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

// A handler that threw: the JS counterpart of a recovered panic in a Go webhook.
export const webhookPanics = new Counter({
  name: 'controller_runtime_webhook_panics_total',
  help: 'Total number of webhook panics',
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
  /** Informer-backed reads for hot-path webhooks (pods). */
  cache?: AdmissionCache;
  /** The process's PodUnavailableBudget guard (pod webhook). */
  pubBudget?: PubBudgetGuard;
  /** Status writes (WorkloadSpread's subset bookkeeping). */
  writer?: AdmissionWriter;
  /** ms a handler may take before the request is answered with an error; default 10 s. */
  timeoutMs?: number;
  logger?: Logger;
}

export function errored(code: number, message: string, uid = ''): AdmissionResponse {
  return { uid, allowed: false, status: { code, message } };
}

/** What a client is told when a handler fails unexpectedly; the error itself goes to the log. */
export const INTERNAL_ERROR_MESSAGE = 'internal error: the webhook could not process this request; the kruise-manager log has the details';

// The AdmissionRequest as the shared decode step checks it (types only; see src/apis/decode.ts).
const GVKShape = Type.Object({ group: Type.String(), version: Type.String(), kind: Type.String() });
const GVRShape = Type.Object({ group: Type.String(), version: Type.String(), resource: Type.String() });
const requestDecoder = new ShapeDecoder(
  Type.Object({
    uid: Type.String(),
    kind: GVKShape,
    resource: GVRShape,
    subResource: Type.String(),
    requestKind: GVKShape,
    requestResource: GVRShape,
    requestSubResource: Type.String(),
    name: Type.String(),
    namespace: Type.String(),
    operation: Type.String(),
    userInfo: Type.Object({
      username: Type.String(),
      uid: Type.String(),
      groups: Type.Array(Type.String()),
      extra: Type.Record(Type.String(), Type.Array(Type.String())),
    }),
    object: Type.Unknown(),
    oldObject: Type.Unknown(),
    dryRun: Type.Boolean(),
    options: Type.Unknown(),
  }),
);

const OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

// controller-runtime's decoder when the object it is asked for is absent.
const NO_CONTENT = 'there is no content to decode';

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
    cache: opts.cache,
    pubBudget: opts.pubBudget,
    writer: opts.writer,
  };
}

/** The registration among those sharing a path that serves this request's resource. */
function pickRegistration(regs: readonly WebhookRegistration[], req: AdmissionRequest): WebhookRegistration | undefined {
  const res = req.resource ? req.resource.resource + (req.subResource ? `/${req.subResource}` : '') : undefined;
  const match = regs.find((r) => r.group === req.resource?.group && r.resource === res);
  if (match) return match;
  return regs.length === 1 ? regs[0] : undefined;
}

// Built-in resources reach the webhooks already decoded by the API server into their Go types.
const anyObject = new ShapeDecoder(Type.Object({}));

/** The Kruise kind a registration admits; undefined for built-in resources. */
function kindOfRegistration(reg: WebhookRegistration): KindDefinition | undefined {
  const plural = reg.resource.split('/')[0];
  return kinds.find((k) => k.group === reg.group && k.plural === plural);
}

/** A request after the shared decode step: what the handlers get, or the denial. */
export type DecodedAdmission =
  | { req: AdmissionRequest; reg: WebhookRegistration; object: unknown; oldObject: unknown; denied?: undefined }
  | { denied: AdmissionResponse };

/**
 * The shared step every admission request passes before any handler runs: the envelope has its
 * types and a known operation, a registration serves its resource, the objects a handler may read
 * are present for its operation and have their kind's shape at the request's version (nulls of
 * typed fields removed, as Go reads them). Never throws.
 */
export function decodeAdmission(type: WebhookType, regs: readonly WebhookRegistration[], request: unknown): DecodedAdmission {
  const envelope = requestDecoder.decode(request, 'request');
  if (envelope.errors) {
    const uid = isRecord(request) && typeof request.uid === 'string' ? request.uid : '';
    return { denied: errored(400, aggregateMessage(envelope.errors), uid) };
  }
  const req = envelope.value as AdmissionRequest;
  const uid = req.uid ?? '';
  if (!OPERATIONS.includes(req.operation)) {
    const supported = OPERATIONS.map((o) => JSON.stringify(o)).join(', ');
    return {
      denied: errored(
        400,
        `request.operation: Unsupported value: ${JSON.stringify(req.operation ?? '')}: supported values: ${supported}`,
        uid,
      ),
    };
  }
  const reg = pickRegistration(regs, req);
  if (!reg) {
    const r = req.resource;
    return {
      denied: errored(
        400,
        `no webhook handles ${r ? `${r.resource}.${r.group}` : 'an unknown resource'}${req.subResource ? `/${req.subResource}` : ''}`,
        uid,
      ),
    };
  }
  const { operation } = req;
  const absent = (v: unknown) => v === undefined || v === null;
  if ((operation === 'CREATE' || operation === 'UPDATE') && absent(req.object)) return { denied: errored(400, NO_CONTENT, uid) };
  if (operation === 'UPDATE' && absent(req.oldObject)) return { denied: errored(400, NO_CONTENT, uid) };
  if (type === 'validate' && absent(req.object) && absent(req.oldObject)) return { denied: errored(400, NO_CONTENT, uid) };
  const def = kindOfRegistration(reg);
  const apiVersion = isRecord(req.object) && typeof req.object.apiVersion === 'string' ? req.object.apiVersion : '';
  const version = req.kind?.version || parseApiVersion(apiVersion).version;
  const decoder = def ? decoderFor(def, version) : anyObject;
  if (!decoder) {
    const served = def!.versions.map((v) => JSON.stringify(v.name)).join(', ');
    return {
      denied: errored(400, `request.kind.version: Unsupported value: ${JSON.stringify(version)}: supported values: ${served}`, uid),
    };
  }
  const decode = (v: unknown): Decoded => (absent(v) ? { value: v } : decoder.decode(v));
  const object = decode(req.object);
  const oldObject = decode(req.oldObject);
  const errors = [...(object.errors ?? []), ...(oldObject.errors ?? [])];
  if (errors.length) return { denied: errored(400, aggregateMessage(errors), uid) };
  return { req, reg, object: object.value, oldObject: oldObject.value };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Runs one admission request (as received: it is decoded first) through the registrations of one path. */
export async function admit(
  type: WebhookType,
  regs: readonly WebhookRegistration[],
  request: unknown,
  opts: AdmissionOptions,
): Promise<AdmissionResponse> {
  const decoded = decodeAdmission(type, regs, request);
  if (decoded.denied) return decoded.denied;
  const { req, reg } = decoded;
  const uid = req.uid ?? '';
  const ctx = contextOf(req, opts);
  const run = async (): Promise<AdmissionResponse> => {
    if (type === 'mutate') {
      if (!reg.mutate || decoded.object == null) return { uid, allowed: true };
      const copy = structuredClone(decoded.object);
      await reg.mutate(copy, ctx);
      // The patch is against the object as sent (nulls the decode dropped are removed, as upstream's
      // marshalled Go struct omits them); a JSON round trip drops undefined-valued keys the
      // defaulter left, as serialization would.
      const ops = fjp.compare(req.object as object, JSON.parse(JSON.stringify(copy)));
      if (!ops.length) return { uid, allowed: true };
      return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
    }
    if (!reg.validate) return { uid, allowed: true, status: { code: 200 } };
    const obj = decoded.object ?? decoded.oldObject;
    const old = decoded.oldObject ?? undefined;
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
    // A deliberate refusal carries upstream's code (400/403/...) and its own message.
    if (err instanceof AdmissionDenied) return errored(err.code, err.message, uid);
    webhookPanics.inc();
    (opts.logger ?? rootLogger).error(
      { err, uid, webhook: webhookPath(type, reg), operation: req.operation, namespace: req.namespace, name: req.name },
      'admission handler failed unexpectedly',
    );
    return errored(422, INTERNAL_ERROR_MESSAGE, uid);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Requests, transport-free: routing, body limits, review envelopes

/** Deepest JSON nesting a request body may have (objects and arrays, the review's own included). */
export const MAX_JSON_DEPTH = 500;

/**
 * Whether `body`'s JSON nests deeper than `limit`, by a scan of the brackets outside strings, so
 * that neither parsing nor any recursive walk of the value (copying, diffing, handlers) can exhaust
 * the stack. Go's decoder stops at 10,000 levels; V8's structuredClone already fails near 2,000.
 */
export function nestingExceeds(body: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next byte is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

type ParsedBody = { value: unknown; code?: undefined; message?: undefined } | { code: 400 | 413; message: string };

function parseBody(body: Buffer | 'too-large', maxBytes: number, what: string): ParsedBody {
  if (body === 'too-large') return { code: 413, message: `request entity is too large; limit is ${maxBytes} bytes` };
  if (!body.length) return { code: 400, message: 'request body is empty' };
  if (nestingExceeds(body, MAX_JSON_DEPTH)) {
    return { code: 400, message: `couldn't decode the ${what}: JSON nesting exceeds the limit of ${MAX_JSON_DEPTH} levels` };
  }
  try {
    return { value: JSON.parse(body.toString('utf8')) };
  } catch (err) {
    return { code: 400, message: `couldn't decode the ${what}: ${(err as Error).message}` };
  }
}

// The ConversionReview envelope, checked like admission requests before the handler runs.
const conversionReviewDecoder = new ShapeDecoder(
  Type.Object({
    apiVersion: Type.String(),
    kind: Type.String(),
    request: Type.Object({ uid: Type.String(), desiredAPIVersion: Type.String(), objects: Type.Array(Type.Unknown()) }),
  }),
);

/** An HTTP answer: status, content type, body, and whether to close the connection. */
export interface WebhookAnswer {
  status: number;
  contentType: 'application/json' | 'text/plain';
  body: string;
  close?: boolean;
}

export interface WebhookHandlerOptions extends AdmissionOptions {
  registrations: readonly WebhookRegistration[];
  convert?: ConversionHandler;
  /** Largest request body accepted; default 7 MiB like controller-runtime. */
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY = 7 * 1024 * 1024;

/**
 * What the webhook server answers to each POST, without TLS or sockets: the routes of the enabled
 * registrations, /convert, the body limits and the review envelopes around admit(). A kind's
 * decoder is compiled by its first request (decoderFor).
 */
export class WebhookHandler {
  readonly maxBodyBytes: number;
  private readonly opts: WebhookHandlerOptions;
  private readonly log: Logger;
  private readonly routes = new Map<string, { type: WebhookType; regs: WebhookRegistration[] }>();

  constructor(opts: WebhookHandlerOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? rootLogger).child({ component: 'webhook-server' });
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
    for (const reg of enabledRegistrations(opts.registrations, opts.features)) {
      for (const type of ['mutate', 'validate'] as const) {
        if (!(type === 'mutate' ? reg.mutate : reg.validate)) continue;
        const p = webhookPath(type, reg);
        const route = this.routes.get(p) ?? { type, regs: [] };
        route.regs.push(reg);
        this.routes.set(p, route);
      }
    }
  }

  /** The admission paths served, e.g. for building the webhook configurations. */
  paths(): string[] {
    return [...this.routes.keys()].sort();
  }

  /** Whether POSTs to `pathname` are answered (others get 404). */
  serves(pathname: string): boolean {
    return this.routes.has(pathname) || (pathname === '/convert' && this.opts.convert !== undefined);
  }

  /** The answer to a POST of `body` (or of one over the size limit) to a served path; never throws. */
  async answer(pathname: string, body: Buffer | 'too-large', contentType: string): Promise<WebhookAnswer> {
    if (pathname === '/convert' && this.opts.convert) return this.conversion(body, this.opts.convert);
    const route = this.routes.get(pathname);
    if (!route) return { status: 404, contentType: 'text/plain', body: '404 page not found\n' };
    const labels = { webhook: pathname };
    const began = process.hrtime.bigint();
    requestInFlight.inc(labels);
    try {
      const { apiVersion, response } = await this.admission(route, body, contentType);
      if (response.status?.code && response.status.code >= 400) {
        this.log.debug({ path: pathname, uid: response.uid, status: response.status }, 'admission request not allowed');
      }
      const review: AdmissionReview = { apiVersion, kind: 'AdmissionReview', response };
      return { status: 200, contentType: 'application/json', body: JSON.stringify(review), close: body === 'too-large' };
    } finally {
      requestInFlight.dec(labels);
      requestTotal.inc({ ...labels, code: '200' });
      requestLatency.observe(labels, Number(process.hrtime.bigint() - began) / 1e9);
    }
  }

  private async admission(
    route: { type: WebhookType; regs: WebhookRegistration[] },
    body: Buffer | 'too-large',
    contentType: string,
  ): Promise<{ apiVersion: string; response: AdmissionResponse }> {
    const fallback = 'admission.k8s.io/v1';
    if (body !== 'too-large' && body.length && contentType !== 'application/json') {
      return { apiVersion: fallback, response: errored(400, `contentType=${contentType}, expected application/json`) };
    }
    const parsed = parseBody(body, this.maxBodyBytes, 'AdmissionReview');
    if (parsed.code) return { apiVersion: fallback, response: errored(parsed.code, parsed.message) };
    const review = parsed.value;
    if (!isRecord(review) || review.kind !== 'AdmissionReview' || !isRecord(review.request)) {
      return { apiVersion: fallback, response: errored(400, 'the body is not an AdmissionReview with a request') };
    }
    const apiVersion = typeof review.apiVersion === 'string' ? review.apiVersion : fallback;
    return { apiVersion, response: await admit(route.type, route.regs, review.request, { ...this.opts, logger: this.log }) };
  }

  private async conversion(body: Buffer | 'too-large', convert: ConversionHandler): Promise<WebhookAnswer> {
    const text = (status: number, message: string): WebhookAnswer => ({
      status,
      contentType: 'text/plain',
      body: message,
      close: status === 413,
    });
    const parsed = parseBody(body, this.maxBodyBytes, 'ConversionReview');
    if (parsed.code) return text(parsed.code, parsed.message);
    if (!isRecord(parsed.value) || parsed.value.kind !== 'ConversionReview' || !isRecord(parsed.value.request)) {
      return text(400, 'conversion request is nil');
    }
    const raw = parsed.value as Record<string, unknown> & { request: Record<string, unknown> };
    const reply = (response: ConversionResponse): WebhookAnswer => ({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({
        apiVersion: typeof raw.apiVersion === 'string' ? raw.apiVersion : 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response,
      }),
    });
    const uid = typeof raw.request.uid === 'string' ? raw.request.uid : '';
    const failure = (message: string): WebhookAnswer => reply({ uid, convertedObjects: [], result: { status: 'Failure', message } });
    const decoded = conversionReviewDecoder.decode(raw);
    if (decoded.errors) return failure(aggregateMessage(decoded.errors));
    const review = decoded.value as ConversionReview & { request: ConversionRequest };
    const timeoutMs = this.opts.timeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const response = await Promise.race([
        Promise.resolve().then(() => convert(review)),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
          timer.unref();
        }),
      ]);
      if (response === 'timeout') return failure(`conversion did not finish within ${timeoutMs / 1000}s`);
      return reply({ ...response, uid });
    } catch (err) {
      // Deliberate failures are answered by the handler; a throw is a bug.
      webhookPanics.inc();
      this.log.error({ err, uid, desiredAPIVersion: review.request.desiredAPIVersion }, 'conversion failed unexpectedly');
      return failure(INTERNAL_ERROR_MESSAGE);
    } finally {
      clearTimeout(timer);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The server

export type TLSSource =
  /** Files in a directory (kruise writes tls.crt/tls.key next to cert.pem/key.pem); watched and reloaded. */
  | { certDir: string; certName?: string; keyName?: string }
  /** PEM in memory; replace with setCertificate(). */
  | { cert: string; key: string };

export interface WebhookServerOptions extends WebhookHandlerOptions {
  tls: TLSSource;
  /** Default all interfaces. */
  host?: string;
  /** Default 9876 (kruise-manager's WEBHOOK_PORT default); 0 picks a free port. */
  port?: number;
  /** How often the certificate files are re-read besides change notifications; default 10 s. */
  certPollMs?: number;
  /** Bounds on slow clients; default SERVING_TIMEOUTS. */
  timeouts?: Partial<ServingTimeouts>;
}

/**
 * How long the webhook server waits for a client. The API server sends a review at once and gives
 * up after the webhook's timeoutSeconds (at most 30 s), so a connection that has not finished its
 * TLS handshake, its headers or its whole request within these bounds is a broken or hostile
 * client: it is dropped instead of holding a socket. Node checks the header and request bounds
 * every `checkIntervalMs`, so a half-sent request is closed within its bound plus that interval.
 * Idle keep-alive connections outlive the API server's own idle timeout (Go's 90 s), so it is
 * always the client that closes an idle connection: a review sent on a connection the server is
 * closing at that moment would fail.
 */
export interface ServingTimeouts {
  handshakeMs: number;
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  checkIntervalMs: number;
}

export const SERVING_TIMEOUTS: ServingTimeouts = {
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 95_000,
  checkIntervalMs: 1_000,
};

export class WebhookServer {
  private readonly opts: WebhookServerOptions;
  private readonly log: Logger;
  private readonly handler: WebhookHandler;
  private readonly server: https.Server;
  private certDigest = '';
  private watcher: fs.FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private started = false;
  private draining = false;

  constructor(opts: WebhookServerOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? rootLogger).child({ component: 'webhook-server' });
    this.handler = new WebhookHandler(opts);
    const { cert, key } = this.readCertificate();
    this.certDigest = digest(cert, key);
    const timeouts = { ...SERVING_TIMEOUTS, ...opts.timeouts };
    const bounds = { handshakeTimeout: timeouts.handshakeMs, connectionsCheckingInterval: timeouts.checkIntervalMs };
    this.server = https.createServer({ cert, key, minVersion: 'TLSv1.2', ...bounds }, (req, res) => {
      // Answers never throw; only the connection can fail (the client went away mid-body).
      this.handle(req, res).catch((err) => {
        this.log.warn({ err }, 'webhook request connection failed');
        res.destroy();
      });
    });
    this.server.headersTimeout = timeouts.headersMs;
    this.server.requestTimeout = timeouts.requestMs;
    this.server.keepAliveTimeout = timeouts.keepAliveMs;
  }

  /** The paths served, e.g. for building the webhook configurations. */
  paths(): string[] {
    return this.handler.paths();
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

  /** True from drain() on: the replica is stopping and should not be reported ready. */
  isDraining(): boolean {
    return this.draining;
  }

  /**
   * Keeps serving for `ms` while handing the API server's keep-alive connections back. The API
   * server pools connections under the Service's name, whichever replica they reach, and keeps
   * sending reviews on a pooled connection after the replica has left the endpoints; closing such a
   * connection while a review is on its way resets it ("connection reset by peer": a failed
   * admission). While draining, every answer carries `Connection: close`, so each pooled connection
   * is closed by the client after its next answer, and new connections (from an API server whose
   * endpoints are not updated yet) are still accepted. close() afterwards finds (almost) no
   * connection left to cut.
   */
  async drain(ms: number): Promise<void> {
    if (this.draining || !this.server.listening) return;
    this.draining = true;
    this.log.info({ ms }, 'draining webhook connections before closing');
    await sleep(ms);
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
    if (this.draining) res.setHeader('connection', 'close');
    const pathname = new URL(req.url ?? '/', 'https://x').pathname;
    if (pathname === '/healthz' || pathname === '/readyz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (!this.handler.serves(pathname)) {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const body = await readBody(req, this.handler.maxBodyBytes);
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    const answer = await this.handler.answer(pathname, body, contentType);
    res
      .writeHead(answer.status, {
        'content-type': answer.contentType,
        'content-length': Buffer.byteLength(answer.body),
        ...(answer.close && { connection: 'close' }),
      })
      .end(answer.body);
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
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!over) reject(err);
    });
  });
}

function digest(cert: string, key: string): string {
  return createHash('sha256').update(cert).update('\0').update(key).digest('hex');
}

/**
 * A readiness check for the manager's /readyz (upstream pkg/webhook/util/health): the webhook
 * server answers /healthz over TLS that verifies against the CA the API server is given.
 */
export function webhookReadinessCheck(opts: {
  port: number;
  host?: string;
  /** The name the serving certificate is issued for, when it is not host (service mode: <service>.<ns>.svc). */
  servername?: string;
  ca: () => string | Buffer;
  timeoutMs?: number;
}): () => Promise<void> {
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = https.request(
        {
          host: opts.host ?? 'localhost',
          port: opts.port,
          path: '/healthz',
          method: 'GET',
          ...(opts.servername ? { servername: opts.servername } : {}),
          ca: opts.ca(),
          timeout: opts.timeoutMs ?? 5_000,
        },
        (res) => {
          res.resume();
          if (res.statusCode === 200) resolve();
          else reject(new Error(`webhook server /healthz answered ${res.statusCode}`));
        },
      );
      req.on('timeout', () => req.destroy(new Error('webhook server /healthz timed out')));
      req.on('error', reject);
      req.end();
    });
}
