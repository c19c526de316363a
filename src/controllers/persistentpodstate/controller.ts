// The PersistentPodState controller (upstream pkg/controller/persistentpodstate, spec §14): records
// where the pods of a StatefulSet (apps/v1) or Advanced StatefulSet ran — node, node topology labels,
// listed pod annotations — so that the pod webhook can send a recreated pod back there, and forgets
// the pods scaled away or the whole workload once it goes. It also keeps the PersistentPodState a
// workload's kruise.io/auto-generate-persistent-pod-state annotations ask for (work-queue keys
// `<ns>/generate#<apiVersion>#<kind>#<name>`, as upstream). Pods becoming ready or going away,
// workload scaling, deletion and annotation changes re-run the PersistentPodState concerned.
import type { Node, Pod, Stored } from '../../apis/core-objects.ts';
import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import {
  APPS_GROUP,
  AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION,
  INJECTED_PERSISTENT_POD_STATE_ANNOTATION,
  PERSISTENT_POD_ANNOTATIONS_ANNOTATION,
  PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION,
} from '../../apis/constants.ts';
import {
  AdvancedStatefulSets,
  Nodes,
  PersistentPodStates,
  Pods,
  StatefulSets,
  type KubeClient,
  type KubeObject,
} from '../../runtime/client.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import { OwnerUIDIndex, splitKey, unwrapDeleted, type EventHandler } from '../../runtime/informer.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { replicasRange, type OrdinalsView } from '../../util/ordinals.ts';
import { apiGroupOf, persistentPodStateFor, type StoredPersistentPodState } from '../../util/persistentpodstate.ts';
import { isPodReady } from '../../util/pod.ts';
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
    if (requeue !== undefined) return { requeueAfter: requeue };
    const ref = pps.spec?.targetRef;
    const group = apiGroupOf(ref?.apiVersion);
    if (!ref || ref.kind !== 'StatefulSet' || !STATEFULSET_GROUPS.has(group)) {
      // Whitelisted custom workloads are admitted but not followed: say so rather than record nothing silently.
      recorder.event(
        pps,
        'Warning',
        'UnsupportedWorkload',
        'Record',
        `targetRef ${ref?.apiVersion}/${ref?.kind} is not a StatefulSet; pod states are not recorded`,
      );
      return {};
    }
    const set = cache.getWorkload(group, namespace, ref.name);
    const workload: TargetWorkload | undefined = set && {
      deleting: !!set.metadata.deletionTimestamp,
      // apps/v1 StatefulSets always honour ordinals.start and have no reserved ordinals.
      replicas: replicasRange(set, { StatefulSetStartOrdinal: group === 'apps' || this.deps.startOrdinal }),
    };
    const status = planPodStates({ pps, workload, pods: set ? cache.podsOf(set) : [], node: (n) => cache.getNode(n) });
    return this.executor.writeStates(pps, status);
  }

  private reconcileGenerated(namespace: string, ref: { apiVersion: string; kind: string; name: string }): Promise<ReconcileResult> {
    const group = apiGroupOf(ref.apiVersion);
    const set =
      ref.kind === 'StatefulSet' && STATEFULSET_GROUPS.has(group) ? this.deps.cache.getWorkload(group, namespace, ref.name) : undefined;
    // Objects from the cache carry no apiVersion/kind: the key names them.
    const workload = set && { ...set, apiVersion: ref.apiVersion, kind: ref.kind };
    return this.executor.applyGenerated(planGeneratedState(workload, this.deps.cache.getState(namespace, ref.name)));
  }
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
  cache: Pick<PersistentPodStateCache, 'listStates'>;
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
    if (!ref || ref.kind !== 'StatefulSet') return;
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
  const workload = (apiVersion: string): EventHandler<Workload> => {
    const refOf = (w: Workload) => ({ apiVersion, kind: 'StatefulSet', name: w.metadata.name ?? '' });
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
  return { state, pod, advancedStatefulSet: workload(`${APPS_GROUP}/v1beta1`), statefulSet: workload('apps/v1') };
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
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const states = deps.informers.informerFor<StoredPersistentPodState>(PersistentPodStates, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const nodes = deps.informers.informerFor<Node>(Nodes);
    const advanced = deps.informers.informerFor<Stored<StatefulSet>>(AdvancedStatefulSets, scope);
    const native = deps.informers.informerFor<Workload>(StatefulSets, scope);
    const resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const cache: PersistentPodStateCache = {
      getState: (ns, name) => states.lister.get(ns, name),
      listStates: (ns) => states.lister.list(ns),
      getWorkload: (group, ns, name) => (group === 'apps' ? native : advanced).lister.get(ns, name),
      podsOf: (w) => pods.lister.byIndex(OwnerUIDIndex, w.metadata.uid ?? '').filter((p) => p.metadata.namespace === w.metadata.namespace),
      getNode: (name) => nodes.lister.get(name),
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
    states.addEventHandler(handlers.state);
    pods.addEventHandler(handlers.pod);
    advanced.addEventHandler(handlers.advancedStatefulSet);
    native.addEventHandler(handlers.statefulSet);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [states, pods, nodes, advanced, native]),
    };
  },
};
