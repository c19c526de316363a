// The AdvancedCronJob controller (upstream pkg/controller/advancedcronjob): reads the cron job and
// the children of its template's kind (batch Jobs, BroadcastJobs or ImageListPullJobs it controls)
// from informer caches, waits while expectations say the cache is behind its own writes, asks
// planAdvancedCronJob (plan.ts) for the round, hands the plan to the executor and requeues at the
// next start time.
import type { KubeObject } from '../../apis/core-objects.ts';
import { AdvancedCronJobs, BroadcastJobs, ImageListPullJobs, Jobs } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { FailedPlanReporter } from '../failed-plan.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { AdvancedCronJobExecutor, cronJobKeyOf, type AdvancedCronJobClient } from './executor.ts';
import { planAdvancedCronJob, templateKind, type AdvancedCronJob, type CronChild, type TemplateKind } from './plan.ts';

export interface AdvancedCronJobCache {
  getCronJob(namespace: string, name: string): AdvancedCronJob | undefined;
  /** Children of one kind whose controller reference is the cron job. */
  ownedChildren(cronJob: AdvancedCronJob, kind: TemplateKind): CronChild[];
}

export interface AdvancedCronJobReconcilerDeps {
  cache: AdvancedCronJobCache;
  client: AdvancedCronJobClient;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  clock?: Clock;
}

export class AdvancedCronJobReconciler {
  private readonly clock: Clock;
  private readonly executor: AdvancedCronJobExecutor;
  private readonly failures: FailedPlanReporter<AdvancedCronJob>;

  constructor(private readonly deps: AdvancedCronJobReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new AdvancedCronJobExecutor(deps);
    this.failures = new FailedPlanReporter({ type: AdvancedCronJobs }, { ...deps, now: () => this.clock.now() });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const { scaleExpectations, resourceVersions, log } = this.deps;
    const cronJob = this.deps.cache.getCronJob(namespace, name);
    if (!cronJob) {
      scaleExpectations.deleteExpectations(key);
      return {};
    }
    const requeue = expectationGate(
      [scaleExpectations.check(key, 'child creation/deletion'), resourceVersions.check(cronJob, 'AdvancedCronJob resourceVersion')],
      log,
    );
    if (requeue !== undefined) return { requeueAfterMs: requeue };
    const plan = await this.failures.orReport(cronJob, () => {
      const children = this.deps.cache.ownedChildren(cronJob, templateKind(cronJob));
      return planAdvancedCronJob({ cronJob, children, nowMs: this.clock.now() });
    });
    return this.executor.execute(cronJob, plan);
  }
}

/** The cron job key of a child whose controller reference is an AdvancedCronJob. */
function ownerKey(child: KubeObject): string | undefined {
  const ref = child.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'AdvancedCronJob' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return `${child.metadata.namespace ?? ''}/${ref.name}`;
}

export function makeHandlers(deps: {
  queue: { add(key: string, opts?: { priority?: number }): void };
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
}) {
  const enqueue = (key: string, initial = false) => deps.queue.add(key, initial ? { priority: LowPriority } : {});
  const childGone = (c: CronChild) => {
    const key = ownerKey(c);
    if (!key) return;
    deps.scaleExpectations.observeScale(key, 'delete', c.metadata.name ?? '');
    enqueue(key);
  };
  const cronJob: EventHandler<AdvancedCronJob> = {
    onAdd: (j, initial) => {
      deps.resourceVersions.observe(j);
      enqueue(cronJobKeyOf(j), initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.resourceVersions.observe(cur);
      enqueue(cronJobKeyOf(cur));
    },
    onDelete: (obj) => {
      const j = unwrapDeleted(obj);
      deps.resourceVersions.delete(j);
      deps.scaleExpectations.deleteExpectations(cronJobKeyOf(j));
    },
  };
  const child: EventHandler<CronChild> = {
    onAdd: (c, initial) => {
      if (c.metadata.deletionTimestamp) return childGone(c);
      const key = ownerKey(c);
      if (!key) return;
      deps.scaleExpectations.observeScale(key, 'create', c.metadata.name ?? '');
      enqueue(key, initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      if (cur.metadata.deletionTimestamp) return childGone(cur);
      const key = ownerKey(cur);
      if (key) enqueue(key);
    },
    onDelete: (obj) => childGone(unwrapDeleted(obj)),
  };
  return { cronJob, child };
}

export const advancedCronJobController: ControllerSetup = {
  name: 'advancedcronjob',
  kinds: ['AdvancedCronJob'],
  access: [
    access(AdvancedCronJobs, READ),
    access(AdvancedCronJobs, ['update', 'patch'], 'status'),
    access(Jobs, [...READ, 'create', 'delete']),
    access(BroadcastJobs, [...READ, 'create', 'delete']),
    access(ImageListPullJobs, [...READ, 'create', 'delete']),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const cronJobs = deps.informers.informerFor<AdvancedCronJob>(AdvancedCronJobs, scope);
    // Children of a kind whose CRD is not installed cannot exist: no informer for them.
    const childInformers: Partial<Record<TemplateKind, Informer<CronChild>>> = {
      Job: deps.informers.informerFor<CronChild>(Jobs, scope),
      ...(deps.served('BroadcastJob') ? { BroadcastJob: deps.informers.informerFor<CronChild>(BroadcastJobs, scope) } : {}),
      ...(deps.served('ImageListPullJob') ? { ImageListPullJob: deps.informers.informerFor<CronChild>(ImageListPullJobs, scope) } : {}),
    };
    const expectationOptions = { timeout: deps.expectationTimeoutMs };
    const scaleExpectations = new ScaleExpectations(expectationOptions);
    const resourceVersions = new ResourceVersionExpectations(expectationOptions);
    const reconciler = new AdvancedCronJobReconciler({
      cache: {
        getCronJob: (ns, name) => cronJobs.lister.get(ns, name),
        ownedChildren: (j, kind) => {
          const children = childInformers[kind];
          return children ? ownedBy(children.lister, j).filter((c) => ownerKey(c) === cronJobKeyOf(j)) : [];
        },
      },
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      scaleExpectations,
      resourceVersions,
    });
    const controller = managerController('advancedcronjob', deps, (key) => reconciler.reconcile(key));
    const handlers = makeHandlers({ queue: controller.queue, scaleExpectations, resourceVersions });
    cronJobs.addEventHandler(handlers.cronJob);
    const children = Object.values(childInformers);
    for (const informer of children) informer.addEventHandler(handlers.child);
    return { run: (signal: AbortSignal) => controller.runAfterSync(signal, [cronJobs, ...children]) };
  },
};
