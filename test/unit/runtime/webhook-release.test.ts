// A manager stopped on purpose on a cluster that outlives it (`kruise start` on the local cluster,
// left running) removes the webhook configurations, whose failurePolicy Fail would otherwise refuse
// pods and Kruise writes with nobody to answer — unless another replica still serves them.
import { describe, test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { formatMicroTime } from '../../../src/runtime/leaderelection.ts';
import { releaseWebhookConfigurations, WEBHOOK_BACKEND_LABEL } from '../../../src/runtime/webhook/endpoint.ts';
import { useFakeApiServer, type FakeApiServer } from './fake-apiserver.ts';

const MUTATING = 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VALIDATING = 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const LEASES = 'coordination.k8s.io/v1/leases';
const log = pino({ level: 'silent' });

describe('releaseWebhookConfigurations', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  beforeEach(() => {
    server.put(MUTATING, { metadata: { name: 'kruise-mutating-webhook-configuration' } });
    server.put(VALIDATING, { metadata: { name: 'kruise-validating-webhook-configuration' } });
  });

  const backend = (name: string, renewedMsAgo: number) =>
    server.put(LEASES, {
      metadata: { name, namespace: 'kruise-system', labels: { [WEBHOOK_BACKEND_LABEL]: 'true' } },
      spec: { holderIdentity: name, leaseDurationSeconds: 6, renewTime: formatMicroTime(Date.now() - renewedMsAgo) },
    });

  test('no replica left serving (a stale backend Lease of a dead one at most): both removed', async () => {
    backend('dead', 60_000);
    assert.equal(await releaseWebhookConfigurations(client, 'kruise-system', log), true);
    assert.equal(server.getObject(MUTATING, 'kruise-mutating-webhook-configuration'), undefined);
    assert.equal(server.getObject(VALIDATING, 'kruise-validating-webhook-configuration'), undefined);
    // Already gone: nothing to do, no error.
    assert.equal(await releaseWebhookConfigurations(client, 'kruise-system', log), true);
    server.remove(LEASES, 'kruise-system', 'dead');
  });

  test('another replica still serves: both kept', async () => {
    backend('alive', 500);
    assert.equal(await releaseWebhookConfigurations(client, 'kruise-system', log), false);
    assert.ok(server.getObject(MUTATING, 'kruise-mutating-webhook-configuration'));
    assert.ok(server.getObject(VALIDATING, 'kruise-validating-webhook-configuration'));
  });
});
