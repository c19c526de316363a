// The local cluster's webhook proxy: the kube-proxy role for kruise-manager's webhooks on one
// machine, where the API server cannot reach a Service. It owns one HTTPS port, announced in
// ConfigMap kube-public/kruise-ts-webhook-proxy; the managers' configurations name it, and every
// replica registers its webhook server with a backend Lease (src/runtime/webhook/endpoint.ts).
//
// Why a proxy and not a shared port or the API server's endpoint routing (docs/operations.md):
// a SIGSTOPped replica keeps its sockets open, so the kernel (SO_REUSEPORT) or the API server
// (random endpoint) keeps handing it reviews that never answer. The proxy health-checks every
// backend twice a second and, because a review has no side effects (sideEffects: None) and a
// conversion is a pure function, it retries a review that failed or whose backend went unhealthy
// mid-flight on another replica: a replica's death or freeze costs at most a short delay, never
// a failed request.
//
// TLS ends at the proxy with the managers' own serving certificate (Secret
// kruise-system/kruise-webhook-certs, reloaded when it changes), so the configuration's caBundle
// is unchanged; the proxy verifies the backends against the same CA.

import https from 'node:https';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConfigMap, Lease, Secret } from '../apis/core-objects.ts';
import type { KubeClient } from '../runtime/client.ts';
import { isAlreadyExists } from '../runtime/errors.ts';
import { ConfigMaps, Leases, Secrets } from '../runtime/resources.ts';
import { SharedIndexInformer } from '../runtime/informer.ts';
import { DeletedFinalStateUnknown } from '../runtime/store.ts';
import { logger as rootLogger, type Logger } from '../runtime/log.ts';
import { DEFAULT_NAMESPACE, DEFAULT_SECRET_NAME, secretToCerts } from '../runtime/webhook/certs.ts';
import {
  WEBHOOK_BACKEND_ADDRESS,
  WEBHOOK_BACKEND_LABEL,
  WEBHOOK_PROXY_CONFIGMAP,
  backendLeaseFresh,
  formatHostPort,
  parseHostPort,
} from '../runtime/webhook/endpoint.ts';

export interface WebhookProxyOptions {
  client: KubeClient;
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** Namespace of the backend Leases and the certificate Secret; default kruise-system. */
  namespace?: string;
  secretName?: string;
  /** Health check period and timeout per backend; defaults 500 ms and 1 s. */
  healthIntervalMs?: number;
  healthTimeoutMs?: number;
  /** A single forwarding attempt gives up after this; default 8 s (under the webhooks' 10 s). */
  attemptTimeoutMs?: number;
  logger?: Logger;
}

interface Backend {
  address: string;
  lease: Lease;
  healthy: boolean;
  /** The health check in flight (one at a time, or a late failure would undo a newer success). */
  probing: Promise<void> | undefined;
  /** Forwarding attempts in flight, aborted when the backend turns unhealthy. */
  inFlight: Set<AbortController>;
}

const MAX_BODY = 8 * 1024 * 1024;

/**
 * A review that found no backend this soon after it arrived re-probes them before answering 503;
 * later (its attempts timed out) there is no time left under the webhooks' 10 s.
 */
const RECHECK_WITHIN_MS = 2_000;

export class WebhookProxy {
  private readonly opts: WebhookProxyOptions;
  private readonly log: Logger;
  private readonly server: https.Server;
  private readonly backends = new Map<string, Backend>();
  private readonly stop = new AbortController();
  private ca: string | undefined;
  private certDigest = '';
  private agent: https.Agent | undefined;
  private next = 0;
  private healthTimer: NodeJS.Timeout | undefined;
  private running: Promise<void>[] = [];

  constructor(opts: WebhookProxyOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? rootLogger).child({ component: 'webhook-proxy' });
    // No certificate until the managers created theirs: handshakes fail until then.
    this.server = https.createServer({ minVersion: 'TLSv1.2', handshakeTimeout: 10_000 }, (req, res) => {
      this.handle(req, res).catch((err) => {
        this.log.warn({ err }, 'proxied request failed');
        res.destroy();
      });
    });
    this.server.headersTimeout = 10_000;
    this.server.requestTimeout = 30_000;
    this.server.keepAliveTimeout = 95_000;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host ?? '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.watch();
    await this.announce();
    this.healthTimer = setInterval(() => void this.checkHealth(), this.opts.healthIntervalMs ?? 500);
    this.log.info({ address: this.address() }, 'webhook proxy listening');
  }

  address(): string {
    const a = this.server.address() as AddressInfo;
    return formatHostPort({ host: this.opts.host ?? '127.0.0.1', port: a.port });
  }

  /** The backends now eligible for reviews (registered, fresh, healthy). */
  healthyBackends(): string[] {
    return [...this.backends.values()].filter((b) => b.healthy && backendLeaseFresh(b.lease)).map((b) => b.address);
  }

  async close(): Promise<void> {
    this.stop.abort();
    clearInterval(this.healthTimer);
    await Promise.all(this.running);
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    this.agent?.destroy();
  }

  /** Writes the ConfigMap the managers find the proxy by. */
  private async announce(): Promise<void> {
    const { client } = this.opts;
    const { namespace, name } = WEBHOOK_PROXY_CONFIGMAP;
    const data = { address: this.address() };
    try {
      await client.create<ConfigMap>(ConfigMaps, { metadata: { name, namespace }, data });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const current = await client.get<ConfigMap>(ConfigMaps, name, { namespace });
      await client.update<ConfigMap>(ConfigMaps, { ...current, metadata: { ...current.metadata, managedFields: undefined }, data });
    }
  }

  private watch(): void {
    const { client } = this.opts;
    const namespace = this.opts.namespace ?? DEFAULT_NAMESPACE;
    const leases = new SharedIndexInformer<Lease>(client, Leases, { namespace, labelSelector: WEBHOOK_BACKEND_LABEL, logger: this.log });
    const upsert = (lease: Lease) => {
      const address = parseHostPort(lease.metadata.annotations?.[WEBHOOK_BACKEND_ADDRESS]);
      const key = lease.metadata.name!;
      if (!address) return;
      const existing = this.backends.get(key);
      const formatted = formatHostPort(address);
      if (existing && existing.address === formatted) {
        existing.lease = lease;
        return;
      }
      if (existing) this.abortInFlight(existing);
      this.backends.set(key, { address: formatted, lease, healthy: false, probing: undefined, inFlight: new Set() });
      this.log.info({ backend: formatted, holder: lease.spec?.holderIdentity }, 'webhook backend registered');
      void this.checkHealth();
    };
    leases.addEventHandler({
      onAdd: upsert,
      onUpdate: (_, lease) => upsert(lease),
      onDelete: (obj) => {
        const lease = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        const b = this.backends.get(lease.metadata.name!);
        if (!b) return;
        this.backends.delete(lease.metadata.name!);
        this.abortInFlight(b);
        this.log.info({ backend: b.address }, 'webhook backend deregistered');
      },
    });
    const secrets = new SharedIndexInformer<Secret>(client, Secrets, {
      namespace,
      fieldSelector: `metadata.name=${this.opts.secretName ?? DEFAULT_SECRET_NAME}`,
      logger: this.log,
    });
    const certsChanged = (secret: Secret) => this.useCertificates(secret);
    secrets.addEventHandler({ onAdd: certsChanged, onUpdate: (_, s) => certsChanged(s) });
    for (const informer of [leases, secrets]) {
      this.running.push(informer.run(this.stop.signal).catch((err) => this.log.error({ err }, 'watch stopped')));
    }
  }

  private useCertificates(secret: Secret): void {
    const { caCert, cert, key } = secretToCerts(secret);
    if (!caCert || !cert || !key) return;
    const digest = `${caCert}\n${cert}\n${key}`;
    if (digest === this.certDigest) return;
    this.server.setSecureContext({ cert, key, minVersion: 'TLSv1.2' });
    this.certDigest = digest;
    this.ca = caCert;
    this.agent?.destroy();
    this.agent = new https.Agent({ keepAlive: true, ca: caCert, maxSockets: 64 });
    this.log.info('serving the webhook certificates');
    void this.checkHealth();
  }

  /** Probes every backend (joining a probe already in flight) and settles once all have answered. */
  private async checkHealth(): Promise<void> {
    if (!this.agent) return;
    await Promise.all([...this.backends.values()].map((b) => (b.probing ??= this.checkBackend(b).finally(() => (b.probing = undefined)))));
  }

  private async checkBackend(b: Backend): Promise<void> {
    const ok = await this.probe(b.address).catch(() => false);
    if (ok === b.healthy) return;
    b.healthy = ok;
    this.log.info({ backend: b.address, healthy: ok }, ok ? 'webhook backend healthy' : 'webhook backend unhealthy');
    if (!ok) this.abortInFlight(b);
  }

  /** GET /healthz on its own connection, so a frozen backend cannot hide behind a pooled one. */
  private probe(address: string): Promise<boolean> {
    const { host, port } = parseHostPort(address)!;
    return new Promise((resolve) => {
      const req = https.request(
        { host, port, path: '/healthz', method: 'GET', ca: this.ca, agent: false, timeout: this.opts.healthTimeoutMs ?? 1_000 },
        (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        },
      );
      req.on('timeout', () => req.destroy(new Error('health check timed out')));
      req.on('error', () => resolve(false));
      req.end();
    });
  }

  private abortInFlight(b: Backend): void {
    for (const a of b.inFlight) a.abort();
    b.inFlight.clear();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === undefined) {
      res.writeHead(413).end();
      return;
    }
    const started = Date.now();
    let tried = new Set<Backend>();
    let rechecked = false;
    for (;;) {
      const backend = this.pick(tried);
      if (!backend && !rechecked && this.backends.size > 0 && Date.now() - started < RECHECK_WITHIN_MS) {
        // None left, but one may be out only for a moment: a pooled connection reset as the
        // backend closed it, or a health check that timed out on a loaded machine. With a single
        // replica that would fail the review; probe them all now and go round once more.
        rechecked = true;
        await this.checkHealth();
        tried = new Set();
        continue;
      }
      if (!backend) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end(`no healthy kruise-manager webhook backend (${tried.size} tried)\n`);
        return;
      }
      tried.add(backend);
      const answer = await this.forward(backend, req, body);
      if (answer) {
        res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' }).end(answer.body);
        return;
      }
    }
  }

  /**
   * The next eligible backend round-robin, skipping those tried for this request: a healthy one
   * whose Lease is fresh, else any healthy one. A Lease seen late (a renewal queued on a busy
   * manager, or this proxy's watch behind) made every review of a second fail with 503 at the
   * start of a 1000-pod rollout; the health check, twice a second on a connection of its own, is
   * what takes a frozen or dead replica out.
   */
  private pick(tried: Set<Backend>): Backend | undefined {
    const healthy = [...this.backends.values()].filter((b) => b.healthy && !tried.has(b));
    const fresh = healthy.filter((b) => backendLeaseFresh(b.lease));
    const candidates = fresh.length ? fresh : healthy;
    if (!candidates.length) return undefined;
    return candidates[this.next++ % candidates.length];
  }

  /** One attempt; undefined when it failed in a way another backend may answer instead. */
  private forward(
    b: Backend,
    req: http.IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; contentType?: string; body: Buffer } | undefined> {
    const { host, port } = parseHostPort(b.address)!;
    const abort = new AbortController();
    b.inFlight.add(abort);
    return new Promise<{ status: number; contentType?: string; body: Buffer } | undefined>((resolve) => {
      const out = https.request(
        {
          host,
          port,
          path: req.url,
          method: req.method,
          agent: this.agent,
          signal: abort.signal,
          timeout: this.opts.attemptTimeoutMs ?? 8_000,
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json', 'content-length': body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 502;
            // A backend shutting down may answer 503; another one can serve the review.
            resolve(status >= 500 ? undefined : { status, contentType: res.headers['content-type'], body: Buffer.concat(chunks) });
          });
          res.on('error', () => resolve(undefined));
        },
      );
      out.on('timeout', () => out.destroy(new Error('attempt timed out')));
      out.on('error', (err) => {
        if (!abort.signal.aborted) {
          // Refused or reset: out of rotation until its health check passes again.
          this.log.info({ backend: b.address, err: err.message }, 'webhook backend failed a review; retrying elsewhere');
          b.healthy = false;
        }
        resolve(undefined);
      });
      out.end(body);
    }).finally(() => b.inFlight.delete(abort));
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(undefined);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
