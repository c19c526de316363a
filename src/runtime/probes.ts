// The manager's side servers: health probes (/healthz, /readyz, default :8000, always plain HTTP)
// and Prometheus metrics (/metrics, default :8080), as controller-runtime's manager serves them;
// metrics optionally secure (HTTPS + TokenReview/SubjectAccessReview, see secure-serving.ts).
//
// Checks are named and answered like controller-runtime's healthz handler: 200 "ok" when all pass,
// 500 listing "[-]name failed: reason" otherwise; `?verbose` lists every check, `/readyz/<name>`
// runs one, and `?exclude=<name>` skips some.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { KeyPair } from '../util/pki.ts';
import { http } from '../util/node-http.ts';
import { logger as rootLogger, type Logger } from './log.ts';
import { registry as defaultRegistry } from './metrics.ts';
import type { RequestAuthorizer } from './secure-serving.ts';
import { errMessage } from '../util/errors.ts';
import { StatusError } from './errors.ts';

/** Secure serving of /metrics (--metrics-secure): HTTPS, and only authorised callers get metrics. */
export interface SecureMetrics {
  tls: KeyPair;
  authorize: RequestAuthorizer;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Scrapers and the kubelet's probes send a bodiless GET at once: a client that has not sent its
 * headers within 10 s (its request within 30 s) is broken or hostile and is dropped, checked every
 * 2 s, so slow or junk clients hold no socket for long (Node's own bounds are 60 s and 5 min).
 */
const CLIENT_BOUNDS = { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 2_000 };

function createServer(handler: Handler, secure: SecureMetrics | undefined): Server {
  return secure
    ? https.createServer({ cert: secure.tls.certPem, key: secure.tls.keyPem, ...CLIENT_BOUNDS }, handler)
    : http.createServer(CLIENT_BOUNDS, handler);
}

/** Serves the registry, after the secure mode's authorisation when there is one. */
async function serveMetricsTo(
  req: IncomingMessage,
  res: ServerResponse,
  reg: Registry,
  secure: SecureMetrics | undefined,
  log: Logger,
): Promise<void> {
  if (secure) {
    const decision = await secure.authorize(req.headers.authorization, '/metrics');
    if (decision.status !== 200) {
      if (decision.status === 500) log.error({ reason: decision.message }, 'metrics authorization failed');
      res.writeHead(decision.status, { 'content-type': 'text/plain' }).end(`${decision.message}\n`);
      return;
    }
  }
  await serveMetrics(reg, res, log);
}

/** Resolves when healthy; throws (or rejects) with the reason otherwise. */
export type Check = () => void | Promise<void>;

/** Always healthy (controller-runtime healthz.Ping). */
export const ping: Check = () => {};

/**
 * Ready only while the API server answers `request` within timeoutMs: any HTTP answer counts (a 403
 * or 404 still proves the connection); a refused connection or silence does not. A replica that
 * cannot reach the API server decides admission on caches it cannot refresh and runs no controller.
 */
export function apiServerReachable(request: (signal: AbortSignal) => Promise<unknown>, timeoutMs = 2_000): Check {
  return async () => {
    try {
      await request(AbortSignal.timeout(timeoutMs));
    } catch (err) {
      if (err instanceof StatusError) return;
      throw new Error(`the API server is unreachable: ${errMessage(err)}`, { cause: err });
    }
  };
}

export interface ProbeServerOptions {
  /** Default 8000 (kruise-manager --health-probe-addr); 0 picks a free port. */
  port?: number;
  host?: string;
  /** ms a check may take before it counts as failed; default 10 s. */
  checkTimeoutMs?: number;
  logger?: Logger;
  /** Also serve this registry at /metrics (kruise-daemon's --addr serves both on one port). */
  metrics?: Registry;
  /** HTTPS for the whole port; /metrics only to authorised callers, the probes stay open. */
  secureMetrics?: SecureMetrics;
}

export class ProbeServer {
  private readonly healthChecks = new Map<string, Check>();
  private readonly readyChecks = new Map<string, Check>();
  private readonly server: Server;
  private readonly opts: ProbeServerOptions;
  private readonly log: Logger;

  constructor(opts: ProbeServerOptions = {}) {
    this.opts = opts;
    this.log = (opts.logger ?? rootLogger).child({ component: 'probes' });
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        this.log.error({ err }, 'probe request failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
    }, opts.secureMetrics);
  }

  addHealthzCheck(name: string, check: Check): void {
    addCheck(this.healthChecks, name, check);
  }

  addReadyzCheck(name: string, check: Check): void {
    addCheck(this.readyChecks, name, check);
  }

  async start(): Promise<void> {
    await listen(this.server, this.opts.port ?? 8000, this.opts.host);
  }

  port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    await close(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (this.opts.metrics && url.pathname === '/metrics') {
      return serveMetricsTo(req, res, this.opts.metrics, this.opts.secureMetrics, this.log);
    }
    const [, root, one] = url.pathname.split('/');
    const checks = root === 'healthz' ? this.healthChecks : root === 'readyz' ? this.readyChecks : undefined;
    if (!checks || url.pathname.split('/').length > 3) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    if (one) {
      const check = checks.get(one);
      if (!check) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`no check named ${one}\n`);
        return;
      }
      const err = await this.run(check);
      if (err) res.writeHead(500, { 'content-type': 'text/plain' }).end(`internal server error: ${err}\n`);
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    const excluded = new Set(url.searchParams.getAll('exclude'));
    const verbose = url.searchParams.has('verbose');
    const names = [...checks.keys()].filter((n) => !excluded.has(n)).sort();
    const results = await Promise.all(names.map(async (n) => [n, await this.run(checks.get(n)!)] as const));
    const failed = results.filter(([, err]) => err !== undefined);
    if (!failed.length && !verbose) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    const lines = results.map(([n, err]) => (err === undefined ? `[+]${n} ok` : `[-]${n} failed: reason withheld`));
    for (const [n, err] of failed) this.log.info({ check: n, reason: err }, `${root} check failed`);
    if (failed.length) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${lines.join('\n')}\n${root} check failed\n`);
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`${lines.join('\n')}\n${root} check passed\n`);
    }
  }

  /** undefined when the check passes, else the reason. */
  private async run(check: Check): Promise<string | undefined> {
    const timeoutMs = this.opts.checkTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(check),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000}s`)), timeoutMs);
          timer.unref();
        }),
      ]);
      return undefined;
    } catch (err) {
      return errMessage(err);
    } finally {
      clearTimeout(timer);
    }
  }
}

function addCheck(checks: Map<string, Check>, name: string, check: Check): void {
  if (!name || name.includes('/')) throw new Error(`invalid check name ${JSON.stringify(name)}`);
  if (checks.has(name)) throw new Error(`check ${name} already added`);
  checks.set(name, check);
}

export interface MetricsServerOptions {
  /** Default 8080 (kruise-manager --metrics-addr); 0 picks a free port. */
  port?: number;
  host?: string;
  registry?: Registry;
  logger?: Logger;
  secure?: SecureMetrics;
}

/** Serves the Prometheus registry at /metrics (over HTTPS to authorised callers in secure mode). */
export class MetricsServer {
  private readonly server: Server;
  private readonly opts: MetricsServerOptions;

  constructor(opts: MetricsServerOptions = {}) {
    this.opts = opts;
    const reg = opts.registry ?? defaultRegistry;
    const log = (opts.logger ?? rootLogger).child({ component: 'metrics' });
    this.server = createServer((req, res) => {
      const pathname = new URL(req.url ?? '/', 'http://x').pathname;
      if (pathname !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
        return;
      }
      void serveMetricsTo(req, res, reg, opts.secure, log);
    }, opts.secure);
  }

  async start(): Promise<void> {
    await listen(this.server, this.opts.port ?? 8080, this.opts.host);
  }

  port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    await close(this.server);
  }
}

async function serveMetrics(reg: Registry, res: ServerResponse, log: Logger): Promise<void> {
  try {
    const text = await reg.metrics();
    res.writeHead(200, { 'content-type': reg.contentType }).end(text);
  } catch (err) {
    log.error({ err }, 'collecting metrics failed');
    res.writeHead(500, { 'content-type': 'text/plain' }).end(`error collecting metrics: ${(err as Error).message}\n`);
  }
}

function listen(server: Server, port: number, host: string | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function close(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
