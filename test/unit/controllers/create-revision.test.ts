// The one revision creation every executor uses (createRevision, src/controllers/workload-writes.ts):
// a name taken by our own equal revision is the cache lagging, not a collision; a name taken by
// anything else bumps status.collisionCount; a cluster-scoped owner (SidecarSet) finds its revisions
// in their own namespace.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ControllerRevision } from '../../../src/apis/core-objects.ts';
import { SidecarSets, type ResourceType } from '../../../src/runtime/resources.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { logger } from '../../../src/runtime/log.ts';
import { WorkloadExpectations } from '../../../src/controllers/workload.ts';
import { createRevision, keyOf } from '../../../src/controllers/workload-writes.ts';
import type { StoredSidecarSet } from '../../../src/util/sidecarset.ts';

const sidecarSet: StoredSidecarSet = {
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'SidecarSet',
  metadata: { name: 'log', uid: 'ss-uid', resourceVersion: '7' },
  spec: { containers: [] },
  status: { matchedPods: 2, updatedPods: 2, readyPods: 2 },
};

const revision = (ownerUid: string, data: unknown): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: {
    name: 'log-abc',
    namespace: 'kruise-system',
    ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', name: 'log', uid: ownerUid, controller: true }],
  },
  data,
  revision: 1,
});

/** A client whose create always finds the name taken by `stored`; records what else it is asked. */
function takenBy(stored: ControllerRevision) {
  const calls: string[] = [];
  const statuses: KubeObject[] = [];
  const client = {
    create: async () => {
      throw new StatusError({ status: 'Failure', code: 409, reason: 'AlreadyExists', message: 'exists' } as never);
    },
    get: async (_t: ResourceType, name: string, o: { namespace?: string }) => {
      calls.push(`get ${o.namespace}/${name}`);
      return stored;
    },
    updateStatus: async (_t: ResourceType, obj: KubeObject) => {
      statuses.push(obj);
      return obj;
    },
  };
  return { client: client as never, calls, statuses };
}

describe('createRevision', () => {
  test('the name taken by our own equal revision: the cache lags, created (and still expected); the lookup is in the revision namespace', async () => {
    const { client, calls, statuses } = takenBy(revision('ss-uid', { spec: { a: 1 } }));
    const expectations = new WorkloadExpectations();
    const outcome = await createRevision(
      { client, expectations, log: logger },
      SidecarSets,
      sidecarSet,
      revision('ss-uid', { spec: { a: 1 } }),
    );
    assert.equal(outcome, 'created');
    assert.deepEqual(calls, ['get kruise-system/log-abc']);
    assert.deepEqual(statuses, []);
    assert.notEqual(expectations.wait(keyOf(sidecarSet), [], logger), undefined, 'waits for the revision to reach the cache');
  });

  test("another owner's revision, or ours with other data: a collision, collisionCount bumped with the rest of the status kept", async () => {
    for (const stored of [revision('other-uid', { spec: { a: 1 } }), revision('ss-uid', { spec: { a: 2 } })]) {
      const { client, statuses } = takenBy(stored);
      const expectations = new WorkloadExpectations();
      const outcome = await createRevision(
        { client, expectations, log: logger },
        SidecarSets,
        sidecarSet,
        revision('ss-uid', { spec: { a: 1 } }),
      );
      assert.equal(outcome, 'collision');
      assert.deepEqual((statuses[0] as StoredSidecarSet).status, { matchedPods: 2, updatedPods: 2, readyPods: 2, collisionCount: 1 });
      assert.equal(expectations.wait(keyOf(sidecarSet), [], logger), undefined, 'nothing left expected');
    }
  });
});
