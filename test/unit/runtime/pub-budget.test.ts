// PubBudgetGuard: concurrent admissions never overspend a budget, in one process (keyed mutex) and
// across replicas (resourceVersion conflicts, re-read from the API server); dry runs write nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { PubBudgetGuard, type PubStore } from '../../../src/runtime/pub-budget.ts';
import type { StoredPub } from '../../../src/util/pub.ts';

/** An API server holding one budget, with optimistic concurrency, and an informer that lags by `lagMs`. */
function fakeServer(allowed: number, lagMs = 5) {
  let stored: StoredPub = {
    metadata: { name: 'pub', namespace: 'ns', resourceVersion: '1' },
    spec: { maxUnavailable: allowed },
    status: { unavailableAllowed: allowed, currentAvailable: 10, desiredAvailable: 10 - allowed, totalReplicas: 10 },
  };
  let informer = structuredClone(stored);
  let writes = 0;
  let conflicts = 0;
  const store: PubStore = {
    cached: async () => structuredClone(informer),
    fetch: async () => structuredClone(stored),
    writeStatus: async (pub) => {
      await new Promise((r) => setTimeout(r, 1));
      if (pub.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        conflicts++;
        throw new StatusError({ kind: 'Status', code: 409, reason: 'Conflict', message: 'the object has been modified' });
      }
      writes++;
      stored = {
        ...structuredClone(pub),
        metadata: { ...pub.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) },
      };
      const seen = structuredClone(stored);
      setTimeout(() => (informer = seen), lagMs);
      return structuredClone(stored);
    },
  };
  return {
    store,
    get stored() {
      return stored;
    },
    get writes() {
      return writes;
    },
    get conflicts() {
      return conflicts;
    },
  };
}

const pod = (name: string): Pod => ({
  metadata: { name, namespace: 'ns', annotations: { 'pub.kruise.io/related-pub': 'pub' } },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

const guardOn = (store: PubStore) => new PubBudgetGuard({ store, inPlacePodVerticalScaling: false, retryDelayMs: 5, attempts: 20 });

describe('PubBudgetGuard', () => {
  test('50 concurrent evictions in one process: exactly 2 admitted, no conflict', async () => {
    const server = fakeServer(2);
    const guard = guardOn(server.store);
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => guard.admit(pod(`p${i}`), 'EVICT', false)));
    assert.equal(decisions.filter((d) => d.allowed).length, 2);
    assert.equal(server.stored.status?.unavailableAllowed, 0);
    assert.equal(Object.keys(server.stored.status?.disruptedPods ?? {}).length, 2);
    assert.equal(server.conflicts, 0);
    const denied = decisions.find((d) => !d.allowed);
    assert.equal(
      denied && !denied.allowed && denied.message,
      'podunavailablebudget.policy.kruise.io "pub" is forbidden: pub unavailable allowed is negative',
    );
  });

  test('two replicas racing on the same budget: still exactly 2, conflicts resolved by re-reading', async () => {
    const server = fakeServer(2, 50);
    const a = guardOn(server.store);
    const b = guardOn(server.store);
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).admit(pod(`p${i}`), 'DELETE', false)));
    assert.equal(decisions.filter((d) => d.allowed).length, 2);
    assert.equal(server.writes, 2);
    assert.equal(server.stored.status?.unavailableAllowed, 0);
  });

  test('a dry run is judged but takes nothing', async () => {
    const server = fakeServer(1);
    const guard = guardOn(server.store);
    assert.ok((await guard.admit(pod('a'), 'DELETE', true)).allowed);
    assert.equal(server.writes, 0);
    assert.ok((await guard.admit(pod('a'), 'DELETE', false)).allowed);
    assert.ok(!(await guard.admit(pod('b'), 'DELETE', true)).allowed);
  });

  test('a pod already recorded passes again without taking budget', async () => {
    const server = fakeServer(1);
    const guard = guardOn(server.store);
    assert.ok((await guard.admit(pod('a'), 'EVICT', false)).allowed);
    assert.ok((await guard.admit(pod('a'), 'DELETE', false)).allowed);
    assert.equal(server.writes, 1);
  });
});
