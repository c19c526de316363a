// The PodUnavailableBudget controller (upstream pkg/controller/podunavailablebudget): reads the
// budget, the pods it covers and their workloads from informer caches, writes the related-pub
// annotation onto covered pods that lack it (pods created before the budget), asks planPubStatus
// for the status and writes it with the resourceVersion it was computed from. The pod webhook
// writes the same status (each admitted disruption); both go through the process's
// PubBudgetGuard, so inside one process they take turns and start from the newest version, and
// across processes the resourceVersion turns a race into a 409 and a fresh round.

import type { LabelSelector, Pod, KubeObject } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient, type Scale } from '../../runtime/client.ts';
import {
  AdvancedStatefulSets,
  CloneSets,
  Deployments,
  PodUnavailableBudgets,
  Pods,
  ReplicaSets,
  StatefulSets,
  type ResourceType,
} from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import { OwnerUIDIndex, splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';
import { access, READ } from '../../runtime/rbac.ts';
import type { RestMapper } from '../../runtime/restmapper.ts';
import { writeRaceResult, writeStatus } from '../../runtime/writes.ts';
import { APPS_GROUP, POLICY_GROUP } from '../../apis/constants.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { parseToLabelSelector } from '../../util/labelselector.ts';
import { apiGroupOf, planPubStatus, relatedPubAnnotations, relatedPubName, type StoredPub } from '../../util/pub.ts';
import { pubCoversPod, resolvePubTargets, type PubTargetCache, type Workload } from '../../util/pub-targets.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';

export interface PubCache extends PubTargetCache {
  getPub(namespace: string, name: string): StoredPub | undefined;
  pubsIn(namespace: string): StoredPub[];
}

export interface PubReconcilerDeps {
  cache: PubCache;
  client: Pick<KubeClient, 'updateStatus' | 'patch'>;
  recorder: EventRecorder;
  guard?: PubBudgetGuard;
  clock?: Clock;
}

export async function reconcilePub(key: string, deps: PubReconcilerDeps): Promise<ReconcileResult> {
  const { namespace = '', name } = splitKey(key);
  const cached = deps.cache.getPub(namespace, name);
  if (!cached || cached.metadata.deletionTimestamp) {
    deps.guard?.forget(key);
    return {};
  }
  const targets = await resolvePubTargets(cached, deps.cache);
  if (!targets.pods.length) {
    deps.recorder.event(cached, 'Normal', 'NoPods', 'Sync', 'No matching pods found');
  } else {
    // Pods created before the budget carry no related-pub annotation: the pod webhook would let
    // them go unguarded.
    for (const pod of targets.pods) {
      if (relatedPubName(pod)) continue;
      try {
        await deps.client.patch(
          Pods,
          pod.metadata.name ?? '',
          { metadata: { annotations: relatedPubAnnotations(name) } },
          {
            namespace,
            patchType: PatchType.Merge,
          },
        );
      } catch (err) {
        const ended = writeRaceResult(err);
        if (!ended) throw err;
      }
    }
  }
  const round = async (): Promise<ReconcileResult> => {
    const pub = deps.guard ? deps.guard.newest(key, cached) : cached;
    const now = new Date((deps.clock ?? realClock).now());
    let plan;
    try {
      plan = planPubStatus({ pub, pods: targets.pods, totalReplicas: targets.totalReplicas, now });
    } catch (err) {
      deps.recorder.event(
        pub,
        'Warning',
        'CalculateExpectedPodCountFailed',
        'Sync',
        `Failed to calculate the number of expected pods: ${(err as Error).message}`,
      );
      return {};
    }
    for (const podName of plan.notDeleted) {
      const pod = targets.pods.find((p) => p.metadata.name === podName);
      if (pod)
        deps.recorder.event(
          pod,
          'Warning',
          'NotDeleted',
          'Sync',
          `Pod was expected by PUB ${namespace}/${name} to be deleted but it wasn't`,
        );
    }
    const { written, ended } = await writeStatus(deps.client, PodUnavailableBudgets, pub, plan.status);
    if (ended) return ended;
    if (written) deps.guard?.remember(key, written);
    return plan.recheckAt ? { requeueAfter: Math.max(plan.recheckAt.getTime() - now.getTime(), 0) + 1 } : {};
  };
  return deps.guard ? deps.guard.exclusive(key, round) : round();
}

/** The workload types read from informers; others are read through their scale subresource. */
function informerTypeFor(apiVersion: string, kind: string): ResourceType | undefined {
  const group = apiGroupOf(apiVersion);
  if (group === 'apps') return [Deployments, ReplicaSets, StatefulSets].find((t) => t.kind === kind);
  if (group === APPS_GROUP) return [CloneSets, AdvancedStatefulSets].find((t) => t.kind === kind);
  return undefined;
}

/**
 * The pods, ReplicaSets and workloads of the caches; any other workload (other Kruise kinds,
 * third-party CRDs) is read through its scale subresource, found by API discovery.
 */
function informerPubCache(
  client: Pick<KubeClient, 'getScale'>,
  mapper: Pick<RestMapper, 'mapping'>,
  pubs: Informer<StoredPub>,
  pods: Informer<Pod>,
  workloads: ReadonlyMap<ResourceType, Informer<Workload>>,
): PubCache {
  return {
    getPub: (ns, n) => pubs.lister.get(ns, n),
    pubsIn: (ns) => pubs.lister.list(ns),
    podsIn: (ns) => pods.lister.list(ns),
    podsOwnedBy: (uid) => pods.lister.byIndex(OwnerUIDIndex, uid),
    replicaSetsOwnedBy: (uid) => workloads.get(ReplicaSets)?.lister.byIndex(OwnerUIDIndex, uid) ?? [],
    async workload(apiVersion, kind, namespace, name) {
      const type = informerTypeFor(apiVersion, kind);
      if (type) return workloads.get(type)?.lister.get(namespace, name);
      const mapping = await mapper.mapping(apiVersion, kind);
      if (!mapping?.scale) throw new Error(`cannot read replicas of ${kind} ${apiVersion}: it has no scale subresource`);
      try {
        const scale = await client.getScale(mapping, name, { namespace });
        return scaleWorkload(scale);
      } catch (err) {
        if (writeRaceResult(err)) return undefined;
        throw err;
      }
    },
  };
}

/** A workload as its Scale shows it: the workload's metadata (uid), spec.replicas, and status.selector. */
function scaleWorkload(scale: Scale): Workload {
  const workload: Workload = { metadata: scale.metadata, spec: { replicas: scale.spec?.replicas ?? 0 } };
  if (scale.status?.selector) {
    try {
      workload.scaleSelector = parseToLabelSelector(scale.status.selector) as LabelSelector;
    } catch {
      // An unparsable selector finds no pods, as upstream, which fails the lookup the same way.
    }
  }
  return workload;
}

export const podUnavailableBudgetController: ControllerSetup = {
  name: 'podunavailablebudget',
  kinds: [`PodUnavailableBudget.${POLICY_GROUP}`],
  gate: ['PodUnavailableBudgetDeleteGate', 'PodUnavailableBudgetUpdateGate'],
  access: [
    access(PodUnavailableBudgets, READ),
    access(PodUnavailableBudgets, ['update', 'patch'], 'status'),
    access(Pods, [...READ, 'patch']),
    access(Deployments, READ),
    access(ReplicaSets, READ),
    access(StatefulSets, READ),
    access(CloneSets, READ),
    access(AdvancedStatefulSets, READ),
    // Any workload with a scale subresource may be a targetRef (upstream: groups=*,resources=*/scale).
    { group: '*', resources: ['*/scale'], verbs: ['get'] },
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const pubs = deps.informers.informerFor<StoredPub>(PodUnavailableBudgets, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const workloads = new Map<ResourceType, Informer<Workload>>();
    for (const type of [Deployments, ReplicaSets, StatefulSets]) workloads.set(type, deps.informers.informerFor<Workload>(type, scope));
    if (deps.served('CloneSet')) workloads.set(CloneSets, deps.informers.informerFor<Workload>(CloneSets, scope));
    if (deps.served('StatefulSet')) workloads.set(AdvancedStatefulSets, deps.informers.informerFor<Workload>(AdvancedStatefulSets, scope));
    const cache = informerPubCache(deps.client, deps.restMapper, pubs, pods, workloads);
    const controller = managerController('podunavailablebudget', deps, (key) =>
      reconcilePub(key, { cache, client: deps.client, recorder: deps.recorder, guard: deps.pubBudget }),
    );
    const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    pubs.addEventHandler({
      onAdd: (p) => controller.queue.add(keyOf(p)),
      onUpdate: (_, p) => controller.queue.add(keyOf(p)),
      onDelete: (p) => controller.queue.add(keyOf(unwrapDeleted(p))),
    });
    // A pod change reaches the budget it names, or, for a pod not yet annotated, every budget that covers it.
    const enqueueForPod = async (pod: Pod) => {
      const ns = pod.metadata.namespace ?? '';
      const named = relatedPubName(pod);
      if (named) {
        controller.queue.add(`${ns}/${named}`);
        return;
      }
      for (const pub of cache.pubsIn(ns)) if (await pubCoversPod(pub, pod, cache)) controller.queue.add(keyOf(pub));
    };
    const podHandler: EventHandler<Pod> = {
      onAdd: (p) => enqueueForPod(p),
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) return enqueueForPod(cur);
      },
      onDelete: (p) => enqueueForPod(unwrapDeleted(p)),
    };
    pods.addEventHandler(podHandler);
    // Replicas decide totalReplicas: a workload's change reaches the budgets of its namespace.
    const workloadHandler: EventHandler<Workload> = {
      onUpdate: (old, cur) => {
        if (old.spec?.replicas === cur.spec?.replicas && !!old.metadata.deletionTimestamp === !!cur.metadata.deletionTimestamp) return;
        for (const pub of cache.pubsIn(cur.metadata.namespace ?? '')) controller.queue.add(keyOf(pub));
      },
      onDelete: (w) => {
        for (const pub of cache.pubsIn(unwrapDeleted(w).metadata.namespace ?? '')) controller.queue.add(keyOf(pub));
      },
    };
    for (const informer of workloads.values()) informer.addEventHandler(workloadHandler);
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [pubs, pods, ...workloads.values()]) };
  },
};
