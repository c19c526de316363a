// Executor of container meta: for running pods on the daemon's node(s) whose env reads labels or
// annotations, reports runtime-containers-meta and restarts containers left with stale env by an
// in-place metadata update (plan.ts decides both).
import { RUNTIME_CONTAINERS_META_ANNOTATION } from '../../apis/constants.ts';
import { PatchType } from '../../runtime/client.ts';
import { isNotFound } from '../../runtime/errors.ts';
import { Pods } from '../../runtime/resources.ts';
import { Controller } from '../../runtime/controller.ts';
import { objectKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Pod } from '../../apis/core-objects.ts';
import type { DaemonContext, SubController } from '../context.ts';
import { fetchHttpGet, killContainer, type HttpGet } from '../containerrecreate/kill.ts';
import { planContainerMeta, podUsesEnvFromMetadata } from './plan.ts';

const POLL_MS = 10_000;

export function containerMetaController(ctx: DaemonContext, opts: { httpGet?: HttpGet } = {}): SubController {
  const { client, scope, clock } = ctx;
  const log = ctx.logger.child({ controller: 'containermeta' });
  const pods = ctx.informers.informerFor<Pod>(Pods, scope.podSelector);
  // Containers already stopped for stale env, per pod: one kill per container, however many
  // events arrive before the new container shows up.
  const killed = new Map<string, Set<string>>();

  const controller = new Controller({
    name: 'containermeta',
    clock,
    logger: log,
    maxConcurrentReconciles: 2,
    reconcile: (key) => reconcile(key),
  });
  const relevant = (pod: Pod) => scope.owns(pod.spec?.nodeName) && podUsesEnvFromMetadata(pod);
  pods.addEventHandler({
    onAdd: (pod) => {
      if (relevant(pod)) controller.queue.add(objectKey(pod));
    },
    onUpdate: (_o, pod) => {
      if (relevant(pod)) controller.queue.add(objectKey(pod));
    },
    onDelete: (obj) => {
      killed.delete(objectKey(unwrapDeleted(obj)));
    },
  });
  scope.onNodeChange(() => {
    for (const pod of pods.lister.list()) if (relevant(pod)) controller.queue.add(objectKey(pod));
  });

  async function reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const [namespace, name] = key.split('/');
    const pod = pods.lister.get(namespace, name);
    if (!pod || pod.metadata.deletionTimestamp || pod.status?.phase !== 'Running' || !relevant(pod)) return;
    const runtime = scope.runtimeFor(pod.spec!.nodeName!);
    if (!runtime) return { requeueAfterMs: POLL_MS };
    const containers = await runtime.podContainers({ uid: pod.metadata.uid!, namespace, name });
    const plan = planContainerMeta(pod as Pod, containers);
    if (plan.annotation !== undefined) {
      try {
        await client.patch(
          Pods,
          name,
          { metadata: { annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: plan.annotation } } },
          { namespace, patchType: PatchType.Merge },
        );
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
    }
    const done = killed.get(key) ?? new Set<string>();
    killed.set(key, done);
    for (const { name: container, containerID } of plan.restart) {
      if (done.has(containerID)) continue;
      done.add(containerID);
      const spec = pod.spec?.containers?.find((c) => c.name === container);
      log.info({ pod: key, container, containerID }, 'restarting container whose env from metadata changed');
      try {
        await killContainer(
          {
            containerID,
            containerName: container,
            preStop: spec?.lifecycle?.preStop,
            ports: spec?.ports,
            podIP: pod.status?.podIP,
            graceSeconds: pod.spec?.terminationGracePeriodSeconds ?? 30,
          },
          { runtime, clock, httpGet: opts.httpGet ?? fetchHttpGet },
        );
      } catch (err) {
        done.delete(containerID);
        throw err;
      }
    }
    // The runtime's view changes without a pod event on real nodes until the kubelet reports it.
    return plan.restart.length ? { requeueAfterMs: POLL_MS } : undefined;
  }

  return { name: 'containermeta', start: () => controller.start(), stop: () => controller.stop() };
}
