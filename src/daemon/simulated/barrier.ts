// The kubelet's side of container launch priority on simulated nodes (spec §18.1). A container
// whose env KRUISE_CONTAINER_BARRIER reads ConfigMap `<pod>-barrier` key `p_<n>` cannot be created
// while the key is missing: the kubelet leaves it waiting (CreateContainerConfigError) and retries.
// KWOK's pod-start stage starts such containers waiting (config/kwok/stages.yaml); this
// sub-controller of the simulated daemon plays the retry: it reads the pod's barrier ConfigMap and
// starts, as KWOK would have, every held container whose key now exists. The manager's
// containerlaunchpriority controller adds the keys one priority at a time as the containers before
// them become ready, so containers start in barrier order.
import { ENV_CONTAINER_BARRIER } from '../../apis/constants.ts';
import type { ConfigMap, ContainerStatus, Pod, PodCondition } from '../../apis/core-objects.ts';
import { PatchType } from '../../runtime/client.ts';
import { isConflict, isNotFound } from '../../runtime/errors.ts';
import { ConfigMaps, Pods } from '../../runtime/resources.ts';
import { Controller } from '../../runtime/controller.ts';
import { objectKey } from '../../runtime/store.ts';
import { metaTime } from '../../util/clock.ts';
import type { DaemonContext, SubController } from '../context.ts';
import { simulatedContainerID, simulatedImageID } from './runtime.ts';

/** How often a pod with held containers looks at its ConfigMap again (the kubelet's retry). */
export const BARRIER_RETRY_MS = 250;

/** A held container and the ConfigMap key it waits for. */
export interface HeldContainer {
  name: string;
  configMap: string;
  key: string;
}

/** Containers the kubelet has not created yet because they read a barrier key. */
export function heldContainers(pod: Pod): HeldContainer[] {
  const held: HeldContainer[] = [];
  for (const c of pod.spec?.containers ?? []) {
    const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
    if (!status?.state?.waiting || status.containerID) continue;
    const ref = c.env?.find((e) => e.name === ENV_CONTAINER_BARRIER)?.valueFrom?.configMapKeyRef;
    if (ref?.name && ref.key) held.push({ name: c.name, configMap: ref.name, key: ref.key });
  }
  return held;
}

/**
 * The pod status once the held containers whose keys exist are started (running, with the ids KWOK
 * gives attempt 0; ready, but a container with a postStart hook only once KWOK's stage pod-poststart
 * says the hook ran, so the containers after it start that much later), ContainersReady and Ready
 * following the containers (Ready also the readiness gates). undefined when none can start.
 */
export function releasedStatus(
  pod: Pod,
  keys: ReadonlySet<string>,
  nowMs: number,
): { containerStatuses: ContainerStatus[]; conditions: PodCondition[] } | undefined {
  const release = new Set(
    heldContainers(pod)
      .filter((h) => keys.has(h.key))
      .map((h) => h.name),
  );
  if (!release.size) return undefined;
  const at = metaTime(nowMs);
  const containerStatuses = (pod.status?.containerStatuses ?? []).map((s): ContainerStatus => {
    if (!release.has(s.name)) return s;
    const spec = pod.spec?.containers.find((c) => c.name === s.name);
    const image = spec?.image ?? s.image ?? '';
    return {
      name: s.name,
      image,
      imageID: simulatedImageID(image),
      containerID: simulatedContainerID(pod.metadata.uid ?? '', s.name, 0),
      ready: !spec?.lifecycle?.postStart,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: at } },
    };
  });
  const containersReady = containerStatuses.every((s) => s.ready);
  const conditions = pod.status?.conditions ?? [];
  const gatesReady = (pod.spec?.readinessGates ?? []).every((g) =>
    conditions.some((c) => c.type === g.conditionType && c.status === 'True'),
  );
  const set = (type: string, ok: boolean, reason: string): PodCondition => {
    const old = conditions.find((c) => c.type === type);
    const status = ok ? 'True' : 'False';
    if (old?.status === status) return ok ? old : { ...old, reason };
    return { type, status, lastTransitionTime: at, ...(ok ? {} : { reason }) } as PodCondition;
  };
  const next = [
    ...conditions.filter((c) => c.type !== 'ContainersReady' && c.type !== 'Ready'),
    set('ContainersReady', containersReady, 'ContainersNotReady'),
    set('Ready', containersReady && gatesReady, containersReady ? 'ReadinessGatesNotReady' : 'ContainersNotReady'),
  ];
  return { containerStatuses, conditions: next };
}

export function barrierController(ctx: DaemonContext): SubController {
  const { client, scope, clock } = ctx;
  const log = ctx.logger.child({ controller: 'simulated-barrier' });
  const pods = ctx.informers.informerFor<Pod>(Pods, scope.podSelector);
  const controller = new Controller({
    name: 'simulated-barrier',
    clock,
    logger: log,
    maxConcurrentReconciles: 2,
    reconcile: (key) => reconcile(key),
  });
  const relevant = (pod: Pod) => scope.owns(pod.spec?.nodeName) && !pod.metadata.deletionTimestamp && heldContainers(pod).length > 0;
  pods.addEventHandler({
    onAdd: (pod) => {
      if (relevant(pod)) controller.queue.add(objectKey(pod));
    },
    onUpdate: (_o, pod) => {
      if (relevant(pod)) controller.queue.add(objectKey(pod));
    },
  });

  async function reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const [namespace, name] = key.split('/');
    const pod = pods.lister.get(namespace, name);
    if (!pod || !relevant(pod)) return;
    const keys = new Set<string>();
    for (const cm of new Set(heldContainers(pod).map((h) => h.configMap))) {
      try {
        const obj = await client.get<ConfigMap>(ConfigMaps, cm, { namespace });
        for (const k of Object.keys(obj.data ?? {})) keys.add(k);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const status = releasedStatus(pod, keys, clock.now());
    if (!status) return { requeueAfterMs: BARRIER_RETRY_MS };
    try {
      await client.patch(
        Pods,
        name!,
        { metadata: { resourceVersion: pod.metadata.resourceVersion }, status },
        { namespace, patchType: PatchType.Merge, subresource: 'status' },
      );
    } catch (err) {
      // A newer pod is on its way through the informer; it is looked at again then.
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
    log.debug({ pod: key, keys: [...keys] }, 'started containers past their barrier');
  }

  return { name: 'simulated-barrier', start: () => controller.start(), stop: () => controller.stop() };
}
