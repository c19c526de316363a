// How KubeClient's requests reach the API server. Over TLS, one HTTP/2 connection carries every
// request and every watch as streams, as client-go's transport does: an HTTP/1.1 connection holds
// one request at a time, so a manager kept one TLS connection per watch (≈45) plus pooled request
// connections, each with its own OpenSSL and socket buffers (≈180 KiB of RSS each, measured against
// one HTTP/2 connection carrying the same 50 watches). A server that does not offer h2 in the TLS
// handshake (ALPN) is spoken to over HTTP/1.1 pools, as is a plain http:// server (tests, proxies).

import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders as Http2Headers } from 'node:http2';
import https from 'node:https';
import { connect as tlsConnect, createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import type { Agent, IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { http } from '../util/node-http.ts';
import type { TLSOptions } from './kubeconfig.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /**
   * A watch: its body may stay quiet for as long as the server keeps it open, so the timeout
   * covers only the wait for the response's headers.
   */
  watch?: boolean;
  /** How long the request may go without a byte from the server; 0: no limit. */
  timeoutMs: number;
}

export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The response body; destroying it ends the request. */
  body: Readable;
}

export interface Transport {
  exchange(req: ApiRequest): Promise<ApiResponse>;
  /** Tears down every connection, in-flight watches included. */
  close(): void;
}

export interface TransportOptions {
  /** How often an HTTP/2 connection is checked with a PING; one unanswered for as long closes it. */
  pingIntervalMs?: number;
  /** The wait before the second retry of a refused request, doubled for each one after. */
  retryBackoffMs?: number;
}

/** How every TLS connection to the server is made, by either transport. */
interface TLSConnection {
  secureContext: SecureContext;
  servername: string | undefined;
  rejectUnauthorized: boolean;
}

export function newTransport(base: URL, tls: TLSOptions, opts: TransportOptions = {}): Transport {
  if (base.protocol !== 'https:') return new Http1Transport(base, undefined);
  const connection: TLSConnection = {
    // One TLS context for every connection: given only `ca`/`cert`/`key`, Node parses them into a
    // new context per connection (≈0.4 s of CPU for a manager's start-up connections, and memory for each).
    secureContext: createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key }),
    servername: tls.servername,
    rejectUnauthorized: !tls.insecureSkipVerify,
  };
  return new Http2Transport(base, connection, opts.pingIntervalMs ?? PING_INTERVAL_MS, opts.retryBackoffMs ?? REFUSED_RETRY_BACKOFF_MS);
}

function timeoutError(req: ApiRequest): Error {
  return new Error(`${req.method} ${req.url.pathname}: no answer from the API server within ${req.timeoutMs}ms`);
}

/**
 * HTTP/1.1 keep-alive pools. Node's agent opens a new TLS connection for every request that finds
 * none free: at a burst of writes it grew to ~300 connections (≈60 MiB of OpenSSL and socket
 * buffers). Requests share a bounded pool (beyond it they wait for a free connection; they are
 * rate-limited anyway); each watch holds its connection for as long as it runs, so watches have a
 * pool of their own that no request waits on.
 */
class Http1Transport implements Transport {
  private readonly requests: Agent;
  private readonly watches: Agent;

  /** tls: for an https:// server. */
  constructor(
    private readonly base: URL,
    tls: TLSConnection | undefined,
  ) {
    // keepAlive reuses connections; keepAliveMsecs is also the TCP keep-alive probe delay, which
    // detects dead peers behind load balancers well before their idle timeouts (often 60 s).
    const common = { keepAlive: true, keepAliveMsecs: KEEPALIVE_MS, scheduling: 'lifo' as const };
    const agent = (limits: { maxSockets?: number; maxFreeSockets?: number }) =>
      tls ? new https.Agent({ ...common, ...limits, ...tls }) : new http.Agent({ ...common, ...limits });
    this.requests = agent({ maxSockets: HTTP1_REQUEST_CONNECTIONS, maxFreeSockets: HTTP1_REQUEST_CONNECTIONS });
    // A watch that ends is usually followed by the next one: a few idle connections are kept for that.
    this.watches = agent({ maxFreeSockets: 4 });
  }

  exchange(r: ApiRequest): Promise<ApiResponse> {
    return new Promise((resolve, reject) => {
      const send = this.base.protocol === 'https:' ? https.request : http.request;
      const headers = { ...r.headers };
      // Sized explicitly: Node sends a DELETE body neither chunked nor with a length otherwise.
      if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
      const agent = r.watch ? this.watches : this.requests;
      const req = send(r.url, { method: r.method, headers, agent, signal: r.signal }, (res) => {
        if (r.watch) req.setTimeout(0);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      req.on('error', reject);
      if (r.timeoutMs > 0) req.setTimeout(r.timeoutMs, () => req.destroy(timeoutError(r)));
      req.end(r.body);
    });
  }

  close(): void {
    this.requests.destroy();
    this.watches.destroy();
  }
}

/** Connections for ordinary requests over HTTP/1.1: enough for every controller's burst on a local API server. */
const HTTP1_REQUEST_CONNECTIONS = 32;
const KEEPALIVE_MS = 30_000;

/**
 * Flow-control windows, as Go's HTTP/2 transport sizes them for client-go (4 MiB a stream): the
 * protocol's default of 64 KiB would make a 100 MB list wait for a window update every 64 KiB. The
 * connection's window is the sum a stalled reader could leave buffered.
 */
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 32 << 20;

/**
 * Every request and watch shares the connection, so a peer gone without a word (a load balancer's
 * dropped flow, a host that vanished) would stall them all until TCP gave up, minutes later:
 * client-go's HTTP/2 health check pings after 30 s without a frame and drops the connection after
 * 15 s more. Here a PING every 30 s, and the connection is dropped when one is not answered before
 * the next (its streams fail; watches start again on a new connection).
 */
const PING_INTERVAL_MS = 30_000;

/**
 * A connection is dropped this long after its last stream ended, unless it is the only one: extra
 * connections are opened only when the first has no stream to spare (a burst), as Go's transport does.
 */
const IDLE_EXTRA_CONNECTION_MS = 30_000;

/** Go's HTTP/2 transport retries a refused request up to 6 times; the waits sum to about a minute. */
const MAX_REFUSED_RETRIES = 6;
const REFUSED_RETRY_BACKOFF_MS = 1000;
/**
 * The waits before connecting again when a connection failed before carrying a request: at once,
 * then for up to ~1.75 s in all, about as long as a load balancer takes to stop handing out a
 * stopping API server (a request to an API server that is gone for good fails that much later).
 */
const CONNECT_RETRY_DELAYS_MS = [0, 250, 500, 1000];

/** An HTTP/2 connection and the streams reserved on it. */
interface Connection {
  session: ClientHttp2Session;
  /** Streams open or about to be: the server refuses any beyond its SETTINGS_MAX_CONCURRENT_STREAMS. */
  streams: number;
  idle?: NodeJS.Timeout;
  /** The last stream the server's GOAWAY says it processed or may still process. */
  goawayLastStreamId?: number;
}

/** A request the server did not process: safe to send again, whatever its method. */
class RefusedStreamError extends Error {
  constructor(r: ApiRequest, why: string) {
    super(`${r.method} ${r.url.pathname}: the API server refused the request before processing it (${why})`);
  }
}

/**
 * Whether a stream that closed without a response was refused: reset with REFUSED_STREAM (Node
 * closes those above a graceful GOAWAY's last-stream-id so too), above the last-stream-id of any
 * GOAWAY (one with an error code destroys the session, failing every stream alike), or never sent.
 */
function refused(stream: ClientHttp2Stream, conn: Connection): boolean {
  if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM || stream.id === undefined) return true;
  return conn.goawayLastStreamId !== undefined && stream.id > conn.goawayLastStreamId;
}

/**
 * No new streams on a connection whose API server answered 503 with Retry-After (its streams run to
 * their end): the server is shutting down ("apiserver is shutting down") or has not installed its
 * paths yet, and the retry belongs on a new connection, which a load balancer gives a ready one.
 * kube-apiserver sends GOAWAY on shutdown only to the connections it holds then; one whose TLS
 * handshake was still under way (a load balancer handing it over as the server stopped) is answered
 * 503 on every request until the process exits, so waiting for its GOAWAY would fail every retry.
 */
function leaveServer(conn: Connection): void {
  if (!conn.session.closed && !conn.session.destroyed) conn.session.close();
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * HTTP/2 connections, opened on demand: the first request opens one, and another is opened only
 * when every open one carries as many streams as the server allows (kube-apiserver: 100; a manager
 * holds ≈50 watches); a connection the server has closed or sent GOAWAY takes no new streams (those
 * on it run to their end). A connection holds the process open only while streams are in flight, as
 * an idle keep-alive socket does not.
 */
class Http2Transport implements Transport {
  private readonly connections: Connection[] = [];
  private connecting: Promise<void> | undefined;
  /** Set once the server's TLS handshake did not choose h2: HTTP/1.1 from then on. */
  private http1: Http1Transport | undefined;
  private closed = false;

  constructor(
    private readonly base: URL,
    private readonly tls: TLSConnection,
    private readonly pingIntervalMs: number,
    private readonly retryBackoffMs: number,
  ) {}

  /**
   * A request the server refused before processing it is sent again, idempotent or not, as Go's
   * HTTP/2 transport does for client-go: at once, then after 1 s, 2 s, 4 s … (with 10 % jitter), up to
   * MAX_REFUSED_RETRIES times. An API server told to move its clients (--goaway-chance, a rolling
   * restart behind a load balancer) refuses every stream above its GOAWAY's last-stream-id, and one
   * at its stream limit answers RST_STREAM(REFUSED_STREAM); neither touched the request, so neither
   * may surface as a failed write, admission or watch (a watch sent again asks for the same
   * resourceVersion: it resumes where it was).
   */
  async exchange(r: ApiRequest): Promise<ApiResponse> {
    for (let retry = 0; ; retry++) {
      try {
        return await this.exchangeOnce(r);
      } catch (err) {
        if (!(err instanceof RefusedStreamError) || retry >= MAX_REFUSED_RETRIES) throw err;
        if (retry > 0) await abortableSleep(this.retryBackoffMs * 2 ** (retry - 1) * (1 + 0.1 * Math.random()), r.signal);
      }
    }
  }

  private async exchangeOnce(r: ApiRequest): Promise<ApiResponse> {
    const conn = await this.reserveStream(r.signal);
    if (!conn) return this.http1!.exchange(r);
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        ...r.headers,
        ':method': r.method,
        ':path': r.url.pathname + r.url.search,
      };
      if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
      let stream: ClientHttp2Stream;
      try {
        stream = conn.session.request(headers, { endStream: r.body === undefined, signal: r.signal });
      } catch (err) {
        this.release(conn);
        // The session stopped taking streams between our check and the request (a GOAWAY that
        // arrived in between): nothing was sent.
        const code = (err as { code?: string }).code;
        reject(code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION' ? new RefusedStreamError(r, String(err)) : err);
        return;
      }
      let responded = false;
      let failure: Error | undefined;
      stream.once('close', () => {
        this.release(conn);
        if (responded) return;
        if (!r.signal?.aborted && refused(stream, conn)) {
          reject(new RefusedStreamError(r, `stream ${stream.id ?? '(unsent)'} refused (code ${stream.rstCode ?? 'none'})`));
          return;
        }
        // A stream reset with CANCEL, as every stream of a connection that drops is, closes without
        // an 'error': one that had no response yet must still fail, or its caller waits for good
        // (an informer's watch, cut before the API server answered it).
        reject(failure ?? new Error(`the HTTP/2 stream closed before a response (code ${stream.rstCode ?? 'none'})`));
      });
      // Kept for the stream's life: an error after the response reaches the body's reader, and
      // this listener keeps an unread body's error from being an uncaught 'error' event. One before
      // the response fails the request when the stream closes, unless the server refused the stream.
      stream.on('error', (err) => (failure ??= err));
      stream.on('response', (h: Http2Headers) => {
        responded = true;
        if (r.watch) stream.setTimeout(0);
        const { ':status': status, ...rest } = h;
        if (Number(status) === 503 && rest['retry-after'] !== undefined) leaveServer(conn);
        resolve({ status: Number(status), headers: rest as IncomingHttpHeaders, body: stream });
      });
      if (r.timeoutMs > 0) stream.setTimeout(r.timeoutMs, () => stream.destroy(timeoutError(r)));
      if (r.body !== undefined) stream.end(r.body);
    });
  }

  close(): void {
    this.closed = true;
    for (const c of this.connections.splice(0)) {
      clearTimeout(c.idle);
      c.session.destroy();
    }
    this.http1?.close();
  }

  /** A stream's place on a connection that has one to spare, connecting when none has; undefined: HTTP/1.1. */
  private async reserveStream(signal: AbortSignal | undefined): Promise<Connection | undefined> {
    for (;;) {
      if (this.http1) return undefined;
      // A session destroyed or closing (GOAWAY sent or received) takes no new streams; its 'close'
      // event, which removes it, comes a tick later.
      const conn = this.connections.find(
        (c) => !c.session.destroyed && !c.session.closed && c.streams < (c.session.remoteSettings.maxConcurrentStreams ?? 100),
      );
      if (conn) {
        clearTimeout(conn.idle);
        if (conn.streams++ === 0) conn.session.ref();
        return conn;
      }
      this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
      await this.connecting;
      signal?.throwIfAborted();
    }
  }

  private release(conn: Connection): void {
    if (--conn.streams > 0) return;
    conn.session.unref();
    if (this.connections[0] !== conn) {
      conn.idle = setTimeout(() => conn.session.close(), IDLE_EXTRA_CONNECTION_MS).unref();
    }
  }

  /**
   * A new connection, tried again after CONNECT_RETRY_DELAYS_MS: a connection that fails before it
   * carries a request (reset or refused during the TLS handshake, closed before the server's
   * settings) sent nothing, so trying again is safe for any method — an API server stopping behind a
   * load balancer resets the connections handed to it until the balancer sees it unready (about a
   * second), and a later one reaches another.
   */
  private async connect(): Promise<void> {
    for (const delayMs of [...CONNECT_RETRY_DELAYS_MS, undefined]) {
      try {
        return await this.connectOnce();
      } catch (err) {
        if (this.closed || delayMs === undefined) throw err;
        await sleep(delayMs);
      }
    }
  }

  /** A TLS connection offering h2 then http/1.1; the server's choice decides the protocol. */
  private async connectOnce(): Promise<void> {
    if (this.closed) throw new Error('client closed');
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const s = tlsConnect({
        host: this.base.hostname.replace(/^\[|\]$/g, ''),
        port: Number(this.base.port || 443),
        ...this.tls,
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      s.once('secureConnect', () => resolve(s));
      s.once('error', reject);
    });
    if (socket.alpnProtocol !== 'h2' || this.closed) {
      socket.destroy();
      if (this.closed) throw new Error('client closed');
      this.http1 = new Http1Transport(this.base, this.tls);
      return;
    }
    socket.setKeepAlive(true, KEEPALIVE_MS);
    const session = http2.connect(this.base.origin, {
      createConnection: () => socket,
      settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
    });
    // The server's SETTINGS (its stream limit above all) come first on the connection.
    await new Promise<void>((resolve, reject) => {
      session.once('remoteSettings', () => resolve());
      session.once('error', reject);
      session.once('close', () => reject(new Error('the API server closed the connection before its HTTP/2 settings')));
    });
    session.setLocalWindowSize(CONNECTION_WINDOW);
    const conn: Connection = { session, streams: 0 };
    this.connections.push(conn);
    let answered = true;
    const health = setInterval(() => {
      // A tick can come between the session's end and its 'close' (which stops this timer): a PING
      // on a destroyed session throws.
      if (session.destroyed || session.closed) return;
      if (!answered) {
        session.destroy(new Error(`the API server did not answer an HTTP/2 PING within ${this.pingIntervalMs}ms`));
        return;
      }
      answered = false;
      session.ping((err) => (answered = !err));
    }, this.pingIntervalMs).unref();
    // A broken connection fails its streams, whose readers see the error; requests after it connect again.
    session.on('error', () => {});
    session.on('goaway', (_code: number, lastStreamId: number) => {
      conn.goawayLastStreamId = Math.min(conn.goawayLastStreamId ?? lastStreamId, lastStreamId);
    });
    session.on('close', () => {
      clearInterval(health);
      clearTimeout(conn.idle);
      const i = this.connections.indexOf(conn);
      if (i >= 0) this.connections.splice(i, 1);
    });
    // Nothing has reserved a stream on it yet (no await since it joined the list).
    session.unref();
  }
}
