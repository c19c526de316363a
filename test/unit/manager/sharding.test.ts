// --sharding on the in-memory fake API server: off (the default), the manager writes nothing of
// sharding — no shard Lease, no shard label, no drain — and on, each replica holds a shard Lease
// labelled with its ring, which the sharder (the leader) finds; the leader's shard reads the
// leader's caches, with no watch of its own.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { parse } from 'yaml';
import { startManager } from '../../../src/manager/manager.ts';
import { soloManagerConfig } from './solo-manager.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from '../runtime/fake-apiserver.ts';

const LEASE = 'coordination.k8s.io/v1/leases';

describe('--sharding', () => {
  let server: FakeApiServer;
  useFakeApiServer((s) => {
    server = s;
  });

  async function run(extra: string[], check: () => Promise<void>): Promise<void> {
    // The CloneSet CRD served: the CloneSet controller (the sharded one) runs.
    const crd = parse(fs.readFileSync(new URL('../../../config/crd/bases/apps.kruise.io_clonesets.yaml', import.meta.url), 'utf8'));
    server.put('apiextensions.k8s.io/v1/customresourcedefinitions', {
      ...crd,
      status: { conditions: [{ type: 'Established', status: 'True' }] },
    });
    const { config, dir } = soloManagerConfig(server, 'kruise-sharding-', extra);
    const manager = await startManager(config, { logger: pino({ level: 'silent' }) });
    try {
      await waitFor(() => manager.isLeader(), 'election', 10_000);
      await check();
    } finally {
      await manager.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  const shardTraces = () =>
    server.requests
      .filter((r) => /shard/.test(r.path) || /shard/.test(r.body) || /shard/.test(r.query.toString()))
      .map((r) => `${r.method} ${r.path}`);

  test('off: not one request of sharding', async () => {
    await run([], async () => {
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(shardTraces(), []);
    });
  });

  test('on: the replica holds its shard Lease, labelled with the ring', async () => {
    await run(['--sharding=true'], async () => {
      await waitFor(() => server.getObject(LEASE, 'kruise-system/kruise-manager-shard-solo') !== undefined, 'shard lease', 10_000);
      const lease = server.getObject(LEASE, 'kruise-system/kruise-manager-shard-solo')!;
      assert.equal(lease.spec.holderIdentity, 'solo');
      assert.equal(lease.metadata.labels?.['shard.kruise.io/ring'], 'kruise-manager');
      // The shard's clients name it in their user agent: the audit log says which replica wrote.
      const agents = server.requests
        .filter((r) => r.method !== 'GET' && /\/leases(\/kruise-manager-shard-solo)?$/.test(r.path) && /shard-solo/.test(r.path + r.body))
        .map((r) => r.headers['user-agent']);
      assert.ok(agents.length > 0);
      for (const agent of agents) assert.equal(agent, 'kruise-manager/shard-lease shard/solo');
    });
  });
  test("on, leading: the shard's controllers read the leader's caches; its own selected watches are stopped", async () => {
    await run(['--sharding=true'], async () => {
      const shardWatches = () => server.openWatches().filter((w) => w.includes('shard.kruise.io/kruise-manager=solo'));
      // Before it led, its shard term watched its own part (pods, PVCs, revisions, CloneSets).
      assert.ok(
        server.watchRequests().some((r) => /\/pods$/.test(r.path) && /shard.kruise.io/.test(r.query.get('labelSelector') ?? '')),
        'a selected pod watch before leading',
      );
      await waitFor(() => shardWatches().length === 0, 'the shard’s own watches stopped', 10_000);
      // The leader's unselected caches of what the shard reads are open, each once.
      const unselected = () => server.openWatches().filter((w) => /(pods|clonesets) \*$/.test(w));
      await waitFor(() => unselected().length === 2, 'the leader’s pod and CloneSet watches', 10_000);
      assert.deepEqual(unselected().sort(), ['/v1/pods *', 'apps.kruise.io/v1alpha1/clonesets *']);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(shardWatches(), [], 'none opened again');
    });
  });
});
