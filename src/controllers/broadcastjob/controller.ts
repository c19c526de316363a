// The BroadcastJob controller (upstream pkg/controller/broadcastjob): reads the job, the pods it
// controls and all Nodes from informer caches, waits while expectations say the cache is behind its
// own writes, asks planBroadcastJob (plan.ts) for the round and hands the plan to the executor.
// Like upstream it adopts no orphans: a pod is the job's only through its controller reference.
import type { Node, Pod } from '../../apis/core-objects.ts';
import { BroadcastJobs, Nodes, Pods } from '../../runtime/resources.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { nodeFitFailure, targetNodeName } from '../../util/nodefit.ts';
import { FailedPlanReporter } from '../failed-plan.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { BroadcastJobExecutor, jobKeyOf, type BroadcastJobClient } from './executor.ts';
import { planBroadcastJob, type BroadcastJob } from './plan.ts';

export interface BroadcastJobCache {
  getJob(namespace: string, name: string): BroadcastJob | undefined;
  /** Pods whose controller reference is the job. */
  ownedPods(job: BroadcastJob): Pod[];
  nodes(): Node[];
}

export interface BroadcastJobReconcilerDeps {
  cache: BroadcastJobCache;
  client: BroadcastJobClient;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  clock?: Clock;
  /** --assign-bcj-pods-by-scheduler. */
  bindByScheduler?: boolean;
}

export class BroadcastJobReconciler {
  private readonly clock: Clock;
  private readonly executor: BroadcastJobExecutor;
  private readonly failures: FailedPlanReporter<BroadcastJob>;

  constructor(private readonly deps: BroadcastJobReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new BroadcastJobExecutor(deps);
    this.failures = new FailedPlanReporter({ type: BroadcastJobs }, { ...deps, now: () => this.clock.now() });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const { scaleExpectations, resourceVersions, log } = this.deps;
    const job = this.deps.cache.getJob(namespace, name);
    if (!job) {
      scaleExpectations.deleteExpectations(key);
      return {};
    }
    const requeue = expectationGate(
      [scaleExpectations.check(key, 'pod creation/deletion'), resourceVersions.check(job, 'BroadcastJob resourceVersion')],
      log,
    );
    if (requeue !== undefined) return { requeueAfterMs: requeue };
    const plan = await this.failures.orReport(job, () =>
      planBroadcastJob({
        job,
        pods: this.deps.cache.ownedPods(job),
        nodes: this.deps.cache.nodes(),
        nowMs: this.clock.now(),
        bindByScheduler: this.deps.bindByScheduler,
      }),
    );
    return this.executor.execute(job, plan);
  }
}

/** The controlling ownerReference's job key, when it is a BroadcastJob. */
function ownerKey(pod: KubeObject): string | undefined {
  const ref = pod.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'BroadcastJob' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return `${pod.metadata.namespace ?? ''}/${ref.name}`;
}

/** Whether a node changed in what fitness reads (heartbeats change nothing of it). */
function fitnessInputsChanged(old: Node, cur: Node): boolean {
  const inputs = (n: Node) => JSON.stringify([n.metadata.labels, n.spec?.taints, n.spec?.unschedulable, n.status?.allocatable]);
  return inputs(old) !== inputs(cur);
}

/** Whether a job's pod would fit the node (upstream's node handler enqueues only those jobs). */
function jobFits(job: BroadcastJob, node: Node): boolean {
  return nodeFitFailure({ containers: [], ...job.spec?.template?.spec, nodeName: node.metadata.name }, node) === undefined;
}

export function makeHandlers(deps: {
  queue: { add(key: string, opts?: { priority?: number }): void };
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  listJobs(): BroadcastJob[];
}) {
  const enqueue = (key: string, initial = false) => deps.queue.add(key, initial ? { priority: LowPriority } : {});
  const podGone = (p: Pod) => {
    const key = ownerKey(p);
    if (!key) return;
    deps.scaleExpectations.observeScale(key, 'delete', targetNodeName(p) ?? '');
    enqueue(key);
  };
  const job: EventHandler<BroadcastJob> = {
    onAdd: (j, initial) => {
      deps.resourceVersions.observe(j);
      enqueue(jobKeyOf(j), initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.resourceVersions.observe(cur);
      enqueue(jobKeyOf(cur));
    },
    onDelete: (obj) => {
      const j = unwrapDeleted(obj);
      deps.resourceVersions.delete(j);
      deps.scaleExpectations.deleteExpectations(jobKeyOf(j));
    },
  };
  const pod: EventHandler<Pod> = {
    onAdd: (p, initial) => {
      if (p.metadata.deletionTimestamp) return podGone(p);
      const key = ownerKey(p);
      if (!key) return;
      deps.scaleExpectations.observeScale(key, 'create', targetNodeName(p) ?? '');
      enqueue(key, initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      const key = ownerKey(cur);
      if (key) enqueue(key);
    },
    onDelete: (obj) => podGone(unwrapDeleted(obj)),
  };
  // A node that appears, or whose fitness for a job changes, requeues the jobs it concerns.
  const node: EventHandler<Node> = {
    onAdd: (n, initial) => {
      if (initial) return;
      for (const j of deps.listJobs()) if (jobFits(j, n)) enqueue(jobKeyOf(j));
    },
    onUpdate: (old, cur) => {
      if (!fitnessInputsChanged(old, cur)) return;
      for (const j of deps.listJobs()) if (jobFits(j, old) !== jobFits(j, cur)) enqueue(jobKeyOf(j));
    },
    onDelete: () => {},
  };
  return { job, pod, node };
}

export const broadcastJobController: ControllerSetup = {
  name: 'broadcastjob',
  kinds: ['BroadcastJob'],
  access: [
    access(BroadcastJobs, [...READ, 'update', 'patch', 'delete']),
    access(BroadcastJobs, ['update', 'patch'], 'status'),
    access(Pods, [...READ, ...WRITE]),
    access(Nodes, READ),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const jobs = deps.informers.informerFor<BroadcastJob>(BroadcastJobs, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const nodes = deps.informers.informerFor<Node>(Nodes, {});
    const expectationOptions = { timeout: deps.expectationTimeoutMs };
    const scaleExpectations = new ScaleExpectations(expectationOptions);
    const resourceVersions = new ResourceVersionExpectations(expectationOptions);
    const reconciler = new BroadcastJobReconciler({
      cache: {
        getJob: (ns, name) => jobs.lister.get(ns, name),
        ownedPods: (j) => ownedBy(pods.lister, j).filter((p) => ownerKey(p) === jobKeyOf(j)),
        nodes: () => nodes.lister.list(),
      },
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      scaleExpectations,
      resourceVersions,
      bindByScheduler: deps.flags.assignBcjPodsByScheduler,
    });
    const controller = managerController('broadcastjob', deps, (key) => reconciler.reconcile(key));
    const handlers = makeHandlers({ queue: controller.queue, scaleExpectations, resourceVersions, listJobs: () => jobs.lister.list() });
    jobs.addEventHandler(handlers.job);
    pods.addEventHandler(handlers.pod);
    nodes.addEventHandler(handlers.node);
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [jobs, pods, nodes]) };
  },
};
