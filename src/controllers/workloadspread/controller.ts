// The WorkloadSpread controller (spec §10, upstream pkg/controller/workloadspread): reads the
// WorkloadSpread, its workload, the workload's pods and the nodes from informer caches, waits while
// expectations say the cache is behind our own pod patches, deletions and status writes, asks
// planWorkloadSpread for the round and hands the plan to the executor. What starts a round is
// event-handler.ts.

import { KRUISE_CONFIGURATION_NAME, WS_CUSTOM_WORKLOAD_WHITELIST_KEY } from '../../apis/constants.ts';
import type { ConfigMap, Node, Pod, KubeObject } from '../../apis/core-objects.ts';
import type { KubeClient, Scale } from '../../runtime/client.ts';
import {
  AdvancedStatefulSets,
  CloneSets,
  ConfigMaps,
  Deployments,
  Jobs,
  Nodes,
  Pods,
  ReplicaSets,
  resourceTypeKey,
  StatefulSets,
  type ResourceType,
} from '../../runtime/resources.ts';
import { ignoreNotFound } from '../../runtime/errors.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import { OwnerUIDIndex, splitKey } from '../../runtime/store.ts';
import { waitForCacheSync, type Informer } from '../../runtime/informer-factory.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ } from '../../runtime/rbac.ts';
import type { ResourceMapping } from '../../runtime/restmapper.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { parseCustomWorkloadWhitelist, whitelistEntryFor, type CustomWorkload } from '../../util/custom-workloads.ts';
import { errMessage } from '../../util/errors.ts';
import { parseSelector } from '../../util/labelselector.ts';
import {
  BUILTIN_WORKLOADS,
  VERSION_IGNORED,
  groupOf,
  isPodSelected,
  isWorkloadRef,
  replicasAtPath,
  workloadReplicasOf,
} from '../../util/workloadspread.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { DEPLOYMENT_REVISION_ANNOTATION, makeSpreadHandlers, type Workload } from './event-handler.ts';
import { WorkloadSpreadExecutor, WorkloadSpreads, type StoredWS } from './executor.ts';
import { planWorkloadSpread } from './plan.ts';
import { FailedPlanReporter, type FailedPlanKind } from '../failed-plan.ts';

/** How soon a round that found the cache behind our own writes looks again. */
const CACHE_WAIT_MS = 500;

/** The workload kinds a WorkloadSpread targets, by group and kind (spec §10). */
const TARGETS: ReadonlyArray<{ group: string; kind: string; type: ResourceType }> = [
  { group: 'apps.kruise.io', kind: 'CloneSet', type: CloneSets },
  { group: 'apps', kind: 'Deployment', type: Deployments },
  { group: 'apps', kind: 'ReplicaSet', type: ReplicaSets },
  { group: 'batch', kind: 'Job', type: Jobs },
  { group: 'apps', kind: 'StatefulSet', type: StatefulSets },
  { group: 'apps.kruise.io', kind: 'StatefulSet', type: AdvancedStatefulSets },
];
/** Targets whose scale-down honours pod-deletion-cost. */
const DELETION_COST_KINDS = new Set(['CloneSet', 'Deployment', 'ReplicaSet']);

/** A workload of a kind outside the built-in targets, with what its Scale says. */
export interface CustomTarget {
  object: Workload;
  /** The Scale's spec.replicas. */
  replicas: number;
  /** The Scale's status.selector (label selector string). */
  selector?: string;
}

/** A custom workload's replicas when it has no scale subresource (upstream controllerfinder.ReplicasUnknown). */
export const REPLICAS_UNKNOWN = -1;

/**
 * A custom workload as upstream's controller finder reads it: with a scale subresource, the Scale's
 * replicas and selector; without one (an Advanced DaemonSet, which upstream's e2e configuration
 * whitelists), replicas unknown and no selector, so its pods are those it controls (upstream's
 * getRefUID). undefined when the workload or its Scale does not exist.
 */
export async function readCustomTarget(
  object: Workload | undefined,
  scale: (() => Promise<Pick<Scale, 'spec' | 'status'> | undefined>) | undefined,
): Promise<CustomTarget | undefined> {
  if (!object) return undefined;
  if (!scale) return { object, replicas: REPLICAS_UNKNOWN };
  const s = await scale();
  return s && { object, replicas: s.spec?.replicas ?? 0, selector: s.status?.selector };
}

/** What one reconcile reads; informer caches in production, plain objects in unit tests. */
export interface SpreadCache {
  getWorkloadSpread(namespace: string, name: string): StoredWS | undefined;
  getWorkload(group: string, kind: string, namespace: string, name: string): Workload | undefined;
  /**
   * Any other workload (a third-party CRD), found by API discovery and read as readCustomTarget
   * says; undefined when it does not exist. Throws when its kind is not served.
   */
  customWorkload(apiVersion: string, kind: string, namespace: string, name: string): Promise<CustomTarget | undefined>;
  /** The active and inactive pods of a namespace. */
  podsIn(namespace: string): Pod[];
  /** WorkloadSpread_Watch_Custom_Workload_WhiteList of kruise-configuration; throws when it is malformed. */
  whitelist(): CustomWorkload[];
  /** Objects (pods, ReplicaSets) whose controller has this uid. */
  ownedBy<T extends KubeObject>(kind: 'Pod' | 'ReplicaSet', uid: string): T[];
  node(name: string): Node | undefined;
}

export interface SpreadReconcilerDeps {
  cache: SpreadCache;
  client: Pick<KubeClient, 'updateStatus' | 'patch' | 'delete'>;
  recorder: EventRecorder;
  log: Logger;
  clock?: Clock;
  /** Pods deleted and not yet seen gone, per WorkloadSpread (observed by event-handler.ts). */
  scale?: ScaleExpectations;
  resourceVersions?: ResourceVersionExpectations;
}

/** The workload's pods and, for Deployments, the version its newest ReplicaSet runs. */
function podsAndVersion(cache: SpreadCache, ws: StoredWS, workload: Workload): { pods: Pod[]; latestVersion: string } {
  const uid = workload.metadata.uid ?? '';
  const kind = ws.spec.targetRef.kind;
  if (kind === 'Deployment') {
    const sets = cache.ownedBy<Workload>('ReplicaSet', uid).filter((rs) => !rs.metadata.deletionTimestamp);
    const newest = [...sets].sort(
      (a, b) =>
        Number(b.metadata.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] ?? 0) -
        Number(a.metadata.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] ?? 0),
    )[0];
    return {
      pods: sets.flatMap((rs) => cache.ownedBy<Pod>('Pod', rs.metadata.uid ?? '')),
      latestVersion: newest?.metadata.labels?.['pod-template-hash'] ?? '',
    };
  }
  const pods = cache.ownedBy<Pod>('Pod', uid);
  if (kind === 'ReplicaSet') return { pods, latestVersion: workload.metadata.labels?.['pod-template-hash'] ?? '' };
  return { pods, latestVersion: VERSION_IGNORED };
}

/**
 * A custom workload's pods and replicas (upstream GetPodsForRef's scale branch + filterWorkload):
 * pods naming it as controller, else those its Scale's selector matches; replicas from
 * targetFilter.replicasPathList, else the whitelist entry's replicasPath, else the Scale.
 */
async function customPodsAndReplicas(cache: SpreadCache, ws: StoredWS): Promise<{ pods: Pod[]; replicas: number }> {
  const ref = ws.spec.targetRef;
  const namespace = ws.metadata.namespace;
  const target = await cache.customWorkload(ref.apiVersion, ref.kind, namespace, ref.name);
  if (!target || target.object.metadata.deletionTimestamp || target.replicas === 0) return { pods: [], replicas: 0 };
  let pods = cache.ownedBy<Pod>('Pod', target.object.metadata.uid ?? '').filter((p) => p.metadata.namespace === namespace);
  if (!pods.length && target.selector) {
    const selector = parseSelector(target.selector);
    if (!selector.isEverything()) pods = cache.podsIn(namespace).filter((p) => selector.matches(p.metadata.labels));
  }
  const replicasPath = whitelistEntryFor(ref, cache.whitelist())?.replicasPath;
  let replicas = target.replicas;
  if (ws.spec.targetFilter?.replicasPathList?.length) replicas = workloadReplicasOf(ws, target.object);
  else if (replicasPath) replicas = replicasAtPath(target.object, replicasPath);
  return { pods, replicas };
}

export class WorkloadSpreadReconciler {
  private readonly clock: Clock;
  private readonly scale: ScaleExpectations;
  private readonly resourceVersions: ResourceVersionExpectations;
  private readonly executor: WorkloadSpreadExecutor;
  private readonly failures: FailedPlanReporter<StoredWS>;

  constructor(private readonly deps: SpreadReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.scale = deps.scale ?? new ScaleExpectations();
    this.resourceVersions = deps.resourceVersions ?? new ResourceVersionExpectations();
    this.executor = new WorkloadSpreadExecutor({ ...deps, scale: this.scale, resourceVersions: this.resourceVersions });
    this.failures = new FailedPlanReporter(workloadSpreadKind, { ...deps, now: () => this.clock.now() });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const { cache, recorder, log } = this.deps;
    const ws = cache.getWorkloadSpread(namespace, name);
    if (!ws || ws.metadata.deletionTimestamp || !ws.spec?.targetRef) {
      this.scale.deleteExpectations(key);
      return {};
    }
    const ref = ws.spec.targetRef;
    const builtIn = isWorkloadRef(ref, BUILTIN_WORKLOADS);
    const workload = builtIn ? cache.getWorkload(groupOf(ref.apiVersion), ref.kind, namespace, ref.name) : undefined;
    let pods: Pod[] = [];
    let latestVersion = VERSION_IGNORED;
    let workloadReplicas = 0;
    try {
      if (!builtIn) {
        ({ pods, replicas: workloadReplicas } = await customPodsAndReplicas(cache, ws));
      } else if (workload) {
        ({ pods, latestVersion } = podsAndVersion(cache, ws, workload));
        workloadReplicas = workloadReplicasOf(ws, workload);
      }
      pods = pods.filter((p) => isPodSelected(ws, p.metadata.labels));
    } catch (err) {
      // A bad targetFilter (selector, replicas path), whitelist or custom workload must not take the
      // controller down: report it.
      recorder.event(ws, 'Warning', 'FailedSync', 'Reconcile', `failed to read the workload's pods: ${errMessage(err)}`);
      return {};
    }
    const wait = expectationGate(
      [
        this.scale.check(key, 'pod deletion'),
        // Pod updates are filtered (event-handler.ts): our own patches reaching the cache start no
        // round, so one that finds them missing looks again shortly.
        ...[ws, ...pods].map((o) => this.resourceVersions.check(o, 'resourceVersion', CACHE_WAIT_MS)),
      ],
      log,
    );
    if (wait !== undefined) return { requeueAfterMs: wait };

    const plan = await this.failures.orReport(ws, () =>
      planWorkloadSpread({
        ws,
        pods,
        workloadReplicas,
        latestVersion,
        deletionCost: DELETION_COST_KINDS.has(ref.kind),
        node: (n) => cache.node(n),
        now: this.clock.now(),
      }),
    );
    return this.executor.execute(key, ws, plan, pods);
  }
}

/**
 * A WorkloadSpread as the failed-plan idiom reports it: its FailedSync event (the status has
 * no conditions, so the condition it adds does not survive the API server's pruning).
 */
const workloadSpreadKind: FailedPlanKind<StoredWS> = { type: WorkloadSpreads, failureCondition: 'FailedSync' };

export const workloadSpreadController: ControllerSetup = {
  name: 'workloadspread',
  gate: 'WorkloadSpread',
  kinds: ['WorkloadSpread'],
  access: [
    access(WorkloadSpreads, READ),
    access(WorkloadSpreads, ['update', 'patch'], 'status'),
    access(Pods, [...READ, 'patch', 'delete']),
    access(Nodes, READ),
    access(CloneSets, READ),
    access(AdvancedStatefulSets, READ),
    access(Deployments, READ),
    access(ReplicaSets, READ),
    access(StatefulSets, READ),
    access(Jobs, READ),
    access(ConfigMaps, READ),
    // Custom workloads (the whitelist) are read through their scale subresource; reading the
    // workloads themselves needs a rule for their resource added to the role, as upstream documents.
    { group: '*', resources: ['*/scale'], verbs: ['get'] },
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const spreads = deps.informers.informerFor<StoredWS>(WorkloadSpreads, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const nodes = deps.informers.informerFor<Node>(Nodes);
    const targets = TARGETS.filter((t) => t.group !== 'apps.kruise.io' || deps.served(t.kind)).map((t) => ({
      ...t,
      informer: deps.informers.informerFor<Workload>(t.type, scope),
    }));
    const replicaSets = targets.find((t) => t.kind === 'ReplicaSet')!.informer;
    const configMaps = deps.informers.informerFor<ConfigMap>(ConfigMaps, { namespace: deps.managerNamespace });
    /** Custom workload kinds watched so far (resource keys), on the first WorkloadSpread targeting one. */
    const watched = new Set<string>();
    const watchCustom = async (mapping: ResourceMapping): Promise<Informer<Workload>> => {
      const informer = deps.informers.informerFor<Workload>(mapping, scope);
      const key = resourceTypeKey(mapping);
      if (!watched.has(key)) {
        watched.add(key);
        const ref = { apiVersion: `${mapping.group}/${mapping.version}`, kind: mapping.kind };
        const replicasPath = () => {
          try {
            return whitelistEntryFor(ref, cache.whitelist())?.replicasPath;
          } catch {
            return undefined; // a malformed whitelist is reported by the round
          }
        };
        informer.addEventHandler(handlers.workload(mapping.group, mapping.kind, replicasPath));
      }
      if (!informer.hasSynced() && !(await waitForCacheSync([informer], { timeoutMs: deps.cacheSyncTimeoutMs })))
        throw new Error(`the cache of ${mapping.resource}.${mapping.group} has not synced`);
      return informer;
    };
    const cache: SpreadCache = {
      getWorkloadSpread: (ns, n) => spreads.lister.get(ns, n),
      getWorkload: (group, kind, ns, n) => targets.find((t) => t.group === group && t.kind === kind)?.informer.lister.get(ns, n),
      ownedBy: <T extends KubeObject>(kind: 'Pod' | 'ReplicaSet', uid: string) =>
        (kind === 'Pod' ? pods : replicaSets).lister.byIndex(OwnerUIDIndex, uid) as unknown as T[],
      node: (n) => nodes.lister.get(n),
      podsIn: (ns) => pods.lister.list(ns),
      whitelist: () =>
        parseCustomWorkloadWhitelist(
          configMaps.lister.get(deps.managerNamespace, KRUISE_CONFIGURATION_NAME)?.data?.[WS_CUSTOM_WORKLOAD_WHITELIST_KEY],
        ),
      async customWorkload(apiVersion, kind, ns, name) {
        const mapping = await deps.restMapper.resourceFor(apiVersion, kind);
        return readCustomTarget(
          (await watchCustom(mapping)).lister.get(ns, name),
          mapping.scale ? () => ignoreNotFound(deps.client.getScale(mapping, name, { namespace: ns })) : undefined,
        );
      },
    };
    const scale = new ScaleExpectations({ timeout: deps.expectationTimeoutMs });
    const resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const reconciler = new WorkloadSpreadReconciler({
      cache,
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      scale,
      resourceVersions,
    });
    const controller = managerController('workloadspread', deps, (key) => reconciler.reconcile(key));
    const keyOf = (ws: StoredWS) => `${ws.metadata.namespace}/${ws.metadata.name}`;
    const handlers = makeSpreadHandlers({
      queue: controller.queue,
      scale,
      targeting: (ns, group, kind, name) =>
        spreads.lister
          .list(ns)
          .filter(
            (ws) =>
              ws.spec?.targetRef &&
              groupOf(ws.spec.targetRef.apiVersion) === group &&
              ws.spec.targetRef.kind === kind &&
              ws.spec.targetRef.name === name,
          )
          .map(keyOf),
    });
    spreads.addEventHandler({ onAdd: (ws) => controller.queue.add(keyOf(ws)), onUpdate: (_o, cur) => controller.queue.add(keyOf(cur)) });
    for (const t of targets) t.informer.addEventHandler(handlers.workload(t.group, t.kind));
    pods.addEventHandler(handlers.pod);

    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [spreads, pods, nodes, configMaps, ...targets.map((t) => t.informer)]),
    };
  },
};
