// Applies the sidecar terminator's actions (plan.ts) in order: image swap, CRR, pod verdict. The
// pod writes carry the observed resourceVersion, so a pod that changed since is looked at again
// rather than patched blind.

import type { ContainerRecreateRequest } from '../../apis/apps/containerrecreaterequest.ts';
import type { Pod, Stored } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isAlreadyExists } from '../../runtime/errors.ts';
import { Pods, ContainerRecreateRequests } from '../../runtime/resources.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { applyWrites } from '../../runtime/writes.ts';
import { crrNameFor, type SidecarAction } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

export type ExecutorClient = Pick<KubeClient, 'patch' | 'create'>;

const REASON = 'SidecarTerminator';

/** Returns ms to look again after a lost race, or undefined. */
export async function executeSidecarActions(
  pod: Pod,
  actions: readonly SidecarAction[],
  deps: { client: ExecutorClient; recorder: EventRecorder },
): Promise<number | undefined> {
  const ns = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  let rv = pod.metadata.resourceVersion;
  const ended = await applyWrites(async () => {
    for (const action of actions) {
      switch (action.kind) {
        case 'inPlaceUpdate': {
          const containers = Object.entries(action.images).map(([n, image]) => ({ name: n, image }));
          const out = await deps.client.patch<Pod>(
            Pods,
            name,
            { metadata: { resourceVersion: rv }, spec: { containers } },
            { namespace: ns, patchType: PatchType.StrategicMerge },
          );
          rv = out.metadata.resourceVersion;
          deps.recorder.event(
            pod,
            'Normal',
            REASON,
            'InPlaceUpdate',
            `Kruise SidecarTerminator is trying to terminate sidecar ${JSON.stringify(Object.keys(action.images))} using in-place update`,
          );
          break;
        }
        case 'markTerminated': {
          const out = await deps.client.patch<Pod>(
            Pods,
            name,
            {
              metadata: { resourceVersion: rv },
              status: { phase: action.phase, conditions: [action.condition] },
            },
            { namespace: ns, patchType: PatchType.StrategicMerge, subresource: 'status' },
          );
          rv = out.metadata.resourceVersion;
          break;
        }
        case 'createCRR': {
          const crr: Stored<ContainerRecreateRequest> = {
            apiVersion: 'apps.kruise.io/v1beta1',
            kind: 'ContainerRecreateRequest',
            metadata: {
              namespace: ns,
              name: crrNameFor(pod),
              ownerReferences: [
                { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
              ],
            },
            spec: {
              podName: name,
              containers: action.containers.map((c) => ({ name: c })),
              strategy: { forceRecreate: true, failurePolicy: 'Ignore' },
            },
          };
          try {
            await deps.client.create(ContainerRecreateRequests, crr);
          } catch (err) {
            // A cache that has not seen our own CRR yet: it is there, which is all we wanted.
            if (isAlreadyExists(err)) break;
            deps.recorder.event(
              pod,
              'Warning',
              REASON,
              'CreateContainerRecreateRequest',
              `failed to create ContainerRecreateRequest ${crr.metadata.name}: ${errMessage(err)}`,
            );
            throw err;
          }
          deps.recorder.event(
            pod,
            'Normal',
            REASON,
            'CreateContainerRecreateRequest',
            `Kruise SidecarTerminator is trying to terminate sidecar ${JSON.stringify(action.containers)} using crr`,
          );
          break;
        }
      }
    }
    return {};
  });
  return ended.requeueAfterMs;
}
