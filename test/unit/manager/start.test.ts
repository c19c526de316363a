// Start-up fails, naming the cache, when an informer cannot sync within
// --controller-cache-sync-timeout (here: every list of pods is refused), after closing what it had
// opened. Against the in-memory fake API server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { startManager } from '../../../src/manager/manager.ts';
import { addManagerFlags, managerConfig } from '../../../src/manager/options.ts';
import { Command } from 'commander';
import { fakeKubeconfig, useFakeApiServer, type FakeApiServer } from '../runtime/fake-apiserver.ts';

describe('manager start-up', () => {
  let server: FakeApiServer;
  useFakeApiServer((s) => {
    server = s;
  });

  test('a cache that does not sync within --controller-cache-sync-timeout fails start-up naming it', async () => {
    const { dir, kubeconfig } = fakeKubeconfig(server, 'kruise-start-');
    for (let i = 0; i < 1000; i++) {
      server.failNext((r) => r.method === 'GET' && r.path === '/api/v1/pods' && r.query.get('watch') !== 'true', 403, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 403,
        reason: 'Forbidden',
        message: 'pods is forbidden',
      });
    }
    const cmd = addManagerFlags(new Command('start'));
    cmd.parse(
      [
        '--kubeconfig',
        kubeconfig,
        '--metrics-addr=0',
        '--health-probe-addr=0',
        '--webhook-port=0',
        '--enable-leader-election=false',
        '--controller-cache-sync-timeout=500ms',
        '--webhook-cert-dir',
        dir,
      ],
      { from: 'user' },
    );
    const started = Date.now();
    await assert.rejects(
      startManager(managerConfig(cmd.opts()), { logger: pino({ level: 'silent' }) }),
      /timed out after 500ms waiting for the cache of pods to sync/,
    );
    assert.ok(Date.now() - started < 10_000);
    // Registered before the caches were waited for (as upstream's every replica does at start-up),
    // so the objects created while they fill are admitted here, not refused at a previous
    // manager's address.
    for (const kind of ['mutating', 'validating']) {
      const written = server.getObject(
        `admissionregistration.k8s.io/v1/${kind}webhookconfigurations`,
        `kruise-${kind}-webhook-configuration`,
      );
      assert.ok(written, `the ${kind} webhook configuration written before the caches synced`);
    }
    // The pod webhook's Kruise-kind caches list only after that pass (its CRD conversion), its
    // core ones from the start.
    const first = (match: (r: { method: string; path: string }) => boolean) => server.requests.findIndex(match);
    const pass = first((r) => r.method === 'POST' && r.path.endsWith('/validatingwebhookconfigurations'));
    assert.ok(pass >= 0);
    assert.ok(first((r) => r.method === 'GET' && r.path === '/api/v1/namespaces') < pass, 'namespaces listed from the start');
    // (The fake serves no Kruise CRD, so of those kinds only PodUnavailableBudgets are listed.)
    assert.ok(first((r) => r.method === 'GET' && r.path.endsWith('/podunavailablebudgets')) > pass, 'budgets listed after the pass');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('manager API clients', () => {
  let server: FakeApiServer;
  useFakeApiServer((s) => {
    server = s;
  });

  test('leader election writes through its own client (kruise-manager/leader-election), start-up through kruise-manager', async () => {
    const { dir, kubeconfig } = fakeKubeconfig(server, 'kruise-start-');
    const cmd = addManagerFlags(new Command('start'));
    cmd.parse(['--kubeconfig', kubeconfig, '--metrics-addr=0', '--health-probe-addr=0', '--webhook-port=0', '--webhook-cert-dir', dir], {
      from: 'user',
    });
    const manager = await startManager(managerConfig(cmd.opts()), { logger: pino({ level: 'silent' }) });
    try {
      const deadline = Date.now() + 10_000;
      while (!manager.isLeader() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(manager.isLeader());
      const agents = (re: RegExp) => new Set(server.requests.filter((r) => re.test(r.path)).map((r) => r.headers['user-agent']));
      // Lease writes (acquire, renew); leader-only writers may read the lease with their own client.
      const leaseWriters = new Set(
        server.requests.filter((r) => /\/leases/.test(r.path) && r.method !== 'GET').map((r) => r.headers['user-agent']),
      );
      assert.deepEqual([...leaseWriters], ['kruise-manager/leader-election']);
      assert.deepEqual([...agents(/^\/api\/v1\/namespaces$/)], ['kruise-manager']);
    } finally {
      await manager.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('manager start-up order', () => {
  let server: FakeApiServer;
  useFakeApiServer((s) => {
    server = s;
  });

  test('controllers start only after the leader has registered the webhook configurations', async () => {
    const { dir, kubeconfig } = fakeKubeconfig(server, 'kruise-start-');
    const isConfigCreate = (r: { method: string; path: string }) =>
      r.method === 'POST' && r.path === '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
    // ~0.6 s of the cert controller's back-off, in which controllers used to start already.
    for (let i = 0; i < 6; i++) {
      server.failNext(isConfigCreate, 500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, message: 'try again' });
    }
    const lines: Array<{ msg: string; controller?: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const cmd = addManagerFlags(new Command('start'));
    cmd.parse(
      [
        '--kubeconfig',
        kubeconfig,
        '--metrics-addr=0',
        '--health-probe-addr=0',
        '--webhook-port=0',
        '--enable-leader-election=false',
        '--webhook-cert-dir',
        dir,
      ],
      { from: 'user' },
    );
    const manager = await startManager(managerConfig(cmd.opts()), { logger });
    try {
      const workersStarted = () => lines.findIndex((l) => l.msg === 'Starting workers');
      const registered = () => lines.findIndex((l) => l.msg === 'updated webhook configurations');
      const deadline = Date.now() + 15_000;
      while ((workersStarted() < 0 || registered() < 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(registered() >= 0 && workersStarted() >= 0, 'configurations registered and controllers started');
      assert.ok(registered() < workersStarted(), 'no controller started before the configurations were registered');
    } finally {
      await manager.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
