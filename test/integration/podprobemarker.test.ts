// PodProbeMarker / NodePodProbe on the suite's shared manager and simulated kruise-daemon (spec
// §15, issue acceptance): an exec probe on a CloneSet's pods. The simulated runtime answers exec
// with the exit code the pod annotation sim.kruise-ts.io/exec-exit-codes gives the command (0 when
// unlisted), so the test flips the probe's result by annotating one pod. Checked: the NodePodProbe
// of each pod's node lists `<marker>#<probe>`, Succeeded sets the condition and the Succeeded
// policy's label/annotation, a failing probe flips them (the Failed policy's label, the Succeeded
// annotation removed) and back, the other pod is not rewritten, matchedPods and the finalizer, a
// scaled-away pod leaves the NodePodProbe, and deleting the marker removes its probes everywhere.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchType, type KubeClient, fromKubeconfigFile } from '../../src/runtime/client.ts';
import { CloneSets, NodePodProbes, Nodes, PodProbeMarkers, Pods } from '../../src/runtime/resources.ts';
import type { Node, Pod } from '../../src/apis/core-objects.ts';
import { SIM_EXEC_EXIT_CODES_ANNOTATION } from '../../src/daemon/simulated/runtime.ts';
import { cloneSetManifest, podsOf } from './cloneset-helpers.ts';
import { componentLogs, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('ppm');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

const CONDITION = 'game.kruise.io/healthy';
type NPP = {
  metadata: { name: string };
  spec?: { podProbes?: Array<{ name: string; namespace: string; uid: string; IP: string; probes?: Array<{ name: string }> }> };
};
type PPM = { metadata: { finalizers?: string[]; generation?: number }; status?: { matchedPods?: number; observedGeneration?: number } };

const condition = (p: Pod) => p.status?.conditions?.find((c) => c.type === CONDITION);

async function pod(name: string): Promise<Pod> {
  return client.get<Pod>(Pods, name, { namespace: ns });
}

async function probesOn(nodeName: string): Promise<NPP['spec']> {
  return (await client.get<NPP>(NodePodProbes, nodeName)).spec;
}

test('an exec PodProbeMarker marks a CloneSet’s pods; flipping the result flips the marks', { timeout: 120_000 }, async () => {
  await client.create(CloneSets, { ...cloneSetManifest('web', { replicas: 2 }), metadata: { name: 'web', namespace: ns } });
  const pods = await waitFor('two running pods', async () => {
    const ps = await podsOf(client, ns, 'web');
    return ps.length === 2 && ps.every((p) => p.status?.phase === 'Running' && p.spec?.nodeName) ? ps : undefined;
  });
  // Every Ready KWOK node has its NodePodProbe (created by the NodePodProbe controller).
  const nodes = (await client.list<Node>(Nodes, { labelSelector: 'type=kwok' })).items;
  await waitFor('a NodePodProbe per node', async () => {
    const names = new Set((await client.list<NPP>(NodePodProbes)).items.map((n) => n.metadata.name));
    return nodes.every((n) => names.has(n.metadata.name!));
  });

  await client.create(PodProbeMarkers, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'PodProbeMarker',
    metadata: { name: 'healthy', namespace: ns },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      probes: [
        {
          name: 'ready-file',
          containerName: 'main',
          probe: { exec: { command: ['test', '-f', 'ready'] }, periodSeconds: 1 },
          podConditionType: CONDITION,
          markerPolicy: [
            { state: 'Succeeded', labels: { 'probe.kruise.io/state': 'ok' }, annotations: { 'probe.kruise.io/ok-since': 'probed' } },
            { state: 'Failed', labels: { 'probe.kruise.io/state': 'failing' } },
          ],
        },
      ],
    },
  });

  try {
    // Listed on each pod's node as <marker>#<probe> with the pod's identity.
    for (const p of pods) {
      await waitFor(`pod ${p.metadata.name} listed in NodePodProbe ${p.spec!.nodeName}`, async () => {
        const entry = (await probesOn(p.spec!.nodeName!))?.podProbes?.find((e) => e.uid === p.metadata.uid);
        return (
          entry &&
          entry.name === p.metadata.name &&
          entry.namespace === ns &&
          entry.IP === p.status?.podIP &&
          entry.probes?.[0]?.name === 'healthy#ready-file'
        );
      });
    }
    const ppm = await waitFor('matchedPods 2 and the cleanup finalizer', async () => {
      const m = await client.get<PPM>(PodProbeMarkers, 'healthy', { namespace: ns });
      return m.status?.matchedPods === 2 && m.status.observedGeneration === m.metadata.generation ? m : undefined;
    });
    assert.deepEqual(ppm.metadata.finalizers, ['kruise.io/node-pod-probe-cleanup']);

    // Succeeded: condition True, the Succeeded policy's label and annotation.
    for (const p of pods) {
      await waitFor(`pod ${p.metadata.name} marked ok`, async () => {
        const cur = await pod(p.metadata.name!);
        return (
          condition(cur)?.status === 'True' &&
          cur.metadata.labels?.['probe.kruise.io/state'] === 'ok' &&
          cur.metadata.annotations?.['probe.kruise.io/ok-since'] === 'probed'
        );
      });
    }
    const [flipped, other] = pods;
    const otherBefore = await pod(other.metadata.name!);

    // The probe starts failing in one pod: condition False, label flipped, Succeeded annotation gone.
    const setExitCode = (code: number | null) =>
      client.patch(
        Pods,
        flipped.metadata.name!,
        {
          metadata: { annotations: { [SIM_EXEC_EXIT_CODES_ANNOTATION]: code === null ? null : JSON.stringify({ 'test -f ready': code }) } },
        },
        { namespace: ns, patchType: PatchType.Merge },
      );
    await setExitCode(1);
    const failing = await waitFor('the flipped pod marked failing', async () => {
      const cur = await pod(flipped.metadata.name!);
      return condition(cur)?.status === 'False' &&
        cur.metadata.labels?.['probe.kruise.io/state'] === 'failing' &&
        cur.metadata.annotations?.['probe.kruise.io/ok-since'] === undefined
        ? cur
        : undefined;
    });
    assert.match(condition(failing)?.message ?? '', /simulated exit code 1/);

    // And back.
    await setExitCode(null);
    await waitFor('the flipped pod marked ok again', async () => {
      const cur = await pod(flipped.metadata.name!);
      return (
        condition(cur)?.status === 'True' &&
        cur.metadata.labels?.['probe.kruise.io/state'] === 'ok' &&
        cur.metadata.annotations?.['probe.kruise.io/ok-since'] === 'probed'
      );
    });
    // The other pod's marks were never rewritten.
    const otherAfter = await pod(other.metadata.name!);
    assert.equal(condition(otherAfter)?.lastTransitionTime, condition(otherBefore)?.lastTransitionTime);
    assert.equal(otherAfter.metadata.labels?.['probe.kruise.io/state'], 'ok');

    // A pod scaled away leaves its node's NodePodProbe; matchedPods follows.
    await client.patch(
      CloneSets,
      'web',
      { spec: { replicas: 1, scaleStrategy: { podsToDelete: [other.metadata.name] } } },
      { namespace: ns, patchType: PatchType.Merge },
    );
    await waitFor('the scaled-away pod dropped from its NodePodProbe', async () => {
      const entries = (await probesOn(other.spec!.nodeName!))?.podProbes ?? [];
      return !entries.some((e) => e.uid === other.metadata.uid);
    });
    await waitFor(
      'matchedPods 1',
      async () => (await client.get<PPM>(PodProbeMarkers, 'healthy', { namespace: ns })).status?.matchedPods === 1,
    );

    // Deleting the marker removes its probes from every NodePodProbe, then the marker goes.
    await client.delete(PodProbeMarkers, 'healthy', { namespace: ns });
    await waitFor('the marker gone', async () => {
      try {
        await client.get(PodProbeMarkers, 'healthy', { namespace: ns });
        return false;
      } catch {
        return true;
      }
    });
    for (const n of (await client.list<NPP>(NodePodProbes)).items) {
      assert.ok(!(n.spec?.podProbes ?? []).some((e) => e.namespace === ns), `NodePodProbe ${n.metadata.name} still lists pods of ${ns}`);
    }
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${componentLogs(40)}`, { cause: err });
  }
});
