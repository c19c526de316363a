// The container launch priority controller (spec §18.1, upstream
// pkg/controller/containerlaunchpriority): the pod webhook made every container of an ordered pod
// wait on KRUISE_CONTAINER_BARRIER from ConfigMap `<pod>-barrier` key `p_<priority>`; this
// controller creates that ConfigMap (owned by the pod) and releases the highest pending priority
// each time the containers before it are ready, then marks the pod
// apps.kruise.io/container-launch-priority-completed. The step is planned in plan.ts and written
// by executor.ts.
import type { ConfigMap, Pod } from '../../apis/core-objects.ts';
import { CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION } from '../../apis/constants.ts';
import { access, READ } from '../../runtime/rbac.ts';
import type { KubeClient } from '../../runtime/client.ts';
import { ConfigMaps, Pods } from '../../runtime/resources.ts';
import { isNotFound } from '../../runtime/errors.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey } from '../../runtime/store.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { barrierName, executeLaunchPriority } from './executor.ts';
import { nextPriorities, planLaunchPriority } from './plan.ts';

export async function reconcileLaunchPriority(
  key: string,
  deps: { getPod(ns: string, name: string): Pod | undefined; client: Pick<KubeClient, 'get' | 'create' | 'patch'> },
): Promise<ReconcileResult> {
  const { namespace = '', name } = splitKey(key);
  const pod = deps.getPod(namespace, name);
  if (!pod || pod.metadata.deletionTimestamp || !nextPriorities(pod).length) return {};
  let barrier: ConfigMap | undefined;
  try {
    barrier = await deps.client.get<ConfigMap>(ConfigMaps, barrierName(name), { namespace });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  return executeLaunchPriority(pod, planLaunchPriority(pod, barrier), deps.client);
}

const wantsBarrier = (p: Pod) =>
  p.metadata.annotations?.[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION] !== 'true' &&
  !p.metadata.deletionTimestamp &&
  nextPriorities(p).length > 0;

export const containerLaunchPriorityController: ControllerSetup = {
  name: 'containerlaunchpriority',
  kinds: [],
  access: [access(Pods, [...READ, 'patch']), access(ConfigMaps, ['get', 'create', 'patch'])],
  setup(deps: ControllerDeps) {
    const pods = deps.informers.informerFor<Pod>(Pods, deps.namespace ? { namespace: deps.namespace } : {});
    const controller = managerController('containerlaunchpriority', deps, (key) =>
      reconcileLaunchPriority(key, { getPod: (ns, n) => pods.lister.get(ns, n), client: deps.client }),
    );
    const key = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;
    const handler: EventHandler<Pod> = {
      onAdd: (p, initial) => {
        if (wantsBarrier(p)) controller.queue.add(key(p), initial ? { priority: LowPriority } : {});
      },
      onUpdate: (_old, cur) => {
        if (wantsBarrier(cur)) controller.queue.add(key(cur));
      },
    };
    pods.addEventHandler(handler);
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [pods]) };
  },
};
