// The NodeImage controller (upstream pkg/controller/nodeimage): one NodeImage per Node, named after
// it and carrying its labels (ImagePullJob label selectors match them). It creates the NodeImage
// once the Node has been Ready for --nodeimage-creation-delay, deletes it with the Node, cleans up
// the spec, and marks tags Failed when the node daemon does not answer or runs past the deadline.
//
// Status writing is shared with the node daemon, both as full status updates (PUT …/status with
// the resourceVersion read, a conflict means re-read and recompute):
//   - the daemon owns imageStatuses[name].tags[*] (phase, progress, imageID, startTime,
//     completionTime, message) and writes `version` = the spec tag version it is working on;
//     it recomputes desired (tags in spec), succeeded, failed, pulling, waiting from its tag
//     phases on every write, and firstSyncStatus;
//   - the manager only turns a lagging or overdue tag into Failed (version set to the spec's, so
//     the daemon sees the round as finished), drops statuses of tags no longer in the spec, and
//     recomputes the same counts — it writes only when that changes the stored status.
//
// planNodeImage (plan.ts) decides the round from the cached Node and NodeImage; the executor
// (executor.ts) applies it.
import type { KubeObject, Node } from '../../apis/core-objects.ts';
import { Nodes, Secrets, ImagePullJobs, NodeImages } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../apis/constants.ts';
import { isDeepStrictEqual } from 'node:util';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import type { ImagePullJob, NodeImage } from '../imagejobs/resources.ts';
import { NodeImageExecutor, type NodeImageClient } from './executor.ts';
import { DEFAULT_CREATION_DELAY_MS, nodeReadiness, planNodeImage } from './plan.ts';

/** How soon a NodeImage whose cache copy is behind our own write is looked at again. */
const CACHE_WAIT_MS = 1000;
/** Upstream spreads time-based re-checks over 3–5 s. */
const REQUEUE_JITTER_MS = 2000;

export interface NodeImageCache {
  getNode(name: string): Node | undefined;
  getNodeImage(name: string): NodeImage | undefined;
  /** The UID of an ImagePullJob, null when it does not exist, undefined when the manager cannot tell. */
  jobUID(namespace: string, name: string): string | null | undefined;
  /** undefined when the manager does not watch that namespace's secrets. */
  secretExists(namespace: string, name: string): boolean | undefined;
}

export interface NodeImageReconcilerDeps {
  cache: NodeImageCache;
  client: NodeImageClient;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  creationDelayMs?: number;
  clock?: Clock;
  jitter?: () => number;
}

export class NodeImageReconciler {
  private readonly clock: Clock;
  private readonly executor: NodeImageExecutor;

  constructor(private readonly deps: NodeImageReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new NodeImageExecutor({ ...deps, jitter: deps.jitter ?? (() => Math.floor(Math.random() * REQUEUE_JITTER_MS)) });
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const { cache, resourceVersions } = this.deps;
    const nodeImage = cache.getNodeImage(name);
    if (nodeImage) {
      const requeue = expectationGate([resourceVersions.check(nodeImage, 'NodeImage resourceVersion', CACHE_WAIT_MS)], this.deps.log);
      if (requeue !== undefined) return { requeueAfterMs: requeue };
    }
    const plan = planNodeImage({
      node: cache.getNode(name),
      nodeImage,
      nowMs: this.clock.now(),
      creationDelayMs: this.deps.creationDelayMs ?? DEFAULT_CREATION_DELAY_MS,
      jobUID: (ns, job) => cache.jobUID(ns, job),
      secretExists: (ns, secret) => cache.secretExists(ns, secret),
    });
    return this.executor.execute(name, nodeImage, plan);
  }
}

export interface NodeImageHandlerDeps {
  queue: { add(key: string, opts?: { priority?: number }): void; addAfter(key: string, ms: number): void };
  resourceVersions: ResourceVersionExpectations;
  getNodeImage(name: string): NodeImage | undefined;
  listNodeImages(): NodeImage[];
  creationDelayMs: number;
  now(): number;
}

/** Upstream nodeimage_event_handler.go: Node changes that matter, NodeImages, deleted ImagePullJobs. */
export function makeNodeImageHandlers(deps: NodeImageHandlerDeps) {
  const nodeChanged = (node: Node, initial = false) => {
    const name = node.metadata.name ?? '';
    const ni = deps.getNodeImage(name);
    if (node.metadata.deletionTimestamp) {
      if (ni) deps.queue.add(name);
      return;
    }
    if (!ni) {
      const { ready, waitMs } = nodeReadiness(node, deps.now(), deps.creationDelayMs);
      if (!ready) return;
      if (waitMs > 0) deps.queue.addAfter(name, waitMs);
      else deps.queue.add(name, initial ? { priority: LowPriority } : {});
      return;
    }
    if (!isDeepStrictEqual(ni.metadata.labels ?? {}, node.metadata.labels ?? {})) deps.queue.add(name);
  };
  const node: EventHandler<Node> = {
    onAdd: (n, initial) => nodeChanged(n, initial),
    onUpdate: (_old, cur) => nodeChanged(cur),
    onDelete: (obj) => {
      const name = unwrapDeleted(obj).metadata.name ?? '';
      if (deps.getNodeImage(name)) deps.queue.add(name);
    },
  };
  const nodeImage: EventHandler<NodeImage> = {
    onAdd: (ni, initial) => {
      deps.resourceVersions.observe(ni);
      deps.queue.add(ni.metadata.name ?? '', initial ? { priority: LowPriority } : {});
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.resourceVersions.observe(cur);
      deps.queue.add(cur.metadata.name ?? '');
    },
    onDelete: (obj) => {
      const ni = unwrapDeleted(obj);
      deps.resourceVersions.delete(ni);
      deps.queue.add(ni.metadata.name ?? '');
    },
  };
  // A deleted job leaves owner refs behind in the NodeImages it wrote to.
  const job: EventHandler<ImagePullJob> = {
    onDelete: (obj) => {
      const uid = unwrapDeleted(obj).metadata.uid;
      for (const ni of deps.listNodeImages()) {
        const owned = Object.values(ni.spec?.images ?? {}).some((img) =>
          (img.tags ?? []).some((t) => (t.ownerReferences ?? []).some((r) => r.uid === uid)),
        );
        if (owned) deps.queue.add(ni.metadata.name ?? '');
      }
    },
  };
  return { node, nodeImage, job };
}

export const nodeImageController: ControllerSetup = {
  name: 'nodeimage',
  kinds: ['NodeImage', 'ImagePullJob'],
  gate: 'KruiseDaemon',
  access: [
    access(NodeImages, [...READ, ...WRITE]),
    access(NodeImages, ['update', 'patch'], 'status'),
    access(ImagePullJobs, READ),
    access(Nodes, READ),
    access(Secrets, READ),
  ],
  setup(deps: ControllerDeps) {
    const nodes = deps.informers.informerFor<Node>(Nodes);
    const nodeImages = deps.informers.informerFor<NodeImage>(NodeImages);
    const jobs = deps.informers.informerFor<ImagePullJob>(ImagePullJobs, deps.namespace ? { namespace: deps.namespace } : {});
    // Old-style secret references point into kruise-daemon-config; the manager watches only there.
    const secrets = deps.informers.informerFor<KubeObject>(Secrets, { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE });
    const creationDelayMs = deps.flags.nodeimageCreationDelay;
    const resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new NodeImageReconciler({
      cache: {
        getNode: (name) => nodes.lister.get(name),
        getNodeImage: (name) => nodeImages.lister.get(name),
        // With --namespace the manager cannot see jobs elsewhere; their refs are left alone.
        jobUID: (ns, name) => (deps.namespace && ns !== deps.namespace ? undefined : (jobs.lister.get(ns, name)?.metadata.uid ?? null)),
        secretExists: (ns, name) => (ns === KRUISE_DAEMON_CONFIG_NAMESPACE ? !!secrets.lister.get(ns, name) : undefined),
      },
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      resourceVersions,
      creationDelayMs,
    });
    const controller = managerController('nodeimage', deps, (key) => reconciler.reconcile(key));
    const handlers = makeNodeImageHandlers({
      queue: controller.queue,
      resourceVersions,
      getNodeImage: (name) => nodeImages.lister.get(name),
      listNodeImages: () => nodeImages.lister.list(),
      creationDelayMs,
      now: () => Date.now(),
    });
    nodes.addEventHandler(handlers.node);
    nodeImages.addEventHandler(handlers.nodeImage);
    jobs.addEventHandler(handlers.job);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [nodes, nodeImages, jobs, secrets]),
    };
  },
};
