// Applies one NodePodProbe plan (plan.ts) through the API: the NodePodProbe's creation (its written
// version expected in the cache), its deletion with its node, or the round's sync — the spec without
// the entries of pods that are gone (an update carrying the resourceVersion read), then each pod's
// probe results as one strategic-merge patch of its status subresource carrying both the metadata
// and the conditions (the pods/status endpoint keeps label and annotation changes, as upstream's
// status update relies on): conditions merge by type and keys not named are left alone, so it never
// overwrites what the kubelet or another controller wrote meanwhile.
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { NodePodProbes, Pods } from '../../runtime/resources.ts';
import { isAlreadyExists, isNotFound } from '../../runtime/errors.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { applyWrites } from '../../runtime/writes.ts';
import type { NodePodProbePlan, StoredNPP } from './plan.ts';

export interface NodePodProbeExecutorDeps {
  client: Pick<KubeClient, 'create' | 'update' | 'delete' | 'patch'>;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
}

/** `npp`: the cached NodePodProbe the plan was made from (there when the plan deletes or syncs it). */
export async function executeNodePodProbePlan(
  deps: NodePodProbeExecutorDeps,
  name: string,
  npp: StoredNPP | undefined,
  plan: NodePodProbePlan,
): Promise<ReconcileResult> {
  const { client, log, resourceVersions } = deps;
  return applyWrites(async () => {
    switch (plan.action) {
      case 'none':
        return {};
      case 'create':
        try {
          const created = await client.create<StoredNPP>(NodePodProbes, {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'NodePodProbe',
            metadata: { name },
            spec: {},
          });
          resourceVersions.expect(created);
          log.info({ nodePodProbe: name }, 'created NodePodProbe');
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
        return {};
      case 'delete':
        await client.delete(NodePodProbes, name, { preconditions: { uid: npp!.metadata.uid } });
        log.info({ nodePodProbe: name }, 'deleted NodePodProbe of a gone Node');
        return {};
      case 'sync':
        if (plan.spec) {
          resourceVersions.expect(await client.update<StoredNPP>(NodePodProbes, { ...npp!, spec: plan.spec }));
          log.info({ nodePodProbe: name }, 'removed probes of pods that are gone');
        }
        for (const { pod, patch } of plan.pods) {
          const body = {
            metadata: { ...(patch.labels && { labels: patch.labels }), ...(patch.annotations && { annotations: patch.annotations }) },
            ...(patch.conditions && { status: { conditions: patch.conditions } }),
          };
          try {
            await client.patch(Pods, pod.metadata.name!, body, {
              namespace: pod.metadata.namespace,
              patchType: PatchType.StrategicMerge,
              subresource: 'status',
            });
          } catch (err) {
            // A pod deleted since the cache saw it: the next round drops its entry.
            if (!isNotFound(err)) throw err;
          }
          log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, patch }, 'applied probe results to pod');
        }
        return {};
    }
  });
}
