// The EphemeralJob controller (spec §17): reads the job and its namespace's pods from informer
// caches, waits while the cache is behind our own writes (resourceVersion expectations on the job
// and the injected pods), asks planEphemeralJob for the round and writes it: the finalizer, the
// deletion after the TTL, the injection through the pods' `ephemeralcontainers` subresource, status.

import type { EphemeralJob } from '../../apis/apps/ephemeraljob.ts';
import { FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP } from '../../apis/constants.ts';
import type { Pod, KubeObject, Stored } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isNotFound } from '../../runtime/errors.ts';
import { EphemeralJobs, Pods } from '../../runtime/resources.ts';
import { TerminalError, type ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { applyWrites, writeStatus } from '../../runtime/writes.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { planEphemeralJob, type EphemeralJobPlan } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

export interface EphemeralJobCache {
  get(namespace: string, name: string): Stored<EphemeralJob> | undefined;
  pods(namespace: string): Pod[];
}

export interface ReconcilerDeps {
  cache: EphemeralJobCache;
  client: Pick<KubeClient, 'patch' | 'delete' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  clock?: Clock;
}

export class EphemeralJobReconciler {
  private readonly clock: Clock;

  constructor(private readonly deps: ReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
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
    if (requeue !== undefined) return { requeueAfter: requeue };
    let plan: EphemeralJobPlan;
    try {
      plan = planEphemeralJob({ job, pods, now: this.clock.now() });
    } catch (err) {
      const message = errMessage(err);
      this.deps.recorder.event(job, 'Warning', 'FailedSync', 'Reconcile', `failed to reconcile EphemeralJob: ${message}`);
      throw new TerminalError(`cannot plan EphemeralJob ${key}`, { cause: err });
    }
    return applyWrites(() => this.execute(job, plan));
  }

  private async execute(job: Stored<EphemeralJob>, plan: EphemeralJobPlan): Promise<ReconcileResult> {
    const { client, resourceVersions } = this.deps;
    const ns = job.metadata.namespace ?? '';
    const name = job.metadata.name ?? '';
    if (plan.finalizer) {
      const current = job.metadata.finalizers ?? [];
      const finalizers =
        plan.finalizer === 'add'
          ? [...current, FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP]
          : current.filter((f) => f !== FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP);
      const patch = { metadata: { finalizers, resourceVersion: job.metadata.resourceVersion } };
      resourceVersions.expect(await client.patch(EphemeralJobs, name, patch, { namespace: ns, patchType: PatchType.Merge }));
      return {};
    }
    if (plan.delete) {
      await client.delete(EphemeralJobs, name, { namespace: ns, preconditions: { uid: job.metadata.uid } });
      return {};
    }
    for (const pod of plan.inject) {
      try {
        const written = await client.patch<Pod>(
          Pods,
          pod.metadata.name ?? '',
          { spec: { ephemeralContainers: plan.containers } },
          { namespace: ns, patchType: PatchType.StrategicMerge, subresource: 'ephemeralcontainers' },
        );
        resourceVersions.expect(written);
      } catch (err) {
        if (isNotFound(err)) continue;
        const message = `failed to create ephemeral container in pod ${ns}/${pod.metadata.name}: ${errMessage(err)}`;
        this.deps.recorder.event(job, 'Warning', 'CreateFailed', 'Inject', message);
        throw err;
      }
    }
    const status = await writeStatus(client, EphemeralJobs, job, plan.status, resourceVersions);
    if (status.ended) return status.ended;
    return plan.requeueAfter !== undefined ? { requeueAfter: plan.requeueAfter } : {};
  }
}

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
