import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../../../src/util/clock.ts';
import { KubeClient } from '../../../src/runtime/client.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import type { Event as KubeEvent, EventSeries } from '../../../src/apis/core-objects.ts';
import { KubeEventRecorder } from '../../../src/runtime/events.ts';
import { kubeEventSink, type EventSink } from '../../../src/runtime/event-sink.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const silent = pino({ level: 'silent' });

class MemorySink implements EventSink {
  created: KubeEvent[] = [];
  patches: { name: string; series: EventSeries }[] = [];
  failCreate: Error | undefined;
  notFoundOnPatch = false;
  async create(event: KubeEvent): Promise<KubeEvent> {
    if (this.failCreate) throw this.failCreate;
    this.created.push(structuredClone(event));
    return event;
  }
  async patchSeries(event: KubeEvent, series: EventSeries): Promise<KubeEvent> {
    if (this.notFoundOnPatch) throw new StatusError({ code: 404, reason: 'NotFound', message: 'gone' });
    this.patches.push({ name: event.metadata.name!, series: structuredClone(series) });
    return event;
  }
}

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '7' },
});

function setup(opts: Partial<ConstructorParameters<typeof KubeEventRecorder>[0]> = {}) {
  const clock = new FakeClock();
  const sink = new MemorySink();
  const rec = new KubeEventRecorder({ sink, reportingInstance: 'kruise-manager-0', clock, logger: silent, ...opts });
  return { clock, sink, rec };
}

describe('KubeEventRecorder', () => {
  it('writes an events.k8s.io/v1 Event with regarding, reason, action, note and reporter', async () => {
    const { sink, rec, clock } = setup();
    rec.event(pod('p1'), 'Normal', 'SuccessfulCreate', 'Create', 'created pod p1', {
      kind: 'CloneSet',
      apiVersion: 'apps.kruise.io/v1beta1',
      namespace: 'ns',
      name: 'cs',
    });
    await rec.flush();
    assert.equal(sink.created.length, 1);
    const ev = sink.created[0]!;
    assert.equal(ev.apiVersion, 'events.k8s.io/v1');
    assert.equal(ev.metadata.namespace, 'ns');
    assert.match(ev.metadata.name!, /^p1\.[0-9a-f]+$/);
    assert.deepEqual(ev.regarding, { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p1', uid: 'uid-p1', resourceVersion: '7' });
    assert.deepEqual(ev.related, { kind: 'CloneSet', apiVersion: 'apps.kruise.io/v1beta1', namespace: 'ns', name: 'cs' });
    assert.equal(ev.reportingController, 'kruise-manager');
    assert.equal(ev.reportingInstance, 'kruise-manager-0');
    assert.equal(ev.eventTime, new Date(clock.now()).toISOString().replace('Z', '000Z'));
    assert.deepEqual([ev.type, ev.reason, ev.action, ev.note], ['Normal', 'SuccessfulCreate', 'Create', 'created pod p1']);
    assert.equal(ev.series, undefined);
    await rec.close();
  });

  it('cluster-scoped objects get their events in default; notes are cut to 1 kB; action defaults to reason', async () => {
    const { sink, rec } = setup();
    rec.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, 'Warning', 'Pressure', '', 'x'.repeat(3000));
    await rec.flush();
    assert.equal(sink.created[0]!.metadata.namespace, 'default');
    assert.equal(sink.created[0]!.note!.length, 1024);
    assert.equal(sink.created[0]!.action, 'Pressure');
    await rec.close();
  });

  it('repeats become a series: count 2 is patched at once, later counts on the refresh tick', async () => {
    const { sink, rec, clock } = setup({ refreshInterval: 30_000 });
    rec.event(pod('p1'), 'Warning', 'FailedCreate', 'Create', 'boom');
    await rec.flush();
    await clock.advance(1000);
    rec.event(pod('p1'), 'Warning', 'FailedCreate', 'Create', 'boom');
    await rec.flush();
    assert.equal(sink.created.length, 1);
    assert.deepEqual(
      sink.patches.map((p) => [p.name, p.series.count]),
      [[sink.created[0]!.metadata.name, 2]],
    );
    for (let i = 0; i < 3; i++) rec.event(pod('p1'), 'Warning', 'FailedCreate', 'Create', 'boom');
    await rec.flush();
    assert.equal(sink.patches.length, 1, 'further repeats are only counted');
    await clock.advance(30_000);
    await rec.flush();
    assert.equal(sink.patches.length, 2);
    assert.equal(sink.patches[1]!.series.count, 5);
    // A different reason, or a different object, is a different event.
    rec.event(pod('p1'), 'Warning', 'OtherReason', 'Create', 'boom');
    rec.event(pod('p2'), 'Warning', 'FailedCreate', 'Create', 'boom');
    await rec.flush();
    assert.equal(sink.created.length, 3);
    await rec.close();
  });

  it('after finishTime without repeats the next occurrence is a new Event, and the final count is written', async () => {
    const { sink, rec, clock } = setup({ finishTime: 60_000, refreshInterval: 10_000 });
    rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
    rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
    rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
    await rec.flush();
    assert.equal(sink.patches.length, 1);
    await clock.advance(70_000);
    await rec.flush();
    assert.deepEqual(
      sink.patches.map((p) => p.series.count),
      [2, 3],
    );
    assert.equal(rec.cacheSize(), 0);
    rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
    await rec.flush();
    assert.equal(sink.created.length, 2);
    await rec.close();
  });

  it('a series whose Event vanished is created again, series included', async () => {
    const { sink, rec } = setup();
    rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
    await rec.flush();
    sink.notFoundOnPatch = true;
    rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
    await rec.flush();
    assert.equal(sink.created.length, 2);
    assert.equal(sink.created[1]!.series?.count, 2);
    await rec.close();
  });

  it('the per-object spam filter drops floods, refilling one token per interval', async () => {
    const { sink, rec, clock } = setup({ spamBurst: 3, spamRefillMs: 1000 });
    for (let i = 0; i < 10; i++) rec.event(pod('p1'), 'Normal', `R${i}`, 'A', 'n');
    rec.event(pod('p2'), 'Normal', 'R', 'A', 'n');
    await rec.flush();
    assert.deepEqual(
      sink.created.map((e) => `${e.regarding.name}/${e.reason}`),
      ['p1/R0', 'p1/R1', 'p1/R2', 'p2/R'],
    );
    await clock.advance(1000);
    rec.event(pod('p1'), 'Normal', 'Later', 'A', 'n');
    rec.event(pod('p1'), 'Normal', 'Dropped', 'A', 'n');
    await rec.flush();
    assert.deepEqual(
      sink.created.slice(4).map((e) => e.reason),
      ['Later'],
    );
    await rec.close();
  });

  it('an event refused because its namespace is being deleted is dropped without an error line', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const { sink, rec } = setup({ logger });
    sink.failCreate = new StatusError({
      code: 403,
      reason: 'Forbidden',
      message: 'unable to create new content in namespace ns because it is being terminated',
      details: { causes: [{ reason: 'NamespaceTerminating', message: 'namespace ns is being terminated', field: 'metadata.namespace' }] },
    });
    rec.event(pod('p1'), 'Warning', 'FailedCreate', 'Create', 'n');
    await rec.flush();
    assert.deepEqual(
      lines.filter((l) => l.level >= 40).map((l) => l.msg),
      [],
    );
    await rec.close();
  });

  it('never throws: API rejections are logged once, transport errors retried up to maxTries', async () => {
    const { sink, rec, clock } = setup({ maxTries: 3, retryDelay: 100 });
    sink.failCreate = new StatusError({ code: 422, reason: 'Invalid', message: 'bad' });
    assert.doesNotThrow(() => rec.event(pod('p1'), 'Normal', 'R', 'A', 'n'));
    await rec.flush();
    let calls = 0;
    sink.create = async (e) => {
      calls++;
      if (calls < 3) throw new Error('ECONNREFUSED');
      sink.created.push(e);
      return e;
    };
    rec.event(pod('p2'), 'Normal', 'R', 'A', 'n');
    await clock.advance(500);
    await rec.flush();
    assert.equal(calls, 3);
    assert.equal(sink.created.length, 1);
    assert.doesNotThrow(() => rec.event(pod('p3'), 'Bogus' as 'Normal', 'R', 'A', 'n'));
    await rec.close();
  });

  it('the cache is bounded: the least recently seen key is evicted', async () => {
    const { rec } = setup({ maxCacheSize: 2 });
    rec.event(pod('a'), 'Normal', 'R', 'A', 'n');
    rec.event(pod('b'), 'Normal', 'R', 'A', 'n');
    rec.event(pod('c'), 'Normal', 'R', 'A', 'n');
    assert.equal(rec.cacheSize(), 2);
    await rec.close();
  });

  it('kubeEventSink creates through the API and patches the series', async () => {
    const api = await new FakeApiServer().start();
    const client = new KubeClient({ server: api.url, qps: 0 });
    try {
      const rec = new KubeEventRecorder({ sink: kubeEventSink(client), reportingInstance: 'm-0', logger: silent });
      rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
      await rec.flush();
      rec.event(pod('p1'), 'Normal', 'R', 'A', 'n');
      await rec.close();
      const posts = api.requests.filter((r) => r.path === '/apis/events.k8s.io/v1/namespaces/ns/events');
      assert.equal(posts.length, 1);
      const patch = api.requests.find((r) => r.method === 'PATCH')!;
      assert.equal(patch.headers['content-type'], 'application/merge-patch+json');
      assert.equal(JSON.parse(patch.body).series.count, 2);
    } finally {
      await client.close();
      await api.close();
    }
  });
});
