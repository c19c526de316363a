// The Advanced StatefulSet controller (upstream pkg/controller/statefulset): reads the set, its pods,
// claims and ControllerRevisions from informer caches, waits while expectations say the cache is
// behind our own writes, claims pods (adopting orphans the selector matches), asks planStatefulSet
// for the round and hands the plan to the executor. All state lives in the API server.

import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';
import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { KubeObject, OwnerReference, Stored } from '../../apis/core-objects.ts';
import { AdvancedStatefulSets, ControllerRevisions, PersistentVolumeClaims, Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import type { Logger } from '../../runtime/log.ts';
import { CONFLICT_REQUEUE_MS } from '../../runtime/writes.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { WorkloadExpectations, WorkloadStep, type WorkloadKind } from '../workload.ts';
import { StatefulSetExecutor, keyOf, type ExecutorClient } from './executor.ts';
import { ordinalOf } from './ordinals.ts';
import { planStatefulSet } from './plan.ts';
import { controllerRef, type Pod } from './pods.ts';

/** What one reconcile reads; informer caches in production, plain objects in unit tests. */
export interface StatefulSetCache {
  getSet(namespace: string, name: string): Stored<StatefulSet> | undefined;
  /** Pods the set controls, plus orphans of its namespace (candidates for adoption). */
  candidatePods(set: StatefulSet): Pod[];
  /** Claims of the namespace named `<vct>-<set>-<ordinal>`. */
  claims(set: StatefulSet): PersistentVolumeClaim[];
  ownedRevisions(set: StatefulSet): ControllerRevision[];
}

export interface ReconcilerDeps {
  cache: StatefulSetCache;
  client: ExecutorClient;
  recorder: EventRecorder;
  features: FeatureGates;
  log: Logger;
  expectations: WorkloadExpectations;
  pubBudget?: PubBudgetGuard;
  clock?: Clock;
}

export class StatefulSetReconciler {
  private readonly executor: StatefulSetExecutor;
  private readonly step: WorkloadStep<StatefulSet>;
  private readonly clock: Clock;

  constructor(private readonly deps: ReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    const now = () => this.clock.now();
    this.executor = new StatefulSetExecutor({ ...deps, now });
    this.step = new WorkloadStep(statefulSetKind, { ...deps, resourceVersions: deps.expectations.resourceVersions, now });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const { expectations, cache, log } = this.deps;
    const set = cache.getSet(namespace, name);
    if (!set) {
      expectations.forget(key);
      return {};
    }
    const candidates = cache.candidatePods(set);
    const revisions = cache.ownedRevisions(set);
    const wait = expectations.wait(key, [...revisions, ...candidates], log);
    if (wait !== undefined) return { requeueAfterMs: wait };

    const pods = await this.step.claimPods(set, candidates);
    if (!pods) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
    const plan = await this.step.orReport(set, () =>
      planStatefulSet({ set, revisions, pods, pvcs: cache.claims(set), now: this.clock.now(), features: this.deps.features }),
    );
    return this.executor.execute(set, plan, pods);
  }
}

/** What the shared workload step needs to know about Advanced StatefulSets. */
const statefulSetKind: WorkloadKind<StatefulSet> = {
  type: AdvancedStatefulSets,
  failureCondition: 'FailedUpdatePod',
  emptyStatus: { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 },
  controllerRef,
};

/** The Advanced StatefulSet controllerRef of an object, if it has one. */
export function statefulSetRef(obj: KubeObject): OwnerReference | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'StatefulSet' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return ref;
}

class InformerCache implements StatefulSetCache {
  constructor(
    private readonly sets: Informer<Stored<StatefulSet>>,
    private readonly pods: Informer<Pod>,
    private readonly pvcs: Informer<Stored<PersistentVolumeClaim>>,
    private readonly revisions: Informer<ControllerRevision>,
  ) {}

  getSet(namespace: string, name: string) {
    return this.sets.lister.get(namespace, name);
  }

  candidatePods(set: StatefulSet) {
    const name = set.metadata?.name ?? '';
    const orphans = this.pods.lister
      .list(set.metadata?.namespace)
      .filter((p) => !p.metadata.ownerReferences?.some((r) => r.controller) && ordinalOf(name, p.metadata.name ?? '') >= 0);
    return [...ownedBy(this.pods.lister, set), ...orphans];
  }

  claims(set: StatefulSet) {
    const name = set.metadata?.name ?? '';
    const prefixes = (set.spec?.volumeClaimTemplates ?? []).map((t) => `${t.metadata?.name ?? ''}-${name}-`);
    if (!prefixes.length) return [];
    return this.pvcs.lister.list(set.metadata?.namespace).filter((c) => prefixes.some((p) => (c.metadata.name ?? '').startsWith(p)));
  }

  ownedRevisions(set: StatefulSet) {
    return ownedBy(this.revisions.lister, set);
  }
}

export interface HandlerDeps {
  queue: { add(key: string, opts?: { priority?: number }): void };
  expectations: WorkloadExpectations;
  getSet(namespace: string, name: string): StatefulSet | undefined;
  listSets(namespace: string): StatefulSet[];
}

/** Event handlers: observe expectations and enqueue the owning set (or, for an orphan, the sets that may adopt it). */
export function makeHandlers(deps: HandlerDeps) {
  const { scale: scaleExpectations, resourceVersions, revisions: revisionExpectations } = deps.expectations;
  const keyFor = (obj: KubeObject, ref: OwnerReference) => `${obj.metadata.namespace ?? ''}/${ref.name}`;
  const enqueueOwner = (obj: KubeObject, ref: OwnerReference | undefined, initial = false) => {
    if (!ref) return;
    const set = deps.getSet(obj.metadata.namespace ?? '', ref.name);
    if (!set || set.metadata?.uid !== ref.uid) return;
    deps.queue.add(keyFor(obj, ref), initial ? { priority: LowPriority } : {});
  };
  const enqueueAdopters = (p: Pod) => {
    for (const set of deps.listSets(p.metadata.namespace ?? '')) {
      try {
        const selector = labelSelectorAsSelector(set.spec?.selector);
        if (selector.requirements.length > 0 && selector.matches(p.metadata.labels)) deps.queue.add(keyOf(set));
      } catch {
        // a set with a bad selector adopts nothing
      }
    }
  };
  const podGone = (p: Pod) => {
    const ref = statefulSetRef(p);
    if (!ref) return;
    scaleExpectations.observeScale(keyFor(p, ref), 'delete', p.metadata.name ?? '');
    enqueueOwner(p, ref);
  };

  const set: EventHandler<Stored<StatefulSet>> = {
    onAdd: (s, initial) => deps.queue.add(keyOf(s), initial ? { priority: LowPriority } : {}),
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) deps.queue.add(keyOf(cur));
    },
    onDelete: (obj) => {
      const s = unwrapDeleted(obj);
      deps.expectations.forget(keyOf(s));
      deps.queue.add(keyOf(s));
    },
  };

  const pod: EventHandler<Pod> = {
    onAdd: (p, initial) => {
      resourceVersions.observe(p);
      if (p.metadata.deletionTimestamp) return podGone(p);
      const ref = statefulSetRef(p);
      if (!ref) {
        if (!p.metadata.ownerReferences?.some((r) => r.controller)) enqueueAdopters(p);
        return;
      }
      scaleExpectations.observeScale(keyFor(p, ref), 'create', p.metadata.name ?? '');
      enqueueOwner(p, ref, initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      resourceVersions.observe(cur);
      if (cur.metadata.deletionTimestamp) return podGone(cur);
      const ref = statefulSetRef(cur);
      const oldRef = statefulSetRef(old);
      if (oldRef && oldRef.uid !== ref?.uid) enqueueOwner(old, oldRef);
      if (ref) enqueueOwner(cur, ref);
      else if (!cur.metadata.ownerReferences?.some((r) => r.controller)) enqueueAdopters(cur);
    },
    onDelete: (obj) => {
      const p = unwrapDeleted(obj);
      resourceVersions.delete(p);
      podGone(p);
    },
  };

  // Claims are not owned by the set (unless whenDeleted=Delete): a change enqueues the set its name points at.
  const claim: EventHandler<Stored<PersistentVolumeClaim>> = {
    onAdd: (c, initial) => enqueueClaimSets(c, initial),
    onUpdate: (_old, cur) => enqueueClaimSets(cur),
    onDelete: (obj) => enqueueClaimSets(unwrapDeleted(obj)),
  };
  function enqueueClaimSets(c: KubeObject, initial = false) {
    const name = c.metadata.name ?? '';
    for (const s of deps.listSets(c.metadata.namespace ?? '')) {
      const setName = s.metadata?.name ?? '';
      if ((s.spec?.volumeClaimTemplates ?? []).some((t) => ordinalOf(`${t.metadata?.name ?? ''}-${setName}`, name) >= 0)) {
        deps.queue.add(keyOf(s), initial ? { priority: LowPriority } : {});
      }
    }
  }

  const revision: EventHandler<ControllerRevision> = {
    onAdd: (r, initial) => {
      resourceVersions.observe(r);
      const ref = statefulSetRef(r);
      if (!ref) return;
      revisionExpectations.observeScale(keyFor(r, ref), 'create', r.metadata.name ?? '');
      enqueueOwner(r, ref, initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      resourceVersions.observe(cur);
      enqueueOwner(cur, statefulSetRef(cur));
    },
    onDelete: (obj) => resourceVersions.delete(unwrapDeleted(obj)),
  };

  return { set, pod, claim, revision };
}

export const statefulSetController: ControllerSetup = {
  name: 'statefulset',
  kinds: ['StatefulSet'],
  access: [
    access(AdvancedStatefulSets, READ),
    access(AdvancedStatefulSets, ['update', 'patch'], 'status'),
    access(Pods, [...READ, ...WRITE]),
    access(Pods, ['update', 'patch'], 'status'),
    access(PersistentVolumeClaims, [...READ, 'create', 'patch', 'delete']),
    access(ControllerRevisions, [...READ, ...WRITE]),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const sets = deps.informers.informerFor<Stored<StatefulSet>>(AdvancedStatefulSets, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const pvcs = deps.informers.informerFor<Stored<PersistentVolumeClaim>>(PersistentVolumeClaims, scope);
    const revisions = deps.informers.informerFor<ControllerRevision>(ControllerRevisions, scope);
    const expectations = new WorkloadExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new StatefulSetReconciler({
      cache: new InformerCache(sets, pods, pvcs, revisions),
      client: deps.client,
      recorder: deps.recorder,
      features: deps.features,
      log: deps.logger,
      expectations,
      pubBudget: deps.pubBudget,
    });
    const controller = managerController('statefulset', deps, (key) => reconciler.reconcile(key));
    const handlers = makeHandlers({
      queue: controller.queue,
      expectations,
      getSet: (ns, name) => sets.lister.get(ns, name),
      listSets: (ns) => sets.lister.list(ns),
    });
    sets.addEventHandler(handlers.set);
    pods.addEventHandler(handlers.pod);
    pvcs.addEventHandler(handlers.claim);
    revisions.addEventHandler(handlers.revision);
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [sets, pods, pvcs, revisions]) };
  },
};
