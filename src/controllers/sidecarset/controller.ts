// The SidecarSet controller (upstream pkg/controller/sidecarset; spec §6.3): reads the SidecarSet,
// the pods its selector picks, their Namespaces and its ControllerRevisions from informer caches,
// waits while expectations say the cache is behind its own writes, asks planSidecarSet for the
// round and hands the plan to the executor. All state is in the API server (the pods' hash
// annotations say what each runs), so a restarted manager resumes where the pods are.
import { isDeepStrictEqual } from 'node:util';
import type { ControllerRevision, Namespace, Pod } from '../../apis/core-objects.ts';
import { SIDECARSET_NAME_REVISION_LABEL } from '../../apis/constants.ts';
import { ControllerRevisions, Namespaces, Pods, SidecarSets } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { isPodReady } from '../../util/pod.ts';
import { injectedSidecarSetNames, isSidecarUpdateCompleted, podMatchesSidecarSet, type StoredSidecarSet } from '../../util/sidecarset.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { WorkloadExpectations } from '../workload.ts';
import { keyOf } from '../workload-writes.ts';
import { SidecarSetExecutor, type ExecutorDeps } from './executor.ts';
import { planSidecarSet } from './plan.ts';
import { FailedPlanReporter } from '../failed-plan.ts';

/** What one reconcile reads; informer caches in production, plain objects in unit tests. */
export interface SidecarSetCache {
  getSidecarSet(name: string): StoredSidecarSet | undefined;
  listSidecarSets(): StoredSidecarSet[];
  /** Pods in every namespace whose labels match the selector. */
  selectedPods(s: StoredSidecarSet): Pod[];
  namespace(name: string): Namespace | undefined;
  revisions(s: StoredSidecarSet): ControllerRevision[];
}

export interface SidecarSetReconcilerDeps extends ExecutorDeps {
  cache: SidecarSetCache;
  clock?: Clock;
}

export class SidecarSetReconciler {
  private readonly clock: Clock;
  private readonly executor: SidecarSetExecutor;
  /** A SidecarSet's status has no conditions: a failed plan is an Event, then terminal. */
  private readonly failures: FailedPlanReporter<StoredSidecarSet>;

  constructor(private readonly deps: SidecarSetReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new SidecarSetExecutor(deps);
    this.failures = new FailedPlanReporter({ type: SidecarSets }, { recorder: deps.recorder, log: deps.log, now: () => this.clock.now() });
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const { cache, expectations, log } = this.deps;
    const s = cache.getSidecarSet(name);
    if (!s) {
      expectations.forget(keyOf({ metadata: { name } }));
      return {};
    }
    // A selector the webhook would refuse (an object stored before it): said, not crashed on or hot-looped.
    const selected = await this.failures.orReport(s, () => cache.selectedPods(s));
    const wait = expectations.wait(keyOf(s), selected, log);
    if (wait !== undefined) return { requeueAfterMs: wait };

    const namespaces = new Map<string, Namespace>();
    if (s.spec?.namespaceSelector) {
      for (const p of selected) {
        const ns = p.metadata.namespace ?? '';
        const obj = cache.namespace(ns);
        if (obj) namespaces.set(ns, obj);
      }
    }
    const plan = planSidecarSet(
      {
        sidecarSet: s,
        pods: selected,
        namespaces,
        revisions: cache.revisions(s),
        revisionNamespace: this.deps.revisionNamespace,
        now: new Date(this.clock.now()),
      },
      (pod) => this.matchingSidecarSetNames(pod),
    );
    return this.executor.execute(s, plan);
  }

  private matchingSidecarSetNames(pod: Pod): string[] {
    const ns = this.deps.cache.namespace(pod.metadata.namespace ?? '');
    return this.deps.cache
      .listSidecarSets()
      .filter((x) => podMatchesSidecarSet(pod, x, ns))
      .map((x) => x.metadata.name);
  }
}

/**
 * How long a round waits when pods only come or go (created, deletion started, deleted; upstream
 * asks at once, or not at all for a deletion). A new pod was injected with the current sidecars and
 * a leaving one takes no upgrade, so the round only counts them in the status; meanwhile every other
 * pod that comes or goes joins the same round. At 200 pod creations/s a round per creation, each
 * over every pod the SidecarSet manages, took a quarter of the manager's main thread and held back
 * the pod webhook; deleting 2000 injected pods took 370 rounds (docs/benchmarks.md, issue 20).
 */
export const COUNTING_ROUND_DELAY_MS = 1_000;

/**
 * How long a round waits after an in-place sidecar upgrade finished on a pod (its sidecar left the
 * imageID recorded before the upgrade) while the pod stayed ready: upstream's delay for a change of
 * sidecar consistency. It paces a rollout as OpenKruise's does, one maxUnavailable batch per
 * delay; v1.8.2's e2e "sidecarSet upgrade cold sidecar container image, and paused" pauses the
 * SidecarSet 5 s after an image change and expects only the first pod upgraded.
 */
export const UPGRADE_FINISHED_ROUND_DELAY_MS = 5_000;

/**
 * When a pod update needs a round of the SidecarSets injected into it: undefined for none, else
 * the delay. Upstream's predicate (deletion started, readiness, sidecar consistency after 5 s,
 * labels) widened to all that the planner reads: labels, annotations, containers and their
 * images, phase, readiness, and each container status's ready / image / imageID, at once — but a
 * finished in-place upgrade alone after UPGRADE_FINISHED_ROUND_DELAY_MS, as upstream. Not a
 * condition someone else added (PodGC's DisruptionTarget before it deletes a pod, a readiness
 * gate's own), restart counts or container states; and, as upstream, nothing more once the pod's
 * deletion has started.
 */
export function podUpdateRoundDelay(old: Pod, cur: Pod): number | undefined {
  if (old.metadata.resourceVersion === cur.metadata.resourceVersion || old.metadata.deletionTimestamp) return undefined;
  if (cur.metadata.deletionTimestamp) return COUNTING_ROUND_DELAY_MS;
  const { labels, annotations } = old.metadata;
  if (!isDeepStrictEqual(labels ?? {}, cur.metadata.labels ?? {}) || !isDeepStrictEqual(annotations ?? {}, cur.metadata.annotations ?? {}))
    return 0;
  if (old.status?.phase !== cur.status?.phase || isPodReady(old) !== isPodReady(cur)) return 0;
  const images = (p: Pod) =>
    [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].map((c) => `${c.name}=${c.image}`).join('\n');
  if (images(old) !== images(cur)) return 0;
  const statuses = (p: Pod) =>
    (p.status?.containerStatuses ?? []).map((cs) => `${cs.name}=${cs.ready}/${cs.image}/${cs.imageID ?? ''}`).join('\n');
  if (statuses(old) === statuses(cur)) return undefined;
  return upgradeFinished(old, cur) ? UPGRADE_FINISHED_ROUND_DELAY_MS : 0;
}

/** Some sidecar of the pod left the imageID recorded before its in-place upgrade (isSidecarUpdateCompleted turned true). */
function upgradeFinished(old: Pod, cur: Pod): boolean {
  const sidecarSets = injectedSidecarSetNames(cur);
  const containers = new Set(cur.spec?.containers.map((c) => c.name));
  return !isSidecarUpdateCompleted(old, sidecarSets, containers) && isSidecarUpdateCompleted(cur, sidecarSets, containers);
}

/**
 * Whether a SidecarSet update needs a round (upstream's predicate): its spec changed. Not for the
 * status a round just wrote: at a steady stream of pod creations that doubled the rounds, each over
 * every pod the SidecarSet manages.
 */
export function sidecarSetSpecChanged(old: Pick<StoredSidecarSet, 'metadata'>, cur: Pick<StoredSidecarSet, 'metadata'>): boolean {
  return old.metadata.generation !== cur.metadata.generation;
}

/** Informer-backed cache. */
class InformerCache implements SidecarSetCache {
  constructor(
    private readonly sidecarSets: Informer<StoredSidecarSet>,
    private readonly pods: Informer<Pod>,
    private readonly namespaces: Informer<Namespace>,
    private readonly revisionInformer: Informer<ControllerRevision>,
    private readonly revisionNamespace: string,
  ) {}

  getSidecarSet(name: string) {
    return this.sidecarSets.lister.get(name);
  }

  listSidecarSets() {
    return this.sidecarSets.lister.list();
  }

  selectedPods(s: StoredSidecarSet) {
    return this.pods.lister.list(undefined, labelSelectorAsSelector(s.spec?.selector));
  }

  namespace(name: string) {
    return this.namespaces.lister.get(name);
  }

  revisions(s: StoredSidecarSet) {
    return this.revisionInformer.lister
      .list(this.revisionNamespace)
      .filter((r) => r.metadata.labels?.[SIDECARSET_NAME_REVISION_LABEL] === s.metadata.name);
  }
}

export const sidecarSetController: ControllerSetup = {
  name: 'sidecarset',
  kinds: ['SidecarSet'],
  access: [
    access(SidecarSets, READ),
    access(SidecarSets, ['update', 'patch'], 'status'),
    access(Pods, [...READ, 'update', 'patch']),
    access(Namespaces, READ),
    access(ControllerRevisions, [...READ, ...WRITE]),
  ],
  setup(deps: ControllerDeps) {
    const sidecarSets = deps.informers.informerFor<StoredSidecarSet>(SidecarSets);
    const pods = deps.informers.informerFor<Pod>(Pods, deps.namespace ? { namespace: deps.namespace } : {});
    const namespaces = deps.informers.informerFor<Namespace>(Namespaces);
    const revisions = deps.informers.informerFor<ControllerRevision>(ControllerRevisions);
    const expectations = new WorkloadExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new SidecarSetReconciler({
      cache: new InformerCache(sidecarSets, pods, namespaces, revisions, deps.managerNamespace),
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      revisionNamespace: deps.managerNamespace,
      expectations,
      pubBudget: deps.pubBudget,
      features: deps.features,
    });
    const controller = managerController('sidecarset', deps, (key) => reconciler.reconcile(key));

    const sidecarSetHandler: EventHandler<StoredSidecarSet> = {
      onAdd: (s, initial) => controller.queue.add(s.metadata.name, initial ? { priority: LowPriority } : {}),
      onUpdate: (old, cur) => {
        if (sidecarSetSpecChanged(old, cur)) controller.queue.add(cur.metadata.name);
      },
    };
    // A pod concerns the SidecarSets injected into it (the only pods they manage).
    const enqueueFor = (p: Pod, delayMs: number) => {
      for (const name of injectedSidecarSetNames(p)) {
        if (delayMs) controller.queue.addAfter(name, delayMs);
        else controller.queue.add(name);
      }
    };
    const podHandler: EventHandler<Pod> = {
      onAdd: (p, initial) => {
        if (!initial) enqueueFor(p, COUNTING_ROUND_DELAY_MS);
      },
      onUpdate: (old, cur) => {
        expectations.resourceVersions.observe(cur);
        const delayMs = podUpdateRoundDelay(old, cur);
        if (delayMs !== undefined) enqueueFor(cur, delayMs);
      },
      onDelete: (obj) => {
        const p = unwrapDeleted(obj);
        expectations.resourceVersions.delete(p);
        enqueueFor(p, COUNTING_ROUND_DELAY_MS);
      },
    };
    // Our revisions coming into the cache: the round that created one waited for it.
    const revisionHandler: EventHandler<ControllerRevision> = {
      onAdd: (r) => {
        const owner = sidecarSets.lister.get(r.metadata.labels?.[SIDECARSET_NAME_REVISION_LABEL] ?? '');
        if (owner) expectations.revisions.observeScale(keyOf(owner), 'create', r.metadata.name ?? '');
      },
    };
    sidecarSets.addEventHandler(sidecarSetHandler);
    pods.addEventHandler(podHandler);
    revisions.addEventHandler(revisionHandler);
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [sidecarSets, pods, namespaces, revisions]) };
  },
};
