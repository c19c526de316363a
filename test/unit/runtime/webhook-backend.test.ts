// A replica's webhook backend Lease is renewed with one PUT from the Lease its last write
// returned, not a GET and a PUT: on a busy manager the renewal shares the client's rate limit
// with start-up work, and a renewal seen late takes the replica out of the proxy's rotation.
// Someone else's write in between (a conflict) is met by reading the Lease again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Lease } from '../../../src/apis/core-objects.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { Leases } from '../../../src/runtime/resources.ts';
import { backendLeaseName, registerWebhookBackend } from '../../../src/runtime/webhook/endpoint.ts';
import { useFakeApiServer, waitFor, type FakeApiServer } from './fake-apiserver.ts';

describe('webhook backend registration', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => ((server = s), (client = c)));

  it('renews with a single PUT, and reads the Lease again after a conflict', { timeout: 20_000 }, async () => {
    const name = backendLeaseName('replica-a');
    const leaseRequests = () => server.requests.filter((r) => r.path.includes('/leases'));
    const renewals = () => leaseRequests().filter((r) => r.method === 'PUT').length;
    const registration = registerWebhookBackend({
      client,
      namespace: 'kruise-system',
      identity: 'replica-a',
      address: { host: '127.0.0.1', port: 9876 },
      logger: pino({ level: 'silent' }),
    });
    try {
      await waitFor(() => renewals() >= 2, 'two renewals', 8_000);
      // The first round finds no Lease (GET 404) and creates it; every renewal after is a PUT alone.
      assert.deepEqual(
        leaseRequests().map((r) => r.method),
        ['GET', 'POST', 'PUT', 'PUT'],
      );
      // Another writer bumps the resourceVersion: the next PUT conflicts, the Lease is read again.
      const current = await client.get<Lease>(Leases, name, { namespace: 'kruise-system' });
      await client.update<Lease>(Leases, { ...current, spec: { ...current.spec, leaseTransitions: 3 } });
      const before = leaseRequests().length;
      await waitFor(() => leaseRequests().filter((r) => r.method === 'PUT').length >= 5, 'a renewal after the conflict', 8_000);
      assert.deepEqual(
        leaseRequests()
          .slice(before)
          .map((r) => r.method),
        ['PUT', 'GET', 'PUT'],
      );
      const renewed = await client.get<Lease>(Leases, name, { namespace: 'kruise-system' });
      assert.equal(renewed.spec?.leaseTransitions, 3, 'the other writer’s change is kept');
    } finally {
      await registration.stop();
    }
  });
});
