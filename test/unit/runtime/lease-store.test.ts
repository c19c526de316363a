import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../../../src/runtime/client.ts';
import { KubeLeaseStore, leaseToRecord, recordToSpec } from '../../../src/runtime/lease-store.ts';
import { lostToAnotherWriter, type LeaseRecord } from '../../../src/runtime/leaderelection.ts';
import { FakeApiServer, useFakeApiServer } from './fake-apiserver.ts';

const LEASES = 'coordination.k8s.io/v1/leases';

const record = (holder: string, at = '2026-03-01T10:00:00.123000Z'): LeaseRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: at,
  renewTime: at,
  leaderTransitions: 0,
});

describe('KubeLeaseStore', () => {
  let api: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    api = s;
    client = c;
  });

  it('reads a missing lease as null, creates it and reads it back', async () => {
    const store = new KubeLeaseStore({ client, namespace: 'kruise-system', name: 'le-1', labels: { app: 'kruise' } });
    assert.equal(await store.get(), null);
    const rv = await store.create(record('a'));
    assert.ok(rv);
    const got = await store.get();
    assert.deepEqual(got, { ...record('a'), resourceVersion: rv });
    const stored = api.getObject(LEASES, 'kruise-system/le-1')!;
    assert.equal(stored.apiVersion, 'coordination.k8s.io/v1');
    assert.equal(stored.kind, 'Lease');
    assert.deepEqual(stored.metadata.labels, { app: 'kruise' });
    assert.equal(stored.spec.renewTime, '2026-03-01T10:00:00.123000Z');
  });

  it('create of an existing lease and update with a stale resourceVersion fail with code 409', async () => {
    const store = new KubeLeaseStore({ client, namespace: 'kruise-system', name: 'le-2' });
    const rv = await store.create(record('a'));
    await assert.rejects(store.create(record('b')), (err) => lostToAnotherWriter(err));
    const rv2 = await store.update(record('a', '2026-03-01T10:00:02.000000Z'), rv);
    assert.notEqual(rv2, rv);
    await assert.rejects(store.update(record('b'), rv), (err) => lostToAnotherWriter(err));
    assert.equal((await store.get())!.holderIdentity, 'a');
  });

  it('update keeps labels and fields others wrote, and formats times as MicroTime', async () => {
    const store = new KubeLeaseStore({ client, namespace: 'kruise-system', name: 'le-3' });
    api.put(LEASES, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'le-3', namespace: 'kruise-system', labels: { keep: 'me' } },
      spec: { holderIdentity: 'old', leaseDurationSeconds: 15, strategy: 'OldestEmulationVersion' },
    });
    const current = (await store.get())!;
    assert.equal(current.acquireTime, '');
    assert.equal(current.leaderTransitions, 0);
    await store.update({ ...record('new', '2026-03-01T10:00:05Z'), leaderTransitions: 1 }, current.resourceVersion);
    const stored = api.getObject(LEASES, 'kruise-system/le-3')!;
    assert.deepEqual(stored.metadata.labels, { keep: 'me' });
    assert.equal(stored.spec.strategy, 'OldestEmulationVersion');
    assert.equal(stored.spec.holderIdentity, 'new');
    assert.equal(stored.spec.acquireTime, '2026-03-01T10:00:05.000000Z');
    assert.equal(stored.spec.leaseTransitions, 1);
    assert.equal(stored.spec.leaderTransitions, undefined);
  });

  it('a released lease (empty holder) round-trips', () => {
    const released = { ...record(''), leaseDurationSeconds: 1 };
    assert.deepEqual(leaseToRecord({ metadata: {}, spec: recordToSpec(released) }), released);
    assert.throws(() => recordToSpec(record('x', 'yesterday')), /invalid lease time/);
  });
});
