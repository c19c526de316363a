// The ResourceDistribution controller (upstream pkg/controller/resourcedistribution, gate
// ResourceDistributionGate, spec §13): keeps a copy of a Secret or ConfigMap in every target
// namespace and none in the others. Namespace events re-run the distributions they concern (a new
// namespace with the selected labels gets its copy, a namespace that loses them loses it); changes to
// a copy re-run its distribution (an edited or deleted copy is restored); deleting the unowned
// object that blocked a namespace (ConflictOccurred) lets the copy in. planDistribution (plan.ts)
// decides from the caches once expectations are met; the executor (executor.ts) writes.
import type { Namespace } from '../../apis/core-objects.ts';
import type { KubeClient } from '../../runtime/client.ts';
import { ConfigMaps, Namespaces, ResourceDistributions, Secrets } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { unwrapDeleted, type Lister } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { ResourceDistributionExecutor } from './executor.ts';
import { namespaceConcerns, planDistribution, type DistributedKind, type DistributedResource, type ResourceDistribution } from './plan.ts';

export interface ResourceDistributionCache {
  getDistribution(name: string): ResourceDistribution | undefined;
  listDistributions(): ResourceDistribution[];
  listNamespaces(): Namespace[];
  /** The Secret or ConfigMap of that kind, namespace and name. */
  getObject(kind: string, namespace: string, name: string): DistributedResource | undefined;
}

export interface ResourceDistributionReconcilerDeps {
  cache: ResourceDistributionCache;
  client: Pick<KubeClient, 'create' | 'update' | 'delete' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  clock?: Clock;
}

export class ResourceDistributionReconciler {
  private readonly executor: ResourceDistributionExecutor;
  private readonly clock: Clock;

  constructor(private readonly deps: ResourceDistributionReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new ResourceDistributionExecutor({ ...deps, clock: this.clock });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { cache, scaleExpectations, resourceVersions, log } = this.deps;
    const rd = cache.getDistribution(key);
    if (!rd) {
      scaleExpectations.deleteExpectations(key);
      return {};
    }
    const raw = rd.spec?.resource as { kind?: unknown; metadata?: { name?: unknown } } | undefined;
    const kind = typeof raw?.kind === 'string' ? raw.kind : '';
    const name = typeof raw?.metadata?.name === 'string' ? raw.metadata.name : '';
    const namespaces = cache.listNamespaces();
    const existing = (namespace: string) => (name ? cache.getObject(kind, namespace, name) : undefined);
    const copies = namespaces.map((ns) => existing(ns.metadata.name ?? '')).filter((c): c is DistributedResource => !!c);
    const requeue = expectationGate(
      [
        scaleExpectations.check(key, 'copy creation/deletion'),
        ...copies.map((copy) => resourceVersions.check(copy, 'copy resourceVersion')),
      ],
      log,
    );
    if (requeue !== undefined) return { requeueAfterMs: requeue };
    const plan = planDistribution({ rd, namespaces, existing });
    return this.executor.execute(key, rd, plan);
  }
}

/** The distribution that controls a copy (its controller reference). */
function controllingDistribution(obj: DistributedResource): string | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'ResourceDistribution' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return ref.name;
}

export function makeDistributionHandlers(deps: {
  queue: { add(key: string, opts?: { priority?: number }): void };
  distributions: () => ResourceDistribution[];
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
}) {
  const { queue, scaleExpectations, resourceVersions } = deps;
  const enqueueConcerned = (...namespaces: Namespace[]) => {
    for (const rd of deps.distributions()) {
      if (namespaces.some((ns) => namespaceConcerns(rd, ns))) queue.add(rd.metadata.name ?? '');
    }
  };
  const distribution: EventHandler<ResourceDistribution> = {
    onAdd: (rd, initial) => queue.add(rd.metadata.name ?? '', initial ? { priority: LowPriority } : {}),
    // Status writes do not re-run the distribution; spec (generation) and deletion changes do.
    onUpdate: (old, cur) => {
      if (old.metadata.generation !== cur.metadata.generation || !!old.metadata.deletionTimestamp !== !!cur.metadata.deletionTimestamp) {
        queue.add(cur.metadata.name ?? '');
      }
    },
    onDelete: (obj) => scaleExpectations.deleteExpectations(unwrapDeleted(obj).metadata.name ?? ''),
  };
  const namespace: EventHandler<Namespace> = {
    onAdd: (ns, initial) => {
      if (!initial) enqueueConcerned(ns);
    },
    onUpdate: (old, cur) => {
      const labelsChanged = JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
      if (labelsChanged || !!old.metadata.deletionTimestamp !== !!cur.metadata.deletionTimestamp) enqueueConcerned(old, cur);
    },
    onDelete: (obj) => enqueueConcerned(unwrapDeleted(obj)),
  };
  const copyHandler = (kind: DistributedKind): EventHandler<DistributedResource> => ({
    onAdd: (obj, initial) => {
      const owner = controllingDistribution(obj);
      if (!owner) return;
      scaleExpectations.observeScale(owner, 'create', obj.metadata.namespace ?? '');
      if (!initial) queue.add(owner);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      resourceVersions.observe(cur);
      const owner = controllingDistribution(cur) ?? controllingDistribution(old);
      if (owner) queue.add(owner);
    },
    onDelete: (deleted) => {
      const obj = unwrapDeleted(deleted);
      resourceVersions.delete(obj);
      const owner = controllingDistribution(obj);
      if (owner) {
        scaleExpectations.observeScale(owner, 'delete', obj.metadata.namespace ?? '');
        queue.add(owner);
        return;
      }
      // An unowned object of the same kind and name went away: a distribution it blocked can now fill its place.
      for (const rd of deps.distributions()) {
        const res = rd.spec?.resource as { kind?: unknown; metadata?: { name?: unknown } } | undefined;
        if (res?.kind === kind && res?.metadata?.name === obj.metadata.name) queue.add(rd.metadata.name ?? '');
      }
    },
  });
  return { distribution, namespace, secret: copyHandler('Secret'), configMap: copyHandler('ConfigMap') };
}

export const resourceDistributionController: ControllerSetup = {
  name: 'resourcedistribution',
  kinds: ['ResourceDistribution'],
  gate: 'ResourceDistributionGate',
  access: [
    access(ResourceDistributions, READ),
    access(ResourceDistributions, ['update', 'patch'], 'status'),
    access(Namespaces, READ),
    access(Secrets, [...READ, 'create', 'update', 'delete']),
    access(ConfigMaps, [...READ, 'create', 'update', 'delete']),
  ],
  setup(deps: ControllerDeps) {
    const distributions = deps.informers.informerFor<ResourceDistribution>(ResourceDistributions);
    const namespaces = deps.informers.informerFor<Namespace>(Namespaces);
    const secrets = deps.informers.informerFor<DistributedResource>(Secrets);
    const configMaps = deps.informers.informerFor<DistributedResource>(ConfigMaps);
    const listerFor = (kind: string): Lister<DistributedResource> | undefined =>
      kind === 'Secret' ? secrets.lister : kind === 'ConfigMap' ? configMaps.lister : undefined;
    const expectationOptions = { timeout: deps.expectationTimeoutMs };
    const scaleExpectations = new ScaleExpectations(expectationOptions);
    const resourceVersions = new ResourceVersionExpectations(expectationOptions);
    const cache: ResourceDistributionCache = {
      getDistribution: (name) => distributions.lister.get(name),
      listDistributions: () => distributions.lister.list(),
      listNamespaces: () => namespaces.lister.list(),
      getObject: (kind, namespace, name) => listerFor(kind)?.get(namespace, name),
    };
    const reconciler = new ResourceDistributionReconciler({
      cache,
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      scaleExpectations,
      resourceVersions,
    });
    const controller = managerController('resourcedistribution', deps, (key) => reconciler.reconcile(key));
    const handlers = makeDistributionHandlers({
      queue: controller.queue,
      distributions: cache.listDistributions,
      scaleExpectations,
      resourceVersions,
    });
    distributions.addEventHandler(handlers.distribution);
    namespaces.addEventHandler(handlers.namespace);
    secrets.addEventHandler(handlers.secret);
    configMaps.addEventHandler(handlers.configMap);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [distributions, namespaces, secrets, configMaps]),
    };
  },
};
