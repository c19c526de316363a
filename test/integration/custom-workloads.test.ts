// Custom workloads in the kruise-configuration whitelists (issues #14 and #16; spec §10, §14): a
// CRD created here with a scale subresource stands for a third-party workload; its pods are created
// by the test with ownerReferences (no controller runs it).
//   - WorkloadSpread_Watch_Custom_Workload_WhiteList: the pod webhook puts the workload's pods in
//     subsets (maxReplicas 50% of its replicasPath), the kube-scheduler places them in their zones,
//     and the controller's status counts them per subset.
//   - PPS_Watch_Custom_Workload_WhiteList: the workload's auto-generate annotations produce a
//     PersistentPodState targeting it, and the controller records where its Ready pods run.
// Only this file's keys of kruise-configuration are written; the WorkloadSpread whitelist is the
// suite's shared value (test/harness/custom-workloads.ts), which manager.test.ts also writes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, KubeObject } from '../../src/apis/core-objects.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { kruiseResource, Nodes, PersistentPodStates, Pods } from '../../src/runtime/resources.ts';
import type { StoredPersistentPodState } from '../../src/util/persistentpodstate.ts';
import { apply, createNamespace, deleteNamespace, kubectl, kubectlJson, testCluster, waitFor } from '../harness/cluster.ts';
import {
  installScalableWorkloadCRD,
  SPROCKET,
  SUITE_WORKLOADSPREAD_WHITELIST,
  WORKLOADSPREAD_WHITELIST_KEY,
} from '../harness/custom-workloads.ts';

const WorkloadSpreads = kruiseResource('WorkloadSpread');
const GROUP = SPROCKET.Group;
const CRD = `sprockets.${GROUP}`;
const ZONE = 'topology.kubernetes.io/zone';
const PPS_KEY = 'PPS_Watch_Custom_Workload_WhiteList';

let client: KubeClient;
let ns: string;
const zoneOf = new Map<string, string>();

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('customwl');
  for (const n of (await client.list<Node>(Nodes, { labelSelector: 'type=kwok' })).items)
    zoneOf.set(n.metadata.name!, n.metadata.labels![ZONE]!);
  await installScalableWorkloadCRD(GROUP, 'sprockets', 'Sprocket');
  // kruise-configuration may already hold other keys: add ours without touching them.
  await kubectl(['-n', 'kruise-system', 'create', 'configmap', 'kruise-configuration']).catch(() => undefined);
  const data = {
    [WORKLOADSPREAD_WHITELIST_KEY]: SUITE_WORKLOADSPREAD_WHITELIST,
    [PPS_KEY]: JSON.stringify({ workloads: [SPROCKET] }),
  };
  await kubectl(['-n', 'kruise-system', 'patch', 'configmap', 'kruise-configuration', '--type=merge', '-p', JSON.stringify({ data })]);
});

after(async () => {
  await deleteNamespace(ns);
  for (const key of [PPS_KEY])
    await kubectl([
      '-n',
      'kruise-system',
      'patch',
      'configmap',
      'kruise-configuration',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: `/data/${key}` }]),
    ]).catch(() => undefined);
  await kubectl(['delete', 'crd', CRD, '--wait=false']).catch(() => undefined);
  await client.close();
});

async function createSprocket(name: string, replicas: number, annotations: Record<string, string> = {}): Promise<string> {
  await apply(
    { apiVersion: `${GROUP}/v1`, kind: 'Sprocket', metadata: { name, annotations }, spec: { replicas, podSelector: `app=${name}` } },
    ns,
  );
  return (await kubectlJson<{ metadata: { uid: string } }>(['-n', ns, 'get', `sprockets.${GROUP}`, name, '-o', 'json'])).metadata.uid;
}

function createPod(sprocket: string, uid: string, ordinal: number): Promise<Pod> {
  return client.create<Pod>(
    Pods,
    {
      metadata: {
        name: `${sprocket}-${ordinal}`,
        labels: { app: sprocket },
        ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'Sprocket', name: sprocket, uid, controller: true }],
      },
      spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
    },
    { namespace: ns },
  );
}

const isReady = (p: Pod) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
const inZone = (zone: string) => ({ matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] });
type WS = KubeObject & {
  spec: unknown;
  status?: { observedGeneration?: number; subsetStatuses?: Array<{ name: string; replicas: number; missingReplicas: number }> };
};

describe('whitelisted custom workloads', { concurrency: 2 }, () => {
  test('WorkloadSpread over a whitelisted CRD: subsets by 50% of its replicasPath, pods placed by zone, status counted', async () => {
    const uid = await createSprocket('spread', 4);
    await client.create(WorkloadSpreads, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'WorkloadSpread',
      metadata: { name: 'spread', namespace: ns },
      spec: {
        targetRef: { apiVersion: `${GROUP}/v1`, kind: 'Sprocket', name: 'spread' },
        subsets: [
          { name: 'a', requiredNodeSelector: inZone('zone-a'), maxReplicas: '50%' },
          { name: 'b', requiredNodeSelector: inZone('zone-b') },
        ],
      },
    });
    // The controller has read the custom workload through its scale subresource: a has 2 (50% of 4) missing.
    await waitFor('WorkloadSpread observed with subset a missing 2', async () => {
      const ws = await client.get<WS>(WorkloadSpreads, 'spread', { namespace: ns });
      return ws.status?.observedGeneration === ws.metadata.generation && ws.status?.subsetStatuses?.[0]?.missingReplicas === 2;
    });
    for (let i = 0; i < 4; i++) await createPod('spread', uid, i);
    const pods = await waitFor(
      '4 running pods',
      async () => {
        const ps = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=spread' })).items;
        return ps.length === 4 && ps.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName) && ps;
      },
      60_000,
      500,
    );
    const subsets = pods.map((p) => JSON.parse(p.metadata.annotations?.['apps.kruise.io/matched-workloadspread'] ?? '{}').subset).sort();
    assert.deepEqual(subsets, ['a', 'a', 'b', 'b']);
    const zones = pods.map((p) => zoneOf.get(p.spec!.nodeName!)).sort();
    assert.deepEqual(zones, ['zone-a', 'zone-a', 'zone-b', 'zone-b']);
    await waitFor(
      'status a 2/0, b 2/-1',
      async () => {
        const ws = await client.get<WS>(WorkloadSpreads, 'spread', { namespace: ns });
        const brief = ws.status?.subsetStatuses?.map((s) => `${s.name}:${s.replicas}/${s.missingReplicas}`).join(',');
        return brief === 'a:2/0,b:2/-1';
      },
      60_000,
      500,
    );
  });

  test('PersistentPodState of a whitelisted CRD: generated from its annotations, Ready pods recorded by zone', async () => {
    const uid = await createSprocket('stateful', 2, {
      'kruise.io/auto-generate-persistent-pod-state': 'true',
      'kruise.io/required-persistent-topology': ZONE,
    });
    const generated = await waitFor(
      'PersistentPodState generated',
      async () =>
        (await client.get<StoredPersistentPodState>(PersistentPodStates, 'stateful', { namespace: ns }).catch(() => undefined)) ?? false,
      60_000,
      500,
    );
    assert.deepEqual(generated.spec?.targetRef, { apiVersion: `${GROUP}/v1`, kind: 'Sprocket', name: 'stateful' });
    assert.deepEqual(generated.spec?.requiredPersistentTopology?.keys, [ZONE]);
    assert.equal(generated.metadata.ownerReferences?.[0]?.uid, uid);

    for (let i = 0; i < 2; i++) await createPod('stateful', uid, i);
    const pods = await waitFor(
      '2 Ready pods',
      async () => {
        const ps = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=stateful' })).items;
        return ps.length === 2 && ps.every(isReady) && ps;
      },
      60_000,
      500,
    );
    const want = Object.fromEntries(
      pods.map((p) => [p.metadata.name!, { nodeName: p.spec!.nodeName!, nodeTopologyLabels: { [ZONE]: zoneOf.get(p.spec!.nodeName!)! } }]),
    );
    await waitFor(
      'pod states recorded',
      async () => {
        const pps = await client.get<StoredPersistentPodState>(PersistentPodStates, 'stateful', { namespace: ns });
        try {
          assert.deepEqual(pps.status?.podStates, want);
          return true;
        } catch {
          return false;
        }
      },
      60_000,
      500,
    );
  });
});
