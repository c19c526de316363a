// Applies one PodProbeMarker plan (plan.ts) through the API, in order: the cleanup finalizer, the
// NodePodProbes (each an update carrying the resourceVersion read: every marker of the cluster and
// the NodePodProbe controller write them, so a concurrent writer turns ours into a 409 and the round
// is looked at again from the newer object), the serverless pods' marks (one merge patch of the keys
// that change), then the finalizer's release or the status. Every written version is expected in
// the cache before the next round plans from it.
import { FINALIZER_NODE_POD_PROBE_CLEANUP } from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { NodePodProbes, PodProbeMarkers, Pods } from '../../runtime/resources.ts';
import { isNotFound } from '../../runtime/errors.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { applyWrites, writeStatus } from '../../runtime/writes.ts';
import type { PodProbeMarkerPlan, StoredNPP, StoredPPM } from './plan.ts';

export interface PodProbeMarkerExecutorDeps {
  client: Pick<KubeClient, 'patch' | 'update' | 'updateStatus'>;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
}

export async function executePodProbeMarkerPlan(
  deps: PodProbeMarkerExecutorDeps,
  ppm: StoredPPM,
  plan: PodProbeMarkerPlan,
): Promise<ReconcileResult> {
  const { client, resourceVersions, log } = deps;
  const { namespace = '', name = '' } = ppm.metadata;
  const key = `${namespace}/${name}`;
  for (const e of new Set(plan.errors)) log.warn({ podProbeMarker: key }, e);
  return applyWrites(async () => {
    let current = ppm;
    if (plan.addFinalizer) {
      current = await client.patch<StoredPPM>(
        PodProbeMarkers,
        name,
        {
          metadata: {
            resourceVersion: ppm.metadata.resourceVersion,
            finalizers: [...(ppm.metadata.finalizers ?? []), FINALIZER_NODE_POD_PROBE_CLEANUP],
          },
        },
        { namespace, patchType: PatchType.Merge },
      );
      resourceVersions.expect(current);
    }
    for (const { npp, spec } of plan.nodeProbes) {
      resourceVersions.expect(await client.update<StoredNPP>(NodePodProbes, { ...npp, spec }));
      log.info({ podProbeMarker: key, nodePodProbe: npp.metadata.name }, 'updated NodePodProbe');
    }
    for (const { pod, patch } of plan.serverlessMarks) {
      try {
        const patched = await client.patch<Pod>(
          Pods,
          pod.metadata.name ?? '',
          { metadata: patch },
          { namespace, patchType: PatchType.Merge },
        );
        resourceVersions.expect(patched);
        log.info({ podProbeMarker: key, pod: pod.metadata.name, ...patch }, 'marked serverless pod');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (plan.removeFinalizer) {
      await client.patch(
        PodProbeMarkers,
        name,
        {
          metadata: {
            resourceVersion: ppm.metadata.resourceVersion,
            finalizers: (ppm.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_NODE_POD_PROBE_CLEANUP),
          },
        },
        { namespace, patchType: PatchType.Merge },
      );
      log.info({ podProbeMarker: key }, 'removed its probes from every NodePodProbe; finalizer released');
      return {};
    }
    const w = await writeStatus(client, PodProbeMarkers, current, plan.status, resourceVersions);
    return w.ended ?? {};
  });
}
