// The ImageListPullJob controller (upstream pkg/controller/imagelistpulljob): labels the list job
// with its template hash, keeps one ImagePullJob per listed image (recreating those of an older
// template, deleting those of removed images), sums their progress into the status, and deletes the
// list job ttlSecondsAfterFinished after it completes. planImageListPullJob (plan.ts) decides the
// round from the cache once expectations are met; the executor (executor.ts) applies it.
import type { KubeClient } from '../../runtime/client.ts';
import { ImageListPullJobs, ImagePullJobs } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import type { ImagePullJob } from '../imagejobs/resources.ts';
import { ImageListPullJobExecutor } from './executor.ts';
import { planImageListPullJob, type ImageListPullJob } from './plan.ts';

export interface ImageListPullJobCache {
  getList(namespace: string, name: string): ImageListPullJob | undefined;
  /** ImagePullJobs whose controller reference is the list job. */
  ownedJobs(list: ImageListPullJob): ImagePullJob[];
}

export interface ImageListPullJobReconcilerDeps {
  cache: ImageListPullJobCache;
  client: Pick<KubeClient, 'create' | 'delete' | 'patch' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  clock?: Clock;
}

export class ImageListPullJobReconciler {
  private readonly clock: Clock;
  private readonly executor: ImageListPullJobExecutor;

  constructor(private readonly deps: ImageListPullJobReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new ImageListPullJobExecutor(deps);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const list = this.deps.cache.getList(namespace, name);
    const { scaleExpectations, resourceVersions, log } = this.deps;
    if (!list) {
      scaleExpectations.deleteExpectations(key);
      return {};
    }
    const owned = this.deps.cache.ownedJobs(list);
    // A completed list job only waits for its TTL; the children no longer matter.
    if (!list.status?.completionTime) {
      const live = owned.filter((child) => !child.metadata.deletionTimestamp);
      const requeue = expectationGate(
        [
          scaleExpectations.check(key, 'ImagePullJob creation/deletion'),
          ...live.map((child) => resourceVersions.check(child, 'ImagePullJob resourceVersion')),
        ],
        log,
      );
      if (requeue !== undefined) return { requeueAfterMs: requeue };
    }
    const plan = planImageListPullJob({ list, owned, nowMs: this.clock.now() });
    return this.executor.execute(key, list, plan);
  }
}

/** The list job a generated ImagePullJob belongs to (its controller reference). */
function ownerKey(job: ImagePullJob): string | undefined {
  const ref = job.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'ImageListPullJob' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return `${job.metadata.namespace}/${ref.name}`;
}

export function makeListHandlers(deps: {
  queue: { add(key: string, opts?: { priority?: number }): void };
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
}) {
  const list: EventHandler<ImageListPullJob> = {
    onAdd: (l, initial) => deps.queue.add(`${l.metadata.namespace}/${l.metadata.name}`, initial ? { priority: LowPriority } : {}),
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) deps.queue.add(`${cur.metadata.namespace}/${cur.metadata.name}`);
    },
    onDelete: (obj) => {
      const l = unwrapDeleted(obj);
      deps.scaleExpectations.deleteExpectations(`${l.metadata.namespace}/${l.metadata.name}`);
    },
  };
  const job: EventHandler<ImagePullJob> = {
    onAdd: (j, initial) => {
      const key = ownerKey(j);
      if (!key) return;
      deps.scaleExpectations.observeScale(key, 'create', j.spec?.image ?? '');
      deps.queue.add(key, initial ? { priority: LowPriority } : {});
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.resourceVersions.observe(cur);
      const key = ownerKey(cur);
      if (!key) return;
      if (cur.metadata.deletionTimestamp) deps.scaleExpectations.observeScale(key, 'delete', cur.spec?.image ?? '');
      deps.queue.add(key);
    },
    onDelete: (obj) => {
      const j = unwrapDeleted(obj);
      deps.resourceVersions.delete(j);
      const key = ownerKey(j);
      if (!key) return;
      deps.scaleExpectations.observeScale(key, 'delete', j.spec?.image ?? '');
      deps.queue.add(key);
    },
  };
  return { list, job };
}

export const imageListPullJobController: ControllerSetup = {
  name: 'imagelistpulljob',
  kinds: ['ImageListPullJob', 'ImagePullJob'],
  gate: 'ImagePullJobGate',
  access: [
    access(ImageListPullJobs, [...READ, 'update', 'patch', 'delete']),
    access(ImageListPullJobs, ['update', 'patch'], 'status'),
    access(ImagePullJobs, [...READ, 'create', 'delete']),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const lists = deps.informers.informerFor<ImageListPullJob>(ImageListPullJobs, scope);
    const jobs = deps.informers.informerFor<ImagePullJob>(ImagePullJobs, scope);
    const expectationOptions = { timeout: deps.expectationTimeoutMs };
    const scaleExpectations = new ScaleExpectations(expectationOptions);
    const resourceVersions = new ResourceVersionExpectations(expectationOptions);
    const reconciler = new ImageListPullJobReconciler({
      cache: {
        getList: (ns, name) => lists.lister.get(ns, name),
        ownedJobs: (l) => ownedBy(jobs.lister, l),
      },
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      scaleExpectations,
      resourceVersions,
    });
    const controller = managerController('imagelistpulljob', deps, (key) => reconciler.reconcile(key));
    const handlers = makeListHandlers({ queue: controller.queue, scaleExpectations, resourceVersions });
    lists.addEventHandler(handlers.list);
    jobs.addEventHandler(handlers.job);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [lists, jobs]),
    };
  },
};
