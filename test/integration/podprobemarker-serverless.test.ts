// PodProbeMarker in serverless mode (gate EnablePodProbeMarkerOnServerless, on in the suite; spec
// §15, issue #16) on the suite's shared manager: a pod bound to a KWOK node labelled
// `type: virtual-kubelet` (no kruise-daemon there, no NodePodProbe) is handed the marker's probes by
// the pod webhook (kruise.io/podprobe, kruise.io/podprobemarker-list); the test then writes the
// pod condition a serverless provider would, and the marker itself applies its markerPolicy:
// True sets the Succeeded marks, False flips them, the marker counts the pod, and no NodePodProbe
// lists it. The node is tainted NoSchedule so no other test's pod lands on it; the pod is bound by
// nodeName.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Pod, KubeObject } from '../../src/apis/core-objects.ts';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import { NodePodProbes, Nodes, PodProbeMarkers, Pods } from '../../src/runtime/resources.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

const CONDITION = 'game.kruise.io/healthy';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
const HEALTHY = 'game.kruise.io/healthy';

let client: KubeClient;
let ns: string;
let nodeName: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('ppm-vk');
  nodeName = `vk-${ns}`;
});

after(async () => {
  await deleteNamespace(ns);
  await client.delete(Nodes, nodeName).catch(() => undefined);
  await client.close();
});

const getPod = () => client.get<Pod>(Pods, 'game-0', { namespace: ns });

/** What the serverless provider does with a probe result: the pod condition, on pods/status. */
const report = (status: 'True' | 'False') =>
  client.patch(
    Pods,
    'game-0',
    {
      status: {
        conditions: [
          { type: CONDITION, status, lastProbeTime: null, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
        ],
      },
    },
    { namespace: ns, subresource: 'status', patchType: PatchType.StrategicMerge },
  );

test('serverless pod: probes handed over by the webhook, marks applied from the provider’s condition', { timeout: 90_000 }, async () => {
  await client.create(Nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: { type: 'virtual-kubelet', 'kubernetes.io/hostname': nodeName },
    },
    spec: { taints: [{ key: 'kruise-ts.io/test-only', value: ns, effect: 'NoSchedule' }] },
  } as KubeObject);
  await waitFor('the virtual-kubelet node Ready', async () => {
    const n = await client.get<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(Nodes, nodeName);
    return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  });

  await client.create(PodProbeMarkers, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'PodProbeMarker',
    metadata: { name: 'game', namespace: ns },
    spec: {
      selector: { matchLabels: { app: 'game' } },
      probes: [
        {
          name: 'healthy',
          containerName: 'main',
          probe: { exec: { command: ['bash', '/data/probe.sh'] }, periodSeconds: 10, timeoutSeconds: 3 },
          podConditionType: CONDITION,
          markerPolicy: [
            { state: 'Succeeded', labels: { [HEALTHY]: 'true' }, annotations: { [COST]: '10' } },
            { state: 'Failed', annotations: { [COST]: '-10' } },
          ],
        },
      ],
    },
  });
  // The webhook reads markers from its cache: wait until it has this one.
  const created = await waitFor('the pod created with the probes handed over', async () => {
    await client.delete(Pods, 'game-0', { namespace: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
    const p = await client
      .create<Pod>(Pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'game-0', namespace: ns, labels: { app: 'game' } },
        spec: {
          nodeName,
          tolerations: [{ key: 'kruise-ts.io/test-only', operator: 'Exists' }],
          containers: [{ name: 'main', image: 'registry.example/game:v1' }],
        },
      })
      .catch(() => undefined);
    return p?.metadata.annotations?.['kruise.io/podprobe'] ? p : undefined;
  });
  assert.equal(
    created.metadata.annotations?.['kruise.io/podprobe'],
    '[{"name":"healthy","containerName":"main","probe":{"exec":{"command":["bash","/data/probe.sh"]},"timeoutSeconds":3,"periodSeconds":10},"podConditionType":"game.kruise.io/healthy"}]',
  );
  assert.equal(created.metadata.annotations?.['kruise.io/podprobemarker-list'], 'game');

  await waitFor('the pod running and Initialized', async () => {
    const p = await getPod();
    return p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Initialized' && c.status === 'True');
  });
  const ppm = await waitFor('matchedPods 1', async () => {
    const m = await client.get<KubeObject & { status?: { matchedPods?: number } }>(PodProbeMarkers, 'game', { namespace: ns });
    return m.status?.matchedPods === 1 ? m : undefined;
  });
  assert.deepEqual(ppm.metadata.finalizers, ['kruise.io/node-pod-probe-cleanup']);
  // No kruise-daemon on a virtual-kubelet node: no NodePodProbe for it.
  await assert.rejects(client.get(NodePodProbes, nodeName), /not found/i);

  await report('True');
  await waitFor('Succeeded marks', async () => {
    const p = await getPod();
    return p.metadata.labels?.[HEALTHY] === 'true' && p.metadata.annotations?.[COST] === '10';
  });

  await report('False');
  const failed = await waitFor('Failed marks: the Succeeded label gone, the cost flipped', async () => {
    const p = await getPod();
    return p.metadata.labels?.[HEALTHY] === undefined && p.metadata.annotations?.[COST] === '-10' ? p : undefined;
  });
  assert.equal(failed.metadata.labels?.app, 'game');
  assert.equal(failed.status?.conditions?.find((c) => c.type === CONDITION)?.status, 'False');

  await report('True');
  await waitFor('Succeeded marks again', async () => {
    const p = await getPod();
    return p.metadata.labels?.[HEALTHY] === 'true' && p.metadata.annotations?.[COST] === '10';
  });
});
