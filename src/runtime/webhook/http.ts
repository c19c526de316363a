// What the webhook server answers to each POST, without TLS or sockets (controller-runtime's
// pkg/webhook/admission/http.go): routing by path, body limits, the review envelopes around admit().
// An empty, oversized (413), too deeply nested, non-JSON or undecodable request is answered with
// Errored(400/413), always inside an HTTP 200 AdmissionReview, as controller-runtime answers.
// /convert answers CRD ConversionReviews through a handler function.

import { Type } from '@sinclair/typebox';
import type { ConversionRequest, ConversionResponse, ConversionReview } from '../../apis/conversion/index.ts';
import { ShapeDecoder } from '../../apis/decode.ts';
import { aggregateMessage } from '../../apis/field-errors.ts';
import { realClock, type Timer } from '../../util/clock.ts';
import { logger as rootLogger, type Logger } from '../log.ts';
import { admit, type AdmissionOptions } from './admission.ts';
import { requestInFlight, requestLatency, requestTotal, webhookPanics } from './metrics.ts';
import { enabledRegistrations, webhookPath, type WebhookType } from './paths.ts';
import { INTERNAL_ERROR_MESSAGE, errored } from './response.ts';
import type { AdmissionResponse, AdmissionReview, ConversionHandler } from './review.ts';
import type { WebhookRegistration } from './types.ts';
import { isJsonObject } from '../../apis/json.ts';

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

  /**
   * The answer to a POST of `body` (or of one over the size limit) to a served path; never throws.
   * `began` (process.hrtime.bigint()): when the request's headers came in. The latency histogram
   * counts from there, reading the body included, as controller-runtime's handler measures it.
   */
  async answer(pathname: string, body: Buffer | 'too-large', contentType: string, began = process.hrtime.bigint()): Promise<WebhookAnswer> {
    if (pathname === '/convert' && this.opts.convert) return this.conversion(body, this.opts.convert);
    const route = this.routes.get(pathname);
    if (!route) return { status: 404, contentType: 'text/plain', body: '404 page not found\n' };
    const labels = { webhook: pathname };
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
    if (!isJsonObject(review) || review.kind !== 'AdmissionReview' || !isJsonObject(review.request)) {
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
    if (!isJsonObject(parsed.value) || parsed.value.kind !== 'ConversionReview' || !isJsonObject(parsed.value.request)) {
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
    let timer: Timer | undefined;
    try {
      const response = await Promise.race([
        Promise.resolve().then(() => convert(review)),
        new Promise<'timeout'>((resolve) => {
          timer = (this.opts.clock ?? realClock).setTimer(timeoutMs, () => resolve('timeout'));
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
      timer?.cancel();
    }
  }
}
