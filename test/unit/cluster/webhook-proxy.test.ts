// The local cluster's webhook proxy against a fake API server and two HTTPS backends registered
// the way managers register: reviews go round-robin to both, and when one freezes (accepts
// connections, never answers — what SIGSTOP looks like) or dies, every review still succeeds:
// the health check takes it out and the review in flight is retried on the other.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { ensureSecretCerts, type CertArtifacts } from '../../../src/runtime/webhook/certs.ts';
import {
  WEBHOOK_BACKEND_ADDRESS,
  WEBHOOK_BACKEND_LABEL,
  backendLeaseName,
  registerWebhookBackend,
  findWebhookProxy,
  formatHostPort,
} from '../../../src/runtime/webhook/endpoint.ts';
import { formatMicroTime } from '../../../src/runtime/leaderelection.ts';
import { Leases } from '../../../src/runtime/resources.ts';
import { WebhookProxy } from '../../../src/cluster/webhook-proxy.ts';
import { useFakeApiServer } from '../runtime/fake-apiserver.ts';

const silent = pino({ level: process.env.DEBUG_PROXY ? 'debug' : 'silent' });

interface Backend {
  name: string;
  server: https.Server;
  port: number;
  frozen: boolean;
  /** The next review's connection is cut before an answer (a pooled connection reset). */
  resetNext: boolean;
  served: number;
}

async function backend(name: string, certs: CertArtifacts): Promise<Backend> {
  const b = { name, frozen: false, resetNext: false, served: 0 } as Backend;
  b.server = https.createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    if (b.frozen) return; // holds the request, as a stopped process does
    if (b.resetNext && req.url !== '/healthz') {
      b.resetNext = false;
      req.socket.destroy();
      return;
    }
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url !== '/healthz') b.served++;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(req.url === '/healthz' ? 'ok' : JSON.stringify({ backend: name, body }));
    });
  });
  await new Promise<void>((r) => b.server.listen(0, '127.0.0.1', r));
  b.port = (b.server.address() as AddressInfo).port;
  return b;
}

describe('webhook proxy', () => {
  let client: KubeClient;
  useFakeApiServer((_, c) => (client = c));
  let certs: CertArtifacts;
  let proxy: WebhookProxy;
  let a: Backend;
  let b: Backend;
  const registrations: Array<{ stop(): Promise<void> }> = [];

  before(async () => {
    ({ certs } = await ensureSecretCerts(client, { namespace: 'kruise-system', name: 'kruise-webhook-certs' }, '127.0.0.1'));
    a = await backend('a', certs);
    b = await backend('b', certs);
    proxy = new WebhookProxy({ client, port: 0, logger: silent, healthIntervalMs: 200, healthTimeoutMs: 300 });
    await proxy.start();
    for (const x of [a, b]) {
      registrations.push(
        registerWebhookBackend({
          client,
          namespace: 'kruise-system',
          identity: x.name,
          address: { host: '127.0.0.1', port: x.port },
          logger: silent,
        }),
      );
    }
    for (const deadline = Date.now() + 10_000; proxy.healthyBackends().length < 2; await new Promise((r) => setTimeout(r, 50))) {
      assert.ok(Date.now() < deadline, `backends never healthy: ${JSON.stringify(proxy.healthyBackends())}`);
    }
  });
  after(async () => {
    for (const r of registrations) await r.stop();
    await proxy.close();
    for (const x of [a, b]) {
      x.server.closeAllConnections();
      x.server.close();
    }
  });

  const review = (i: number) =>
    new Promise<{ status: number; backend: string; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const address = proxy.address();
      const port = Number(address.slice(address.lastIndexOf(':') + 1));
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/validate-apps-kruise-io-cloneset',
          method: 'POST',
          ca: certs.caCert,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => {
            const parsed = res.statusCode === 200 ? JSON.parse(text) : {};
            if (res.statusCode === 200) assert.equal(parsed.body, `{"i":${i}}`, 'the body reaches the backend unchanged');
            resolve({ status: res.statusCode!, backend: parsed.backend, ms: Date.now() - started });
          });
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ i }));
    });

  it('announces itself in kube-public and serves with the managers’ certificate', async () => {
    assert.equal(formatHostPort((await findWebhookProxy(client))!), proxy.address());
  });

  it('spreads reviews over the healthy backends', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const r = await review(i);
      assert.equal(r.status, 200);
      seen.add(r.backend);
    }
    assert.deepEqual([...seen].sort(), ['a', 'b']);
  });

  it('a frozen backend costs a delay, never a failed review', async () => {
    a.frozen = true;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => review(i)));
    for (const r of results) {
      assert.equal(r.status, 200);
      assert.equal(r.backend, 'b');
      assert.ok(r.ms < 3_000, `answered after ${r.ms} ms`);
    }
    assert.deepEqual(proxy.healthyBackends(), [`127.0.0.1:${b.port}`]);
    a.frozen = false;
    for (const deadline = Date.now() + 5_000; proxy.healthyBackends().length < 2; await new Promise((r) => setTimeout(r, 50))) {
      assert.ok(Date.now() < deadline, 'a resumed backend comes back');
    }
  });

  it('a dead backend is retried elsewhere at once; with none left the proxy answers 503', async () => {
    b.server.closeAllConnections();
    await new Promise((r) => b.server.close(r));
    for (let i = 0; i < 4; i++) assert.equal((await review(i)).backend, 'a');
    a.frozen = true;
    for (const deadline = Date.now() + 5_000; proxy.healthyBackends().length > 0; await new Promise((r) => setTimeout(r, 50))) {
      assert.ok(Date.now() < deadline, 'the frozen backend leaves the rotation');
    }
    assert.equal((await review(0)).status, 503);
    a.frozen = false;
  });

  it('a healthy backend whose Lease was last seen stale still serves when no fresh one is left', async () => {
    const c = await backend('c', certs);
    try {
      a.frozen = true;
      for (const deadline = Date.now() + 5_000; proxy.healthyBackends().length > 0; await new Promise((r) => setTimeout(r, 50))) {
        assert.ok(Date.now() < deadline, 'the frozen backend leaves the rotation');
      }
      // Registered, but its last renewal seen a minute ago (a renewal queued on a busy manager).
      await client.create(Leases, {
        metadata: {
          name: backendLeaseName('c'),
          namespace: 'kruise-system',
          labels: { [WEBHOOK_BACKEND_LABEL]: 'true' },
          annotations: { [WEBHOOK_BACKEND_ADDRESS]: `127.0.0.1:${c.port}` },
        },
        spec: { holderIdentity: 'c', leaseDurationSeconds: 6, renewTime: formatMicroTime(Date.now() - 60_000) },
      });
      // Once the proxy has seen it and its health check passed, reviews go to it rather than failing.
      let last = { status: 0, backend: '' };
      for (
        const deadline = Date.now() + 5_000;
        last.status !== 200 && Date.now() < deadline;
        await new Promise((r) => setTimeout(r, 100))
      ) {
        last = await review(0);
      }
      assert.equal(last.status, 200);
      assert.equal(last.backend, 'c');
    } finally {
      a.frozen = false;
      c.server.closeAllConnections();
      c.server.close();
    }
  });

  it('the only backend, its connection reset mid-review, serves the review after a fresh health check', async () => {
    for (
      const deadline = Date.now() + 5_000;
      !proxy.healthyBackends().includes(`127.0.0.1:${a.port}`);
      await new Promise((r) => setTimeout(r, 50))
    ) {
      assert.ok(Date.now() < deadline, 'the resumed backend comes back');
    }
    assert.equal(proxy.healthyBackends().length, 1);
    a.resetNext = true;
    const r = await review(7);
    assert.equal(r.status, 200);
    assert.equal(r.backend, 'a');
  });
});
