import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/util/clock.ts';
import { RestMapper } from '../../../src/runtime/restmapper.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { useFakeApiServer, type FakeApiServer } from './fake-apiserver.ts';

describe('RestMapper on the fake API server', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });
  const discoveryReads = (path: string) => server.requests.filter((r) => r.path === path).length;

  test('maps kinds to resources from discovery, with namespacing and the scale subresource', async () => {
    server.serveDiscovery('apps/v1', [
      { name: 'deployments', namespaced: true, kind: 'Deployment' },
      { name: 'deployments/scale', namespaced: true, kind: 'Scale' },
      { name: 'deployments/status', namespaced: true, kind: 'Deployment' },
      { name: 'controllerrevisions', namespaced: true, kind: 'ControllerRevision' },
    ]);
    server.serveDiscovery('v1', [{ name: 'nodes', namespaced: false, kind: 'Node' }]);
    const mapper = new RestMapper(client);
    assert.deepEqual(await mapper.mapping('apps/v1', 'Deployment'), {
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      kind: 'Deployment',
      namespaced: true,
      scale: true,
    });
    assert.equal((await mapper.mapping('apps/v1', 'ControllerRevision'))?.scale, false);
    assert.deepEqual(await mapper.mapping('v1', 'Node'), {
      group: '',
      version: 'v1',
      resource: 'nodes',
      kind: 'Node',
      namespaced: false,
      scale: false,
    });
    // Cached: the second round of lookups reads no discovery.
    const before = discoveryReads('/apis/apps/v1');
    assert.equal(before, 1);
    for (let i = 0; i < 5; i++) await mapper.mapping('apps/v1', 'Deployment');
    assert.equal(discoveryReads('/apis/apps/v1'), 1);
  });

  test('a Kruise kind asked for at v1beta1 while only v1alpha1 is served maps at v1beta1 (the client converts)', async () => {
    server.serveDiscovery('apps.kruise.io/v1alpha1', [
      { name: 'sidecarsets', namespaced: false, kind: 'SidecarSet' },
      { name: 'clonesets', namespaced: true, kind: 'CloneSet' },
      { name: 'clonesets/scale', namespaced: true, kind: 'Scale' },
    ]);
    const mapper = new RestMapper(client);
    assert.deepEqual(await mapper.mapping('apps.kruise.io/v1beta1', 'CloneSet'), {
      group: 'apps.kruise.io',
      version: 'v1beta1',
      resource: 'clonesets',
      kind: 'CloneSet',
      namespaced: true,
      scale: true,
    });
    assert.equal((await mapper.mapping('apps.kruise.io/v1beta1', 'SidecarSet'))?.resource, 'sidecarsets');
    assert.equal(await mapper.mapping('apps.kruise.io/v1beta1', 'BroadcastJob'), undefined, 'served at no version');
    assert.equal(await mapper.mapping('apps.kruise.io/v2', 'CloneSet'), undefined, 'a version Kruise does not have');
  });

  test('an unserved group version maps nothing; a CRD installed later is found on a later miss', async () => {
    const clock = new FakeClock();
    const mapper = new RestMapper(client, { clock, missRefreshMs: 5_000 });
    assert.equal(await mapper.mapping('example.com/v1', 'Widget'), undefined);
    await assert.rejects(mapper.resourceFor('example.com/v1', 'Widget'), /no resource of kind Widget is served in example.com\/v1/);
    // Misses inside the refresh interval do not read discovery again.
    assert.equal(discoveryReads('/apis/example.com/v1'), 1);
    server.serveDiscovery('example.com/v1', [
      { name: 'widgets', namespaced: true, kind: 'Widget' },
      { name: 'widgets/scale', namespaced: true, kind: 'Scale' },
    ]);
    assert.equal(await mapper.mapping('example.com/v1', 'Widget'), undefined);
    await clock.advance(5_000);
    assert.equal((await mapper.mapping('example.com/v1', 'Widget'))?.resource, 'widgets');
    assert.equal(discoveryReads('/apis/example.com/v1'), 2);
  });

  test('concurrent lookups share one discovery read', async () => {
    server.serveDiscovery('batch/v1', [{ name: 'jobs', namespaced: true, kind: 'Job' }]);
    const mapper = new RestMapper(client);
    const all = await Promise.all(Array.from({ length: 10 }, () => mapper.mapping('batch/v1', 'Job')));
    assert.ok(all.every((m) => m?.resource === 'jobs'));
    assert.equal(discoveryReads('/apis/batch/v1'), 1);
  });

  test('a malformed apiVersion or empty kind maps nothing without a request', async () => {
    const mapper = new RestMapper(client);
    const n = server.requests.length;
    assert.equal(await mapper.mapping('', 'Pod'), undefined);
    assert.equal(await mapper.mapping('apps/v1', ''), undefined);
    assert.equal(server.requests.length, n);
  });
});
