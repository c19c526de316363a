// The ImageListPullJob controller (upstream pkg/controller/imagelistpulljob): labels the list job
// with its template hash, keeps one ImagePullJob per listed image (recreating those of an older
// template, deleting those of removed images), sums their progress into the status, and deletes the
// list job ttlSecondsAfterFinished after it completes.
import { CONTROLLER_REVISION_HASH_LABEL } from '../../apis/constants.ts';
import { ignoreNotFound, ImageListPullJobs, ImagePullJobs, isConflict, isNotFound, PatchType, type KubeClient } from '../../runtime/client.ts';
import { Controller, type ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { ResourceVersionExpectations, ScaleExpectations, type Satisfaction } from '../../runtime/expectations.ts';
import { OwnerUIDIndex, splitKey, unwrapDeleted, type EventHandler } from '../../runtime/informer.ts';
import type { Logger } from '../../runtime/log.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import type { ControllerDeps, ControllerSetup } from '../types.ts';
import { finishedJobAction, type ImagePullJob } from '../imagejobs/resources.ts';
import { calculateListStatus, computeActions, listStatusChanged, templateHash, type ImageListPullJob } from './plan.ts';

const CONFLICT_REQUEUE_MS = 1000;

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

  constructor(private readonly deps: ImageListPullJobReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
  }

  private wait(s: Satisfaction, drop: () => void): number | undefined {
    if (s.satisfied) return undefined;
    if (!s.timedOut) return Math.max(1, this.deps.scaleExpectations.timeout - s.unsatisfiedDuration);
    this.deps.log.warn({ overTimeMs: s.unsatisfiedDuration }, 'expectation unsatisfied overtime; dropping it');
    drop();
    return undefined;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const list = this.deps.cache.getList(namespace, name);
    const { scaleExpectations, resourceVersions, client } = this.deps;
    if (!list) {
      scaleExpectations.deleteExpectations(key);
      return {};
    }
    const hash = templateHash(list);
    if (list.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] !== hash) {
      try {
        await client.patch(ImageListPullJobs, name, { metadata: { labels: { [CONTROLLER_REVISION_HASH_LABEL]: hash } } }, { namespace, patchType: PatchType.Merge });
      } catch (err) {
        if (isNotFound(err)) return {};
        throw err;
      }
    }
    const now = this.clock.now();
    if (list.status?.completionTime) {
      const finished = finishedJobAction(list, now);
      if (finished.action === 'delete') {
        this.deps.log.info('deleting ImageListPullJob for ttlSecondsAfterFinished');
        await ignoreNotFound(client.delete(ImageListPullJobs, name, { namespace, preconditions: { uid: list.metadata.uid } }));
        return {};
      }
      return { requeueAfter: finished.requeueAfterMs };
    }
    let requeue = this.wait(scaleExpectations.satisfiedExpectations(key), () => scaleExpectations.deleteExpectations(key));
    if (requeue !== undefined) return { requeueAfter: requeue };

    const owned = new Map<string, ImagePullJob>();
    for (const child of this.deps.cache.ownedJobs(list)) {
      if (!child.metadata.deletionTimestamp) owned.set(child.spec?.image ?? '', child);
    }
    for (const child of owned.values()) {
      requeue = this.wait(resourceVersions.isSatisfied(child), () => resourceVersions.delete(child));
      if (requeue !== undefined) return { requeueAfter: requeue };
    }

    const status = calculateListStatus(list, owned, now);
    const actions = computeActions(list, owned, hash);
    const errors: string[] = [];
    let created = 0;
    for (const child of actions.create) {
      const image = child.spec?.image ?? '';
      scaleExpectations.expectScale(key, 'create', image);
      try {
        await client.create<ImagePullJob>(ImagePullJobs, child);
        created++;
      } catch (err) {
        scaleExpectations.observeScale(key, 'create', image);
        errors.push(`fail to create ImagePullJob for image ${image}: ${errMessage(err)}`);
        break;
      }
    }
    if (created) this.deps.recorder.event(list, 'Normal', 'Successful create ImagePullJob', 'Create', `Create ${created} ImagePullJob`);
    let deleted = 0;
    for (const child of actions.delete) {
      const image = child.spec?.image ?? '';
      scaleExpectations.expectScale(key, 'delete', image);
      try {
        await client.delete(ImagePullJobs, child.metadata.name ?? '', { namespace, preconditions: { uid: child.metadata.uid } });
        deleted++;
      } catch (err) {
        scaleExpectations.observeScale(key, 'delete', image);
        if (!isNotFound(err)) errors.push(`fail to delete ImagePullJob (${namespace}/${child.metadata.name}) for : ${errMessage(err)}`);
      }
    }
    if (deleted) this.deps.recorder.event(list, 'Normal', 'Successful delete ImagePullJob', 'Delete', `Delete ${deleted} ImagePullJob`);
    if (errors.length) throw new Error(errors.join('; '));

    if (listStatusChanged(list, status)) {
      try {
        await client.updateStatus<ImageListPullJob>(ImageListPullJobs, { ...list, status });
      } catch (err) {
        if (isConflict(err)) return { requeueAfter: CONFLICT_REQUEUE_MS };
        if (!isNotFound(err)) throw err;
      }
    }
    return {};
  }
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The list job a generated ImagePullJob belongs to (its controller reference). */
function ownerKey(job: ImagePullJob): string | undefined {
  const ref = job.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'ImageListPullJob' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return `${job.metadata.namespace}/${ref.name}`;
}

export function makeListHandlers(deps: { queue: { add(key: string, opts?: { priority?: number }): void }; scaleExpectations: ScaleExpectations; resourceVersions: ResourceVersionExpectations }) {
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
        ownedJobs: (l) => jobs.lister.byIndex(OwnerUIDIndex, l.metadata.uid ?? '').filter((j) => j.metadata.namespace === l.metadata.namespace),
      },
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      scaleExpectations,
      resourceVersions,
    });
    const controller = new Controller({
      name: 'imagelistpulljob',
      reconcile: (key) => reconciler.reconcile(key),
      maxConcurrentReconciles: deps.workers,
      logger: deps.logger,
    });
    const handlers = makeListHandlers({ queue: controller.queue, scaleExpectations, resourceVersions });
    lists.addEventHandler(handlers.list);
    jobs.addEventHandler(handlers.job);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [lists, jobs]),
    };
  },
};
