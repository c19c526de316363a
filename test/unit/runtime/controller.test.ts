import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../../../src/util/clock.ts';
import {
  Controller,
  TerminalError,
  isTerminalError,
  type ReconcileContext,
  type ReconcileResult,
} from '../../../src/runtime/controller.ts';
import { ItemExponentialFailureRateLimiter } from '../../../src/runtime/ratelimiter.ts';
import { LowPriority } from '../../../src/runtime/workqueue.ts';
import { registry } from '../../../src/runtime/metrics.ts';

const silent = pino({ level: 'silent' });
let nameSeq = 0;

type Step = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult | void> | ReconcileResult | void;

/** A controller whose reconcile runs the given steps in order (the last one repeats). */
function harness(steps: Step[], workers = 1) {
  const clock = new FakeClock();
  const name = `ctrl-test-${++nameSeq}`;
  const calls: Array<{ key: string; at: number; priority: number }> = [];
  const controller = new Controller({
    name,
    clock,
    logger: silent,
    maxConcurrentReconciles: workers,
    rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    reconcile: (key, ctx) => {
      calls.push({ key, at: clock.now(), priority: ctx.priority });
      const step = steps[Math.min(calls.length - 1, steps.length - 1)];
      return step(key, ctx);
    },
  });
  return { clock, name, calls, controller, queue: controller.queue, start: clock.now() };
}

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const rendered = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of (await registry.metrics()).split('\n')) {
    const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (m && m[1] === name && rendered.every((l) => m[2].split(',').includes(l)) && m[2].split(',').length === rendered.length) {
      return Number(m[3]);
    }
  }
  return undefined;
}

const ok: Step = () => {};

describe('Controller result handling', () => {
  it('success forgets the key', async () => {
    const h = harness([ok]);
    h.controller.start();
    h.queue.addRateLimited('ns/a'); // some earlier failure history
    await h.clock.advance(5);
    assert.equal(h.calls.length, 1);
    assert.equal(h.queue.numRequeues('ns/a'), 0);
    assert.equal(await metric('controller_runtime_reconcile_total', { controller: h.name, result: 'success' }), 1);
    await h.clock.advance(10_000);
    assert.equal(h.calls.length, 1, 'not requeued');
    await h.controller.stop();
  });

  it('an error requeues with per-key exponential backoff', async () => {
    const h = harness([
      () => {
        throw new Error('transient');
      },
      () => {
        throw new Error('transient');
      },
      ok,
    ]);
    h.controller.start();
    h.queue.add('ns/a');
    await h.clock.advance(0);
    assert.equal(h.calls.length, 1);
    assert.equal(h.queue.numRequeues('ns/a'), 1);
    await h.clock.advance(5);
    assert.equal(h.calls.length, 2);
    await h.clock.advance(9);
    assert.equal(h.calls.length, 2, 'second backoff is 10 ms');
    await h.clock.advance(1);
    assert.equal(h.calls.length, 3);
    assert.deepEqual(
      h.calls.map((c) => c.at - h.start),
      [0, 5, 15],
    );
    assert.equal(h.queue.numRequeues('ns/a'), 0);
    assert.equal(await metric('controller_runtime_reconcile_total', { controller: h.name, result: 'error' }), 2);
    assert.equal(await metric('controller_runtime_reconcile_errors_total', { controller: h.name }), 2);
    await h.controller.stop();
  });

  it('a TerminalError is not retried and forgets the key', async () => {
    const h = harness([
      () => {
        throw new TerminalError('invalid spec');
      },
    ]);
    h.controller.start();
    h.queue.addRateLimited('ns/a');
    await h.clock.advance(5);
    await h.clock.advance(60_000);
    assert.equal(h.calls.length, 1);
    assert.equal(h.queue.numRequeues('ns/a'), 0);
    assert.equal(await metric('controller_runtime_terminal_reconcile_errors_total', { controller: h.name }), 1);
    assert.equal(await metric('controller_runtime_reconcile_errors_total', { controller: h.name }), 1);
    await h.controller.stop();
  });

  it('recognises a TerminalError wrapped as a cause', () => {
    assert.equal(isTerminalError(new Error('outer', { cause: new TerminalError('inner') })), true);
    assert.equal(isTerminalError(new Error('plain')), false);
    assert.equal(isTerminalError('string'), false);
  });

  it('requeueAfterMs forgets the backoff and re-runs after the delay', async () => {
    const h = harness([
      () => {
        throw new Error('x');
      },
      () => ({ requeueAfterMs: 30_000 }),
      ok,
    ]);
    h.controller.start();
    h.queue.add('ns/a');
    await h.clock.advance(5);
    assert.equal(h.calls.length, 2);
    assert.equal(h.queue.numRequeues('ns/a'), 0);
    await h.clock.advance(29_999);
    assert.equal(h.calls.length, 2);
    await h.clock.advance(1);
    assert.equal(h.calls.length, 3);
    assert.equal(await metric('controller_runtime_reconcile_total', { controller: h.name, result: 'requeue_after' }), 1);
    await h.controller.stop();
  });

  it('an error ignores any requeueAfterMs it carries and backs off instead', async () => {
    const h = harness([
      () => {
        throw Object.assign(new Error('x'), { requeueAfterMs: 60_000 });
      },
      ok,
    ]);
    h.controller.start();
    h.queue.add('ns/a');
    await h.clock.advance(5);
    assert.equal(h.calls.length, 2);
    await h.controller.stop();
  });

  it('requeues with the priority the key was served at', async () => {
    const h = harness([
      () => {
        throw new Error('x');
      },
      ok,
    ]);
    h.controller.start();
    h.queue.add('ns/a', { priority: LowPriority });
    await h.clock.advance(5);
    assert.deepEqual(
      h.calls.map((c) => c.priority),
      [LowPriority, LowPriority],
    );
    await h.controller.stop();
  });
});

describe('Controller panics', () => {
  it('recovers programming errors and non-Error throws, counts them, and retries', async () => {
    const h = harness([
      () => {
        void (undefined as unknown as { spec: { replicas: number } }).spec.replicas;
      },
      () => {
        throw 'a string';
      },
      async () => {
        await Promise.resolve();
        throw new RangeError('Maximum call stack size exceeded');
      },
      () => {
        throw new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') });
      },
      ok,
    ]);
    h.controller.start();
    h.queue.add('ns/a');
    await h.clock.advance(5 + 10 + 20 + 40);
    assert.equal(h.calls.length, 5);
    assert.equal(await metric('controller_runtime_reconcile_panics_total', { controller: h.name }), 3);
    assert.equal(await metric('controller_runtime_reconcile_errors_total', { controller: h.name }), 4);
    assert.equal(await metric('controller_runtime_reconcile_total', { controller: h.name, result: 'success' }), 1);
    await h.controller.stop();
  });
});

describe('Controller workers', () => {
  it('never reconciles one key on two workers at once, but runs different keys in parallel', async () => {
    const gates: Array<() => void> = [];
    const running = new Map<string, number>();
    let maxSameKey = 0;
    let maxTotal = 0;
    const h = harness(
      [
        async (key) => {
          running.set(key, (running.get(key) ?? 0) + 1);
          maxSameKey = Math.max(maxSameKey, running.get(key)!);
          maxTotal = Math.max(
            maxTotal,
            [...running.values()].reduce((a, b) => a + b, 0),
          );
          await new Promise<void>((r) => gates.push(r));
          running.set(key, running.get(key)! - 1);
        },
      ],
      3,
    );
    h.controller.start();
    h.queue.add('ns/a');
    h.queue.add('ns/b');
    await h.clock.advance(0);
    h.queue.add('ns/a'); // event while ns/a is in flight
    h.queue.add('ns/a');
    await h.clock.advance(0);
    assert.equal(h.calls.length, 2, 'ns/a held back although a worker is idle');
    assert.equal(await metric('controller_runtime_active_workers', { controller: h.name }), 2);
    gates.shift()!(); // finish first ns/a
    await h.clock.advance(0);
    assert.deepEqual(
      h.calls.map((c) => c.key),
      ['ns/a', 'ns/b', 'ns/a'],
      'collapsed into one re-run',
    );
    while (gates.length) {
      gates.shift()!();
      await h.clock.advance(0);
    }
    assert.equal(maxSameKey, 1);
    assert.equal(maxTotal, 2);
    assert.equal(await metric('controller_runtime_max_concurrent_reconciles', { controller: h.name }), 3);
    assert.equal(await metric('controller_runtime_active_workers', { controller: h.name }), 0);
    await h.controller.stop();
  });

  it('lets the event loop take a turn between rounds that wait on no I/O', async () => {
    // Two queued keys whose rounds finish without I/O: a request arriving meanwhile (here an
    // immediate, as a socket's data is handed over) is served between them, not after both.
    const order: string[] = [];
    const h = harness([(key) => void order.push(`round ${key}`)]);
    h.queue.add('ns/a');
    h.queue.add('ns/b');
    h.controller.start();
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        order.push('request');
        resolve();
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order.slice(0, 3), ['round ns/a', 'request', 'round ns/b']);
    await h.controller.stop();
  });

  it('stop aborts the signal, waits for in-flight reconciles and drops queued keys', async () => {
    let release!: () => void;
    let sawAbort = false;
    let finished = false;
    const h = harness([
      async (_key, ctx) => {
        await new Promise<void>((r) => (release = r));
        sawAbort = ctx.signal.aborted;
        finished = true;
      },
    ]);
    h.controller.start();
    h.queue.add('ns/a');
    h.queue.add('ns/b');
    await h.clock.advance(0);
    let stopped = false;
    const stopping = h.controller.stop().then(() => (stopped = true));
    await h.clock.advance(0);
    assert.equal(stopped, false, 'waits for the in-flight reconcile');
    release();
    await stopping;
    assert.equal(finished, true);
    assert.equal(sawAbort, true);
    assert.deepEqual(
      h.calls.map((c) => c.key),
      ['ns/a'],
    );
    h.queue.add('ns/c');
    await h.clock.advance(0);
    assert.equal(h.calls.length, 1);
    assert.equal(h.controller.stop(), h.controller.stop(), 'idempotent');
  });

  it('processes keys added before start and rejects a second start', async () => {
    const h = harness([ok]);
    h.queue.add('ns/early');
    h.controller.start();
    await h.clock.advance(0);
    assert.deepEqual(
      h.calls.map((c) => c.key),
      ['ns/early'],
    );
    assert.throws(() => h.controller.start(), /already started/);
    await h.controller.stop();
  });

  it('validates maxConcurrentReconciles', () => {
    assert.throws(() => new Controller({ name: 'bad', reconcile: ok, maxConcurrentReconciles: 0 }), /positive integer/);
  });

  it('passes a per-reconcile ID and logger', async () => {
    const ids: string[] = [];
    const h = harness([
      (_key, ctx) => {
        ids.push(ctx.reconcileID);
        assert.equal(typeof ctx.log.info, 'function');
      },
    ]);
    h.controller.start();
    h.queue.add('ns/a');
    await h.clock.advance(0);
    h.queue.add('ns/a');
    await h.clock.advance(0);
    assert.equal(ids.length, 2);
    assert.notEqual(ids[0], ids[1]);
    await h.controller.stop();
  });

  it("logs each key once: the caller's controller binding, then the reconcile's object and reconcileID", async () => {
    const lines: string[] = [];
    const sink = { write: (line: string) => void lines.push(line) };
    const logger = pino({ level: 'debug' }, sink).child({ controller: 'bound-once' });
    const clock = new FakeClock();
    const controller = new Controller({ name: 'bound-once', clock, logger, reconcile: () => {} });
    controller.start();
    controller.queue.add('ns/a');
    await clock.advance(0);
    await controller.stop();
    const count = (line: string, key: string) => line.split(`"${key}":`).length - 1;
    assert.ok(
      lines.some((line) => count(line, 'reconcileID') === 1),
      'the reconcile logged nothing',
    );
    for (const line of lines) {
      assert.equal(count(line, 'controller'), 1, line);
      assert.ok(count(line, 'object') <= 1 && count(line, 'reconcileID') <= 1, line);
    }
  });
});
