import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../../../src/util/clock.ts';
import {
  LeaderElector,
  formatMicroTime,
  validateLeaderElectionConfig,
  type LeaderElectionConfig,
  type LeaseRecord,
  type LeaseStore,
  type StoredLease,
} from '../../../src/runtime/leaderelection.ts';
import { registry } from '../../../src/runtime/metrics.ts';

const silent = pino({ level: 'silent' });

function conflict(): Error {
  return Object.assign(new Error('the object has been modified'), { code: 409 });
}

/** One Lease in memory with apiserver-like compare-and-swap on resourceVersion. */
class MemoryLeaseStore implements LeaseStore {
  lease: StoredLease | null = null;
  private version = 0;
  calls: string[] = [];
  failing: Error | undefined;
  hanging = false;
  /** Runs before an update is applied (to simulate a racing writer). */
  beforeUpdate: (() => void) | undefined;
  /** Awaited after an update is applied, before it is answered (a caller frozen while its write is in flight). */
  answer: Promise<void> | undefined;

  put(record: LeaseRecord): void {
    this.lease = { ...record, resourceVersion: String(++this.version) };
  }

  private async enter(call: string): Promise<void> {
    this.calls.push(call);
    if (this.hanging) await new Promise(() => {});
    if (this.failing) throw this.failing;
  }

  async get(): Promise<StoredLease | null> {
    await this.enter('get');
    return this.lease && { ...this.lease };
  }

  async create(record: LeaseRecord): Promise<string> {
    await this.enter('create');
    if (this.lease) throw conflict();
    this.put(record);
    return this.lease!.resourceVersion;
  }

  async update(record: LeaseRecord, resourceVersion: string): Promise<string> {
    await this.enter('update');
    this.beforeUpdate?.();
    if (!this.lease) throw Object.assign(new Error('not found'), { code: 404 });
    if (this.lease.resourceVersion !== resourceVersion) throw conflict();
    this.put(record);
    const written = this.lease!.resourceVersion;
    await this.answer;
    return written;
  }
}

interface Candidate {
  elector: LeaderElector;
  events: string[];
  leadingSignal: () => AbortSignal | undefined;
  abort: AbortController;
  done: Promise<void>;
}

let nameSeq = 0;

function candidate(store: LeaseStore, clock: FakeClock, identity: string, extra: Partial<LeaderElectionConfig> = {}): Candidate {
  const events: string[] = [];
  let leading: AbortSignal | undefined;
  const elector = new LeaderElector({
    store,
    identity,
    name: extra.name ?? `le-test-${++nameSeq}`,
    clock,
    random: () => 0,
    logger: silent,
    callbacks: {
      onStartedLeading: (signal) => {
        leading = signal;
        events.push('started');
      },
      onStoppedLeading: () => events.push('stopped'),
      onNewLeader: (id) => events.push(`leader:${id}`),
    },
    ...extra,
  });
  const abort = new AbortController();
  const done = elector.run(abort.signal);
  return { elector, events, leadingSignal: () => leading, abort, done };
}

async function metric(name: string, lease: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{name="${lease}"}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('LeaderElector', () => {
  it('creates a missing lease and leads', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me', { name: 'le-acquire' });
    await clock.advance(0);
    assert.equal(c.elector.isLeader(), true);
    assert.deepEqual(c.events, ['leader:me', 'started']);
    assert.equal(store.lease!.holderIdentity, 'me');
    assert.equal(store.lease!.leaseDurationSeconds, 15);
    assert.equal(store.lease!.leaderTransitions, 0);
    assert.equal(store.lease!.acquireTime, formatMicroTime(clock.now()));
    assert.equal(await metric('leader_election_master_status', 'le-acquire'), 1);
    assert.equal(c.leadingSignal()!.aborted, false);

    c.abort.abort();
    await c.done;
    assert.equal(c.leadingSignal()!.aborted, true);
    assert.deepEqual(c.events, ['leader:me', 'started', 'stopped']);
    assert.equal(await metric('leader_election_master_status', 'le-acquire'), 0);
  });

  it('renews every retryPeriod on the fast path, keeping acquireTime', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me');
    await clock.advance(0);
    const acquired = store.lease!.acquireTime;
    store.calls = [];
    await clock.advance(2000);
    assert.deepEqual(store.calls, ['update'], 'no read while the lease is valid');
    assert.equal(store.lease!.renewTime, formatMicroTime(clock.now()));
    assert.equal(store.lease!.acquireTime, acquired);
    await clock.advance(20_000);
    assert.equal(c.elector.isLeader(), true);
    assert.deepEqual(c.events, ['leader:me', 'started']);
    c.abort.abort();
    await c.done;
  });

  it('holdsLease (the write fence): only while the last renewal is younger than the renew deadline', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me');
    await clock.advance(0);
    assert.equal(c.elector.holdsLease(), true);
    // The API server stops answering: every renewal after the acquisition at 0 fails.
    store.failing = new Error('apiserver unreachable');
    await clock.advance(9_000);
    assert.equal(c.elector.holdsLease(), true, '9 s after the last renewal');
    await clock.advance(1_500);
    assert.equal(c.elector.holdsLease(), false, '10.5 s after: past the 10 s renew deadline');
    c.abort.abort();
    await c.done;
  });

  it('holdsLease counts a renewal from when it was sent, not from its late answer', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me');
    await clock.advance(0);
    // The renewal at t=2 s is written at once but answered only at t=11 s (the process was frozen
    // meanwhile): others judge the lease from t=2 s, and so must the fence.
    let answer!: () => void;
    store.answer = new Promise((resolve) => (answer = resolve));
    await clock.advance(2_000);
    assert.equal(store.lease!.renewTime, formatMicroTime(clock.now()), 'the renewal reached the store');
    await clock.advance(9_000);
    answer();
    store.answer = undefined;
    await clock.advance(0);
    assert.equal(c.elector.isLeader(), true);
    assert.equal(c.elector.holdsLease(), true, '9 s after the renewal was sent');
    await clock.advance(1_500);
    assert.equal(c.elector.holdsLease(), false, '10.5 s after it was sent, though answered 1.5 s ago');
    c.abort.abort();
    await c.done;
  });

  it('falls back to the slow path when its resourceVersion is stale', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me', { name: 'le-slowpath' });
    await clock.advance(0);
    store.put({ ...store.lease! }); // an unrelated write bumps resourceVersion only
    store.calls = [];
    await clock.advance(2000);
    assert.deepEqual(store.calls, ['update', 'get', 'update']);
    assert.equal(c.elector.isLeader(), true);
    assert.equal(await metric('leader_election_slowpath_total', 'le-slowpath'), 1);
    c.abort.abort();
    await c.done;
  });

  it('waits while another holder keeps a valid lease, judged by local observation time', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    // The holder's timestamps are an hour old by our clock (skew); that must not matter.
    const stale = formatMicroTime(clock.now() - 3_600_000);
    store.put({ holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: stale, renewTime: stale, leaderTransitions: 3 });
    const c = candidate(store, clock, 'me');
    await clock.advance(0);
    assert.equal(c.elector.isLeader(), false);
    assert.equal(c.elector.getLeader(), 'other');
    assert.deepEqual(c.events, ['leader:other']);

    // The holder renews at t=10 s: the expiry clock restarts from that observation.
    await clock.advance(10_000);
    const renewed = formatMicroTime(clock.now());
    store.put({ ...store.lease!, renewTime: renewed });
    await clock.advance(16_000); // t=26 s: observed the change at t=12 s, valid until t=27 s
    assert.equal(c.elector.isLeader(), false);
    assert.deepEqual(c.events, ['leader:other']);

    await clock.advance(2000); // t=28 s: expired by our observation, take over
    assert.equal(c.elector.isLeader(), true);
    assert.deepEqual(c.events, ['leader:other', 'leader:me', 'started']);
    assert.equal(store.lease!.holderIdentity, 'me');
    assert.equal(store.lease!.leaderTransitions, 4);
    assert.equal(store.lease!.acquireTime, formatMicroTime(clock.now()));
    c.abort.abort();
    await c.done;
  });

  it('loses the race on a 409 conflict', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const old = formatMicroTime(clock.now());
    store.put({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: old, renewTime: old, leaderTransitions: 1 });
    store.beforeUpdate = () => {
      store.beforeUpdate = undefined;
      const now = formatMicroTime(clock.now());
      store.put({ holderIdentity: 'rival', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaderTransitions: 2 });
    };
    const c = candidate(store, clock, 'me');
    await clock.advance(0);
    assert.deepEqual(store.calls, ['get', 'update']);
    assert.equal(c.elector.isLeader(), false);
    assert.equal(store.lease!.holderIdentity, 'rival');
    await clock.advance(2000);
    assert.equal(c.elector.getLeader(), 'rival', 'observed the winner on the next attempt');
    assert.equal(c.elector.isLeader(), false);
    c.abort.abort();
    await c.done;
    assert.deepEqual(c.events, ['leader:rival', 'stopped']);
  });

  it('elects exactly one of two candidates sharing a lease', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const a = candidate(store, clock, 'a');
    const b = candidate(store, clock, 'b');
    for (let i = 0; i < 20; i++) {
      await clock.advance(1000);
      assert.equal(Number(a.elector.isLeader()) + Number(b.elector.isLeader()), 1);
    }
    assert.equal(store.lease!.holderIdentity, a.elector.isLeader() ? 'a' : 'b');
    a.abort.abort();
    b.abort.abort();
    await Promise.all([a.done, b.done]);
  });

  it('releases the lease on cancel so a successor takes over at once', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    let ledWorkDone = false;
    const first = candidate(store, clock, 'first', {
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: async (signal) => {
          await new Promise((r) => signal.addEventListener('abort', r));
          await clock.sleep(500);
          ledWorkDone = true;
        },
        onStoppedLeading: () => {},
      },
    });
    await clock.advance(0);
    assert.equal(first.elector.isLeader(), true);
    await clock.advance(4000);
    const second = candidate(store, clock, 'second');
    await clock.advance(0);
    assert.equal(second.elector.isLeader(), false);

    first.abort.abort();
    await clock.advance(0);
    assert.equal(store.lease!.holderIdentity, 'first', 'not released before led work finished');
    await clock.advance(500);
    await first.done;
    assert.equal(ledWorkDone, true);
    assert.equal(store.lease!.holderIdentity, '');
    assert.equal(store.lease!.leaseDurationSeconds, 1);
    assert.equal(store.lease!.leaderTransitions, 0);

    await clock.advance(2000); // second's next retry sees an empty holder and takes it
    assert.equal(second.elector.isLeader(), true);
    assert.equal(store.lease!.holderIdentity, 'second');
    assert.equal(store.lease!.leaderTransitions, 1);
    second.abort.abort();
    await second.done;
  });

  it('does not release without releaseOnCancel', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me');
    await clock.advance(0);
    c.abort.abort();
    await c.done;
    assert.equal(store.lease!.holderIdentity, 'me');
  });

  it('gives up leadership when renewals fail until the renew deadline', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me', { name: 'le-lost' });
    await clock.advance(0);
    store.failing = new Error('apiserver unavailable');
    // The failing renewal round starts at t=2 s, so the 10 s deadline ends it at t=12 s.
    await clock.advance(11_999);
    assert.deepEqual(c.events, ['leader:me', 'started']);
    assert.equal(c.leadingSignal()!.aborted, false);
    await clock.advance(1);
    await c.done;
    assert.equal(c.leadingSignal()!.aborted, true);
    assert.deepEqual(c.events, ['leader:me', 'started', 'stopped']);
    assert.equal(await metric('leader_election_master_status', 'le-lost'), 0);
  });

  it('gives up when a renewal call hangs past the deadline', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me');
    await clock.advance(0);
    store.hanging = true;
    await clock.advance(2000 + 9999);
    assert.deepEqual(c.events, ['leader:me', 'started']);
    await clock.advance(1);
    await c.done;
    assert.deepEqual(c.events, ['leader:me', 'started', 'stopped']);
  });

  it('keeps retrying acquisition through errors, with jitter', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    store.failing = new Error('boom');
    const c = candidate(store, clock, 'me', { random: () => 0.5 }); // 2 s · (1 + 0.6) = 3.2 s
    await clock.advance(0);
    await clock.advance(3199);
    assert.equal(store.calls.length, 1);
    await clock.advance(1);
    assert.equal(store.calls.length, 2);
    store.failing = undefined;
    await clock.advance(3200);
    assert.equal(c.elector.isLeader(), true);
    c.abort.abort();
    await c.done;
  });

  it('survives throwing callbacks', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore();
    const c = candidate(store, clock, 'me', {
      callbacks: {
        onStartedLeading: () => {
          throw new Error('bad start');
        },
        onStoppedLeading: () => {
          throw new Error('bad stop');
        },
        onNewLeader: () => {
          throw new Error('bad leader');
        },
      },
    });
    await clock.advance(2000);
    assert.equal(c.elector.isLeader(), true);
    c.abort.abort();
    await c.done;
  });
});

describe('leader election config', () => {
  const base = {
    store: new MemoryLeaseStore(),
    identity: 'me',
    name: 'x',
    callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
  };

  it('accepts the defaults 15 s / 10 s / 2 s', () => {
    validateLeaderElectionConfig(base);
  });

  it('requires leaseDuration > renewDeadline > 1.2·retryPeriod', () => {
    assert.throws(() => validateLeaderElectionConfig({ ...base, leaseDuration: 10_000 }), /leaseDuration/);
    assert.throws(() => validateLeaderElectionConfig({ ...base, retryPeriod: 8400 }), /renewDeadline/);
    validateLeaderElectionConfig({ ...base, retryPeriod: 8000 });
    assert.throws(() => validateLeaderElectionConfig({ ...base, identity: '' }), /identity/);
  });
});

describe('formatMicroTime', () => {
  it('renders RFC 3339 with microseconds', () => {
    assert.equal(formatMicroTime(Date.UTC(2024, 4, 1, 10, 0, 0, 123)), '2024-05-01T10:00:00.123000Z');
  });
});
