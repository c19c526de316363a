// The HTTPS webhook server of kruise-manager (controller-runtime's pkg/webhook/server.go): TLS,
// HTTP/2 with HTTP/1.1 beside it, bounds on slow clients, /healthz, draining before a stop, and the
// WebhookHandler (http.ts) for every POST. The serving certificate is reloaded when its files
// change (watch plus a poll, since Secret volumes swap a symlink), without dropping the listener.

import fs from 'node:fs';
import http2 from 'node:http2';
import type http from 'node:http';
import path from 'node:path';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { realClock, type Clock, type Timer } from '../../util/clock.ts';
import { logger as rootLogger, type Logger } from '../log.ts';
import { WebhookHandler, type WebhookHandlerOptions } from './http.ts';

/** kruise-manager's WEBHOOK_PORT default. */
export const DEFAULT_WEBHOOK_PORT = 9876;

export type TLSSource =
  /** Files in a directory (kruise writes tls.crt/tls.key next to cert.pem/key.pem); watched and reloaded. */
  | { certDir: string; certName?: string; keyName?: string }
  /** PEM in memory; replace with setCertificate(). */
  | { cert: string; key: string };

export interface WebhookServerOptions extends WebhookHandlerOptions {
  tls: TLSSource;
  /** Default all interfaces. */
  host?: string;
  /** Default DEFAULT_WEBHOOK_PORT; 0 picks a free port. */
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
 * client: it is dropped instead of holding a socket.
 * - HTTP/1.1: Node checks the header and request bounds every `checkIntervalMs`, so a half-sent
 *   request is closed within its bound plus that interval. Idle keep-alive connections outlive the
 *   API server's own idle timeout (Go's 90 s), so it is always the client that closes an idle
 *   connection: a review sent on a connection the server is closing at that moment would fail.
 * - HTTP/2: a connection that opens no stream within `headersMs` is dropped, a stream not answered
 *   within `requestMs` of its headers is reset, and a connection idle for `keepAliveMs` is sent a
 *   GOAWAY (which, unlike closing an HTTP/1.1 connection, tells the client which of its requests
 *   were not seen, so the API server sends those again on a new connection).
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

/**
 * Streams one HTTP/2 connection may have open at once: Go's HTTP/2 server's default, which the
 * API server's webhook client meets with OpenKruise; Node's default is unbounded.
 */
export const MAX_CONCURRENT_STREAMS = 250;

export class WebhookServer {
  private readonly opts: WebhookServerOptions;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly handler: WebhookHandler;
  private readonly server: http2.Http2SecureServer;
  private readonly timeouts: ServingTimeouts;
  /** Every TLS connection, HTTP/1.1 or HTTP/2, so that close() can cut what is left. */
  private readonly sockets = new Set<tls.TLSSocket>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private certDigest = '';
  private watcher: fs.FSWatcher | undefined;
  private poll: Timer | undefined;
  private reloadTimer: Timer | undefined;
  private started = false;
  private draining = false;

  constructor(opts: WebhookServerOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? rootLogger).child({ component: 'webhook-server' });
    this.clock = opts.clock ?? realClock;
    this.handler = new WebhookHandler(opts);
    const { cert, key } = this.readCertificate();
    this.certDigest = digest(cert, key);
    const timeouts = { ...SERVING_TIMEOUTS, ...opts.timeouts };
    this.timeouts = timeouts;
    // OpenKruise's server (controller-runtime's, Go's TLS) offers h2 and falls back to HTTP/1.1;
    // the API server's webhook client then sends every review on one multiplexed connection.
    this.server = http2.createSecureServer(
      {
        cert,
        key,
        minVersion: 'TLSv1.2',
        allowHTTP1: true,
        handshakeTimeout: timeouts.handshakeMs,
        settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS },
      },
      (req, res) => {
        // Answers never throw; only the connection can fail (the client went away mid-body).
        this.handle(req, res).catch((err) => {
          this.log.warn({ err }, 'webhook request connection failed');
          res.destroy();
        });
      },
    );
    // The HTTP/1.1 bounds (the HTTP/2 server applies them to its HTTP/1.1 connections).
    Object.assign(this.server, {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
    });
    this.server.on('secureConnection', (socket: tls.TLSSocket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('session', (session) => this.boundSession(session));
    // A connection's protocol errors (a client's bad frame) end that connection only.
    this.server.on('sessionError', (err) => this.log.debug({ err }, 'webhook HTTP/2 connection failed'));
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
      this.server.listen(this.opts.port ?? DEFAULT_WEBHOOK_PORT, this.opts.host, () => {
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
   * endpoints are not updated yet) are still accepted. An HTTP/2 connection is sent a GOAWAY at
   * once (a new one with its first review): the client finishes what the server has seen and
   * opens a new connection for the rest. close() afterwards finds (almost) no connection left to cut.
   */
  async drain(ms: number): Promise<void> {
    if (this.draining || !this.server.listening) return;
    this.draining = true;
    this.log.info({ ms }, 'draining webhook connections before closing');
    for (const session of this.sessions) session.close();
    await this.clock.sleep(ms);
  }

  async close(): Promise<void> {
    this.watcher?.close();
    this.poll?.cancel();
    this.reloadTimer?.cancel();
    if (!this.server.listening) return;
    // Stops accepting and closes idle HTTP/1.1 connections; HTTP/2 ones finish their open streams.
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const session of this.sessions) session.close();
    // In-flight reviews get a moment to finish; the API server retries or applies failurePolicy.
    const force = this.clock.setTimer(5_000, () => {
      for (const socket of this.sockets) socket.destroy();
    });
    await closed;
    force.cancel();
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
      this.reloadTimer?.cancel();
      this.reloadTimer = this.clock.setTimer(100, () => this.reloadCertificate());
    };
    try {
      this.watcher = fs.watch(src.certDir, schedule);
      this.watcher.on('error', (err) => this.log.warn({ err }, 'certificate directory watch failed; polling only'));
    } catch (err) {
      this.log.warn({ err }, 'cannot watch the certificate directory; polling only');
    }
    const pollMs = this.opts.certPollMs ?? 10_000;
    const poll = () => {
      this.poll = this.clock.setTimer(pollMs, () => {
        this.reloadCertificate();
        poll();
      });
    };
    poll();
  }

  // --- HTTP ------------------------------------------------------------------------------------

  /** The HTTP/2 bounds of ServingTimeouts on one connection. */
  private boundSession(session: http2.ServerHttp2Session): void {
    this.sessions.add(session);
    const silent = this.clock.setTimer(this.timeouts.headersMs, () => session.destroy());
    session.once('close', () => {
      this.sessions.delete(session);
      silent.cancel();
    });
    session.setTimeout(this.timeouts.keepAliveMs, () => session.close());
    session.on('stream', (stream) => {
      silent.cancel();
      // Sent after the stream's headers, the GOAWAY covers this review: it is answered, and the
      // client sends the rest on a new connection (a GOAWAY on arrival would refuse it too).
      if (this.draining) session.close();
      const late = this.clock.setTimer(this.timeouts.requestMs, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.once('close', () => late.cancel());
    });
  }

  private async handle(
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ): Promise<void> {
    // HTTP/2 has no Connection header: its connection is sent a GOAWAY instead (boundSession).
    if (this.draining && req.httpVersionMajor === 1) res.setHeader('connection', 'close');
    const began = process.hrtime.bigint();
    const pathname = new URL(req.url ?? '/', 'https://x').pathname;
    if (pathname === '/healthz' || pathname === '/readyz') {
      send(res, 200, { 'content-type': 'text/plain' }, 'ok');
      return;
    }
    if (!this.handler.serves(pathname)) {
      req.resume();
      send(res, 404, { 'content-type': 'text/plain' }, '404 page not found\n');
      return;
    }
    const body = await readBody(req, this.handler.maxBodyBytes);
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    const answer = await this.handler.answer(pathname, body, contentType, began);
    send(
      res,
      answer.status,
      {
        'content-type': answer.contentType,
        'content-length': Buffer.byteLength(answer.body),
        ...(answer.close && req.httpVersionMajor === 1 && { connection: 'close' }),
      },
      answer.body,
    );
  }
}

/** What an answer needs of an HTTP/1.1 or an HTTP/2 response (their writeHead overloads differ). */
interface Response {
  writeHead(status: number, headers: http.OutgoingHttpHeaders): unknown;
  end(body: string): unknown;
}

function send(res: Response, status: number, headers: http.OutgoingHttpHeaders, body: string): void {
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * The body, or 'too-large' once it passes limit. The rest of an oversized body is read and
 * discarded (the request timeout bounds it) so the answer can still be delivered.
 */
function readBody(req: http.IncomingMessage | http2.Http2ServerRequest, limit: number): Promise<Buffer | 'too-large'> {
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
