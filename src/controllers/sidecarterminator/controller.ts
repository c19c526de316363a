// The sidecar terminator controller (gate SidecarTerminator): watches pods, and for each one
// isInterestingPod accepts, decides with planSidecarTermination from the cached pod, its node (is it
// a virtual kubelet?) and whether its CRR exists, then applies the actions.

import type { Pod, KubeObject } from '../../apis/core-objects.ts';
import { Nodes, Pods, ContainerRecreateRequests } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey } from '../../runtime/store.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { isVirtualKubeletNode } from '../../util/virtual-kubelet.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { executeSidecarActions, type ExecutorClient } from './executor.ts';
import { crrNameFor, isInterestingPod, planSidecarTermination } from './plan.ts';

export interface SidecarTerminatorCache {
  getPod(namespace: string, name: string): Pod | undefined;
  getNode(name: string): { metadata?: { labels?: Record<string, string> } } | undefined;
  crrExists(namespace: string, name: string): boolean;
}

export interface SidecarTerminatorDeps {
  cache: SidecarTerminatorCache;
  client: ExecutorClient;
  recorder: EventRecorder;
  clock?: Clock;
}

export async function reconcileSidecarTerminator(key: string, deps: SidecarTerminatorDeps): Promise<ReconcileResult> {
  const { namespace = '', name } = splitKey(key);
  const pod = deps.cache.getPod(namespace, name);
  if (!pod || !isInterestingPod(pod)) return {};
  const nodeName = pod.spec?.nodeName ?? '';
  const node = deps.cache.getNode(nodeName);
  // Whether the sidecars are killed or swapped depends on the node: without it, wait (backoff).
  if (!node) throw new Error(`node ${nodeName} of pod ${key} not found`);
  const actions = planSidecarTermination({
    pod,
    onVirtualKubelet: isVirtualKubeletNode(node),
    crrExists: deps.cache.crrExists(namespace, crrNameFor(pod)),
    now: (deps.clock ?? realClock).now(),
  });
  const requeueAfterMs = await executeSidecarActions(pod, actions, deps);
  return requeueAfterMs ? { requeueAfterMs } : {};
}

export const sidecarTerminatorController: ControllerSetup = {
  name: 'sidecarterminator',
  kinds: ['ContainerRecreateRequest'],
  gate: 'SidecarTerminator',
  access: [
    access(Pods, READ),
    access(Pods, ['update', 'patch'], 'status'),
    access(Nodes, READ),
    access(ContainerRecreateRequests, [...READ, 'create']),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const nodes = deps.informers.informerFor<KubeObject>(Nodes);
    const crrs = deps.informers.informerFor<KubeObject>(ContainerRecreateRequests, scope);
    const cache: SidecarTerminatorCache = {
      getPod: (ns, n) => pods.lister.get(ns, n),
      getNode: (n) => nodes.lister.get(n),
      crrExists: (ns, n) => !!crrs.lister.get(ns, n),
    };
    const controller = managerController('sidecarterminator', deps, (key) =>
      reconcileSidecarTerminator(key, { cache, client: deps.client, recorder: deps.recorder }),
    );
    const key = (p: KubeObject) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;
    const handler: EventHandler<Pod> = {
      onAdd: (p, initial) => {
        if (isInterestingPod(p)) controller.queue.add(key(p), initial ? { priority: LowPriority } : {});
      },
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion !== cur.metadata.resourceVersion && isInterestingPod(cur)) controller.queue.add(key(cur));
      },
    };
    pods.addEventHandler(handler);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [pods, nodes, crrs]),
    };
  },
};
