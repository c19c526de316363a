import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/util/clock.ts';
import { ItemExponentialFailureRateLimiter } from '../../../src/runtime/ratelimiter.ts';
import { LowPriority, WorkQueue } from '../../../src/runtime/workqueue.ts';
import { registry } from '../../../src/runtime/metrics.ts';

function newQueue(name?: string) {
  const clock = new FakeClock();
  const queue = new WorkQueue({ name, clock, rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000) });
  return { clock, queue };
}

/** Takes every ready key without blocking. */
async function drain(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) keys.push((await queue.get())!);
  return keys;
}

describe('WorkQueue FIFO', () => {
  it('deduplicates keys that are queued', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    assert.equal(queue.len(), 2);
    assert.deepEqual(await drain(queue), ['a', 'b']);
  });

  it('holds a key added while processing and re-queues it on done', async () => {
    const { queue } = newQueue();
    queue.add('a');
    assert.equal(await queue.get(), 'a');
    queue.add('a');
    queue.add('a');
    assert.equal(queue.len(), 0, 'not queued while in flight');
    assert.equal(queue.isProcessing('a'), true);
    queue.done('a');
    assert.equal(queue.len(), 1, 'collapsed into one re-run');
    assert.equal(await queue.get(), 'a');
    queue.done('a');
    assert.equal(queue.len(), 0);
  });

  it('never hands one key to two waiting workers', async () => {
    const { queue } = newQueue();
    const got: string[] = [];
    const w1 = queue.get().then((k) => got.push(`w1:${k}`));
    const w2 = queue.get().then((k) => got.push(`w2:${k}`));
    queue.add('a');
    await w1;
    queue.add('a');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(got, ['w1:a'], 'second worker must wait while a is in flight');
    queue.done('a');
    await w2;
    assert.deepEqual(got, ['w1:a', 'w2:a']);
  });

  it('resolves a blocked get when a key arrives', async () => {
    const { queue } = newQueue();
    const pending = queue.get();
    queue.add('x');
    assert.equal(await pending, 'x');
  });

  it('shutDown resolves waiting gets with undefined and ignores new adds', async () => {
    const { queue } = newQueue();
    const pending = queue.get();
    queue.shutDown();
    assert.equal(await pending, undefined);
    queue.add('a');
    assert.equal(queue.len(), 0);
    assert.equal(await queue.get(), undefined);
    assert.equal(queue.shuttingDown(), true);
  });

  it('shutDownWithDrain waits for in-flight keys and stops handing out queued ones', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    assert.equal(await queue.get(), 'a');
    let drained = false;
    const drainDone = queue.shutDownWithDrain().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(drained, false);
    assert.equal(await queue.get(), undefined, 'b is not handed out after shutdown');
    queue.done('a');
    await drainDone;
    assert.equal(drained, true);
  });

  it('ignores done for a key that is not in flight', () => {
    const { queue } = newQueue();
    queue.done('nope');
    queue.add('a');
    queue.done('a');
    assert.equal(queue.len(), 1);
  });
});

describe('WorkQueue delays', () => {
  it('addAfter makes a key ready only once the delay has passed', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 1000);
    assert.equal(queue.len(), 0);
    await clock.advance(999);
    assert.equal(queue.len(), 0);
    await clock.advance(1);
    assert.equal(queue.len(), 1);
  });

  it('wakes a blocked get when a delayed key falls due', async () => {
    const { clock, queue } = newQueue();
    const pending = queue.get();
    queue.addAfter('a', 500);
    await clock.advance(500);
    assert.equal(await pending, 'a');
  });

  it('only ever moves readyAt earlier', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 1000);
    queue.addAfter('a', 5000);
    queue.addAfter('b', 5000);
    queue.addAfter('b', 1000);
    await clock.advance(1000);
    assert.deepEqual((await drain(queue)).sort(), ['a', 'b']);
    await clock.advance(10_000);
    assert.equal(queue.len(), 0, 'the later requests did not leave extra entries');
  });

  it('add makes a delayed key ready now; a delay on a ready key is a no-op', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 1000);
    queue.add('a');
    assert.equal(queue.len(), 1);
    queue.add('b');
    queue.addAfter('b', 1000);
    assert.equal(queue.len(), 2);
    assert.deepEqual(await drain(queue), ['a', 'b']);
    await clock.advance(2000);
    assert.equal(queue.len(), 0);
  });

  it('a non-positive delay adds at once', () => {
    const { queue } = newQueue();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    assert.equal(queue.len(), 2);
  });

  it('delays longer than the heartbeat still fire on time', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 60_000);
    await clock.advance(59_999);
    assert.equal(queue.len(), 0);
    await clock.advance(1);
    assert.equal(queue.len(), 1);
  });

  it('a key that falls due while in flight is queued on done', async () => {
    const { clock, queue } = newQueue();
    queue.add('a');
    assert.equal(await queue.get(), 'a');
    queue.addAfter('a', 100);
    await clock.advance(200);
    assert.equal(queue.len(), 0);
    queue.done('a');
    assert.equal(queue.len(), 1);
  });

  it('a key delayed past its in-flight run waits for the delay after done', async () => {
    const { clock, queue } = newQueue();
    queue.add('a');
    await queue.get();
    queue.addAfter('a', 1000);
    queue.done('a');
    assert.equal(queue.len(), 0);
    await clock.advance(1000);
    assert.equal(queue.len(), 1);
  });

  it('drops delayed keys on shutdown', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 100);
    queue.shutDown();
    await clock.advance(200);
    assert.equal(queue.len(), 0);
    assert.equal(clock.pending(), 0);
  });
});

describe('WorkQueue priorities', () => {
  it('serves initial-list (low priority) keys after real changes', async () => {
    const { queue } = newQueue();
    queue.add('list-1', { priority: LowPriority });
    queue.add('list-2', { priority: LowPriority });
    queue.add('change-1');
    queue.add('list-3', { priority: LowPriority });
    queue.add('change-2');
    assert.deepEqual(await drain(queue), ['change-1', 'change-2', 'list-1', 'list-2', 'list-3']);
  });

  it('a higher-priority add raises a queued key but a lower one never lowers it', async () => {
    const { queue } = newQueue();
    queue.add('a', { priority: LowPriority });
    queue.add('b', { priority: LowPriority });
    queue.add('c');
    queue.add('b'); // a real event for b
    queue.add('c', { priority: LowPriority }); // a resync for c
    assert.equal(queue.len(), 3);
    // b keeps its place in line from when it was first queued, ahead of c.
    assert.deepEqual(await drain(queue), ['b', 'c', 'a']);
  });

  it('reports the priority with the key, and higher priorities go first', async () => {
    const { queue } = newQueue();
    queue.add('low', { priority: LowPriority });
    queue.add('high', { priority: 10 });
    assert.deepEqual(await queue.getWithPriority(), { key: 'high', priority: 10 });
    assert.deepEqual(await queue.getWithPriority(), { key: 'low', priority: LowPriority });
  });

  it('a delayed key competes by priority once ready', async () => {
    const { clock, queue } = newQueue();
    queue.add('list', { priority: LowPriority });
    queue.addAfter('retry', 100);
    await clock.advance(100);
    assert.deepEqual(await drain(queue), ['retry', 'list']);
  });

  it('raising the priority of a waiting key keeps its delay', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 100, { priority: LowPriority });
    queue.addAfter('a', 500, { priority: 5 });
    queue.add('b', { priority: 1 });
    await clock.advance(100);
    assert.deepEqual(await queue.getWithPriority(), { key: 'a', priority: 5 });
  });
});

describe('WorkQueue rate limiting', () => {
  it('backs off per key and forget resets it', async () => {
    const { clock, queue } = newQueue();
    queue.addRateLimited('a'); // 5 ms
    assert.equal(queue.numRequeues('a'), 1);
    await clock.advance(5);
    assert.equal(await queue.get(), 'a');
    queue.done('a');
    queue.addRateLimited('a'); // 10 ms
    await clock.advance(9);
    assert.equal(queue.len(), 0);
    await clock.advance(1);
    assert.equal(queue.len(), 1);
    queue.forget('a');
    assert.equal(queue.numRequeues('a'), 0);
  });
});

describe('WorkQueue metrics', () => {
  it('reports adds, depth, retries and in-flight work under its name', async () => {
    const { clock, queue } = newQueue('wq-metrics-test');
    queue.add('a');
    queue.add('b');
    await queue.get();
    await clock.advance(3000);
    queue.addRateLimited('c');
    const text = await registry.metrics();
    assert.match(text, /workqueue_adds_total\{name="wq-metrics-test"\} 2/);
    assert.match(text, /workqueue_depth\{name="wq-metrics-test"\} 1/);
    assert.match(text, /workqueue_retries_total\{name="wq-metrics-test"\} 1/);
    assert.match(text, /workqueue_unfinished_work_seconds\{name="wq-metrics-test"\} 3/);
    assert.match(text, /workqueue_longest_running_processor_seconds\{name="wq-metrics-test"\} 3/);
    queue.shutDown();
    assert.doesNotMatch(await registry.metrics(), /workqueue_unfinished_work_seconds\{name="wq-metrics-test"\}/);
  });
});
