// ResourceDistribution on the suite's shared manager (gate ResourceDistributionGate, spec §13, issue
// #16's acceptance): a Secret distributed by `namespaceSelector: team=a` reaches a namespace created
// later with that label, leaves a conflicting unowned Secret alone with ConflictOccurred, restores an
// edited copy, and removes its copy when the label is dropped.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { isNotFound } from '../../src/runtime/errors.ts';
import { Namespaces, ResourceDistributions, Secrets } from '../../src/runtime/resources.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

type Obj = KubeObject & { data?: Record<string, string>; spec?: any; status?: any };

let client: KubeClient;
const namespaces: string[] = [];
const rdName = `rd-${randomBytes(3).toString('hex')}`;
const secretName = `shared-${randomBytes(3).toString('hex')}`;

before(() => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
});

after(async () => {
  await client.delete(ResourceDistributions, rdName).catch(() => undefined);
  for (const ns of namespaces) await deleteNamespace(ns);
  await client.close();
});

async function namespace(prefix: string, labels?: Record<string, string>): Promise<string> {
  const ns = await createNamespace(prefix);
  namespaces.push(ns);
  if (labels) await label(ns, labels);
  return ns;
}

const label = (ns: string, labels: Record<string, string | null>) =>
  client.patch(Namespaces, ns, { metadata: { labels } }, { patchType: PatchType.Merge });

const getSecret = (ns: string) => client.get<Obj>(Secrets, secretName, { namespace: ns });

const copyIn = (ns: string) =>
  waitFor(`the distributed Secret in ${ns}`, async () => {
    const s = await getSecret(ns).catch(() => undefined);
    return s?.metadata.annotations?.['kruise.io/resourcedistribution.resource.from'] === rdName ? s : undefined;
  });

describe('ResourceDistribution', () => {
  test('namespaceSelector team=a: later namespaces, conflicts, restored edits, removal on unlabel', { timeout: 90_000 }, async () => {
    const early = await namespace('rd-early', { team: 'a' });
    const conflicted = await namespace('rd-conflict');
    await client.create(Secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secretName, namespace: conflicted },
      data: { token: Buffer.from('theirs').toString('base64') },
    } as KubeObject);
    await label(conflicted, { team: 'a' });

    const rd = await client.create<Obj>(ResourceDistributions, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ResourceDistribution',
      metadata: { name: rdName },
      spec: {
        resource: {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: secretName, labels: { distributed: 'yes' } },
          type: 'Opaque',
          data: { token: Buffer.from('ours').toString('base64') },
        },
        targets: { namespaceSelector: { matchLabels: { team: 'a' } } },
      },
    } as KubeObject);

    const first = await copyIn(early);
    assert.equal(Buffer.from(first.data?.token ?? '', 'base64').toString(), 'ours');
    assert.equal(first.metadata.labels?.distributed, 'yes');
    assert.match(first.metadata.annotations?.['kruise.io/resourcedistribution.resource.hashcode'] ?? '', /^[0-9a-f]{64}$/);
    assert.deepEqual(
      first.metadata.ownerReferences?.map((r) => [r.apiVersion, r.kind, r.name, r.uid, r.controller]),
      [['apps.kruise.io/v1beta1', 'ResourceDistribution', rdName, rd.metadata.uid, true]],
    );

    // The conflicting Secret is left alone and reported.
    const status = await waitFor('ConflictOccurred for the unowned Secret', async () => {
      const cur = await client.get<Obj>(ResourceDistributions, rdName);
      const conflict = cur.status?.conditions?.find((c: any) => c.type === 'ConflictOccurred');
      return conflict?.status === 'True' && cur.status.desired === 2 ? cur.status : undefined;
    });
    assert.deepEqual(
      status.conditions.map((c: any) => [c.type, c.status]),
      [
        ['GetResourceFailed', 'False'],
        ['CreateResourceFailed', 'False'],
        ['UpdateResourceFailed', 'False'],
        ['DeleteResourceFailed', 'False'],
        ['ConflictOccurred', 'True'],
        ['NamespaceNotExists', 'False'],
      ],
    );
    assert.deepEqual(status.conditions[4].failedNamespaces, [conflicted]);
    assert.deepEqual([status.succeeded, status.failed, status.observedGeneration], [1, 1, rd.metadata.generation]);
    const theirs = await getSecret(conflicted);
    assert.equal(Buffer.from(theirs.data?.token ?? '', 'base64').toString(), 'theirs');
    assert.equal(theirs.metadata.ownerReferences, undefined);

    // A namespace created later with the label gets its copy.
    const later = await namespace('rd-later', { team: 'a' });
    await copyIn(later);

    // An edited copy is restored; an unchanged one is not rewritten.
    const before = await getSecret(later);
    await client.patch(
      Secrets,
      secretName,
      { data: { token: Buffer.from('edited').toString('base64') } },
      { namespace: early, patchType: PatchType.Merge },
    );
    await waitFor('the edited copy restored', async () => {
      const s = await getSecret(early);
      return Buffer.from(s.data?.token ?? '', 'base64').toString() === 'ours';
    });
    assert.equal((await getSecret(later)).metadata.resourceVersion, before.metadata.resourceVersion);

    // Dropping the label removes the copy.
    await label(later, { team: null });
    await waitFor(`the copy in ${later} deleted`, async () => {
      try {
        await getSecret(later);
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    });
    await waitFor('desired back to 2', async () => {
      const cur = await client.get<Obj>(ResourceDistributions, rdName);
      return cur.status?.desired === 2 && cur.status?.succeeded === 1;
    });
  });
});
