// PodUnavailableBudget over a third-party workload (issue #14, spec §16: "any workload with a scale
// subresource"): a CRD created here with a scale subresource; the budget's targetRef names one of
// its objects; the manager resolves its kind through API discovery (RestMapper), reads replicas
// through /scale and finds its pods by controller reference — or, when no pod names it, by the
// selector its Scale reports, as upstream's GetPodsForRef. Evictions beyond the budget are refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { StatusError } from '../../src/runtime/errors.ts';
import { PodUnavailableBudgets, Pods } from '../../src/runtime/resources.ts';
import type { Pod } from '../../src/apis/core-objects.ts';
import type { StoredPub } from '../../src/util/pub.ts';
import { apply, createNamespace, deleteNamespace, kubectl, kubectlJson, testCluster, waitFor } from '../harness/cluster.ts';
import { installScalableWorkloadCRD } from '../harness/custom-workloads.ts';

const GROUP = 'pubcustom.kruise-ts.io';
const CRD = `gizmos.${GROUP}`;
let client: KubeClient;
let ns: string;

before(async () => {
  // No retries: a refused eviction must surface once, not be retried as a 429.
  client = fromKubeconfigFile(testCluster().kubeconfig, { maxRetries: 0 });
  ns = await createNamespace('pubcustom');
  await installScalableWorkloadCRD(GROUP, 'gizmos', 'Gizmo');
});

after(async () => {
  await deleteNamespace(ns);
  await kubectl(['delete', 'crd', CRD, '--wait=false']).catch(() => undefined);
  await client.close();
});

/** A Gizmo and its pods, created by the test (no controller runs Gizmos); owned pods name it as controller. */
async function gizmoWithPods(name: string, replicas: number, owned: boolean): Promise<void> {
  await apply({ apiVersion: `${GROUP}/v1`, kind: 'Gizmo', metadata: { name }, spec: { replicas, podSelector: `app=${name}` } }, ns);
  const gizmo = await kubectlJson<{ metadata: { uid: string } }>(['-n', ns, 'get', `gizmos.${GROUP}`, name, '-o', 'json']);
  for (let i = 0; i < replicas; i++) {
    await client.create<Pod>(
      Pods,
      {
        metadata: {
          name: `${name}-${i}`,
          labels: { app: name },
          ...(owned
            ? { ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'Gizmo', name, uid: gizmo.metadata.uid, controller: true }] }
            : {}),
        },
        spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
      },
      { namespace: ns },
    );
  }
  await apply(
    {
      apiVersion: 'policy.kruise.io/v1beta1',
      kind: 'PodUnavailableBudget',
      metadata: { name: `${name}-pub` },
      spec: { targetRef: { apiVersion: `${GROUP}/v1`, kind: 'Gizmo', name }, maxUnavailable: 1 },
    },
    ns,
  );
}

const isReady = (p: Pod) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/** All pods Ready and annotated with the budget, and the budget's status computed from the Scale. */
async function settled(name: string, replicas: number): Promise<Pod[]> {
  return waitFor(
    `${name}-pub: ${replicas} Ready pods, totalReplicas ${replicas}, unavailableAllowed 1`,
    async () => {
      const pods = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${name}` })).items;
      const pub = await client.get<StoredPub>(PodUnavailableBudgets, `${name}-pub`, { namespace: ns });
      const ok =
        pods.length === replicas &&
        pods.every((p) => isReady(p) && p.metadata.annotations?.['pub.kruise.io/related-pub'] === `${name}-pub`) &&
        pub.status?.totalReplicas === replicas &&
        pub.status.currentAvailable === replicas &&
        pub.status.desiredAvailable === replicas - 1 &&
        pub.status.unavailableAllowed === 1;
      return ok && pods;
    },
    60_000,
    500,
  );
}

async function burst(pods: Pod[], disrupt: (p: Pod) => Promise<unknown>): Promise<{ admitted: number; refused: string[] }> {
  const results = await Promise.allSettled(pods.map(disrupt));
  const refused = results.flatMap((r) =>
    r.status === 'rejected' ? [r.reason instanceof StatusError ? r.reason.message : String(r.reason)] : [],
  );
  return { admitted: results.length - refused.length, refused };
}

const PUB_MESSAGE = /podunavailablebudget\.policy\.kruise\.io "gizmo-\w+-pub" is forbidden: pub unavailable allowed is negative/;

describe('PodUnavailableBudget over a CRD with a scale subresource', { concurrency: 2 }, () => {
  test('pods owned by the workload: replicas from /scale; 4 concurrent evictions with maxUnavailable 1 admit exactly 1', async () => {
    await gizmoWithPods('gizmo-owned', 4, true);
    const pods = await settled('gizmo-owned', 4);
    const result = await burst(pods, (p) => client.evict(ns, p.metadata.name!));
    assert.equal(result.admitted, 1);
    assert.equal(result.refused.length, 3);
    for (const m of result.refused) assert.match(m, PUB_MESSAGE);
  });

  test('pods naming no owner are found by the Scale selector; 3 concurrent deletions admit exactly 1', async () => {
    await gizmoWithPods('gizmo-selected', 3, false);
    const pods = await settled('gizmo-selected', 3);
    const result = await burst(pods, (p) => client.delete(Pods, p.metadata.name!, { namespace: ns }));
    assert.equal(result.admitted, 1);
    assert.equal(result.refused.length, 2);
    for (const m of result.refused) assert.match(m, PUB_MESSAGE);
  });
});
