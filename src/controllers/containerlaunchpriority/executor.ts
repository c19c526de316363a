// The container launch priority writes: the barrier ConfigMap (owned by the pod), a released
// priority key, and the pod's completed annotation.

import { CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION } from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { ConfigMaps, Pods } from '../../runtime/resources.ts';
import { isAlreadyExists } from '../../runtime/errors.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { applyWrites } from '../../runtime/writes.ts';
import type { LaunchPriorityPlan } from './plan.ts';

/** The name of a pod's barrier ConfigMap. */
export const barrierName = (pod: string) => `${pod}-barrier`;

export async function executeLaunchPriority(
  pod: Pod,
  plan: LaunchPriorityPlan,
  client: Pick<KubeClient, 'create' | 'patch'>,
): Promise<ReconcileResult> {
  const namespace = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  return applyWrites(async () => {
    const complete = () =>
      client.patch(
        Pods,
        name,
        { metadata: { annotations: { [CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION]: 'true' } } },
        { namespace, patchType: PatchType.StrategicMerge },
      );
    switch (plan.action) {
      case 'createBarrier':
        try {
          await client.create(ConfigMaps, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: barrierName(name),
              namespace,
              ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid ?? '' }],
            },
          });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
        return { requeueAfterMs: 1 };
      case 'release':
        await client.patch(
          ConfigMaps,
          barrierName(name),
          { data: { [plan.key]: 'true' } },
          { namespace, patchType: PatchType.StrategicMerge },
        );
        if (plan.complete) await complete();
        return {};
      case 'complete':
        await complete();
        return {};
      default:
        return {};
    }
  });
}
