// The SidecarSet controller (upstream pkg/controller/sidecarset; spec §6.3): reads the SidecarSet,
// the pods its selector picks, their Namespaces and its ControllerRevisions from informer caches,
// waits while expectations say the cache is behind its own pod writes, asks planSidecarSet for
// the round and applies it: revision first, then status, then the in-place upgrades. All state is
// in the API server (the pods' hash annotations say what each runs), so a restarted manager
// resumes where the pods are.
import { isDeepStrictEqual } from 'node:util';
import type { ControllerRevision, Namespace, Pod } from '../../apis/core-objects.ts';
import { SIDECARSET_NAME_REVISION_LABEL } from '../../apis/constants.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isAlreadyExists, isNotFound } from '../../runtime/errors.ts';
import { ControllerRevisions, Namespaces, Pods, SidecarSets } from '../../runtime/resources.ts';
import { TerminalError, type ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { pubAllowsInPlaceUpdate, PUB_BLOCKED_REQUEUE_MS } from '../podwrites.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { applyWrites, writeStatus, CONFLICT_REQUEUE_MS } from '../../runtime/writes.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { isPodReady } from '../../util/pod.ts';
import { injectedSidecarSetNames, podMatchesSidecarSet, type StoredSidecarSet } from '../../util/sidecarset.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { planSidecarSet, type SidecarSetPlan } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

/** What one reconcile reads; informer caches in production, plain objects in unit tests. */
export interface SidecarSetCache {
  getSidecarSet(name: string): StoredSidecarSet | undefined;
  listSidecarSets(): StoredSidecarSet[];
  /** Pods in every namespace whose labels match the selector. */
  selectedPods(s: StoredSidecarSet): Pod[];
  namespace(name: string): Namespace | undefined;
  revisions(s: StoredSidecarSet): ControllerRevision[];
}

export interface SidecarSetReconcilerDeps {
  cache: SidecarSetCache;
  client: Pick<KubeClient, 'create' | 'update' | 'updateStatus' | 'patch' | 'delete'>;
  recorder: EventRecorder;
  log: Logger;
  /** Where revisions live (the manager's namespace). */
  revisionNamespace: string;
  podVersions: ResourceVersionExpectations;
  /** PodUnavailableBudget consulted before each in-place upgrade (gate PodUnavailableBudgetUpdateGate). */
  pubBudget?: PubBudgetGuard;
  features?: Pick<FeatureGates, 'PodUnavailableBudgetUpdateGate'>;
  clock?: Clock;
}

export class SidecarSetReconciler {
  private readonly clock: Clock;

  constructor(private readonly deps: SidecarSetReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const s = this.deps.cache.getSidecarSet(name);
    if (!s) return {};
    let selected: Pod[];
    try {
      selected = this.deps.cache.selectedPods(s);
    } catch (err) {
      // A selector the webhook would refuse (an object stored before it): say so, do not crash or hot-loop.
      const message = errMessage(err);
      this.deps.recorder.event(s, 'Warning', 'FailedSync', 'Reconcile', `invalid selector: ${message}`);
      throw new TerminalError(`cannot plan SidecarSet ${name}`, { cause: err });
    }
    const requeue = expectationGate(
      selected.map((p) => this.deps.podVersions.check(p, 'pod resourceVersion')),
      this.deps.log,
    );
    if (requeue !== undefined) return { requeueAfter: requeue };

    const namespaces = new Map<string, Namespace>();
    if (s.spec?.namespaceSelector) {
      for (const p of selected) {
        const ns = p.metadata.namespace ?? '';
        const obj = this.deps.cache.namespace(ns);
        if (obj) namespaces.set(ns, obj);
      }
    }
    const plan = planSidecarSet(
      {
        sidecarSet: s,
        pods: selected,
        namespaces,
        revisions: this.deps.cache.revisions(s),
        revisionNamespace: this.deps.revisionNamespace,
        now: new Date(this.clock.now()),
      },
      (pod) => this.matchingSidecarSetNames(pod),
    );
    return applyWrites(() => this.execute(s, plan));
  }

  private matchingSidecarSetNames(pod: Pod): string[] {
    const ns = this.deps.cache.namespace(pod.metadata.namespace ?? '');
    return this.deps.cache
      .listSidecarSets()
      .filter((x) => podMatchesSidecarSet(pod, x, ns))
      .map((x) => x.metadata.name);
  }

  private async execute(s: StoredSidecarSet, plan: SidecarSetPlan): Promise<ReconcileResult> {
    const { client } = this.deps;
    const ns = this.deps.revisionNamespace;
    const r = plan.revision;
    if (r.create) {
      try {
        await client.create(ControllerRevisions, r.create);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        // Same name, other content (a hash collision): the next name comes from a bumped collisionCount.
        const status = { matchedPods: 0, updatedPods: 0, readyPods: 0, ...s.status, collisionCount: (s.status?.collisionCount ?? 0) + 1 };
        const { ended } = await writeStatus(client, SidecarSets, s, status);
        return ended ?? { requeueAfter: CONFLICT_REQUEUE_MS };
      }
    }
    if (r.renumber) {
      await client.patch(
        ControllerRevisions,
        r.renumber.name,
        { revision: r.renumber.revision },
        { namespace: ns, patchType: PatchType.Merge },
      );
    }
    if (r.customVersionLabel) {
      await client.patch(
        ControllerRevisions,
        r.latestName,
        { metadata: { labels: { 'apps.kruise.io/sidecarset-custom-version': r.customVersionLabel } } },
        { namespace: ns, patchType: PatchType.Merge },
      );
    }
    for (const name of r.delete) {
      try {
        await client.delete(ControllerRevisions, name, { namespace: ns });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const { ended } = await writeStatus(client, SidecarSets, s, plan.status);
    if (ended) return ended;

    if (plan.notUpgradable) {
      this.deps.recorder.event(
        s,
        'Normal',
        'NotUpgradablePods',
        'Upgrade',
        `SidecarSet in-place update detected ${plan.notUpgradable} not upgradable pod(s) in this round, will skip them.`,
      );
    }
    for (const { pod, updated } of plan.resets) {
      try {
        const written = await client.update<Pod>(Pods, updated, { namespace: updated.metadata.namespace });
        this.deps.podVersions.expect(written);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.deps.recorder.event(pod, 'Warning', 'ResetContainerFailed', 'Reset', `reset sidecar container image empty failed: ${message}`);
        throw err;
      }
      this.deps.recorder.event(pod, 'Normal', 'ResetContainerSucceed', 'Reset', 'reset sidecar container image empty successfully');
    }
    let heldByBudget = 0;
    for (const { pod, updated } of plan.upgrades) {
      if (!(await pubAllowsInPlaceUpdate(pod, this.deps.pubBudget, this.deps.features ?? { PodUnavailableBudgetUpdateGate: false }))) {
        heldByBudget++;
        continue;
      }
      const written = await client.update<Pod>(Pods, updated, { namespace: updated.metadata.namespace });
      this.deps.podVersions.expect(written);
    }
    for (const { pod, conditions } of plan.conditions) {
      const written = await client.patch<Pod>(
        Pods,
        pod.metadata.name!,
        { status: { conditions: conditions.filter((c) => c.type === 'SidecarSetUpgradable') } },
        { namespace: pod.metadata.namespace, patchType: PatchType.StrategicMerge, subresource: 'status' },
      );
      this.deps.podVersions.expect(written);
    }
    // Pods being upgraded report back through their events; pods a budget held back are looked at again.
    return heldByBudget ? { requeueAfter: PUB_BLOCKED_REQUEUE_MS } : {};
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
 * When a pod update needs a round of the SidecarSets injected into it: undefined for none, else
 * the delay. Upstream's predicate (deletion started, readiness, sidecar consistency after 5 s,
 * labels) widened to all that the planner reads, so that a rollout moves on as soon as a pod
 * reports back: labels, annotations, containers and their images, phase, readiness, and each
 * container status's ready / image / imageID, at once. Not a condition someone else added
 * (PodGC's DisruptionTarget before it deletes a pod, a readiness gate's own), restart counts or
 * container states; and, as upstream, nothing more once the pod's deletion has started.
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
  return statuses(old) !== statuses(cur) ? 0 : undefined;
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
    const podVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new SidecarSetReconciler({
      cache: new InformerCache(sidecarSets, pods, namespaces, revisions, deps.managerNamespace),
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      revisionNamespace: deps.managerNamespace,
      podVersions,
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
        podVersions.observe(cur);
        const delayMs = podUpdateRoundDelay(old, cur);
        if (delayMs !== undefined) enqueueFor(cur, delayMs);
      },
      onDelete: (obj) => {
        const p = unwrapDeleted(obj);
        podVersions.delete(p);
        enqueueFor(p, COUNTING_ROUND_DELAY_MS);
      },
    };
    sidecarSets.addEventHandler(sidecarSetHandler);
    pods.addEventHandler(podHandler);
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [sidecarSets, pods, namespaces, revisions]) };
  },
};
