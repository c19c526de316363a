import { ImagePullJobs, Namespaces, NodeImages, Nodes, Pods, Secrets } from '../../runtime/resources.ts';
// The ImagePullJob controller (upstream pkg/controller/imagepulljob): reads the job, its NodeImages,
// pods and secrets from informer caches, waits while expectations say the cache is behind its own
// writes, asks planImagePullJob for the round (pull-secret copies, the status from the NodeImages'
// tag statuses, the NodeImages to claim as parallelism allows; for a finished job, letting go of its
// secrets and deletion after its TTL) and hands the plan to the executor.
import { randomBytes } from 'node:crypto';
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../apis/constants.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import { NodeNameIndex, splitKey } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { normalizeImageRef } from '../../util/imageref.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { FailedPlanReporter } from '../failed-plan.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { isActiveJob, type ImagePullJob, type NodeImage } from '../imagejobs/resources.ts';
import { makeHandlers } from './event-handler.ts';
import { ImagePullJobExecutor, type ImagePullJobClient } from './executor.ts';
import { DEFAULT_TTL_SECONDS_FOR_ALWAYS_NODEIMAGE, planImagePullJob, type RandomInt } from './plan.ts';
import { nodeImagesForJob } from './select.ts';
import type { Pod, Secret } from '../../apis/core-objects.ts';
import { RAND_ALPHABET } from '../../util/rand.ts';

/** Upstream re-checks NodeImages it wrote after 5s rather than waiting out the whole timeout. */
const NODEIMAGE_CACHE_WAIT_MS = 5000;

export interface ImagePullJobCache {
  getJob(namespace: string, name: string): ImagePullJob | undefined;
  getNodeImage(name: string): NodeImage | undefined;
  listNodeImages(): NodeImage[];
  listPods(namespace: string): Pod[];
  getSecret(namespace: string, name: string): Secret | undefined;
  listSecrets(namespace: string): Secret[];
  getNamespace(name: string): KubeObject | undefined;
}

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
  return [...randomBytes(5)].map((b) => RAND_ALPHABET[b % RAND_ALPHABET.length]).join('');
}

export class ImagePullJobReconciler {
  private readonly clock: Clock;
  private readonly randomInt: RandomInt;
  private readonly randomSuffix: () => string;
  private readonly executor: ImagePullJobExecutor;
  private readonly failures: FailedPlanReporter<ImagePullJob>;

  constructor(private readonly deps: ImagePullJobReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.randomInt = deps.randomInt ?? defaultRandomInt;
    this.randomSuffix = deps.randomSuffix ?? defaultRandomSuffix;
    this.executor = new ImagePullJobExecutor({ ...deps, getNodeImage: (name) => deps.cache.getNodeImage(name) });
    this.failures = new FailedPlanReporter(
      { type: ImagePullJobs, failureStatus: failureMessage },
      { ...deps, now: () => this.clock.now() },
    );
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const { cache, scaleExpectations, resourceVersions, log } = this.deps;
    const job = cache.getJob(namespace, name);
    if (!job) {
      scaleExpectations.deleteExpectations(key);
      return {};
    }
    let requeue = expectationGate(
      [scaleExpectations.check(key, 'secret creation'), resourceVersions.check(job, 'job resourceVersion')],
      log,
    );
    if (requeue !== undefined) return { requeueAfterMs: requeue };

    let nodeImages: NodeImage[] | undefined;
    let image: { name: string; tag: string } | undefined;
    if (isActiveJob(job)) {
      ({ nodeImages, image } = await this.failures.orReport(job, () => ({
        nodeImages: nodeImagesForJob(job, cache),
        image: normalizeImageRef(job.spec?.image ?? ''),
      })));
      requeue = expectationGate(
        nodeImages.map((ni) => resourceVersions.check(ni, 'NodeImage resourceVersion', NODEIMAGE_CACHE_WAIT_MS)),
        log,
      );
      if (requeue !== undefined) return { requeueAfterMs: requeue };
    }

    const plan = planImagePullJob({
      job,
      secretCopies: cache.listSecrets(KRUISE_DAEMON_CONFIG_NAMESPACE),
      sourceSecret: (secret) => cache.getSecret(namespace, secret),
      daemonNamespace: cache.getNamespace(KRUISE_DAEMON_CONFIG_NAMESPACE),
      nodeImages,
      image,
      nowMs: this.clock.now(),
      defaultTtlForAlways: this.deps.defaultTtlForAlways ?? DEFAULT_TTL_SECONDS_FOR_ALWAYS_NODEIMAGE,
      randomInt: this.randomInt,
      randomSuffix: this.randomSuffix,
    });
    return this.executor.execute(job, plan);
  }
}

/** ImagePullJob has no conditions: a failed plan is its status message (written once). */
function failureMessage(job: ImagePullJob, message: string): ImagePullJob['status'] | undefined {
  if (job.status?.message === message) return undefined;
  return { ...job.status, desired: job.status?.desired ?? 0, message };
}

export const imagePullJobController: ControllerSetup = {
  name: 'imagepulljob',
  kinds: ['ImagePullJob', 'NodeImage'],
  gate: 'ImagePullJobGate',
  access: [
    access(ImagePullJobs, [...READ, 'update', 'patch', 'delete']),
    access(ImagePullJobs, ['update', 'patch'], 'status'),
    access(NodeImages, [...READ, 'update', 'patch']),
    access(Nodes, READ),
    access(Pods, READ),
    access(Namespaces, READ),
    access(Secrets, [...READ, ...WRITE]),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const jobs = deps.informers.informerFor<ImagePullJob>(ImagePullJobs, scope);
    const nodeImages = deps.informers.informerFor<NodeImage>(NodeImages);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
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
    const controller = managerController('imagepulljob', deps, (key) => reconciler.reconcile(key));
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
