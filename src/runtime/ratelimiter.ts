// Per-item and global rate limiters deciding how long a requeued key waits (client-go
// util/workqueue/default_rate_limiters.go). All durations are milliseconds.

import { realClock, type Clock } from '../util/clock.ts';

export interface RateLimiter {
  /** How long the key should wait before being processed again; records one more failure. */
  when(key: string): number;
  /** Clears the key's failure history (it succeeded or was dropped). */
  forget(key: string): void;
  numRequeues(key: string): number;
}

/** base·2^failures, capped at max. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseDelay: number,
    private readonly maxDelay: number,
  ) {}

  when(key: string): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    const backoff = this.baseDelay * 2 ** exp;
    // 2^exp reaches Infinity after ~1024 failures; never let that (or NaN) escape as a delay.
    if (!Number.isFinite(backoff) || backoff > this.maxDelay) return this.maxDelay;
    return backoff;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * A global token bucket (golang.org/x/time/rate with Reserve()): every call takes a token, possibly
 * borrowing from the future, and the returned delay is when that token will exist. Not per-item.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key?: string): number {
    const now = this.clock.now();
    // A clock that stepped backwards must not mint tokens.
    const elapsed = Math.max(0, now - this.last);
    this.last = Math.max(this.last, now);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed / 1000) * this.qps);
    this.tokens -= 1;
    return this.tokens < 0 ? (-this.tokens / this.qps) * 1000 : 0;
  }

  forget(_key?: string): void {}

  numRequeues(_key?: string): number {
    return 0;
  }
}

/** The worst (longest) delay of its children. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    // Every child must see the failure, so no short-circuiting.
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(key));
    return max;
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/** `fastDelay` for the first `maxFastAttempts` tries of a key, `slowDelay` after that. */
export class ItemFastSlowRateLimiter implements RateLimiter {
  private readonly attempts = new Map<string, number>();

  constructor(
    private readonly fastDelay: number,
    private readonly slowDelay: number,
    private readonly maxFastAttempts: number,
  ) {}

  when(key: string): number {
    const n = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, n);
    return n <= this.maxFastAttempts ? this.fastDelay : this.slowDelay;
  }

  forget(key: string): void {
    this.attempts.delete(key);
  }

  numRequeues(key: string): number {
    return this.attempts.get(key) ?? 0;
  }
}

/** controller-runtime's default: per-item 5 ms → 1000 s backoff, and 10 qps / burst 100 overall. */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1_000_000), new BucketRateLimiter(10, 100, clock));
}
