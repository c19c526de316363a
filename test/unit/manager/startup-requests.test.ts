// The manager's start-up on the in-memory fake API server: the webhook server listens once its
// Secret is read, without waiting for the CRDs (which of our kinds are served), whose answers held
// it back by a quarter of its start-up (docs/benchmarks.md, eighteenth pass); start-up goes on
// once they are answered. The webhook configurations are checked meanwhile, both at once, with the
// Secret start-up read (twenty-first pass).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import { test } from 'node:test';
import { pino } from 'pino';
import { freePorts } from '../../../src/cluster/processes.ts';
import { startManager } from '../../../src/manager/manager.ts';
import { soloManagerConfig } from './solo-manager.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from '../runtime/fake-apiserver.ts';

let server: FakeApiServer;
useFakeApiServer((s) => {
  server = s;
});

/** The status of GET /healthz on the webhook port, or undefined while nothing answers there. */
const healthz = (port: number) =>
  new Promise<number | undefined>((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(undefined));
  });

test('the webhook server answers while the CRDs are still being read', async () => {
  const isCRD = (r: { path: string }) => r.path.includes('/customresourcedefinitions/');
  const release = server.hold(isCRD);
  const [port] = (await freePorts(1)) as [number];
  const { config, dir } = soloManagerConfig(server, 'kruise-startup-', [`--webhook-port=${port}`]);
  let started = false;
  const starting = startManager(config, { logger: pino({ level: 'silent' }) }).then((m) => {
    started = true;
    return m;
  });
  try {
    // Asked once the server answers (twenty-first pass).
    await waitFor(() => server.requests.some(isCRD), 'the CRDs asked for', 10_000);
    assert.equal(await healthz(port), 200);
    assert.equal(started, false, 'start-up waits for the CRDs');
    release();
    await waitFor(() => started, 'start-up after the CRDs are answered', 10_000);
  } finally {
    release();
    await starting.then((m) => m.stop()).catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the webhook Secret is read while the manager's namespace is still being asked for; it is created only once the namespace is", async () => {
  const ownNamespace = (r: { method: string; path: string }) => r.path === '/api/v1/namespaces/kruise-fresh';
  const isSecret = (r: { path: string }) => r.path.startsWith('/api/v1/namespaces/kruise-fresh/secrets');
  const release = server.hold((r) => r.method === 'GET' && ownNamespace(r));
  const [port] = (await freePorts(1)) as [number];
  const { config, dir } = soloManagerConfig(server, 'kruise-startup-', [
    `--webhook-port=${port}`,
    '--leader-election-namespace=kruise-fresh',
  ]);
  const earlier = server.requests.length;
  const starting = startManager(config, { logger: pino({ level: 'silent' }) });
  try {
    await waitFor(
      () => server.requests.some((r) => r.method === 'GET' && isSecret(r)),
      'the Secret asked for while the namespace is held',
      10_000,
    );
    assert.ok(!server.requests.some((r) => r.method === 'POST' && isSecret(r)), 'no Secret written before the namespace is known');
    assert.equal(await healthz(port), undefined, 'the webhook server waits for the namespace');
    release();
    await starting;
    // A namespace of its own, new to the cluster: the namespace (not found, then created) comes before the Secret's creation.
    const writes = server.requests
      .slice(earlier)
      .filter((r) => r.method === 'POST')
      .map((r) => r.path);
    const namespaceCreated = writes.indexOf('/api/v1/namespaces');
    const secretCreated = writes.indexOf('/api/v1/namespaces/kruise-fresh/secrets');
    assert.ok(namespaceCreated >= 0 && secretCreated > namespaceCreated, `namespace, then Secret: ${writes.join(', ')}`);
  } finally {
    release();
    await starting.then((m) => m.stop()).catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the webhook configurations are checked while the CRDs are still being read, both at once, with the Secret start-up read', async () => {
  const isCRD = (r: { path: string }) => r.path.includes('/customresourcedefinitions/');
  const isConfiguration = (kind: string) => (r: { method: string; path: string }) =>
    r.method === 'GET' && r.path.startsWith(`/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/`);
  const releaseCRDs = server.hold(isCRD);
  const releaseMutating = server.hold(isConfiguration('mutating'));
  const [port] = (await freePorts(1)) as [number];
  const { config, dir } = soloManagerConfig(server, 'kruise-startup-', [`--webhook-port=${port}`]);
  const earlier = server.requests.length;
  const starting = startManager(config, { logger: pino({ level: 'silent' }) });
  try {
    await waitFor(
      () => server.requests.slice(earlier).some(isConfiguration('validating')),
      'the validating configuration asked for while the CRDs and the mutating one are held',
      10_000,
    );
    assert.ok(server.requests.slice(earlier).some(isConfiguration('mutating')));
    releaseCRDs();
    releaseMutating();
    await starting;
    const requests = server.requests.slice(earlier);
    // The CRDs' conversion is checked with the configurations, after the certificates are known.
    const conversionChecked = requests.findIndex(
      (r) => r.method === 'GET' && r.path === '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    );
    assert.ok(conversionChecked > 0, 'the CRDs are listed for their conversion');
    const secretReads = requests
      .slice(0, conversionChecked)
      .filter((r) => r.method === 'GET' && r.path === '/api/v1/namespaces/kruise-system/secrets/kruise-webhook-certs');
    assert.equal(secretReads.length, 1, 'the Secret is read once');
  } finally {
    releaseCRDs();
    releaseMutating();
    await starting.then((m) => m.stop()).catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
