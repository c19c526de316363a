import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ShardRing, workloadKey } from '../../../../src/util/shard-ring.ts';
import {
  DEAD_LEASE_RETENTION_MS,
  MAX_CONCURRENT_DRAINS,
  childResourceVersions,
  planShardStates,
  planSharder,
  type ShardChild,
  type ShardState,
} from '../../../../src/controllers/sharder/plan.ts';

const LEASE_MS = 15_000;

describe('planShardStates', () => {
  const lease = (shard: string, holderIdentity: string, observedAt: number) => ({
    shard,
    holderIdentity,
    resourceVersion: '1',
    observedAt,
  });
  const cases: Array<{
    name: string;
    lease: ReturnType<typeof lease>;
    state: ShardState;
    takeOver?: boolean;
    remove?: boolean;
    wake?: number;
  }> = [
    { name: 'renewed lately: ready', lease: lease('a', 'a', 10_000), state: 'ready', wake: 5_000 },
    { name: 'unchanged for the lease duration: expired, taken over', lease: lease('a', 'a', 5_000), state: 'expired', takeOver: true },
    { name: 'released (empty holder): dead at once', lease: lease('a', '', 19_000), state: 'dead', wake: DEAD_LEASE_RETENTION_MS - 1_000 },
    { name: 'taken over by the sharder: dead', lease: lease('a', 'sharder', 19_000), state: 'dead', wake: DEAD_LEASE_RETENTION_MS - 1_000 },
    { name: 'dead for a minute: deleted', lease: lease('a', 'sharder', 20_000 - DEAD_LEASE_RETENTION_MS), state: 'dead', remove: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planShardStates([c.lease], 20_000, LEASE_MS);
      assert.equal(plan.states.get('a'), c.state);
      assert.deepEqual(plan.takeOver, c.takeOver ? ['a'] : []);
      assert.deepEqual(plan.remove, c.remove ? ['a'] : []);
      assert.equal(plan.requeueAfterMs, c.wake);
    });
  }
});

describe('planSharder', () => {
  const key = workloadKey('apps.kruise.io', 'CloneSet', 'default', 'web');
  const ring = new ShardRing(['a', 'b']);
  const target = ring.shardFor(key)!;
  const other = target === 'a' ? 'b' : 'a';
  const ready = new Map<string, ShardState>([
    ['a', 'ready'],
    ['b', 'ready'],
  ]);
  const pods = (...shards: Array<string | undefined>): ShardChild[] =>
    shards.map((shard, i) => ({ resource: 'pods', name: `web-${i}`, shard }));

  it('does nothing without a ready shard', () => {
    assert.deepEqual(planSharder({ key, draining: false }, [], new ShardRing([]), new Map(), 0), {
      action: 'none',
      reason: 'no ready shard',
    });
  });

  it('assigns an unlabelled workload (a new one, or one from before sharding) with the children it owns not yet labelled', () => {
    assert.deepEqual(planSharder({ key, draining: false }, pods(undefined, target, other), ring, ready, 0), {
      action: 'assign',
      shard: target,
      children: [pods(undefined)[0], { resource: 'pods', name: 'web-2', shard: other }],
    });
  });

  it('leaves a workload in place on its ring shard, labelling stray children', () => {
    assert.deepEqual(planSharder({ key, shard: target, draining: false }, pods(target), ring, ready, 0), {
      action: 'none',
      reason: 'in place',
    });
    assert.deepEqual(planSharder({ key, shard: target, draining: false }, pods(target, undefined), ring, ready, 0), {
      action: 'label-children',
      shard: target,
      children: [{ resource: 'pods', name: 'web-1', shard: undefined }],
    });
  });

  it('drains a workload from a live shard the ring no longer gives it, then waits for the acknowledgement', () => {
    assert.deepEqual(planSharder({ key, shard: other, draining: false }, pods(other), ring, ready, 0), { action: 'drain' });
    assert.equal(planSharder({ key, shard: other, draining: true }, pods(other), ring, ready, 0).action, 'none');
  });

  it('drains no more than MAX_CONCURRENT_DRAINS workloads at once', () => {
    assert.deepEqual(planSharder({ key, shard: other, draining: false }, [], ring, ready, MAX_CONCURRENT_DRAINS), {
      action: 'none',
      reason: 'too many workloads draining',
    });
  });

  it('takes the drain off when the ring gives the workload back to its shard', () => {
    assert.deepEqual(planSharder({ key, shard: target, draining: true }, pods(target), ring, ready, 0), {
      action: 'undrain',
      shard: target,
      children: [],
    });
  });

  it('moves at once, with no handshake, from a dead or vanished shard — draining or not', () => {
    const dead = new Map<string, ShardState>([...ready, ['c', 'dead']]);
    for (const shard of ['c', 'gone'])
      for (const draining of [false, true])
        assert.deepEqual(planSharder({ key, shard, draining }, pods(shard), ring, dead, 0), {
          action: 'assign',
          shard: target,
          children: pods(shard),
        });
  });

  it('waits while the shard has expired but its Lease is not yet taken over (it may still write)', () => {
    const expired = new Map<string, ShardState>([...ready, ['c', 'expired']]);
    assert.equal(planSharder({ key, shard: 'c', draining: false }, pods('c'), ring, expired, 0).action, 'none');
  });
});

describe('childResourceVersions', () => {
  it('keeps the newest resourceVersion written per resource', () => {
    assert.deepEqual(
      childResourceVersions([
        { resource: 'pods', resourceVersion: '9' },
        { resource: 'pods', resourceVersion: '12' },
        { resource: 'pods', resourceVersion: '10' },
        { resource: 'controllerrevisions', resourceVersion: '11' },
      ]),
      { pods: '12', controllerrevisions: '11' },
    );
  });
});
