// The podreadiness write: the planned condition on the pod's status.

import type { Pod, PodCondition } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { applyWrites } from '../../runtime/writes.ts';

export function writePodReadiness(pod: Pod, condition: PodCondition, client: Pick<KubeClient, 'patch'>): Promise<ReconcileResult> {
  return applyWrites(async () => {
    // Compare-and-swap: a condition someone wrote since the cache saw the pod must not be replaced.
    await client.patch(
      Pods,
      pod.metadata.name ?? '',
      {
        metadata: { resourceVersion: pod.metadata.resourceVersion },
        status: { conditions: [condition] },
      },
      { namespace: pod.metadata.namespace ?? '', patchType: PatchType.StrategicMerge, subresource: 'status' },
    );
    return {};
  });
}
