import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/util/clock.ts';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from '../../../src/runtime/ratelimiter.ts';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles per failure up to max, per key', () => {
    const l = new ItemExponentialFailureRateLimiter(1, 1000);
    assert.deepEqual(
      [1, 2, 3, 4, 5].map(() => l.when('a')),
      [1, 2, 4, 8, 16],
    );
    assert.equal(l.when('b'), 1);
    assert.equal(l.numRequeues('a'), 5);
    for (let i = 0; i < 10; i++) l.when('a');
    assert.equal(l.when('a'), 1000);
  });

  it('forget resets the backoff', () => {
    const l = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    l.when('a');
    l.when('a');
    l.forget('a');
    assert.equal(l.numRequeues('a'), 0);
    assert.equal(l.when('a'), 5);
  });

  it('returns max instead of overflowing after very many failures', () => {
    const l = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 2000; i++) last = l.when('a');
    assert.equal(last, 1_000_000);
    assert.ok(Number.isFinite(last));
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces reservations at 1/qps', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter(10, 3, clock);
    assert.deepEqual([l.when(), l.when(), l.when()], [0, 0, 0]);
    // Each further reservation borrows a future token: 100 ms, 200 ms, 300 ms.
    const delays = [l.when(), l.when(), l.when()].map((d) => Math.round(d));
    assert.deepEqual(delays, [100, 200, 300]);
  });

  it('refills with time but never above burst', async () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter(10, 2, clock);
    l.when();
    l.when();
    assert.equal(Math.round(l.when()), 100); // tokens now -1
    await clock.advance(250); // +2.5 tokens → 1.5
    assert.equal(l.when(), 0);
    assert.equal(Math.round(l.when()), 50);
    await clock.advance(60_000);
    assert.deepEqual([l.when(), l.when()], [0, 0]);
    assert.equal(Math.round(l.when()), 100, 'capped at burst 2');
  });

  it('is global: forget and numRequeues are no-ops', () => {
    const l = new BucketRateLimiter(1, 1, new FakeClock());
    l.when('a');
    l.forget('a');
    assert.equal(l.numRequeues('a'), 0);
    assert.equal(Math.round(l.when('b')), 1000);
  });
});

describe('MaxOfRateLimiter', () => {
  it('returns the longest delay and delegates forget/numRequeues', () => {
    const l = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(1, 1000), new ItemFastSlowRateLimiter(10, 500, 2));
    assert.deepEqual([l.when('a'), l.when('a'), l.when('a'), l.when('a')], [10, 10, 500, 500]);
    assert.equal(l.numRequeues('a'), 4);
    l.forget('a');
    assert.equal(l.numRequeues('a'), 0);
    assert.equal(l.when('a'), 10);
  });
});

describe('ItemFastSlowRateLimiter', () => {
  it('is fast for maxFastAttempts tries, then slow', () => {
    const l = new ItemFastSlowRateLimiter(3000, 30_000, 2);
    assert.deepEqual([l.when('a'), l.when('a'), l.when('a')], [3000, 3000, 30_000]);
    assert.equal(l.when('b'), 3000);
    l.forget('a');
    assert.equal(l.when('a'), 3000);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is exponential from 5 ms to 1000 s, bounded by a 10 qps / 100 bucket', () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter(clock);
    assert.deepEqual([l.when('a'), l.when('a'), l.when('a')], [5, 10, 20]);
    for (let i = 0; i < 30; i++) l.when('a');
    assert.equal(l.when('a'), 1_000_000);
    // 34 tokens used so far; after 66 more distinct keys the bucket is empty.
    for (let i = 0; i < 66; i++) l.when(`k${i}`);
    assert.equal(Math.round(l.when('fresh')), 100);
  });
});
