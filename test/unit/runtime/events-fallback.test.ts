// Events go through events.k8s.io/v1 while the role allows it; a role without it (upstream's grants
// only core events) gets the same events as core v1 Events from the first refusal on.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { Event as KubeEvent } from '../../../src/apis/core-objects.ts';
import { kubeEventSink } from '../../../src/runtime/event-sink.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { status, useFakeApiServer, type FakeApiServer } from './fake-apiserver.ts';

const event = (name: string): KubeEvent => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'ns' },
  eventTime: '2026-01-02T03:04:05.000000Z',
  reportingController: 'kruise-manager',
  reportingInstance: 'kruise-manager-a',
  action: 'Create',
  reason: 'SuccessfulCreate',
  regarding: { kind: 'CloneSet', namespace: 'ns', name: 'cs', uid: 'u1', apiVersion: 'apps.kruise.io/v1alpha1' },
  note: 'created pod cs-abc',
  type: 'Normal',
});

describe('event sink', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  test('events.k8s.io when permitted', async () => {
    await kubeEventSink(client, pino({ level: 'silent' })).create(event('e1'));
    assert.ok(server.getObject('events.k8s.io/v1/events', 'ns/e1'));
    assert.equal(server.getObject('/v1/events', 'ns/e1'), undefined);
  });

  test('core v1 Events once events.k8s.io is forbidden, series patches included', async () => {
    const forbidden = status(
      403,
      'Forbidden',
      'events.events.k8s.io is forbidden: User "system:serviceaccount:kruise-system:kruise-manager" cannot create resource "events"',
    );
    server.failNext((r) => r.path.startsWith('/apis/events.k8s.io/'), 403, forbidden);
    const sink = kubeEventSink(client, pino({ level: 'silent' }));
    await sink.create(event('e2'));
    const core = server.getObject('/v1/events', 'ns/e2');
    assert.equal(core?.involvedObject.name, 'cs');
    assert.equal(core?.message, 'created pod cs-abc');
    assert.equal(core?.reportingComponent, 'kruise-manager');
    assert.equal(core?.reportingInstance, 'kruise-manager-a');
    assert.equal(core?.eventTime, '2026-01-02T03:04:05.000000Z');
    await sink.patchSeries(event('e2'), { count: 2, lastObservedTime: '2026-01-02T03:04:06.000000Z' });
    assert.equal(server.getObject('/v1/events', 'ns/e2')?.series.count, 2);
    // Later events skip the refused API altogether.
    const before = server.requests.filter((r) => r.path.startsWith('/apis/events.k8s.io/')).length;
    await sink.create(event('e3'));
    assert.ok(server.getObject('/v1/events', 'ns/e3'));
    assert.equal(server.requests.filter((r) => r.path.startsWith('/apis/events.k8s.io/')).length, before);
  });

  test('a terminating namespace is not taken for a role without events.k8s.io', async () => {
    const terminating = {
      ...status(403, 'Forbidden', 'unable to create new content in namespace ns because it is being terminated'),
      details: { causes: [{ reason: 'NamespaceTerminating' }] },
    };
    server.failNext((r) => r.path.startsWith('/apis/events.k8s.io/'), 403, terminating);
    const sink = kubeEventSink(client, pino({ level: 'silent' }));
    await assert.rejects(sink.create(event('e4')));
    await sink.create(event('e5'));
    assert.ok(server.getObject('events.k8s.io/v1/events', 'ns/e5'));
  });
});
