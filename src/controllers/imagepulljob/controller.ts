// The ImagePullJob controller (upstream pkg/controller/imagepulljob): reads the job, its NodeImages,
// pods and secrets from informer caches, waits while expectations say the cache is behind its own
// writes, and then in order: releases/claims pull-secret copies, computes the status from the
// NodeImages' tag statuses, writes its tag into as many more NodeImages as parallelism allows, and
// stores the status. Completed jobs let go of their secrets and are deleted after their TTL.
import { randomBytes } from 'node:crypto';
import { FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION, KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../apis/constants.ts';
import { ignoreNotFound, isConflict, isNotFound, Namespaces, PatchType, Pods, Secrets, type KubeClient, type KubeObject, NodeImages, ImagePullJobs } from '../../runtime/client.ts';
import { Controller, TerminalError, type ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationWait, ResourceVersionExpectations, ScaleExpectations, type Satisfaction } from '../../runtime/expectations.ts';
import { NodeNameIndex, splitKey } from '../../runtime/informer.ts';
import type { Logger } from '../../runtime/log.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { normalizeImageRef } from '../../util/imageref.ts';
import type { ControllerDeps, ControllerSetup } from '../types.ts';
import type { ImageSpec, NodeImage } from '../nodeimage/resources.ts';
import { makeHandlers } from './event-handler.ts';
import {
  DEFAULT_TTL_SECONDS_FOR_ALWAYS_NODEIMAGE,
  calculateStatus,
  claimNodeImage,
  deadlineRequeueMs,
  finishedJobAction,
  jobKey,
  nodesToClaim,
  statusChanged,
  tagPullPolicy,
  type PullSecretRef,
  type RandomInt,
} from './plan.ts';
import type { ImagePullJob, Secret } from './resources.ts';
import { planSecretSync } from './secrets.ts';
import { nodeImagesForJob, type SelectPod } from './select.ts';

/** Upstream re-checks NodeImages it wrote after 5s rather than waiting out the whole timeout. */
const NODEIMAGE_CACHE_WAIT_MS = 5000;
const CONFLICT_REQUEUE_MS = 1000;
/** Writes into one NodeImage retried against a fresh copy (retry.RetryOnConflict). */
const NODEIMAGE_UPDATE_ATTEMPTS = 5;

export interface ImagePullJobCache {
  getJob(namespace: string, name: string): ImagePullJob | undefined;
  getNodeImage(name: string): NodeImage | undefined;
  listNodeImages(): NodeImage[];
  listPods(namespace: string): SelectPod[];
  getSecret(namespace: string, name: string): Secret | undefined;
  listSecrets(namespace: string): Secret[];
  getNamespace(name: string): KubeObject | undefined;
}

/** The calls the reconciler makes (a KubeClient in production). */
export type ImagePullJobClient = Pick<KubeClient, 'get' | 'create' | 'update' | 'patch' | 'delete' | 'updateStatus'>;

export interface ImagePullJobReconcilerDeps {
  cache: ImagePullJobCache;
  client: ImagePullJobClient;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  /** --default-ttlseconds-for-always-nodeimage. */
  defaultTtlForAlways?: number;
  clock?: Clock;
  randomInt?: RandomInt;
  randomSuffix?: () => string;
}

const defaultRandomInt: RandomInt = (n) => Math.floor(Math.random() * n);
/** Five lower-case alphanumerics, like apiserver generateName suffixes. */
function defaultRandomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
}

export class ImagePullJobReconciler {
  private readonly clock: Clock;
  private readonly randomInt: RandomInt;
  private readonly randomSuffix: () => string;

  constructor(private readonly deps: ImagePullJobReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.randomInt = deps.randomInt ?? defaultRandomInt;
    this.randomSuffix = deps.randomSuffix ?? defaultRandomSuffix;
  }

  /** ms to wait for an unsatisfied expectation, or undefined to go on (timed-out ones are dropped). */
  private wait(s: Satisfaction, drop: () => void, what: string, waitMs?: number): number | undefined {
    return expectationWait(s, { timeoutMs: this.deps.scaleExpectations.timeout, log: this.deps.log, what, drop, waitMs });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const job = this.deps.cache.getJob(namespace, name);
    if (!job) {
      this.deps.scaleExpectations.deleteExpectations(key);
      return {};
    }
    const { scaleExpectations, resourceVersions } = this.deps;
    let requeue = this.wait(scaleExpectations.satisfiedExpectations(key), () => scaleExpectations.deleteExpectations(key), 'secret creation');
    if (requeue !== undefined) return { requeueAfter: requeue };
    requeue = this.wait(resourceVersions.isSatisfied(job), () => resourceVersions.delete(job), 'job resourceVersion');
    if (requeue !== undefined) return { requeueAfter: requeue };

    const now = this.clock.now();
    if (job.metadata.deletionTimestamp) {
      await this.finalize(job);
      return {};
    }
    if (job.status?.completionTime) {
      await this.finalize(job);
      const finished = finishedJobAction(job, now);
      if (finished.action === 'delete') {
        this.deps.log.info('deleting ImagePullJob for ttlSecondsAfterFinished');
        await ignoreNotFound(this.deps.client.delete(ImagePullJobs, name, { namespace, preconditions: { uid: job.metadata.uid } }));
        return {};
      }
      return { requeueAfter: finished.requeueAfterMs };
    }
    if (!(job.metadata.finalizers ?? []).includes(FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION)) {
      const patched = await this.patchFinalizers(job, [...(job.metadata.finalizers ?? []), FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION]);
      if (!patched) return { requeueAfter: CONFLICT_REQUEUE_MS };
    }

    let nodeImages: NodeImage[];
    let image: { name: string; tag: string };
    try {
      nodeImages = nodeImagesForJob(job, this.deps.cache);
      image = normalizeImageRef(job.spec?.image ?? '');
    } catch (err) {
      await this.reportBadJob(job, err);
      throw new TerminalError(`cannot sync ImagePullJob ${key}`, { cause: err });
    }
    for (const ni of nodeImages) {
      requeue = this.wait(resourceVersions.isSatisfied(ni), () => resourceVersions.delete(ni), 'NodeImage resourceVersion', NODEIMAGE_CACHE_WAIT_MS);
      if (requeue !== undefined) return { requeueAfter: requeue };
    }

    const secrets = await this.syncSecrets(job);
    const { status, notSynced } = calculateStatus({ job, nodeImages, imageName: image.name, imageTag: image.tag, secrets, nowMs: now });
    const claim = nodesToClaim(job, status, notSynced);
    if (claim.length) {
      const pullPolicy = tagPullPolicy(job, this.deps.defaultTtlForAlways ?? DEFAULT_TTL_SECONDS_FOR_ALWAYS_NODEIMAGE, this.randomInt);
      for (const nodeName of claim) {
        await this.updateNodeImage(nodeName, (ni) => claimNodeImage({ nodeImage: ni, job, imageName: image.name, imageTag: image.tag, secrets, pullPolicy, nowMs: now }), image.name);
      }
    }

    if (statusChanged(job, status)) {
      try {
        const written = await this.deps.client.updateStatus<ImagePullJob>(ImagePullJobs, { ...job, status });
        resourceVersions.expect(written);
      } catch (err) {
        if (isConflict(err)) return { requeueAfter: CONFLICT_REQUEUE_MS };
        if (isNotFound(err)) return {};
        throw err;
      }
      return {};
    }
    return { requeueAfter: deadlineRequeueMs(job, status, now) };
  }

  /** Releases the job's secret copies and removes the protection finalizer. */
  private async finalize(job: ImagePullJob): Promise<void> {
    if (!(job.metadata.finalizers ?? []).includes(FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION)) return;
    await this.syncSecrets(job);
    await this.patchFinalizers(job, (job.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION));
  }

  /** False on a conflict (the cache is behind; the next round sees the newer job). */
  private async patchFinalizers(job: ImagePullJob, finalizers: string[]): Promise<boolean> {
    try {
      const patched = await this.deps.client.patch<ImagePullJob>(
        ImagePullJobs,
        job.metadata.name ?? '',
        { metadata: { finalizers, resourceVersion: job.metadata.resourceVersion } },
        { namespace: job.metadata.namespace, patchType: PatchType.Merge },
      );
      this.deps.resourceVersions.expect(patched);
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return false;
      throw err;
    }
  }

  private async syncSecrets(job: ImagePullJob): Promise<PullSecretRef[]> {
    const ns = job.metadata.namespace ?? '';
    const plan = planSecretSync({
      job,
      copies: this.deps.cache.listSecrets(KRUISE_DAEMON_CONFIG_NAMESPACE),
      source: (name) => this.deps.cache.getSecret(ns, name),
      randomSuffix: this.randomSuffix,
    });
    const key = jobKey(job);
    for (const s of plan.delete) {
      await ignoreNotFound(this.deps.client.delete(Secrets, s.metadata.name ?? '', { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE, preconditions: { uid: s.metadata.uid } }));
    }
    // Update (not patch) keeps the references exact: a job that claimed the copy since our read
    // makes this write conflict instead of being dropped from the list.
    for (const s of plan.update) {
      const written = await this.deps.client.update<Secret>(Secrets, s);
      this.deps.resourceVersions.expect(written);
    }
    if (plan.create.length) {
      const ns = this.deps.cache.getNamespace(KRUISE_DAEMON_CONFIG_NAMESPACE);
      if (!ns || ns.metadata.deletionTimestamp) {
        const message = `namespace ${KRUISE_DAEMON_CONFIG_NAMESPACE} ${ns ? 'is being deleted' : 'does not exist'}: pull secrets cannot be copied for kruise-daemon`;
        this.deps.recorder.event(job, 'Warning', 'FailedSyncSecrets', 'SyncSecrets', message);
        throw new Error(message);
      }
    }
    for (const s of plan.create) {
      this.deps.scaleExpectations.expectScale(key, 'create', s.metadata.name ?? '');
      try {
        await this.deps.client.create<Secret>(Secrets, s);
      } catch (err) {
        this.deps.scaleExpectations.observeScale(key, 'create', s.metadata.name ?? '');
        throw err;
      }
    }
    return plan.refs;
  }

  /** Applies change to the cached NodeImage, then to fresh copies while the update conflicts. */
  private async updateNodeImage(name: string, change: (ni: NodeImage) => ImageSpec | undefined, imageName: string): Promise<void> {
    let current = this.deps.cache.getNodeImage(name);
    for (let attempt = 1; current; attempt++) {
      const entry = change(current);
      if (!entry) return;
      const updated: NodeImage = { ...current, spec: { ...current.spec, images: { ...current.spec?.images, [imageName]: entry } } };
      try {
        const written = await this.deps.client.update<NodeImage>(NodeImages, updated);
        this.deps.resourceVersions.expect(written);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= NODEIMAGE_UPDATE_ATTEMPTS) throw err;
      }
      current = await ignoreNotFound(this.deps.client.get<NodeImage>(NodeImages, name));
    }
  }

  private async reportBadJob(job: ImagePullJob, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    this.deps.recorder.event(job, 'Warning', 'FailedSync', 'Reconcile', `failed to sync ImagePullJob: ${message}`);
    if (job.status?.message === message) return;
    try {
      await this.deps.client.updateStatus(ImagePullJobs, { ...job, status: { ...job.status, desired: job.status?.desired ?? 0, message } });
    } catch (e) {
      this.deps.log.info({ err: e instanceof Error ? e.message : e }, 'could not record the failure on the status');
    }
  }
}

export const imagePullJobController: ControllerSetup = {
  name: 'imagepulljob',
  kinds: ['ImagePullJob', 'NodeImage'],
  gate: 'ImagePullJobGate',
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const jobs = deps.informers.informerFor<ImagePullJob>(ImagePullJobs, scope);
    const nodeImages = deps.informers.informerFor<NodeImage>(NodeImages);
    const pods = deps.informers.informerFor<SelectPod>(Pods, scope);
    const secrets = deps.informers.informerFor<Secret>(Secrets, scope);
    const daemonSecrets = deps.informers.informerFor<Secret>(Secrets, { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE });
    const namespaces = deps.informers.informerFor<KubeObject>(Namespaces);

    const cache: ImagePullJobCache = {
      getJob: (ns, name) => jobs.lister.get(ns, name),
      getNodeImage: (name) => nodeImages.lister.get(name),
      listNodeImages: () => nodeImages.lister.list(),
      listPods: (ns) => pods.lister.list(ns),
      getSecret: (ns, name) => secrets.lister.get(ns, name),
      listSecrets: (ns) => daemonSecrets.lister.list(ns),
      getNamespace: (name) => namespaces.lister.get(name),
    };
    const expectationOptions = { timeout: deps.expectationTimeoutMs };
    const scaleExpectations = new ScaleExpectations(expectationOptions);
    const resourceVersions = new ResourceVersionExpectations(expectationOptions);
    const reconciler = new ImagePullJobReconciler({
      cache,
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      scaleExpectations,
      resourceVersions,
      defaultTtlForAlways: deps.flags.defaultTtlsecondsForAlwaysNodeimage,
    });
    const controller = new Controller({
      name: 'imagepulljob',
      reconcile: (key) => reconciler.reconcile(key),
      maxConcurrentReconciles: deps.workers,
      logger: deps.logger,
    });
    const handlers = makeHandlers({
      queue: controller.queue,
      scaleExpectations,
      resourceVersions,
      listJobs: (ns) => jobs.lister.list(ns),
      podsOnNode: (node) => pods.lister.byIndex(NodeNameIndex, node),
    });
    jobs.addEventHandler(handlers.job);
    nodeImages.addEventHandler(handlers.nodeImage);
    pods.addEventHandler(handlers.pod);
    secrets.addEventHandler(handlers.secret);
    // Without --namespace the cluster-wide informer already delivers the copies' events.
    if (deps.namespace) daemonSecrets.addEventHandler(handlers.secret);

    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [jobs, nodeImages, pods, secrets, daemonSecrets, namespaces]),
    };
  },
};
