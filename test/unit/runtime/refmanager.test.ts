// Controller-ref claiming: the decision table (Kubernetes ClaimObject / Kruise refmanager), and the
// writes against the fake API server: adoption patches in the controller ref with uid and
// resourceVersion preconditions after a live re-read of the owner, release patches it out, objects
// of other controllers are never touched.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeClient } from '../../../src/runtime/client.ts';
import type { KubeObject, OwnerReference } from '../../../src/apis/core-objects.ts';
import { CloneSets, Pods } from '../../../src/runtime/resources.ts';
import { ClaimError, claimDecision, ControllerRefManager, type ClaimDecision } from '../../../src/runtime/refmanager.ts';
import { selectorFromSet } from '../../../src/util/labelselector.ts';
import { useFakeApiServer, type FakeApiServer } from './fake-apiserver.ts';

const ours: OwnerReference = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  name: 'cs',
  uid: 'cs-uid',
  controller: true,
  blockOwnerDeletion: true,
};
const theirs: OwnerReference = { ...ours, name: 'other', uid: 'other-uid' };
const nonController: OwnerReference = { ...theirs, controller: false };

describe('claimDecision', () => {
  const obj = (refs: OwnerReference[] | undefined, deleting = false): KubeObject => ({
    metadata: { name: 'p', ownerReferences: refs, ...(deleting ? { deletionTimestamp: '2026-07-01T00:00:00Z' } : {}) },
  });
  const cases: Array<
    [string, { refs?: OwnerReference[]; matches: boolean; ownerDeleting?: boolean; objDeleting?: boolean }, ClaimDecision]
  > = [
    ['owned and matching is kept', { refs: [ours], matches: true }, 'keep'],
    ['owned and matching is kept while the owner is being deleted', { refs: [ours], matches: true, ownerDeleting: true }, 'keep'],
    ['owned, no longer matching, is released', { refs: [ours], matches: false }, 'release'],
    [
      'owned, no longer matching, is not released by an owner being deleted',
      { refs: [ours], matches: false, ownerDeleting: true },
      'ignore',
    ],
    ['owned and being deleted is still kept', { refs: [ours], matches: true, objDeleting: true }, 'keep'],
    ['a matching orphan is adopted', { matches: true }, 'adopt'],
    ['an orphan with only a non-controller ref is adopted', { refs: [nonController], matches: true }, 'adopt'],
    ['a non-matching orphan is ignored', { matches: false }, 'ignore'],
    ['an orphan being deleted is not adopted', { matches: true, objDeleting: true }, 'ignore'],
    ['an owner being deleted adopts nothing', { matches: true, ownerDeleting: true }, 'ignore'],
    ["another controller's object is ignored even when it matches", { refs: [theirs], matches: true }, 'ignore'],
    ["another controller's object is ignored when it does not match", { refs: [theirs], matches: false }, 'ignore'],
  ];
  for (const [name, c, want] of cases) {
    test(name, () => {
      assert.equal(claimDecision({ uid: 'cs-uid', deleting: c.ownerDeleting ?? false }, obj(c.refs, c.objDeleting), c.matches), want);
    });
  }
});

describe('ControllerRefManager', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });
  const podsRes = '/v1/pods';
  const csRes = `${CloneSets.group}/${CloneSets.version}/${CloneSets.resource}`;
  let n = 0;

  /** A CloneSet (owner) and pods in a fresh namespace; returns them as the API server has them. */
  function seed(pods: Array<{ name: string; labels: Record<string, string>; refs?: OwnerReference[] }>, ownerDeleting = false) {
    const ns = `ns${++n}`;
    const owner = server.put(csRes, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'cs', namespace: ns, ...(ownerDeleting ? { deletionTimestamp: '2026-07-01T00:00:00Z', finalizers: ['x'] } : {}) },
    }) as KubeObject;
    const ref = { ...ours, uid: owner.metadata.uid! };
    const objs = pods.map(
      (p) =>
        server.put(podsRes, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: p.name, namespace: ns, labels: p.labels, ownerReferences: p.refs?.map((r) => (r === ours ? ref : r)) },
        }) as KubeObject,
    );
    return { ns, owner, ref, objs };
  }
  const manager = (owner: KubeObject, ref: OwnerReference) =>
    new ControllerRefManager({ client, owner, ownerType: CloneSets, ownerRef: ref, selector: selectorFromSet({ app: 'demo' }) });
  const stored = (ns: string, name: string) => server.getObject(podsRes, `${ns}/${name}`)!;

  test('adopts matching orphans, releases owned pods that stopped matching, leaves the rest alone', async () => {
    const { ns, owner, ref, objs } = seed([
      { name: 'orphan', labels: { app: 'demo' } },
      { name: 'kept', labels: { app: 'demo' }, refs: [ours] },
      { name: 'relabelled', labels: { app: 'moved' }, refs: [nonController, ours] },
      { name: 'foreign', labels: { app: 'demo' }, refs: [theirs] },
      { name: 'stranger', labels: { app: 'else' } },
    ]);
    const written: string[] = [];
    const claimed = await manager(owner, ref).claim(Pods, objs, (o) => written.push(o.metadata.name!));
    assert.deepEqual(
      claimed.map((p) => p.metadata.name),
      ['orphan', 'kept'],
    );
    assert.deepEqual(written, ['orphan', 'relabelled']);
    assert.deepEqual(stored(ns, 'orphan').metadata.ownerReferences, [ref]);
    assert.deepEqual(claimed[0]!.metadata.ownerReferences, [ref], 'the adopted pod is returned as written');
    assert.deepEqual(stored(ns, 'relabelled').metadata.ownerReferences, [nonController]);
    assert.deepEqual(stored(ns, 'foreign').metadata.ownerReferences, [theirs]);
    assert.equal(stored(ns, 'stranger').metadata.ownerReferences, undefined);

    const patches = server.requests.filter((r) => r.method === 'PATCH' && r.path.includes(`/namespaces/${ns}/`));
    assert.equal(patches.length, 2);
    for (const p of patches) {
      assert.equal(p.headers['content-type'], 'application/merge-patch+json');
      const body = JSON.parse(p.body);
      const obj = objs.find((o) => p.path.endsWith(`/${o.metadata.name}`))!;
      assert.equal(body.metadata.uid, obj.metadata.uid, 'uid precondition');
      assert.equal(body.metadata.resourceVersion, obj.metadata.resourceVersion, 'resourceVersion precondition');
    }
    // The owner was re-read from the API server once, before the adoption.
    assert.equal(server.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/namespaces/${ns}/clonesets/cs`)).length, 1);
  });

  test('releasing the only owner reference removes the list', async () => {
    const { ns, owner, ref, objs } = seed([{ name: 'a', labels: { app: 'moved' }, refs: [ours] }]);
    assert.deepEqual(await manager(owner, ref).claim(Pods, objs), []);
    assert.equal(stored(ns, 'a').metadata.ownerReferences, undefined);
  });

  test('an owner deleted since the cache saw it adopts nothing (live re-read)', async () => {
    const { ns, owner, ref, objs } = seed(
      [
        { name: 'a', labels: { app: 'demo' } },
        { name: 'b', labels: { app: 'demo' } },
      ],
      true,
    );
    const cached = { ...owner, metadata: { ...owner.metadata, deletionTimestamp: undefined } };
    await assert.rejects(manager(cached, ref).claim(Pods, objs), /has just been deleted/);
    assert.equal(stored(ns, 'a').metadata.ownerReferences, undefined);
    assert.equal(
      server.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/namespaces/${ns}/clonesets/cs`)).length,
      1,
      'checked once',
    );
  });

  test('an owner recreated under the same name adopts nothing', async () => {
    const { ns, owner, ref, objs } = seed([{ name: 'a', labels: { app: 'demo' } }]);
    const stale = { ...owner, metadata: { ...owner.metadata, uid: 'old-uid' } };
    await assert.rejects(manager(stale, { ...ref, uid: 'old-uid' }).claim(Pods, objs), /is gone/);
    assert.equal(stored(ns, 'a').metadata.ownerReferences, undefined);
  });

  test('a pod changed since the cache saw it is not written (conflict); a pod gone is skipped', async () => {
    const { ns, owner, ref, objs } = seed([
      { name: 'changed', labels: { app: 'demo' } },
      { name: 'gone', labels: { app: 'demo' } },
    ]);
    server.put(podsRes, { ...stored(ns, 'changed'), metadata: { ...stored(ns, 'changed').metadata, ownerReferences: [theirs] } });
    server.remove(podsRes, ns, 'gone');
    const err = await manager(owner, ref)
      .claim(Pods, objs)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof Error && /cannot adopt Pod .*changed/.test(err.message), String(err));
    assert.ok(err instanceof ClaimError && err.onlyConflicts(), 'a conflict, so the controller requeues from a fresh cache');
    assert.deepEqual(stored(ns, 'changed').metadata.ownerReferences, [theirs]);
  });
});
