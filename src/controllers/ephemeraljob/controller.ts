// The EphemeralJob controller (spec §17): reads the job and its namespace's pods from informer
// caches, waits while the cache is behind our own writes (resourceVersion expectations on the job
// and the injected pods), asks planEphemeralJob (plan.ts) for the round and hands it to the
// executor (executor.ts); a plan that fails on a malformed job is reported (FailedPlanReporter.orReport).

import type { EphemeralJob } from '../../apis/apps/ephemeraljob.ts';
import type { Pod } from '../../apis/core-objects.ts';
import type { KubeClient } from '../../runtime/client.ts';
import { EphemeralJobs, Pods } from '../../runtime/resources.ts';
import type { KubeObject, Stored } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { EphemeralJobExecutor } from './executor.ts';
import { planEphemeralJob } from './plan.ts';
import { FailedPlanReporter, type FailedPlanKind } from '../failed-plan.ts';

export interface EphemeralJobCache {
  get(namespace: string, name: string): Stored<EphemeralJob> | undefined;
  pods(namespace: string): Pod[];
}

export interface ReconcilerDeps {
  cache: EphemeralJobCache;
  client: Pick<KubeClient, 'get' | 'patch' | 'delete' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  clock?: Clock;
}

export class EphemeralJobReconciler {
  private readonly clock: Clock;
  private readonly executor: EphemeralJobExecutor;
  private readonly failures: FailedPlanReporter<Stored<EphemeralJob>>;

  constructor(private readonly deps: ReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new EphemeralJobExecutor(deps);
    this.failures = new FailedPlanReporter(ephemeralJobKind, { ...deps, now: () => this.clock.now() });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const job = this.deps.cache.get(namespace, name);
    if (!job) return {};
    const pods = this.deps.cache.pods(namespace);
    const requeue = expectationGate(
      ([job, ...pods] as KubeObject[]).map((o) => this.deps.resourceVersions.check(o, 'resourceVersion')),
      this.deps.log,
    );
    if (requeue !== undefined) return { requeueAfterMs: requeue };
    const plan = await this.failures.orReport(job, () => planEphemeralJob({ job, pods, now: this.clock.now() }));
    return this.executor.execute(job, plan);
  }
}

/** What the shared step needs to know about EphemeralJobs (a failed round: upstream's JobError condition). */
const ephemeralJobKind: FailedPlanKind<Stored<EphemeralJob>> = { type: EphemeralJobs, failureCondition: 'JobError' };

export const ephemeralJobController: ControllerSetup = {
  name: 'ephemeraljob',
  kinds: ['EphemeralJob'],
  access: [
    access(EphemeralJobs, [...READ, 'update', 'patch', 'delete']),
    access(EphemeralJobs, ['update', 'patch'], 'status'),
    access(Pods, READ),
    access(Pods, ['update', 'patch'], 'ephemeralcontainers'),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const jobs = deps.informers.informerFor<Stored<EphemeralJob>>(EphemeralJobs, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new EphemeralJobReconciler({
      cache: { get: (ns, name) => jobs.lister.get(ns, name), pods: (ns) => pods.lister.list(ns) },
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      resourceVersions,
    });
    const controller = managerController('ephemeraljob', deps, (key) => reconciler.reconcile(key));
    const enqueueJob = (job: KubeObject) => controller.queue.add(`${job.metadata.namespace}/${job.metadata.name}`);
    jobs.addEventHandler({
      onAdd: enqueueJob,
      onUpdate: (_old, job) => {
        resourceVersions.observe(job);
        enqueueJob(job);
      },
      onDelete: (obj) => enqueueJob(unwrapDeleted(obj)),
    });
    // A pod change matters to the jobs of its namespace whose selector matches it.
    const podChanged = (pod: Pod) => {
      for (const job of jobs.lister.list(pod.metadata.namespace)) {
        let matches: boolean;
        try {
          matches = labelSelectorAsSelector(job.spec?.selector).matches(pod.metadata.labels);
        } catch {
          matches = false; // a selector that does not parse is reported by the planner
        }
        if (matches) enqueueJob(job);
      }
    };
    pods.addEventHandler({
      onAdd: podChanged,
      onUpdate: (_old, pod) => {
        resourceVersions.observe(pod);
        podChanged(pod);
      },
      onDelete: (obj) => podChanged(unwrapDeleted(obj)),
    });
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [jobs, pods]) };
  },
};
