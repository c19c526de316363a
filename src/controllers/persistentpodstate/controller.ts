// The PersistentPodState controller (upstream pkg/controller/persistentpodstate, spec §14): records
// where the pods of a StatefulSet (apps/v1) or Advanced StatefulSet ran — node, node topology labels,
// listed pod annotations — so that the pod webhook can send a recreated pod back there, and forgets
// the pods scaled away or the whole workload once it goes. It also keeps the PersistentPodState a
// workload's kruise.io/auto-generate-persistent-pod-state annotations ask for (work-queue keys
// `<ns>/generate#<apiVersion>#<kind>#<name>`, as upstream). Pods becoming ready or going away,
// workload scaling, deletion and annotation changes re-run the PersistentPodState concerned.
import type { ConfigMap, Node, Pod, Stored, KubeObject } from '../../apis/core-objects.ts';
import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import {
  APPS_GROUP,
  AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION,
  INJECTED_PERSISTENT_POD_STATE_ANNOTATION,
  PERSISTENT_POD_ANNOTATIONS_ANNOTATION,
  PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  KRUISE_CONFIGURATION_NAME,
  PPS_CUSTOM_WORKLOAD_WHITELIST_KEY,
  REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION,
} from '../../apis/constants.ts';
import type { KubeClient } from '../../runtime/client.ts';
import {
  AdvancedStatefulSets,
  ConfigMaps,
  Nodes,
  PersistentPodStates,
  Pods,
  resourceTypeKey,
  StatefulSets,
} from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import { waitForCacheSync, type Informer } from '../../runtime/informer-factory.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ } from '../../runtime/rbac.ts';
import type { ResourceMapping } from '../../runtime/restmapper.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { realClock } from '../../util/clock.ts';
import { parseCustomWorkloadWhitelist, isWhitelisted, type CustomWorkload } from '../../util/custom-workloads.ts';
import { replicasRange, type OrdinalRange, type OrdinalsView } from '../../util/ordinals.ts';
import { apiGroupOf, persistentPodStateFor, type StoredPersistentPodState } from '../../util/persistentpodstate.ts';
import { isPodReady } from '../../util/pod.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { PersistentPodStateExecutor } from './executor.ts';
import { generateKey, parseGenerateName, planGeneratedState, planPodStates, type TargetWorkload } from './plan.ts';

/** A StatefulSet of either API: what the controller reads of it. */
export type Workload = KubeObject & OrdinalsView;

export interface PersistentPodStateCache {
  getState(namespace: string, name: string): StoredPersistentPodState | undefined;
  listStates(namespace: string): StoredPersistentPodState[];
  /** The StatefulSet of that group ('apps' or 'apps.kruise.io'), namespace and name. */
  getWorkload(group: string, namespace: string, name: string): Workload | undefined;
  /**
   * A workload of a kind PPS_Watch_Custom_Workload_WhiteList lists (found by API discovery);
   * undefined when it does not exist. Throws when the kind is not served.
   */
  customWorkload(apiVersion: string, kind: string, namespace: string, name: string): Promise<Workload | undefined>;
  /** PPS_Watch_Custom_Workload_WhiteList of kruise-configuration (empty when absent or malformed). */
  whitelist(): CustomWorkload[];
  /** Pods whose controller reference is the workload. */
  podsOf(workload: Workload): Pod[];
  getNode(name: string): Node | undefined;
}

export interface PersistentPodStateReconcilerDeps {
  cache: PersistentPodStateCache;
  client: Pick<KubeClient, 'create' | 'update' | 'delete' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  /** Whether Advanced StatefulSets honour spec.ordinals.start (gate StatefulSetStartOrdinal). */
  startOrdinal: boolean;
}

const STATEFULSET_GROUPS = new Set(['apps', APPS_GROUP]);
/** How soon a whitelisted kind that could not be watched is tried again. */
const WHITELIST_RETRY_MS = 5_000;

export class PersistentPodStateReconciler {
  private readonly executor: PersistentPodStateExecutor;

  constructor(private readonly deps: PersistentPodStateReconcilerDeps) {
    this.executor = new PersistentPodStateExecutor(deps);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const generate = parseGenerateName(name);
    if (generate) return this.reconcileGenerated(namespace, generate);
    const { cache, log, resourceVersions, recorder } = this.deps;
    const pps = cache.getState(namespace, name);
    if (!pps) return {};
    const requeue = expectationGate([resourceVersions.check(pps, 'PersistentPodState resourceVersion')], log);
    if (requeue !== undefined) return { requeueAfterMs: requeue };
    const ref = pps.spec?.targetRef;
    const group = apiGroupOf(ref?.apiVersion);
    const statefulSet = ref?.kind === 'StatefulSet' && STATEFULSET_GROUPS.has(group);
    if (!ref || (!statefulSet && !isWhitelisted(ref, cache.whitelist()))) {
      // Admitted against a whitelist that no longer lists the kind: say so rather than record nothing silently.
      recorder.event(
        pps,
        'Warning',
        'UnsupportedWorkload',
        'Record',
        `targetRef ${ref?.apiVersion}/${ref?.kind} is neither a StatefulSet nor in PPS_Watch_Custom_Workload_WhiteList; pod states are not recorded`,
      );
      return {};
    }
    const set = statefulSet
      ? cache.getWorkload(group, namespace, ref.name)
      : await cache.customWorkload(ref.apiVersion, ref.kind, namespace, ref.name);
    // A custom workload has spec.replicas (0 when absent, as upstream's StatefulSet-like finder) and no reserved ordinals.
    const replicas =
      set &&
      (statefulSet ? replicasRange(set, { StatefulSetStartOrdinal: group === 'apps' || this.deps.startOrdinal }) : customReplicas(set));
    const workload: TargetWorkload | undefined = set && replicas && { deleting: !!set.metadata.deletionTimestamp, replicas };
    // apps/v1 StatefulSets always honour ordinals.start and have no reserved ordinals.
    const pods = set && (statefulSet || replicas!.end > replicas!.start) ? cache.podsOf(set) : [];
    const status = planPodStates({ pps, workload, pods, node: (n) => cache.getNode(n) });
    return this.executor.writeStates(pps, status);
  }

  private async reconcileGenerated(namespace: string, ref: { apiVersion: string; kind: string; name: string }): Promise<ReconcileResult> {
    const { cache } = this.deps;
    const group = apiGroupOf(ref.apiVersion);
    let set: Workload | undefined;
    if (ref.kind === 'StatefulSet' && STATEFULSET_GROUPS.has(group)) set = cache.getWorkload(group, namespace, ref.name);
    else if (isWhitelisted(ref, cache.whitelist())) set = await cache.customWorkload(ref.apiVersion, ref.kind, namespace, ref.name);
    // Objects from the cache carry no apiVersion/kind: the key names them.
    const workload = set && { ...set, apiVersion: ref.apiVersion, kind: ref.kind };
    return this.executor.applyGenerated(planGeneratedState(workload, cache.getState(namespace, ref.name)));
  }
}

/** Ordinals 0 … spec.replicas-1 of a custom workload. */
function customReplicas(w: Workload): OrdinalRange {
  const replicas = typeof w.spec?.replicas === 'number' ? w.spec.replicas : 0;
  return replicasRange({ spec: { replicas } }, { StatefulSetStartOrdinal: false });
}

const AUTO_ANNOTATIONS = [
  AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION,
  REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  PERSISTENT_POD_ANNOTATIONS_ANNOTATION,
];

const wantsGenerated = (w: Workload) => {
  const a = w.metadata.annotations ?? {};
  return (
    a[AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION] === 'true' &&
    !!(a[REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION] || a[PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION])
  );
};

export function makePersistentPodStateHandlers(deps: {
  queue: { add(key: string, opts?: { priority?: number }): void };
  cache: Pick<PersistentPodStateCache, 'listStates' | 'whitelist'>;
  resourceVersions: ResourceVersionExpectations;
}) {
  const { queue, cache, resourceVersions } = deps;
  const enqueueStateOf = (namespace: string, ref: { apiVersion: string; kind: string; name: string }) => {
    const pps = persistentPodStateFor(cache.listStates(namespace), ref);
    if (pps) queue.add(`${namespace}/${pps.metadata.name}`);
  };
  const state: EventHandler<StoredPersistentPodState> = {
    onAdd: (pps, initial) => queue.add(`${pps.metadata.namespace}/${pps.metadata.name}`, initial ? { priority: LowPriority } : {}),
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      resourceVersions.observe(cur);
      // Also status writes: a round gated on our own write must run once the cache shows it.
      queue.add(`${cur.metadata.namespace}/${cur.metadata.name}`);
    },
    onDelete: (obj) => resourceVersions.delete(unwrapDeleted(obj)),
  };
  const podConcerns = (pod: Pod) => {
    const ref = pod.metadata.ownerReferences?.find((r) => r.controller);
    if (!ref) return;
    if (!(ref.kind === 'StatefulSet' && STATEFULSET_GROUPS.has(apiGroupOf(ref.apiVersion))) && !isWhitelisted(ref, cache.whitelist()))
      return;
    const namespace = pod.metadata.namespace ?? '';
    const injected = pod.metadata.annotations?.[INJECTED_PERSISTENT_POD_STATE_ANNOTATION];
    if (injected) queue.add(`${namespace}/${injected}`);
    else enqueueStateOf(namespace, ref);
  };
  const pod: EventHandler<Pod> = {
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      const startsDeleting = !old.metadata.deletionTimestamp && !!cur.metadata.deletionTimestamp;
      const becameReady = !isPodReady(old) && isPodReady(cur);
      if (startsDeleting || becameReady) podConcerns(cur);
    },
    onDelete: (obj) => podConcerns(unwrapDeleted(obj)),
  };
  const workload = (apiVersion: string, kind = 'StatefulSet'): EventHandler<Workload> => {
    const refOf = (w: Workload) => ({ apiVersion, kind, name: w.metadata.name ?? '' });
    const generate = (w: Workload) => queue.add(generateKey({ ...refOf(w), namespace: w.metadata.namespace ?? '' }));
    return {
      onAdd: (w) => {
        if (wantsGenerated(w)) generate(w);
      },
      onUpdate: (old, cur) => {
        if (AUTO_ANNOTATIONS.some((k) => old.metadata.annotations?.[k] !== cur.metadata.annotations?.[k])) generate(cur);
        const scaled =
          old.spec?.replicas !== cur.spec?.replicas ||
          JSON.stringify(old.spec?.reserveOrdinals) !== JSON.stringify(cur.spec?.reserveOrdinals) ||
          !old.metadata.deletionTimestamp !== !cur.metadata.deletionTimestamp;
        if (scaled) enqueueStateOf(cur.metadata.namespace ?? '', refOf(cur));
      },
      onDelete: (obj) => {
        const w = unwrapDeleted(obj);
        enqueueStateOf(w.metadata.namespace ?? '', refOf(w));
      },
    };
  };
  return {
    state,
    pod,
    advancedStatefulSet: workload(`${APPS_GROUP}/v1beta1`),
    statefulSet: workload('apps/v1'),
    /** For a whitelisted custom workload kind. */
    custom: (apiVersion: string, kind: string) => workload(apiVersion, kind),
  };
}

export const persistentPodStateController: ControllerSetup = {
  name: 'persistentpodstate',
  kinds: ['PersistentPodState', 'StatefulSet'],
  access: [
    access(PersistentPodStates, [...READ, 'create', 'update', 'delete']),
    access(PersistentPodStates, ['update', 'patch'], 'status'),
    access(Pods, READ),
    access(Nodes, READ),
    access(StatefulSets, READ),
    access(AdvancedStatefulSets, READ),
    // kruise-configuration's PPS_Watch_Custom_Workload_WhiteList; reading the whitelisted workloads
    // themselves needs a rule for their resource added to the role, as upstream documents.
    access(ConfigMaps, READ),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const states = deps.informers.informerFor<StoredPersistentPodState>(PersistentPodStates, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const nodes = deps.informers.informerFor<Node>(Nodes);
    const advanced = deps.informers.informerFor<Stored<StatefulSet>>(AdvancedStatefulSets, scope);
    const native = deps.informers.informerFor<Workload>(StatefulSets, scope);
    const resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const configMaps = deps.informers.informerFor<ConfigMap>(ConfigMaps, { namespace: deps.managerNamespace });
    const whitelist = () => {
      try {
        return parseCustomWorkloadWhitelist(
          configMaps.lister.get(deps.managerNamespace, KRUISE_CONFIGURATION_NAME)?.data?.[PPS_CUSTOM_WORKLOAD_WHITELIST_KEY],
        );
      } catch {
        return [];
      }
    };
    /** Whitelisted workload kinds watched so far (resource keys): their informer has our handler. */
    const watched = new Set<string>();
    const watchCustom = async (mapping: ResourceMapping, apiVersion: string): Promise<Informer<Workload>> => {
      const informer = deps.informers.informerFor<Workload>(mapping, scope);
      const key = resourceTypeKey(mapping);
      if (!watched.has(key)) {
        watched.add(key);
        informer.addEventHandler(handlers.custom(apiVersion, mapping.kind));
      }
      if (!informer.hasSynced() && !(await waitForCacheSync([informer], { timeoutMs: deps.cacheSyncTimeoutMs })))
        throw new Error(`the cache of ${mapping.resource}.${mapping.group} has not synced`);
      return informer;
    };
    const cache: PersistentPodStateCache = {
      getState: (ns, name) => states.lister.get(ns, name),
      listStates: (ns) => states.lister.list(ns),
      getWorkload: (group, ns, name) => (group === 'apps' ? native : advanced).lister.get(ns, name),
      podsOf: (w) => ownedBy(pods.lister, w),
      getNode: (name) => nodes.lister.get(name),
      whitelist,
      async customWorkload(apiVersion, kind, ns, name) {
        const mapping = await deps.restMapper.resourceFor(apiVersion, kind);
        return (await watchCustom(mapping, apiVersion)).lister.get(ns, name);
      },
    };
    const reconciler = new PersistentPodStateReconciler({
      cache,
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      resourceVersions,
      startOrdinal: deps.features.StatefulSetStartOrdinal,
    });
    const controller = managerController('persistentpodstate', deps, (key) => reconciler.reconcile(key));
    const handlers = makePersistentPodStateHandlers({ queue: controller.queue, cache, resourceVersions });
    // Whitelisted kinds are watched as soon as the whitelist names them (auto-generation needs
    // their annotations before any PersistentPodState exists). A kind not served yet (its CRD just
    // installed, discovery lagging) is tried again a little later while this term runs.
    let stopped: AbortSignal | undefined;
    const watchWhitelisted = () => {
      for (const w of whitelist()) {
        const apiVersion = w.group ? `${w.group}/${w.version}` : w.version;
        deps.restMapper
          .resourceFor(apiVersion, w.kind)
          .then((mapping) => watchCustom(mapping, apiVersion))
          .catch((err: unknown) => {
            deps.logger.warn({ err, kind: w.kind, apiVersion }, 'cannot watch whitelisted workload yet');
            if (!stopped?.aborted) realClock.setTimer(WHITELIST_RETRY_MS, watchWhitelisted);
          });
      }
    };
    const onConfiguration = (cm: ConfigMap) => {
      if (cm.metadata.name === KRUISE_CONFIGURATION_NAME) watchWhitelisted();
    };
    configMaps.addEventHandler({ onAdd: onConfiguration, onUpdate: (_o, cm) => onConfiguration(cm) });
    states.addEventHandler(handlers.state);
    pods.addEventHandler(handlers.pod);
    advanced.addEventHandler(handlers.advancedStatefulSet);
    native.addEventHandler(handlers.statefulSet);
    return {
      run: (signal: AbortSignal) => {
        stopped = signal;
        return controller.runAfterSync(signal, [states, pods, nodes, advanced, native, configMaps]);
      },
    };
  },
};
