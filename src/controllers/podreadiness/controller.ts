// The podreadiness controller (behaviour spec §18.5, upstream pkg/controller/podreadiness): a pod
// carrying the KruisePodReady readiness gate is never Ready until someone writes that condition, so
// every such pod without it gets KruisePodReady=True. Components that take a pod out of service
// later flip it through not-ready keys (util/lifecycle.ts).

import type { Pod } from '../../apis/core-objects.ts';
import type { KubeClient } from '../../runtime/client.ts';
import { Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey } from '../../runtime/store.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { writePodReadiness } from './executor.ts';
import { planPodReadiness } from './plan.ts';

export interface PodReadinessDeps {
  getPod(namespace: string, name: string): Pod | undefined;
  client: Pick<KubeClient, 'patch'>;
  clock?: Clock;
}

export async function reconcilePodReadiness(key: string, deps: PodReadinessDeps): Promise<ReconcileResult> {
  const { namespace = '', name } = splitKey(key);
  const pod = deps.getPod(namespace, name);
  if (!pod) return {};
  const condition = planPodReadiness(pod, (deps.clock ?? realClock).now());
  if (!condition) return {};
  return writePodReadiness(pod, condition, deps.client);
}

const wantsCondition = (pod: Pod) => planPodReadiness(pod, 0) !== undefined;

export const podReadinessController: ControllerSetup = {
  name: 'podreadiness',
  clientName: 'pod-readiness-controller',
  kinds: [],
  access: [access(Pods, READ), access(Pods, ['update', 'patch'], 'status')],
  setup(deps: ControllerDeps) {
    const pods = deps.informers.informerFor<Pod>(Pods, deps.namespace ? { namespace: deps.namespace } : {});
    const controller = managerController('podreadiness', deps, (key) =>
      reconcilePodReadiness(key, { getPod: (ns, n) => pods.lister.get(ns, n), client: deps.client }),
    );
    const key = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;
    const handler: EventHandler<Pod> = {
      onAdd: (p, initial) => {
        if (wantsCondition(p)) controller.queue.add(key(p), initial ? { priority: LowPriority } : {});
      },
      onUpdate: (_old, cur) => {
        if (wantsCondition(cur)) controller.queue.add(key(cur));
      },
    };
    pods.addEventHandler(handler);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [pods]),
    };
  },
};
