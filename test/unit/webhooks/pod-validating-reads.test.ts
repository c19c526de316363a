// /validate-pod's reads of the pod itself. With --sharding the pod webhook's pod cache is the API
// server (manager.ts podsFromApiServer), so each read is a GET: a deletion carries the pod (the
// request's oldObject) and must read none; an eviction names the pod only and reads it once, though
// both WorkloadSpread and PodUnavailableBudget look at it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { PubBudgetGuard } from '../../../src/runtime/pub-budget.ts';
import { admit } from '../../../src/runtime/webhook/admission.ts';
import type { AdmissionCache, AdmissionWriter } from '../../../src/runtime/webhook/types.ts';
import type { StoredPub } from '../../../src/util/pub.ts';
import { registrations } from '../../../src/webhooks/pod/index.ts';

const POD: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-0',
    namespace: 'ns',
    uid: 'pod-uid',
    ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs-uid', controller: true }],
    annotations: {
      'pub.kruise.io/related-pub': 'pub',
      'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'ws', subset: 'a' }),
    },
  },
  spec: { containers: [{ name: 'main', image: 'nginx' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
};

const PUB: StoredPub = {
  metadata: { name: 'pub', namespace: 'ns', resourceVersion: '1' },
  spec: { maxUnavailable: 1 },
  status: { unavailableAllowed: 1, currentAvailable: 3, desiredAvailable: 2, totalReplicas: 3 },
};

const WS = {
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'WorkloadSpread',
  metadata: { name: 'ws', namespace: 'ns', uid: 'ws-uid', resourceVersion: '1' },
  spec: {
    targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
    subsets: [
      { name: 'a', maxReplicas: 2 },
      { name: 'b', maxReplicas: 2 },
    ],
  },
  status: { observedGeneration: 1, subsetStatuses: [{ name: 'a', replicas: 2, missingReplicas: 0 }] },
};

/** The pod webhook's reads and writes, counting every read of a Pod (a GET to the API server when sharding). */
function world() {
  const podReads: string[] = [];
  const cache: AdmissionCache = {
    list: async () => [],
    get: async <T>(_apiVersion: string, kind: string, name: string): Promise<T | undefined> => {
      if (kind === 'Pod') {
        podReads.push(name);
        return structuredClone(POD) as T;
      }
      if (kind === 'WorkloadSpread') return structuredClone(WS) as T;
      if (kind === 'PodUnavailableBudget') return structuredClone(PUB) as T;
      return undefined;
    },
  };
  const written: string[] = [];
  const writer: AdmissionWriter = {
    updateStatus: async <T>(_apiVersion: string, kind: string, obj: T) => {
      written.push(kind);
      return obj;
    },
  };
  const pubWrites: StoredPub[] = [];
  const pubBudget = new PubBudgetGuard({
    store: {
      cached: async () => structuredClone(PUB),
      fetch: async () => structuredClone(PUB),
      writeStatus: async (pub) => {
        pubWrites.push(pub);
        return { ...pub, metadata: { ...pub.metadata, resourceVersion: '2' } };
      },
    },
    inPlacePodVerticalScaling: false,
  });
  return { podReads, written, pubWrites, opts: { features: { ...FEATURE_GATE_DEFAULTS }, cache, writer, pubBudget } };
}

const validating = registrations.filter((r) => r.validate);
const review = (operation: 'DELETE' | 'CREATE', body: { object?: unknown; oldObject?: unknown }) => ({
  uid: 'u',
  kind: operation === 'DELETE' ? { group: '', version: 'v1', kind: 'Pod' } : { group: 'policy', version: 'v1', kind: 'Eviction' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  ...(operation === 'CREATE' ? { subResource: 'eviction' } : {}),
  namespace: 'ns',
  name: 'web-0',
  operation,
  userInfo: {},
  ...body,
});

describe('/validate-pod: reads of the pod', () => {
  test('a DELETE reads no pod: WorkloadSpread and PodUnavailableBudget judge its oldObject', async () => {
    const w = world();
    const res = await admit('validate', validating, review('DELETE', { object: null, oldObject: POD }), w.opts);
    assert.equal(res.allowed, true, JSON.stringify(res));
    assert.deepEqual(w.podReads, []);
    // Both handlers saw the pod: its subset booked it, its budget was taken.
    assert.deepEqual(w.written, ['WorkloadSpread']);
    assert.deepEqual(Object.keys(w.pubWrites[0]?.status?.disruptedPods ?? {}), ['web-0']);
  });

  test('an eviction names the pod only: it is read once for both handlers', async () => {
    const w = world();
    const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-0', namespace: 'ns' } };
    const res = await admit('validate', validating, review('CREATE', { object: eviction }), w.opts);
    assert.equal(res.allowed, true, JSON.stringify(res));
    assert.deepEqual(w.podReads, ['web-0']);
    assert.deepEqual(w.written, ['WorkloadSpread']);
    assert.deepEqual(Object.keys(w.pubWrites[0]?.status?.disruptedPods ?? {}), ['web-0']);
  });
});
