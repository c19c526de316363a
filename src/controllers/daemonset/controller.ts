// The Advanced DaemonSet controller (upstream pkg/controller/daemonset): reads the DaemonSet, its
// pods and ControllerRevisions and all Nodes from informer caches, waits while expectations say
// the cache is behind our own writes, asks planDaemonSet for the whole round and hands the plan to
// the executor. All state lives in the API server except the failed-pod backoff per node, which
// (as upstream) is in memory: a restart only makes the next retry come sooner.

import type { DaemonSet, DaemonSetStatus } from '../../apis/apps/daemonset.ts';
import type { Node, OwnerReference, Pod, KubeObject, Stored } from '../../apis/core-objects.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { AdvancedDaemonSets, ControllerRevisions, ImagePullJobs, Nodes, Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import type { Logger } from '../../runtime/log.ts';
import { CONFLICT_REQUEUE_MS } from '../../runtime/writes.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { WorkloadExpectations, WorkloadStep, type WorkloadKind } from '../workload.ts';
import { DaemonSetExecutor, keyOf, type ExecutorClient } from './executor.ts';
import { planDaemonSet, planWaitingStatus } from './plan.ts';
import type { PlanInput } from './types.ts';
import { daemonSetControllerRef } from './revisions.ts';

/** What one reconcile reads; informer caches in production, plain objects in unit tests. */
export interface DaemonSetCache {
  getDaemonSet(namespace: string, name: string): Stored<DaemonSet> | undefined;
  ownedPods(ds: DaemonSet): Pod[];
  ownedRevisions(ds: DaemonSet): ControllerRevision[];
  nodes(): Node[];
  /** Names of the ImagePullJobs the DaemonSet controls; undefined when image pre-download is off. */
  ownedImagePullJobs?(ds: DaemonSet): string[] | undefined;
}

const FAILED_POD_BACKOFF_INITIAL_MS = 1000;
const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

/** flowcontrol.Backoff keyed by `<ds uid>/<node>`: 1 s doubling to 15 min, reset after 2× max idle. */
export class FailedPodBackoff {
  private readonly entries = new Map<string, { delayMs: number; lastUpdate: number }>();

  constructor(private readonly clock: Clock) {}

  /** Milliseconds the backoff still runs, undefined when the node may be retried. */
  remaining(key: string): number | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    const left = e.lastUpdate + e.delayMs - this.clock.now();
    return left > 0 ? left : undefined;
  }

  next(key: string): void {
    const now = this.clock.now();
    const e = this.entries.get(key);
    if (!e || now - e.lastUpdate > 2 * FAILED_POD_BACKOFF_MAX_MS)
      this.entries.set(key, { delayMs: FAILED_POD_BACKOFF_INITIAL_MS, lastUpdate: now });
    else this.entries.set(key, { delayMs: Math.min(e.delayMs * 2, FAILED_POD_BACKOFF_MAX_MS), lastUpdate: now });
  }

  forget(uid: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${uid}/`)) this.entries.delete(k);
  }
}

export interface ReconcilerDeps {
  cache: DaemonSetCache;
  client: ExecutorClient;
  recorder: EventRecorder;
  features: FeatureGates;
  log: Logger;
  expectations: WorkloadExpectations;
  clock?: Clock;
  randomSuffix?: () => string;
}

export class DaemonSetReconciler {
  private readonly executor: DaemonSetExecutor;
  private readonly step: WorkloadStep<DaemonSet>;
  private readonly clock: Clock;
  readonly backoff: FailedPodBackoff;

  constructor(private readonly deps: ReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.backoff = new FailedPodBackoff(this.clock);
    this.executor = new DaemonSetExecutor({
      ...deps,
      failedPodDeleted: (ds, node) => this.backoff.next(`${ds.metadata?.uid}/${node}`),
    });
    const now = () => this.clock.now();
    this.step = new WorkloadStep(daemonSetKind, { ...deps, resourceVersions: deps.expectations.resourceVersions, now });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const { expectations, cache, log } = this.deps;
    const ds = cache.getDaemonSet(namespace, name);
    if (!ds) {
      expectations.forget(key);
      return {};
    }
    const owned = cache.ownedPods(ds);
    const revisions = cache.ownedRevisions(ds);
    const input = (pods: readonly Pod[]): PlanInput => ({
      daemonSet: ds,
      revisions,
      pods,
      nodes: cache.nodes(),
      now: this.clock.now(),
      features: this.deps.features,
      failedPodBackoff: (node) => this.backoff.remaining(`${ds.metadata.uid}/${node}`),
      randomSuffix: this.deps.randomSuffix,
      imagePullJobs: cache.ownedImagePullJobs?.(ds),
    });
    const wait = expectations.wait(key, [...revisions, ...owned], log);
    if (wait !== undefined) {
      // The status still follows the pods meanwhile, as upstream's: a client that saw the pods run
      // sees them counted. A malformed object is reported by the full round, not here.
      let status: DaemonSetStatus | undefined;
      try {
        status = planWaitingStatus(input(owned));
      } catch {
        status = undefined;
      }
      const ended = await this.executor.writeWaitingStatus(ds, status);
      return ended ?? { requeueAfterMs: wait };
    }

    // Owned pods whose labels stopped matching are released (they live on, unmanaged).
    const pods = await this.step.claimPods(ds, owned);
    if (!pods) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
    const plan = await this.step.orReport(ds, () => planDaemonSet(input(pods)));
    return this.executor.execute(ds, plan, pods);
  }
}

/** What the shared workload step needs to know about the Advanced DaemonSet kind. */
const daemonSetKind: WorkloadKind<DaemonSet> = {
  type: AdvancedDaemonSets,
  failureCondition: 'FailedSync',
  emptyStatus: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, updatedNumberScheduled: 0 },
  controllerRef: daemonSetControllerRef,
};

/** The controlling ownerReference when it is an Advanced DaemonSet. */
export function daemonSetRef(obj: KubeObject): OwnerReference | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
  return ref && ref.kind === 'DaemonSet' && ref.apiVersion.startsWith('apps.kruise.io/') ? ref : undefined;
}

/** Node changes that can change where daemon pods belong (upstream shouldIgnoreNodeUpdate, narrowed). */
export function nodePlacementChanged(old: Node, cur: Node): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  return !same(old.metadata.labels, cur.metadata.labels) || !same(old.spec?.taints, cur.spec?.taints);
}

interface HandlerDeps {
  queue: { add(key: string, opts?: { priority?: number }): void };
  expectations: WorkloadExpectations;
  getDaemonSet(namespace: string, name: string): DaemonSet | undefined;
  listDaemonSets(): DaemonSet[];
  forgetBackoff(uid: string): void;
}

export function makeHandlers(deps: HandlerDeps) {
  const { scale: scaleExpectations, resourceVersions, revisions: revisionExpectations } = deps.expectations;
  const enqueue = (ds: DaemonSet, initial = false) => deps.queue.add(keyOf(ds), initial ? { priority: LowPriority } : {});
  const ownerOf = (obj: KubeObject) => {
    const ref = daemonSetRef(obj);
    if (!ref) return undefined;
    const ds = deps.getDaemonSet(obj.metadata.namespace ?? '', ref.name);
    return ds && ds.metadata?.uid === ref.uid ? ds : undefined;
  };
  const ownerKey = (obj: KubeObject, ref: OwnerReference) => `${obj.metadata.namespace ?? ''}/${ref.name}`;

  const podDeleted = (p: Pod) => {
    const ref = daemonSetRef(p);
    if (!ref) return;
    // A pod with a deletionTimestamp counts as deleted at once, as upstream.
    scaleExpectations.observeScale(ownerKey(p, ref), 'delete', p.metadata.name ?? '');
    const ds = ownerOf(p);
    if (ds) enqueue(ds);
  };

  const daemonSet: EventHandler<Stored<DaemonSet>> = {
    onAdd: (ds, initial) => enqueue(ds, initial),
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) enqueue(cur);
    },
    onDelete: (obj) => {
      const ds = unwrapDeleted(obj);
      deps.expectations.forget(keyOf(ds));
      deps.forgetBackoff(ds.metadata.uid ?? '');
      enqueue(ds);
    },
  };

  const pod: EventHandler<Pod> = {
    onAdd: (p, initial) => {
      resourceVersions.observe(p);
      if (p.metadata.deletionTimestamp) return podDeleted(p);
      const ref = daemonSetRef(p);
      if (!ref) return;
      scaleExpectations.observeScale(ownerKey(p, ref), 'create', p.metadata.name ?? '');
      const ds = ownerOf(p);
      if (ds) enqueue(ds, initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      resourceVersions.observe(cur);
      if (cur.metadata.deletionTimestamp) return podDeleted(cur);
      const oldOwner = ownerOf(old);
      const owner = ownerOf(cur);
      if (oldOwner && oldOwner !== owner) enqueue(oldOwner);
      if (owner) enqueue(owner);
    },
    onDelete: (obj) => {
      const p = unwrapDeleted(obj);
      resourceVersions.delete(p);
      podDeleted(p);
    },
  };

  const revision: EventHandler<ControllerRevision> = {
    onAdd: (r, initial) => {
      resourceVersions.observe(r);
      const ref = daemonSetRef(r);
      if (!ref) return;
      revisionExpectations.observeScale(ownerKey(r, ref), 'create', r.metadata.name ?? '');
      const ds = ownerOf(r);
      if (ds) enqueue(ds, initial);
    },
    onUpdate: (_old, cur) => {
      resourceVersions.observe(cur);
      const ds = ownerOf(cur);
      if (ds) enqueue(ds);
    },
    onDelete: (obj) => {
      const r = unwrapDeleted(obj);
      resourceVersions.delete(r);
      const ds = ownerOf(r);
      if (ds) enqueue(ds);
    },
  };

  // Every DaemonSet looks at every node: a node that comes, goes or changes labels/taints requeues all.
  const enqueueAll = (initial = false) => {
    for (const ds of deps.listDaemonSets()) enqueue(ds, initial);
  };
  const node: EventHandler<Node> = {
    onAdd: (_n, initial) => {
      // The initial list is covered by the DaemonSets' own initial adds.
      if (!initial) enqueueAll();
    },
    onUpdate: (old, cur) => {
      if (nodePlacementChanged(old, cur)) enqueueAll();
    },
    onDelete: () => enqueueAll(),
  };

  return { daemonSet, pod, revision, node };
}

class InformerCache implements DaemonSetCache {
  constructor(
    private readonly daemonSets: Informer<Stored<DaemonSet>>,
    private readonly pods: Informer<Pod>,
    private readonly revisions: Informer<ControllerRevision>,
    private readonly nodeInformer: Informer<Node>,
    private readonly imagePullJobs?: Informer<KubeObject>,
  ) {}

  getDaemonSet(namespace: string, name: string) {
    return this.daemonSets.lister.get(namespace, name);
  }

  ownedPods(ds: DaemonSet) {
    return ownedBy(this.pods.lister, ds);
  }

  ownedRevisions(ds: DaemonSet) {
    return ownedBy(this.revisions.lister, ds);
  }

  nodes() {
    return this.nodeInformer.lister.list();
  }

  ownedImagePullJobs(ds: DaemonSet) {
    return this.imagePullJobs && ownedBy(this.imagePullJobs.lister, ds).map((j) => j.metadata.name ?? '');
  }
}

export const daemonSetController: ControllerSetup = {
  name: 'daemonset',
  kinds: ['DaemonSet'],
  access: [
    access(AdvancedDaemonSets, READ),
    access(AdvancedDaemonSets, ['update', 'patch'], 'status'),
    access(Pods, [...READ, ...WRITE]),
    access(Pods, ['update', 'patch'], 'status'),
    access(ControllerRevisions, [...READ, ...WRITE]),
    access(Nodes, READ),
    access(ImagePullJobs, [...READ, 'create', 'delete']),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const daemonSets = deps.informers.informerFor<Stored<DaemonSet>>(AdvancedDaemonSets, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const revisions = deps.informers.informerFor<ControllerRevision>(ControllerRevisions, scope);
    const nodes = deps.informers.informerFor<Node>(Nodes, {});
    // Pre-download jobs are read (to delete them once revisions converge) only with the gate on and
    // the ImagePullJob CRD installed.
    const preDownload = deps.features.PreDownloadImageForDaemonSetUpdate && deps.served('ImagePullJob');
    const imagePullJobs = preDownload ? deps.informers.informerFor<KubeObject>(ImagePullJobs, scope) : undefined;
    const cache = new InformerCache(daemonSets, pods, revisions, nodes, imagePullJobs);

    const expectations = new WorkloadExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new DaemonSetReconciler({
      cache,
      client: deps.client,
      recorder: deps.recorder,
      features: deps.features,
      log: deps.logger,
      expectations,
    });
    const controller = managerController('daemonset', deps, (key) => reconciler.reconcile(key));
    const handlers = makeHandlers({
      queue: controller.queue,
      expectations,
      getDaemonSet: (ns, name) => daemonSets.lister.get(ns, name),
      listDaemonSets: () => daemonSets.lister.list(),
      forgetBackoff: (uid) => reconciler.backoff.forget(uid),
    });
    daemonSets.addEventHandler(handlers.daemonSet);
    pods.addEventHandler(handlers.pod);
    revisions.addEventHandler(handlers.revision);
    nodes.addEventHandler(handlers.node);

    return {
      run: (signal: AbortSignal) =>
        controller.runAfterSync(signal, [daemonSets, pods, revisions, nodes, ...(imagePullJobs ? [imagePullJobs] : [])]),
    };
  },
};
