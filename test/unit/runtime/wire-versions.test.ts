// The client against a cluster that serves CloneSet and CRR at v1alpha1 only (OpenKruise v1.8.2's API
// versions): the code keeps working at v1beta1, the wire carries v1alpha1.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CRR_UNREADY_ACQUIRED_ANNOTATION } from '../../../src/apis/constants.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { KubeClient, PatchType } from '../../../src/runtime/client.ts';
import { isConflict } from '../../../src/runtime/errors.ts';
import { CloneSets, ContainerRecreateRequests, Pods } from '../../../src/runtime/resources.ts';
import { FakeApiServer, useFakeApiServer } from './fake-apiserver.ts';

type Obj = KubeObject & { spec?: any; status?: any };

const ALPHA = 'apps.kruise.io/v1alpha1';
const alphaCloneSet = (name: string, partition: number): Obj => ({
  apiVersion: ALPHA,
  kind: 'CloneSet',
  metadata: { name, namespace: 'ns' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
    updateStrategy: { type: 'InPlaceIfPossible', partition, maxUnavailable: 1 },
  },
});

describe('a Kruise kind served at another version than the code asks for', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
    server.serveDiscovery(ALPHA, [
      { name: 'clonesets', namespaced: true, kind: 'CloneSet' },
      { name: 'containerrecreaterequests', namespaced: true, kind: 'ContainerRecreateRequest' },
    ]);
    // apps.kruise.io/v1beta1 is not served: its discovery document is a 404.
  });
  const paths = (method: string) => server.requests.filter((r) => r.method === method).map((r) => r.path);

  test('reads and lists at v1alpha1 and hands out v1beta1', async () => {
    server.put(`${ALPHA}/clonesets`, alphaCloneSet('web', 2));
    const got = await client.get<Obj>(CloneSets, 'web', { namespace: 'ns' });
    assert.equal(got.apiVersion, 'apps.kruise.io/v1beta1');
    assert.deepEqual(got.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', partition: 2, maxUnavailable: 1 },
    });
    assert.ok(paths('GET').includes('/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/web'));
    const list = await client.list<Obj>(CloneSets, { namespace: 'ns' });
    assert.equal(list.items[0]!.apiVersion, 'apps.kruise.io/v1beta1');
    assert.equal(list.items[0]!.spec.updateStrategy.rollingUpdate.partition, 2);
  });

  test('watch events carry v1beta1 objects', async () => {
    const ac = new AbortController();
    const events = client.watch<Obj>(CloneSets, { namespace: 'ns', resourceVersion: String(server.rv), signal: ac.signal });
    const first = events.next();
    setTimeout(() => server.put(`${ALPHA}/clonesets`, alphaCloneSet('web', 1)), 50);
    const ev = (await first).value!;
    ac.abort();
    assert.equal(ev.type, 'MODIFIED');
    assert.equal((ev.object as Obj).spec.updateStrategy.rollingUpdate.partition, 1);
  });

  test('creates and updates send v1alpha1', async () => {
    const hub = await client.get<Obj>(CloneSets, 'web', { namespace: 'ns' });
    const created = await client.create<Obj>(CloneSets, { ...hub, metadata: { name: 'api', namespace: 'ns' } });
    assert.equal(created.apiVersion, 'apps.kruise.io/v1beta1');
    const posted = JSON.parse(server.requests.findLast((r) => r.method === 'POST')!.body) as Obj;
    assert.equal(posted.apiVersion, ALPHA);
    assert.equal(posted.spec.updateStrategy.partition, 1);
    assert.equal(posted.spec.updateStrategy.rollingUpdate, undefined);
  });

  test('a merge patch in v1beta1 terms lands on v1alpha1 field paths; a resourceVersion in it stays a precondition', async () => {
    const patched = await client.patch<Obj>(
      CloneSets,
      'web',
      { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } },
      { namespace: 'ns', patchType: PatchType.Merge },
    );
    assert.equal(patched.spec.updateStrategy.rollingUpdate.partition, 0);
    assert.equal(server.getObject(`${ALPHA}/clonesets`, 'ns/web')!.spec.updateStrategy.partition, 0);
    const sent = server.requests.findLast((r) => r.method === 'PATCH')!;
    assert.equal(
      sent.path,
      '/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/web',
      'no patch reaches the API server at the wrong version',
    );
    assert.equal(sent.headers['content-type'], 'application/merge-patch+json');
    assert.deepEqual(JSON.parse(sent.body), { spec: { updateStrategy: { partition: 0 } } }, 'only what changed, at its v1alpha1 path');
    await assert.rejects(
      client.patch(
        CloneSets,
        'web',
        { metadata: { resourceVersion: '1' }, spec: { replicas: 9 } },
        { namespace: 'ns', patchType: PatchType.Merge },
      ),
      isConflict,
    );
    assert.equal(server.getObject(`${ALPHA}/clonesets`, 'ns/web')!.spec.replicas, 3);
  });

  test('a patch of metadata alone goes to the API server as it is: the spec stays as stored, Go zero values included', async () => {
    const stored = alphaCloneSet('labelled', 1);
    stored.spec.scaleStrategy = {};
    stored.spec.template.metadata.creationTimestamp = null;
    server.put(`${ALPHA}/clonesets`, stored);
    const rv = server.getObject(`${ALPHA}/clonesets`, 'ns/labelled')!.metadata.resourceVersion;
    const patched = await client.patch<Obj>(
      CloneSets,
      'labelled',
      { metadata: { labels: { shard: 'a' }, annotations: { note: 'x' }, resourceVersion: rv } },
      { namespace: 'ns', patchType: PatchType.Merge },
    );
    assert.equal(patched.apiVersion, 'apps.kruise.io/v1beta1', 'the answer converted');
    assert.equal(patched.metadata.labels?.shard, 'a');
    assert.deepEqual(paths('PATCH').slice(-1), ['/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/labelled']);
    assert.equal(paths('PUT').filter((p) => p.endsWith('/labelled')).length, 0, 'no write of the whole object');
    const after = server.getObject(`${ALPHA}/clonesets`, 'ns/labelled')!;
    assert.deepEqual(after.spec.scaleStrategy, {});
    assert.equal(after.spec.template.metadata.creationTimestamp, null);
    // A patch replacing the whole label map is converted: the labels only v1alpha1 has must survive it.
    await client.patch(CloneSets, 'labelled', [{ op: 'replace', path: '/metadata/labels', value: { app: 'x' } }], {
      namespace: 'ns',
      patchType: PatchType.JSON,
    });
    const converted = server.requests.findLast((r) => r.method === 'PATCH')!;
    assert.equal(converted.headers['content-type'], 'application/merge-patch+json', 'the JSON patch went converted');
    assert.ok(JSON.parse(converted.body).metadata.resourceVersion, 'a JSON patch goes over the object its tests read');
    assert.deepEqual(server.getObject(`${ALPHA}/clonesets`, 'ns/labelled')!.metadata.labels, { app: 'x' });
  });

  test('a converted spec patch moves only what it changed: untouched zero values stay as stored, a status write in between does not fail it', async () => {
    const stored = alphaCloneSet('zeros', 1);
    // Go's zero values OpenKruise stores, which a conversion's round trip drops.
    stored.spec.scaleStrategy = {};
    stored.spec.updateStrategy.inPlaceUpdateStrategy = {};
    stored.spec.template.metadata.creationTimestamp = null;
    server.put(`${ALPHA}/clonesets`, stored);
    // A status write lands between the read and the write: the patch is not refused for it (a write
    // of the whole object naming the resourceVersion read was, and went again).
    const writes = () => server.requests.filter((r) => ['PATCH', 'PUT'].includes(r.method) && r.path.endsWith('/clonesets/zeros')).length;
    const before = writes();
    const release = server.hold((r) => r.method === 'PATCH' && r.path.endsWith('/clonesets/zeros'));
    const patching = client.patch<Obj>(CloneSets, 'zeros', { spec: { replicas: 5 } }, { namespace: 'ns', patchType: PatchType.Merge });
    while (writes() === before) await new Promise((resolve) => setTimeout(resolve, 5));
    server.put(`${ALPHA}/clonesets`, { ...server.getObject(`${ALPHA}/clonesets`, 'ns/zeros')!, status: { replicas: 2 } });
    release();
    assert.equal((await patching).spec.replicas, 5);
    assert.equal(writes(), before + 1, 'one write');
    const after = server.getObject(`${ALPHA}/clonesets`, 'ns/zeros')!;
    assert.equal(after.spec.replicas, 5);
    assert.deepEqual(after.status, { replicas: 2 });
    assert.deepEqual(after.spec.scaleStrategy, {});
    assert.deepEqual(after.spec.updateStrategy.inPlaceUpdateStrategy, {});
    assert.equal(after.spec.template.metadata.creationTimestamp, null);
    assert.equal(paths('PUT').filter((p) => p.endsWith('/zeros')).length, 0, 'no write of the whole object');
  });

  test("owner references to a Kruise kind name the version the cluster serves (the garbage collector's lookup)", async () => {
    const owner = { kind: 'CloneSet', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true };
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-x',
        namespace: 'ns',
        ownerReferences: [
          { apiVersion: 'apps.kruise.io/v1beta1', ...owner },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r', uid: 'u2' },
        ],
      },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    };
    await client.create(Pods, pod as KubeObject);
    const refs = () => server.getObject('/v1/pods', 'ns/web-x')!.metadata.ownerReferences.map((r: { apiVersion: string }) => r.apiVersion);
    assert.deepEqual(refs(), ['apps.kruise.io/v1alpha1', 'apps/v1']);
    await client.patch(
      Pods,
      'web-x',
      { metadata: { ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', ...owner }] } },
      {
        namespace: 'ns',
        patchType: PatchType.Merge,
      },
    );
    assert.deepEqual(refs(), ['apps.kruise.io/v1alpha1']);
  });

  test('a status write whose v1alpha1 form is an annotation writes the annotation too', async () => {
    server.put(`${ALPHA}/containerrecreaterequests`, {
      apiVersion: ALPHA,
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'crr', namespace: 'ns' },
      spec: { podName: 'p', containers: [{ name: 'c' }], strategy: { unreadyGracePeriodSeconds: 5 } },
      status: { phase: 'Recreating' },
    });
    const crr = await client.get<Obj>(ContainerRecreateRequests, 'crr', { namespace: 'ns' });
    const since = '2026-12-06T10:00:00Z';
    const condition = { type: 'PreRecreateGrace', status: 'True', reason: 'UnreadyAcquired', message: 'held', lastTransitionTime: since };
    const written = await client.updateStatus<Obj>(ContainerRecreateRequests, {
      ...crr,
      status: { ...crr.status, conditions: [condition] },
    });
    const stored = server.getObject(`${ALPHA}/containerrecreaterequests`, 'ns/crr')!;
    assert.equal(stored.metadata.annotations?.[CRR_UNREADY_ACQUIRED_ANNOTATION], since);
    assert.equal(written.status.conditions?.[0]?.type, 'PreRecreateGrace');
  });
});
