// --metrics-secure: HTTPS, the bearer token checked by a TokenReview and the right to get /metrics
// by a SubjectAccessReview (the in-memory fake API server answers both as scripted): no token or an
// unknown one is 401, an authenticated user without the right is 403, one with it gets the metrics.
// The daemon's port (probes and metrics together) keeps its probes open.
import assert from 'node:assert/strict';
import https from 'node:https';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { registry } from '../../../src/runtime/metrics.ts';
import { MetricsServer, ProbeServer, ping } from '../../../src/runtime/probes.ts';
import { delegatedAuthorizer, servingCertificate } from '../../../src/runtime/secure-serving.ts';
import { useFakeApiServer, type FakeApiServer } from './fake-apiserver.ts';

function get(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      { host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
  });
}

describe('secure metrics', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  /** Scripts the API server's answers to the next TokenReview and SubjectAccessReview. */
  function review(token: string, user: string | undefined, allowed?: boolean): void {
    server.failNext((r) => r.path.endsWith('/tokenreviews') && JSON.parse(r.body).spec.token === token, 201, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: {},
      status: user ? { authenticated: true, user: { username: user, groups: ['system:authenticated'] } } : { authenticated: false },
    });
    if (allowed !== undefined) {
      server.failNext(
        (r) => {
          if (!r.path.endsWith('/subjectaccessreviews')) return false;
          const spec = JSON.parse(r.body).spec;
          return spec.user === user && spec.nonResourceAttributes.path === '/metrics' && spec.nonResourceAttributes.verb === 'get';
        },
        201,
        { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, status: { allowed } },
      );
    }
  }

  test('manager metrics: 401 without or with a bad token, 403 without the right, 200 with it', async () => {
    const metrics = new MetricsServer({
      port: 0,
      host: '127.0.0.1',
      registry,
      logger: pino({ level: 'silent' }),
      secure: { tls: await servingCertificate(), authorize: delegatedAuthorizer(client) },
    });
    await metrics.start();
    try {
      const port = metrics.port();
      assert.equal((await get(port, '/metrics')).status, 401);
      review('bad', undefined);
      assert.equal((await get(port, '/metrics', 'bad')).status, 401);
      review('no-right', 'system:serviceaccount:default:app', false);
      const forbidden = await get(port, '/metrics', 'no-right');
      assert.equal(forbidden.status, 403);
      assert.match(forbidden.body, /cannot get path "\/metrics"/);
      review('prometheus', 'system:serviceaccount:monitoring:prometheus', true);
      const ok = await get(port, '/metrics', 'prometheus');
      assert.equal(ok.status, 200);
      assert.match(ok.body, /leader_election_master_status|workqueue_depth|# HELP/);
    } finally {
      await metrics.close();
    }
  });

  test('daemon port: HTTPS, probes open, /metrics authorised', async () => {
    const probes = new ProbeServer({
      port: 0,
      host: '127.0.0.1',
      metrics: registry,
      logger: pino({ level: 'silent' }),
      secureMetrics: { tls: await servingCertificate(), authorize: delegatedAuthorizer(client) },
    });
    probes.addHealthzCheck('ping', ping);
    await probes.start();
    try {
      const port = probes.port();
      assert.equal((await get(port, '/healthz')).status, 200);
      assert.equal((await get(port, '/metrics')).status, 401);
      review('no-right', 'u', false);
      assert.equal((await get(port, '/metrics', 'no-right')).status, 403);
      review('prometheus', 'p', true);
      assert.equal((await get(port, '/metrics', 'prometheus')).status, 200);
    } finally {
      await probes.close();
    }
  });
});
