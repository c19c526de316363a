// `kruise storage-version migrate` on the in-memory API server: storage version, stored versions,
// and the ResourceDistribution copies' ownerReferences re-pointed to the distributions' stored
// version (only those, once), with --dry-run and the refusal writing nothing.
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { migrateStorageVersion, OPENKRUISE_V18, repointDistributedCopies } from '../../../src/cli/storage-version.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { status, useFakeApiServer, type FakeApiServer } from '../runtime/fake-apiserver.ts';

const CRDS = 'apiextensions.k8s.io/v1/customresourcedefinitions';
const SECRETS = '/v1/secrets';
const CONFIGMAPS = '/v1/configmaps';
const RD_ALPHA = 'apps.kruise.io/v1alpha1';
const RD_BETA = 'apps.kruise.io/v1beta1';

function crd(plural: string, kind: string, scope: 'Namespaced' | 'Cluster', versions: string[], storage: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.apps.kruise.io` },
    spec: {
      group: 'apps.kruise.io',
      scope,
      names: { plural, kind },
      versions: versions.map((name) => ({ name, served: true, storage: name === storage })),
    },
    status: { storedVersions: [...versions] },
  };
}

const rdRef = (apiVersion: string, name = 'rd-config', uid = 'rd-uid') => ({
  apiVersion,
  kind: 'ResourceDistribution',
  name,
  uid,
  controller: true,
  blockOwnerDeletion: true,
});

const DEPLOYMENT_REF = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'dep-uid' };

describe('kruise storage-version migrate', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  const writes = () => server.requests.filter((r) => r.method !== 'GET');
  const refsOf = (resource: string, key: string) =>
    (server.getObject(resource, key)!.metadata.ownerReferences as Array<{ apiVersion: string; kind: string }>).map(
      (r) => `${r.kind} ${r.apiVersion}`,
    );

  beforeEach(() => {
    // Storage already at the target version: no storage swap (and its 2 s wait) in these cases.
    server.put(CRDS, crd('resourcedistributions', 'ResourceDistribution', 'Cluster', ['v1alpha1', 'v1beta1'], 'v1alpha1'));
    server.put(CRDS, crd('statefulsets', 'StatefulSet', 'Namespaced', ['v1alpha1', 'v1beta1'], 'v1beta1'));
    server.put('apps.kruise.io/v1alpha1/resourcedistributions', { metadata: { name: 'rd-config', uid: 'rd-uid' } });
    // A copy Kruise TS wrote (v1beta1), one OpenKruise wrote (v1alpha1), one with a second owner, and
    // objects that are no distribution's copy.
    server.put(SECRETS, { metadata: { namespace: 'a', name: 'shared', ownerReferences: [rdRef(RD_BETA)] } });
    server.put(CONFIGMAPS, { metadata: { namespace: 'a', name: 'shared', ownerReferences: [rdRef(RD_ALPHA)] } });
    server.put(CONFIGMAPS, { metadata: { namespace: 'b', name: 'shared', ownerReferences: [DEPLOYMENT_REF, rdRef(RD_BETA)] } });
    server.put(CONFIGMAPS, { metadata: { namespace: 'b', name: 'app', ownerReferences: [DEPLOYMENT_REF] } });
    server.put(CONFIGMAPS, {
      metadata: { namespace: 'b', name: 'foreign', ownerReferences: [{ ...rdRef('example.com/v1'), uid: 'x' }] },
    });
    server.put(CONFIGMAPS, { metadata: { namespace: 'c', name: 'plain' } });
    server.requests.length = 0;
  });

  test(`--to ${OPENKRUISE_V18}: copies owned by a ResourceDistribution point at v1alpha1, nothing else is written; a second run writes no copy`, async () => {
    const before = server.getObject(CONFIGMAPS, 'a/shared')!.metadata.resourceVersion;
    const migration = await migrateStorageVersion(client, OPENKRUISE_V18);
    assert.deepEqual(
      migration.crds.map((r) => [r.crd, r.storedVersions.join()]),
      [
        ['resourcedistributions.apps.kruise.io', 'v1alpha1'],
        ['statefulsets.apps.kruise.io', 'v1beta1'],
      ],
    );
    assert.deepEqual(migration.copies, { apiVersion: RD_ALPHA, repointed: ['Secret a/shared', 'ConfigMap b/shared'] });
    assert.deepEqual(refsOf(SECRETS, 'a/shared'), [`ResourceDistribution ${RD_ALPHA}`]);
    assert.deepEqual(refsOf(CONFIGMAPS, 'b/shared'), ['Deployment apps/v1', `ResourceDistribution ${RD_ALPHA}`]);
    assert.equal(server.getObject(CONFIGMAPS, 'b/shared')!.metadata.ownerReferences[1].uid, 'rd-uid');
    assert.equal(server.getObject(CONFIGMAPS, 'a/shared')!.metadata.resourceVersion, before, 'an already v1alpha1 copy is not written');
    assert.deepEqual(refsOf(CONFIGMAPS, 'b/foreign'), ['ResourceDistribution example.com/v1']);
    const copyWrites = (rs: typeof server.requests) => rs.filter((r) => r.method !== 'GET' && /\/(secrets|configmaps)\//.test(r.path));
    assert.deepEqual(
      copyWrites(server.requests).map((r) => `${r.method} ${r.path}`),
      ['PUT /api/v1/namespaces/a/secrets/shared', 'PUT /api/v1/namespaces/b/configmaps/shared'],
    );
    assert.deepEqual(server.getObject(CRDS, 'resourcedistributions.apps.kruise.io')!.status.storedVersions, ['v1alpha1']);

    server.requests.length = 0;
    const again = await migrateStorageVersion(client, OPENKRUISE_V18);
    assert.deepEqual(again.copies!.repointed, []);
    assert.deepEqual(copyWrites(server.requests), []);
  });

  test('--to v1beta1 points the copies at v1beta1 (the version the distributions are then stored at)', async () => {
    const migration = await migrateStorageVersion(client, 'v1beta1');
    assert.deepEqual(migration.copies, { apiVersion: RD_BETA, repointed: ['ConfigMap a/shared'] });
    assert.deepEqual(refsOf(CONFIGMAPS, 'a/shared'), [`ResourceDistribution ${RD_BETA}`]);
  });

  test('a copy changed between list and write is re-read and re-pointed', async () => {
    server.failNext(
      (r) => r.method === 'PUT' && r.path.endsWith('/secrets/shared'),
      409,
      status(409, 'Conflict', 'the object has been modified'),
    );
    const result = await repointDistributedCopies(client, RD_ALPHA);
    assert.deepEqual(result.repointed, ['Secret a/shared', 'ConfigMap b/shared']);
    assert.deepEqual(
      server.requests.filter((r) => r.path.endsWith('/secrets/shared')).map((r) => r.method),
      ['PUT', 'GET', 'PUT'],
    );
    assert.deepEqual(refsOf(SECRETS, 'a/shared'), [`ResourceDistribution ${RD_ALPHA}`]);
  });

  test('--dry-run reports what would change and writes nothing', async () => {
    const lines: string[] = [];
    const migration = await migrateStorageVersion(client, OPENKRUISE_V18, { dryRun: true, log: (l) => lines.push(l) });
    assert.deepEqual(migration.copies, { apiVersion: RD_ALPHA, repointed: ['Secret a/shared', 'ConfigMap b/shared'] });
    assert.deepEqual(writes(), []);
    assert.match(lines.at(-1)!, /2 ownerReferences would be re-pointed to apps\.kruise\.io\/v1alpha1/);
    assert.deepEqual(refsOf(SECRETS, 'a/shared'), [`ResourceDistribution ${RD_BETA}`]);
  });

  test('a CRD that does not serve the target version: refused before anything is written', async () => {
    server.put(CRDS, crd('clonesets', 'CloneSet', 'Namespaced', ['v1beta1'], 'v1beta1'));
    server.requests.length = 0;
    await assert.rejects(
      migrateStorageVersion(client, OPENKRUISE_V18),
      /do not serve openkruise-v1.8: clonesets.apps.kruise.io \(v1alpha1\)/,
    );
    assert.deepEqual(writes(), []);
    assert.deepEqual(refsOf(SECRETS, 'a/shared'), [`ResourceDistribution ${RD_BETA}`]);
  });
});
