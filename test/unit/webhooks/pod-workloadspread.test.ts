import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { injectWorkloadSpread, recordPodDeletion, type SpreadAccess } from '../../../src/webhooks/pod/workloadspread.ts';

const NOW = Date.parse('2026-01-02T03:04:05Z');
const ANNOTATION = 'apps.kruise.io/matched-workloadspread';

function spread(uid: string, subsets: unknown[], targetRef = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs' }) {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'WorkloadSpread',
    metadata: { name: 'ws', namespace: 'default', uid, resourceVersion: '1' },
    spec: { targetRef, subsets },
  };
}
const ZONES = [
  { name: 'a', maxReplicas: 2, requiredNodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
  { name: 'b', maxReplicas: 2, requiredNodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] } },
  { name: 'c', requiredNodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['c'] }] } },
];
const pod = (name: string, owner = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'cs' }): Pod => ({
  metadata: { name, namespace: 'default', ownerReferences: [{ ...owner, uid: 'owner-uid', controller: true }] },
  spec: { containers: [{ name: 'main', image: 'nginx' }] },
});

/**
 * An API server holding one WorkloadSpread: status writes are compare-and-swap on resourceVersion;
 * the cache serves a copy that may lag (it never sees the writes unless `syncCache`).
 */
function fakeServer(initial: any, extraObjects: any[] = []) {
  let stored = structuredClone(initial);
  let cached = structuredClone(initial);
  let writes = 0;
  let conflicts = 0;
  const beforeWrite: Array<() => void> = [];
  const access: SpreadAccess = {
    now: () => NOW,
    newUID: () => 'generated',
    cache: {
      async list(_v, kind) {
        return kind === 'WorkloadSpread' ? ([cached] as any) : [];
      },
      async get(_v, kind, name) {
        if (kind === 'WorkloadSpread') return name === cached.metadata.name ? cached : undefined;
        return extraObjects.find((o) => o.kind === kind && o.metadata.name === name);
      },
    },
    writer: {
      async updateStatus(_v, _k, obj: any) {
        beforeWrite.shift()?.();
        await new Promise((r) => setImmediate(r));
        if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion) {
          conflicts++;
          throw new StatusError({ kind: 'Status', reason: 'Conflict', code: 409, message: 'conflict' } as any);
        }
        writes++;
        stored = {
          ...structuredClone(obj),
          metadata: { ...obj.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) },
        };
        return structuredClone(stored);
      },
    },
    reader: {
      async get() {
        return structuredClone(stored);
      },
      async list() {
        return [];
      },
    },
  };
  return {
    access,
    stored: () => stored,
    syncCache: () => (cached = structuredClone(stored)),
    counts: () => ({ writes, conflicts }),
    /** Another replica writes before our next write lands. */
    otherReplicaWrites: (mutate: (ws: any) => void) =>
      beforeWrite.push(() => {
        mutate(stored.status);
        stored.metadata.resourceVersion = String(Number(stored.metadata.resourceVersion) + 1);
      }),
  };
}

const subsetOf = (p: Pod) => JSON.parse(p.metadata.annotations?.[ANNOTATION] ?? '{}').subset;

describe('pod webhook: WorkloadSpread on CREATE', () => {
  test('20 concurrent creations over a/b/c (2, 2, nil): exactly 2 + 2 reserved, the rest unlimited', async () => {
    const srv = fakeServer(spread('ws-concurrent', ZONES));
    const pods = Array.from({ length: 20 }, (_, i) => pod(`p${i}`));
    await Promise.all(pods.map((p) => injectWorkloadSpread(p, srv.access)));
    const count = (s: string) => pods.filter((p) => subsetOf(p) === s).length;
    assert.deepEqual([count('a'), count('b'), count('c')], [2, 2, 16]);
    const v = srv.stored().status.versionedSubsetStatuses.versionIgnored;
    assert.deepEqual(
      v.map((s: any) => [s.name, s.missingReplicas, Object.keys(s.creatingPods ?? {}).length]),
      [
        ['a', 0, 2],
        ['b', 0, 2],
        ['c', -1, 0],
      ],
    );
    // Subset a's pods carry its required term.
    const a = pods.find((p) => subsetOf(p) === 'a')!;
    assert.deepEqual(a.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms, [
      ZONES[0]!.requiredNodeSelector,
    ]);
    assert.equal(a.metadata.annotations![ANNOTATION], '{"name":"ws","subset":"a"}');
  });

  test('a write lost to another replica is retried from a fresh read: the subset is never overspent', async () => {
    const srv = fakeServer(spread('ws-race', ZONES));
    // Seed versioned statuses, then let "another replica" fill subset a before our first write.
    await injectWorkloadSpread(pod('seed'), srv.access);
    srv.otherReplicaWrites((status) => {
      const a = status.versionedSubsetStatuses.versionIgnored[0];
      a.creatingPods = { ...a.creatingPods, other: '2026-01-02T03:04:05Z' };
      a.missingReplicas = 0;
    });
    const p = pod('mine');
    await injectWorkloadSpread(p, srv.access);
    assert.equal(subsetOf(p), 'b');
    assert.equal(srv.counts().conflicts, 1);
    assert.deepEqual(
      srv.stored().status.versionedSubsetStatuses.versionIgnored.map((s: any) => s.missingReplicas),
      [0, 1, -1],
    );
  });

  test('pods of other workloads, or of no workload, are left alone', async () => {
    const srv = fakeServer(spread('ws-other', ZONES));
    const other = pod('x', { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'another' });
    assert.equal(await injectWorkloadSpread(other, srv.access), false);
    const bare: Pod = { metadata: { name: 'y', namespace: 'default' }, spec: { containers: [] } };
    assert.equal(await injectWorkloadSpread(bare, srv.access), false);
    assert.equal(srv.counts().writes, 0);
  });

  test('ReplicaSet pods match a WorkloadSpread of their Deployment', async () => {
    const rs = {
      kind: 'ReplicaSet',
      metadata: { name: 'd-1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'd', controller: true }] },
    };
    const srv = fakeServer(spread('ws-deploy', ZONES, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }), [rs]);
    const p = pod('d-1-x', { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'd-1' });
    p.metadata.labels = { 'pod-template-hash': 'h1' };
    assert.equal(await injectWorkloadSpread(p, srv.access), true);
    assert.equal(subsetOf(p), 'a');
    assert.ok(srv.stored().status.versionedSubsetStatuses.h1, 'recorded under the pod-template-hash version');
  });

  test('whitelisted custom workloads: pods of the workload, or of one of its subResources, match; others do not', async () => {
    const whitelistCM = (workloads: unknown[]) => ({
      kind: 'ConfigMap',
      metadata: { name: 'kruise-configuration', namespace: 'kruise-system' },
      data: { WorkloadSpread_Watch_Custom_Workload_WhiteList: JSON.stringify({ workloads }) },
    });
    const gizmo = { kind: 'Gizmo', metadata: { name: 'g', uid: 'g-uid' }, spec: { size: 4 } };
    const part = {
      kind: 'GizmoPart',
      metadata: {
        name: 'g-part',
        uid: 'owner-uid',
        ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Gizmo', name: 'g', uid: 'g-uid', controller: true }],
      },
    };
    const percent = [
      { name: 'a', maxReplicas: '50%' },
      { name: 'b', maxReplicas: '50%' },
    ];
    const target = { apiVersion: 'example.com/v1', kind: 'Gizmo', name: 'g' };
    const listed = [
      {
        Group: 'example.com',
        Version: 'v1',
        Kind: 'Gizmo',
        replicasPath: 'spec.size',
        subResources: [{ Group: 'example.com', Version: 'v1', Kind: 'GizmoPart' }],
      },
    ];

    // Not whitelisted: left alone.
    const none = fakeServer(spread('ws-custom-0', percent, target), [gizmo, part]);
    assert.equal(await injectWorkloadSpread(pod('g-0', target), none.access), false);

    // Owned by the workload: 50% of spec.size 4 = 2 per subset.
    const srv = fakeServer(spread('ws-custom', percent, target), [gizmo, part, whitelistCM(listed)]);
    const direct = [0, 1, 2].map((i) => pod(`g-${i}`, target));
    for (const p of direct) assert.equal(await injectWorkloadSpread(p, srv.access), true);
    assert.deepEqual(direct.map(subsetOf), ['a', 'a', 'b']);

    // Owned by a subResource whose controller is the workload.
    const viaPart = pod('g-part-0', { apiVersion: 'example.com/v1', kind: 'GizmoPart', name: 'g-part' });
    assert.equal(await injectWorkloadSpread(viaPart, srv.access), true);
    assert.equal(subsetOf(viaPart), 'b');

    // A subResource kind not listed is not followed.
    const unlisted = fakeServer(spread('ws-custom-2', percent, target), [gizmo, part, whitelistCM([{ ...listed[0], subResources: [] }])]);
    assert.equal(
      await injectWorkloadSpread(pod('g-part-1', { apiVersion: 'example.com/v1', kind: 'GizmoPart', name: 'g-part' }), unlisted.access),
      false,
    );
  });

  test('StatefulSet pods go by ordinal with no status write', async () => {
    const srv = fakeServer(spread('ws-sts', ZONES, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'sts' }));
    const owner = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'sts' };
    const pods = [0, 1, 2, 3, 4].map((i) => pod(`sts-${i}`, owner));
    for (const p of pods) await injectWorkloadSpread(p, srv.access);
    assert.deepEqual(pods.map(subsetOf), ['a', 'a', 'b', 'b', 'c']);
    assert.equal(srv.counts().writes, 0);
  });
});

describe('pod webhook: WorkloadSpread on DELETE / EVICT', () => {
  test('a pod of a subset is booked in deletingPods once', async () => {
    const srv = fakeServer(spread('ws-delete', ZONES));
    const p = pod('p0');
    await injectWorkloadSpread(p, srv.access);
    // While the pod is still in creatingPods a deletion books nothing (upstream isPodRecordedInSubset).
    srv.syncCache();
    await recordPodDeletion(p, 'Delete', srv.access);
    assert.equal(srv.counts().writes, 1);
    // The controller saw the pod: its creatingPods entry is gone.
    delete srv.stored().status.versionedSubsetStatuses.versionIgnored[0].creatingPods;
    srv.syncCache();
    await recordPodDeletion(p, 'Delete', srv.access);
    srv.syncCache();
    await recordPodDeletion(p, 'Eviction', srv.access);
    const a = srv.stored().status.versionedSubsetStatuses.versionIgnored[0];
    assert.deepEqual(Object.keys(a.deletingPods), ['p0']);
    assert.equal(a.missingReplicas, 2);
    assert.equal(srv.counts().writes, 2);
    assert.equal(srv.counts().conflicts, 0);
  });
});
