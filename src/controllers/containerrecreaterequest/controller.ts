// The ContainerRecreateRequest controller of kruise-manager (gate KruiseDaemon): reads the CRR and
// its pod from informer caches, asks planContainerRecreateRequest what to write and hands that to
// the executor. CRR events and changes of a pod's container statuses or deletion (which is what the
// daemon waits on) enqueue the CRRs of that pod.

import type { Pod } from '../../apis/core-objects.ts';
import type { KubeClient } from '../../runtime/client.ts';
import { ContainerRecreateRequests, Pods } from '../../runtime/resources.ts';
import { isNotFound } from '../../runtime/errors.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { CRR_POD_UID_LABEL } from '../../apis/constants.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { FailedPlanReporter } from '../failed-plan.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { CRRExecutor, type ExecutorClient } from './executor.ts';
import { planContainerRecreateRequest, type CRR } from './plan.ts';

/** CRRs by `<namespace>/<spec.podName>`. */
export const CRRPodIndex = 'crrPod';

/** What one reconcile reads; informer caches in production, plain objects in unit tests. */
export interface CRRCache {
  getCRR(namespace: string, name: string): CRR | undefined;
  getPod(namespace: string, name: string): Pod | undefined;
}

export interface CRRReconcilerDeps {
  cache: CRRCache;
  client: ExecutorClient & Pick<KubeClient, 'get'>;
  recorder: EventRecorder;
  log: Logger;
  clock?: Clock;
}

export class CRRReconciler {
  private readonly clock: Clock;
  private readonly executor: CRRExecutor;
  private readonly failures: FailedPlanReporter<CRR>;

  constructor(private readonly deps: CRRReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    const now = () => this.clock.now();
    this.executor = new CRRExecutor({ client: deps.client, log: deps.log, now });
    this.failures = new FailedPlanReporter({ type: ContainerRecreateRequests }, { recorder: deps.recorder, log: deps.log, now });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const crr = this.deps.cache.getCRR(namespace, name);
    if (!crr) return {};
    const pod = await this.podOf(crr);

    const plan = await this.failures.orReport(crr, () => planContainerRecreateRequest({ crr, pod, now: this.clock.now() }));
    if (plan.note) this.deps.log.debug({ crr: key }, plan.note);
    const requeueAfterMs = await this.executor.execute(crr, pod, plan);
    return requeueAfterMs ? { requeueAfterMs } : {};
  }

  /**
   * The pod from the cache; a miss or another UID is confirmed with the API server before the
   * plan may call the pod gone, since the CRR can be newer than what the pod cache has seen.
   */
  private async podOf(crr: CRR): Promise<Pod | undefined> {
    const namespace = crr.metadata.namespace ?? '';
    const podName = crr.spec?.podName ?? '';
    const cached = this.deps.cache.getPod(namespace, podName);
    if (cached && cached.metadata.uid === crr.metadata.labels?.[CRR_POD_UID_LABEL]) return cached;
    if (!podName) return undefined;
    try {
      return await this.deps.client.get<Pod>(Pods, podName, { namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

const crrKey = (c: CRR) => `${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`;

function statusesChanged(old: Pod, cur: Pod): boolean {
  return (
    JSON.stringify(old.status?.containerStatuses ?? []) !== JSON.stringify(cur.status?.containerStatuses ?? []) ||
    JSON.stringify(old.status?.initContainerStatuses ?? []) !== JSON.stringify(cur.status?.initContainerStatuses ?? [])
  );
}

export function makeHandlers(
  queue: { add(key: string, opts?: { priority?: number }): void },
  crrsOfPod: (namespace: string, pod: string) => CRR[],
) {
  const enqueuePod = (pod: Pod) => {
    for (const c of crrsOfPod(pod.metadata.namespace ?? '', pod.metadata.name ?? '')) queue.add(crrKey(c));
  };
  const crr: EventHandler<CRR> = {
    onAdd: (c, initial) => queue.add(crrKey(c), initial ? { priority: LowPriority } : {}),
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) queue.add(crrKey(cur));
    },
    onDelete: (obj) => queue.add(crrKey(unwrapDeleted(obj))),
  };
  const pod: EventHandler<Pod> = {
    onUpdate: (old, cur) => {
      if ((!old.metadata.deletionTimestamp && cur.metadata.deletionTimestamp) || statusesChanged(old, cur)) enqueuePod(cur);
    },
    onDelete: (obj) => enqueuePod(unwrapDeleted(obj)),
  };
  return { crr, pod };
}

export const containerRecreateRequestController: ControllerSetup = {
  name: 'containerrecreaterequest',
  kinds: ['ContainerRecreateRequest'],
  workersFlag: 'crr',
  gate: 'KruiseDaemon',
  access: [
    access(ContainerRecreateRequests, [...READ, 'update', 'patch', 'delete']),
    access(ContainerRecreateRequests, ['update', 'patch'], 'status'),
    access(Pods, [...READ, 'update', 'patch']),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const crrs = deps.informers.informerFor<CRR>(ContainerRecreateRequests, scope);
    crrs.addIndexers({ [CRRPodIndex]: (c) => [`${c.metadata.namespace ?? ''}/${c.spec?.podName ?? ''}`] });
    const pods = deps.informers.informerFor<Pod>(Pods, scope);

    const reconciler = new CRRReconciler({
      cache: {
        getCRR: (ns, name) => crrs.lister.get(ns, name),
        getPod: (ns, name) => pods.lister.get(ns, name),
      },
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
    });
    const controller = managerController('containerrecreaterequest', deps, (key) => reconciler.reconcile(key));
    const handlers = makeHandlers(controller.queue, (ns, pod) => crrs.lister.byIndex(CRRPodIndex, `${ns}/${pod}`));
    crrs.addEventHandler(handlers.crr);
    pods.addEventHandler(handlers.pod);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [crrs, pods]),
    };
  },
};
