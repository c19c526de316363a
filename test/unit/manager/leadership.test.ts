// Losing the lease does not end the manager: the controllers stop, their handlers are removed, the
// caches relist and the replica campaigns again, resuming on the relisted caches when it wins.
// Several outages of the in-memory fake API server in a row; nothing (watches, timers, sockets) may
// pile up across them, and the webhooks and the controllers share one watch per resource.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { startManager } from '../../../src/manager/manager.ts';
import { soloManagerConfig } from './solo-manager.ts';
import { registry } from '../../../src/runtime/metrics.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from '../runtime/fake-apiserver.ts';

const LEASE = 'coordination.k8s.io/v1/leases';

async function metric(name: string): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return Number(m?.values.find((v) => v.labels.name === 'kruise-manager')?.value ?? 0);
}

/** Handles and requests keeping the event loop busy, by type (timers, sockets, …). */
function activeResources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

describe('leadership loss', () => {
  /** Resources watched more than once (webhooks and controllers must share one informer each). */
  function duplicateWatches(): string[] {
    const seen = new Set<string>();
    return server.openWatches().filter((w) => seen.has(w) || !seen.add(w));
  }

  /** The open watch count once it has not changed for 500 ms (the leader's watches start one by one). */
  async function steadyWatcherCount(): Promise<number> {
    let count = server.watcherCount();
    for (let still = 0; still < 5;) {
      await new Promise((r) => setTimeout(r, 100));
      const now = server.watcherCount();
      still = now === count ? still + 1 : 0;
      count = now;
    }
    return count;
  }

  let server: FakeApiServer;
  useFakeApiServer((s) => {
    server = s;
  });

  test('three outages: each loses the lease once, re-elects with fresh caches, leaks nothing', async () => {
    const { config, dir } = soloManagerConfig(server, 'kruise-leadership-');
    const lostBefore = await metric('kruise_manager_leadership_lost_total');
    const manager = await startManager(config, { logger: pino({ level: 'silent' }) });
    try {
      await waitFor(() => manager.isLeader(), 'first election', 10_000);
      // The controllers that run without Kruise CRDs (podreadiness, sidecarterminator) watch pods.
      await waitFor(() => server.watcherCount() > 0, 'informer watches', 10_000);
      const watches = await steadyWatcherCount();
      // The pod webhook caches pods, namespaces and revisions on every replica; the controllers
      // that run here (pod readiness, sidecar terminator) read pods too: one watch for both.
      assert.ok(server.openWatches().includes('/v1/pods *'), `pods watched: ${server.openWatches().join(', ')}`);
      assert.deepEqual(duplicateWatches(), []);
      const listsPerTerm = () => server.listRequests().filter((r) => r.path === '/api/v1/pods').length;
      const baseline = activeResources();

      for (let outage = 1; outage <= 3; outage++) {
        const lists = listsPerTerm();
        server.outage(true);
        await waitFor(() => !manager.isLeader(), `leadership lost in outage ${outage}`, 10_000);
        await new Promise((r) => setTimeout(r, 300));
        server.outage(false);
        await waitFor(() => manager.isLeader(), `re-elected after outage ${outage}`, 10_000);
        // The reflectors' reconnect backoff grows with each outage: allow it time under CI load.
        await waitFor(() => server.watcherCount() >= watches, `watches back to ${watches} after outage ${outage}`, 40_000);
        assert.equal(await steadyWatcherCount(), watches, `the same watches after outage ${outage}, none left over`);
        assert.deepEqual(duplicateWatches(), []);
        assert.equal(await metric('kruise_manager_leadership_lost_total'), lostBefore + outage);
        // Fresh caches: pods were listed again rather than the old watches resumed.
        assert.ok(listsPerTerm() > lists, 'a lost term relists');
        assert.equal(server.getObject(LEASE, 'kruise-system/kruise-manager')?.spec.holderIdentity, 'solo');
      }
      assert.equal(await metric('leader_election_master_status'), 1);
      // Same process, same ports; no handle grew with the cycles (a small allowance for requests
      // in flight at the moment of the snapshot).
      const after = activeResources();
      for (const [type, n] of Object.entries(after)) {
        assert.ok(n <= (baseline[type] ?? 0) + 2, `${type}: ${baseline[type] ?? 0} before the outages, ${n} after`);
      }
    } finally {
      await manager.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
