// The PodUnavailableBudget controller (upstream pkg/controller/podunavailablebudget): reads the
// budget, the pods it covers and their workloads from informer caches, waits while the cache is
// behind our own pod patches, asks planPubStatus (plan.ts) for the round and hands the plan to the
// executor. The pod webhook writes the same status (each admitted disruption); both go through the
// process's PubBudgetGuard, so inside one process they take turns and the round plans from the
// newest version, and across processes the resourceVersion turns a race into a 409 and a fresh round.

import type { LabelSelector, Pod, KubeObject } from '../../apis/core-objects.ts';
import type { KubeClient, Scale } from '../../runtime/client.ts';
import {
  AdvancedStatefulSets,
  CloneSets,
  Deployments,
  Pods,
  PodUnavailableBudgets,
  ReplicaSets,
  StatefulSets,
  type ResourceType,
} from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { OwnerUIDIndex, splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';
import { access, READ } from '../../runtime/rbac.ts';
import type { RestMapper } from '../../runtime/restmapper.ts';
import { writeRaceResult } from '../../runtime/writes.ts';
import { APPS_GROUP, POLICY_GROUP } from '../../apis/constants.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { parseToLabelSelector } from '../../util/labelselector.ts';
import { apiGroupOf, relatedPubName, type StoredPub } from '../../util/pub.ts';
import { pubCoversPod, resolvePubTargets, type PubTargetCache, type Workload } from '../../util/pub-targets.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { PubExecutor } from './executor.ts';
import { planPub } from './plan.ts';
import { FailedPlanReporter, type FailedPlanKind } from '../failed-plan.ts';

export interface PubCache extends PubTargetCache {
  getPub(namespace: string, name: string): StoredPub | undefined;
  pubsIn(namespace: string): StoredPub[];
}

export interface PubReconcilerDeps {
  cache: PubCache;
  client: Pick<KubeClient, 'updateStatus' | 'patch'>;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  guard?: PubBudgetGuard;
  clock?: Clock;
}

export class PubReconciler {
  private readonly clock: Clock;
  private readonly executor: PubExecutor;
  private readonly failures: FailedPlanReporter<StoredPub>;

  constructor(private readonly deps: PubReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new PubExecutor(deps);
    this.failures = new FailedPlanReporter(pubKind, { ...deps, now: () => this.clock.now() });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { cache, guard, log, resourceVersions } = this.deps;
    const { namespace = '', name } = splitKey(key);
    const cached = cache.getPub(namespace, name);
    if (!cached || cached.metadata.deletionTimestamp) {
      guard?.forget(key);
      return {};
    }
    const targets = await resolvePubTargets(cached, cache);
    const wait = expectationGate(
      targets.pods.map((p) => resourceVersions.check(p, 'pod resourceVersion')),
      log,
    );
    if (wait !== undefined) return { requeueAfterMs: wait };
    const round = async (): Promise<ReconcileResult> => {
      const pub = guard ? guard.newest(key, cached) : cached;
      const plan = await this.failures.orReport(pub, () =>
        planPub({ pub, pods: targets.pods, totalReplicas: targets.totalReplicas, now: this.clock.now() }),
      );
      return this.executor.execute(key, pub, plan);
    };
    return guard ? guard.exclusive(key, round) : round();
  }
}

/**
 * A budget as the failed-plan idiom reports it: its FailedSync event (the status has no
 * conditions, so the condition it adds does not survive the API server's pruning).
 */
const pubKind: FailedPlanKind<StoredPub> = { type: PodUnavailableBudgets, failureCondition: 'FailedSync' };

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
    const reconciler = new PubReconciler({
      cache,
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      resourceVersions: new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs }),
      guard: deps.pubBudget,
    });
    const controller = managerController('podunavailablebudget', deps, (key) => reconciler.reconcile(key));
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
