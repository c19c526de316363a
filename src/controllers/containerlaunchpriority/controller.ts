// The container launch priority controller (spec §18.1, upstream
// pkg/controller/containerlaunchpriority): the pod webhook made every container of an ordered pod
// wait on KRUISE_CONTAINER_BARRIER from ConfigMap `<pod>-barrier` key `p_<priority>`; this
// controller creates that ConfigMap (owned by the pod) and releases the highest pending priority
// each time the containers before it are ready, then marks the pod
// apps.kruise.io/container-launch-priority-completed.
import type { ConfigMap, Pod } from '../../apis/core-objects.ts';
import { CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION, ENV_CONTAINER_BARRIER } from '../../apis/constants.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isAlreadyExists, isNotFound } from '../../runtime/errors.ts';
import { ConfigMaps, Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey } from '../../runtime/store.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { applyWrites } from '../../runtime/writes.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';

/** The priority a container waits for (from its barrier env's key `p_<n>`), if any. */
export function containerPriority(c: {
  env?: Array<{ name: string; valueFrom?: { configMapKeyRef?: { key: string } } }>;
}): number | undefined {
  const key = c.env?.find((e) => e.name === ENV_CONTAINER_BARRIER)?.valueFrom?.configMapKeyRef?.key;
  if (!key?.startsWith('p_')) return undefined;
  const n = Number(key.slice(2));
  return Number.isInteger(n) ? n : undefined;
}

/** findNextPriorities: the priorities of containers not ready yet, ascending. */
export function nextPriorities(pod: Pod): number[] {
  const ready = new Set((pod.status?.containerStatuses ?? []).filter((s) => s.ready).map((s) => s.name));
  const out: number[] = [];
  for (const c of pod.spec?.containers ?? []) {
    if (ready.has(c.name)) continue;
    const p = containerPriority(c);
    if (p !== undefined) out.push(p);
  }
  return out.sort((a, b) => a - b);
}

export type LaunchPriorityPlan =
  { action: 'none' } | { action: 'createBarrier' } | { action: 'release'; key: string; complete: boolean } | { action: 'complete' };

/** One step for a pod, given its barrier ConfigMap (undefined: not created yet). */
export function planLaunchPriority(pod: Pod, barrier: Pick<ConfigMap, 'data'> | undefined): LaunchPriorityPlan {
  if (pod.metadata.annotations?.[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION] === 'true') return { action: 'none' };
  if (pod.status?.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True')) return { action: 'none' };
  const next = nextPriorities(pod);
  if (!next.length && !barrier) return { action: 'none' };
  if (!barrier) return { action: 'createBarrier' };
  const has = (p: number) => barrier.data?.[`p_${p}`] !== undefined;
  if (!next.length || has(next[0]!)) return { action: 'complete' };
  const highest = next.at(-1)!;
  if (has(highest)) return highest === next[0] ? { action: 'complete' } : { action: 'none' };
  return { action: 'release', key: `p_${highest}`, complete: highest === next[0] };
}

export async function reconcileLaunchPriority(
  key: string,
  deps: { getPod(ns: string, name: string): Pod | undefined; client: Pick<KubeClient, 'get' | 'create' | 'patch'> },
): Promise<ReconcileResult> {
  const { namespace = '', name } = splitKey(key);
  const pod = deps.getPod(namespace, name);
  if (!pod || pod.metadata.deletionTimestamp || !nextPriorities(pod).length) return {};
  const barrierName = `${name}-barrier`;
  let barrier: ConfigMap | undefined;
  try {
    barrier = await deps.client.get<ConfigMap>(ConfigMaps, barrierName, { namespace });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const plan = planLaunchPriority(pod, barrier);
  return applyWrites(async () => {
    const complete = () =>
      deps.client.patch(
        Pods,
        name,
        { metadata: { annotations: { [CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION]: 'true' } } },
        { namespace, patchType: PatchType.StrategicMerge },
      );
    switch (plan.action) {
      case 'createBarrier':
        try {
          await deps.client.create(ConfigMaps, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: barrierName,
              namespace,
              ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid ?? '' }],
            },
          });
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
        return { requeueAfter: 1 };
      case 'release':
        await deps.client.patch(
          ConfigMaps,
          barrierName,
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
