// The CloneSet controller (upstream cloneset_controller.go doReconcile): reads the CloneSet, its
// pods, PVCs and ControllerRevisions from informer caches, waits while expectations say the cache
// is behind our own writes, asks planCloneSet for the whole round and hands the plan to the
// executor. All state lives in the API server; expectations only bridge cache lag.

import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';
import { Counter } from 'prom-client';
import type { CloneSet } from '../../apis/apps/cloneset.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { KubeObject, Stored } from '../../apis/core-objects.ts';
import { CloneSets, ControllerRevisions, ImagePullJobs, Nodes, PersistentVolumeClaims, Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { splitKey } from '../../runtime/store.ts';
import type { Informer, InformerSource } from '../../runtime/informer-factory.ts';
import type { Logger } from '../../runtime/log.ts';
import { registry } from '../../runtime/metrics.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import type { Labels } from '../../util/labelselector.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { WorkloadExpectations, WorkloadStep, type WorkloadKind } from '../workload.ts';
import { makeHandlers } from './event-handler.ts';
import { CloneSetExecutor, type ExecutorClient } from './executor.ts';
import { CONFLICT_REQUEUE_MS } from '../../runtime/writes.ts';
import { planCloneSet } from './plan.ts';
import type { Pod } from './pods.ts';
import { controllerRef } from './scale.ts';

export const scaleExpectationLeakage = new Counter({
  name: 'cloneset_scale_expectation_leakage',
  help: 'CloneSet scale expectations dropped after --expectation-timeout without being observed',
  labelNames: ['namespace', 'name'] as const,
  registers: [registry],
});

/** What one reconcile reads; informer caches in production, plain objects in unit tests. */
export interface CloneSetCache {
  getCloneSet(namespace: string, name: string): Stored<CloneSet> | undefined;
  ownedPods(cs: CloneSet): Pod[];
  ownedPVCs(cs: CloneSet): PersistentVolumeClaim[];
  ownedRevisions(cs: CloneSet): ControllerRevision[];
  /** Names of the ImagePullJobs the CloneSet controls; undefined when image pre-download is off. */
  ownedImagePullJobs?(cs: CloneSet): string[] | undefined;
  /**
   * Waits until the node cache (read only for topologySpreadConstraints ranking) has synced:
   * nodeLabels must never answer from a cache still filling.
   */
  syncNodes?(): Promise<void>;
  nodeLabels?(node: string): Labels | undefined;
}

export interface ReconcilerDeps {
  cache: CloneSetCache;
  client: ExecutorClient;
  recorder: EventRecorder;
  features: FeatureGates;
  log: Logger;
  expectations: WorkloadExpectations;
  pubBudget?: PubBudgetGuard;
  scalingExcludePreparingDelete?: boolean;
  clock?: Clock;
  randomId?: () => string;
}

export class CloneSetReconciler {
  private readonly executor: CloneSetExecutor;
  private readonly step: WorkloadStep<CloneSet>;
  private readonly clock: Clock;

  constructor(private readonly deps: ReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    const now = () => this.clock.now();
    this.executor = new CloneSetExecutor({ ...deps, now });
    this.step = new WorkloadStep(cloneSetKind, { ...deps, resourceVersions: deps.expectations.resourceVersions, now });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const { expectations, cache, log } = this.deps;
    const cs = cache.getCloneSet(namespace, name);
    if (!cs) {
      expectations.forget(key);
      return {};
    }
    const owned = cache.ownedPods(cs);
    const pvcs = cache.ownedPVCs(cs).filter((p) => !p.metadata?.deletionTimestamp);
    const revisions = cache.ownedRevisions(cs);
    const wait = expectations.wait(key, [cs, ...revisions, ...owned], log, () => scaleExpectationLeakage.inc({ namespace, name }));
    if (wait !== undefined) return { requeueAfterMs: wait };

    // Upstream hands claimPods only the pods it already owns: those whose labels stopped matching
    // are released (they live on, unmanaged, and are replaced); orphans are never adopted.
    const pods = await this.step.claimPods(cs, owned);
    if (!pods) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
    if (hasSpreadConstraints(cs)) await cache.syncNodes?.();

    const plan = await this.step.orReport(cs, () =>
      planCloneSet({
        cloneSet: cs,
        revisions,
        pods,
        pvcs,
        now: this.clock.now(),
        features: this.deps.features,
        randomId: this.deps.randomId,
        scalingExcludePreparingDelete: this.deps.scalingExcludePreparingDelete,
        nodeLabels: cache.nodeLabels?.bind(cache),
        imagePullJobs: cache.ownedImagePullJobs?.(cs),
      }),
    );
    return this.executor.execute(cs, plan, { pods, pvcs });
  }
}

/** What the shared workload step needs to know about CloneSets (FailedScale: upstream's condition for a failed round). */
const cloneSetKind: WorkloadKind<CloneSet> = { type: CloneSets, failureCondition: 'FailedScale', controllerRef };

const hasSpreadConstraints = (cs: CloneSet) => (cs.spec?.template?.spec?.topologySpreadConstraints?.length ?? 0) > 0;

/** Informer-backed cache: owned objects through the controllerRef UID index. */
class InformerCache implements CloneSetCache {
  private nodes: Informer<KubeObject> | undefined;

  constructor(
    private readonly informers: InformerSource,
    private readonly cloneSets: Informer<Stored<CloneSet>>,
    private readonly pods: Informer<Pod>,
    private readonly pvcs: Informer<Stored<PersistentVolumeClaim>>,
    private readonly revisions: Informer<ControllerRevision>,
    private readonly cacheSyncTimeoutMs: number,
    private readonly imagePullJobs?: Informer<KubeObject>,
  ) {}

  getCloneSet(namespace: string, name: string) {
    return this.cloneSets.lister.get(namespace, name);
  }

  ownedPods(cs: CloneSet) {
    return ownedBy(this.pods.lister, cs);
  }

  ownedPVCs(cs: CloneSet) {
    return ownedBy(this.pvcs.lister, cs);
  }

  ownedRevisions(cs: CloneSet) {
    return ownedBy(this.revisions.lister, cs);
  }

  ownedImagePullJobs(cs: CloneSet) {
    return this.imagePullJobs && ownedBy(this.imagePullJobs.lister, cs).map((j) => j.metadata.name ?? '');
  }

  /** Only templates with topologySpreadConstraints need nodes; their informer starts on first use. */
  async syncNodes(): Promise<void> {
    this.nodes ??= await this.informers.syncedInformerFor(Nodes, {}, this.cacheSyncTimeoutMs);
  }

  nodeLabels(node: string): Labels | undefined {
    return this.nodes?.lister.get(node)?.metadata.labels;
  }
}

export const cloneSetController: ControllerSetup = {
  name: 'cloneset',
  kinds: ['CloneSet'],
  access: [
    access(CloneSets, READ),
    access(CloneSets, ['update', 'patch'], 'status'),
    access(Pods, [...READ, ...WRITE]),
    access(Pods, ['update', 'patch'], 'status'),
    access(PersistentVolumeClaims, [...READ, 'create', 'delete']),
    access(ControllerRevisions, [...READ, ...WRITE]),
    access(ImagePullJobs, [...READ, 'create', 'delete']),
    access(Nodes, READ),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const cloneSets = deps.informers.informerFor<Stored<CloneSet>>(CloneSets, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const pvcs = deps.informers.informerFor<Stored<PersistentVolumeClaim>>(PersistentVolumeClaims, scope);
    const revisions = deps.informers.informerFor<ControllerRevision>(ControllerRevisions, scope);
    // Pre-download jobs are only read (to delete them once revisions converge) when the gate is on.
    // (Upstream also turns pre-download off when the ImagePullJob CRD is not installed.)
    const preDownload = deps.features.PreDownloadImageForInPlaceUpdate && deps.served('ImagePullJob');
    const imagePullJobs = preDownload ? deps.informers.informerFor<KubeObject>(ImagePullJobs, scope) : undefined;
    const cache = new InformerCache(deps.informers, cloneSets, pods, pvcs, revisions, deps.cacheSyncTimeoutMs, imagePullJobs);

    const expectations = new WorkloadExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new CloneSetReconciler({
      cache,
      client: deps.client,
      recorder: deps.recorder,
      features: deps.features,
      log: deps.logger,
      expectations,
      scalingExcludePreparingDelete: deps.flags.clonesetScalingExcludePreparingDelete,
      pubBudget: deps.pubBudget,
    });
    const controller = managerController('cloneset', deps, (key) => reconciler.reconcile(key));
    const handlers = makeHandlers({
      queue: controller.queue,
      expectations,
      getCloneSet: (ns, name) => cloneSets.lister.get(ns, name),
      listCloneSets: (ns) => cloneSets.lister.list(ns),
      filterPodUpdates: deps.features.CloneSetEventHandlerOptimization,
    });
    cloneSets.addEventHandler(handlers.cloneSet);
    pods.addEventHandler(handlers.pod);
    pvcs.addEventHandler(handlers.pvc);
    revisions.addEventHandler(handlers.revision);

    return {
      run: (signal: AbortSignal) =>
        controller.runAfterSync(signal, [cloneSets, pods, pvcs, revisions, ...(imagePullJobs ? [imagePullJobs] : [])]),
      busy: (key: string) => controller.queue.isProcessing(key),
    };
  },
};
