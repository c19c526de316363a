// The PodProbeMarker controller (spec §15, upstream pkg/controller/podprobemarker, gate
// PodProbeMarkerGate): keeps each node's NodePodProbe listing the marker's probes for the matched
// pods on that node (`<marker>#<probe>`), holds the cleanup finalizer so a deleted marker's probes
// leave every NodePodProbe first, marks pods on virtual-kubelet nodes from the conditions their
// serverless provider writes (gate EnablePodProbeMarkerOnServerless), and reports
// observedGeneration / matchedPods. It reads the caches, waits while they are behind our own writes
// (NodePodProbes are written by every marker and by the NodePodProbe controller), asks
// planPodProbeMarker (plan.ts) for the round and hands it to the executor (executor.ts).
import type { Node, Pod } from '../../apis/core-objects.ts';
import type { KubeClient } from '../../runtime/client.ts';
import { NodePodProbes, Nodes, PodProbeMarkers, Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { labelSelectorAsSelector, type Selector } from '../../util/labelselector.ts';
import { isPodActive } from '../../util/pod.ts';
import { isVirtualKubeletNode } from '../../util/virtual-kubelet.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { executePodProbeMarkerPlan } from './executor.ts';
import { planPodProbeMarker, type StoredNPP, type StoredPPM } from './plan.ts';

/** How soon a marker whose cache copies are behind our own writes is looked at again. */
const CACHE_WAIT_MS = 500;

export interface PodProbeMarkerCache {
  getMarker(namespace: string, name: string): StoredPPM | undefined;
  listPods(namespace: string, selector: Selector): Pod[];
  getNode(name: string): Node | undefined;
  listNodePodProbes(): StoredNPP[];
}

export interface PodProbeMarkerDeps {
  cache: PodProbeMarkerCache;
  client: Pick<KubeClient, 'patch' | 'update' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  /** Gate EnablePodProbeMarkerOnServerless. */
  serverless: boolean;
}

export async function reconcilePodProbeMarker(key: string, deps: PodProbeMarkerDeps): Promise<ReconcileResult> {
  const { cache, resourceVersions, log } = deps;
  const { namespace = '', name } = splitKey(key);
  const ppm = cache.getMarker(namespace, name);
  if (!ppm) return {};
  let selector: Selector;
  try {
    selector = labelSelectorAsSelector(ppm.spec?.selector);
  } catch (err) {
    // Admission refuses such selectors; one stored before (or past) it is reported, not retried.
    deps.recorder.event(ppm, 'Warning', 'InvalidSelector', 'Reconcile', `invalid selector: ${(err as Error).message}`);
    return {};
  }
  const nodePodProbes = cache.listNodePodProbes();
  const pods = cache.listPods(namespace, selector);
  const wait = expectationGate(
    [ppm, ...nodePodProbes, ...pods].map((o) => resourceVersions.check(o, `${o.kind ?? 'object'} resourceVersion`, CACHE_WAIT_MS)),
    log,
  );
  if (wait !== undefined) return { requeueAfterMs: wait };
  const plan = planPodProbeMarker({ ppm, pods, getNode: cache.getNode, nodePodProbes, serverless: deps.serverless });
  return executePodProbeMarkerPlan(deps, ppm, plan);
}

const initializedOnNode = (pod: Pod) =>
  !!pod.spec?.nodeName && isPodActive(pod) && (pod.status?.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');

/** Condition types whose status differs between two condition lists, or that are new (diffPodConditions). */
export function changedConditionTypes(before: Pod, after: Pod): Set<string> {
  const old = new Map((before.status?.conditions ?? []).map((c) => [c.type, c.status]));
  const changed = new Set<string>();
  for (const c of after.status?.conditions ?? []) if (old.get(c.type) !== c.status) changed.add(c.type);
  return changed;
}

/**
 * What makes a marker look again: the marker itself; a pod becoming probe-able (Initialized on a
 * node), changing IP, labels, or leaving (inactive, deleted) — for every marker of its namespace
 * that selects it before or after; in serverless mode, a condition of a pod on a virtual-kubelet
 * node changing status — for the markers selecting it with a probe of that podConditionType; a
 * NodePodProbe appearing for a node (its pods are listed now).
 */
export function makePodProbeMarkerHandlers(deps: {
  queue: { add(key: string, opts?: { priority?: number }): void };
  resourceVersions: ResourceVersionExpectations;
  listMarkers(namespace?: string): StoredPPM[];
  getNode(name: string): Node | undefined;
  /** Gate EnablePodProbeMarkerOnServerless. */
  serverless: boolean;
}) {
  const key = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
  const selects = (ppm: StoredPPM, pod: Pod | undefined) => {
    if (!pod) return false;
    try {
      return labelSelectorAsSelector(ppm.spec?.selector).matches(pod.metadata.labels ?? {});
    } catch {
      return false;
    }
  };
  const podChanged = (old: Pod | undefined, cur: Pod) => {
    for (const ppm of deps.listMarkers(cur.metadata.namespace)) if (selects(ppm, old) || selects(ppm, cur)) deps.queue.add(key(ppm));
  };
  const marker: EventHandler<StoredPPM> = {
    onAdd: (ppm, initial) => {
      deps.resourceVersions.observe(ppm);
      deps.queue.add(key(ppm), initial ? { priority: LowPriority } : {});
    },
    onUpdate: (_old, cur) => {
      deps.resourceVersions.observe(cur);
      deps.queue.add(key(cur));
    },
    onDelete: (obj) => deps.resourceVersions.delete(unwrapDeleted(obj)),
  };
  const serverlessConditionsChanged = (old: Pod, cur: Pod) => {
    if (!deps.serverless || !isVirtualKubeletNode(deps.getNode(cur.spec?.nodeName ?? ''))) return;
    const types = changedConditionTypes(old, cur);
    if (!types.size) return;
    for (const ppm of deps.listMarkers(cur.metadata.namespace)) {
      if (selects(ppm, cur) && (ppm.spec?.probes ?? []).some((p) => !!p.podConditionType && types.has(p.podConditionType))) {
        deps.queue.add(key(ppm));
      }
    }
  };
  const pod: EventHandler<Pod> = {
    onUpdate: (old, cur) => {
      deps.resourceVersions.observe(cur);
      const before = initializedOnNode(old);
      const after = initializedOnNode(cur);
      if (!before && !after) return;
      const relabelled = JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
      if (before !== after || relabelled || old.status?.podIP !== cur.status?.podIP) podChanged(old, cur);
      else if (after) serverlessConditionsChanged(old, cur);
    },
    onDelete: (obj) => {
      const p = unwrapDeleted(obj);
      deps.resourceVersions.delete(p);
      if (p.spec?.nodeName) podChanged(undefined, p);
    },
  };
  const nodePodProbe: EventHandler<StoredNPP> = {
    onAdd: (npp, initial) => {
      deps.resourceVersions.observe(npp);
      if (!initial) for (const ppm of deps.listMarkers()) deps.queue.add(key(ppm));
    },
    onUpdate: (_old, cur) => deps.resourceVersions.observe(cur),
    onDelete: (obj) => deps.resourceVersions.delete(unwrapDeleted(obj)),
  };
  return { marker, pod, nodePodProbe };
}

export const podProbeMarkerController: ControllerSetup = {
  name: 'podprobemarker',
  clientName: 'PodProbeMarker-controller',
  kinds: ['PodProbeMarker', 'NodePodProbe'],
  gate: 'PodProbeMarkerGate',
  access: [
    access(PodProbeMarkers, [...READ, 'update', 'patch']),
    access(PodProbeMarkers, ['update', 'patch'], 'status'),
    access(NodePodProbes, [...READ, ...WRITE]),
    // Serverless mode marks pods (labels, annotations).
    access(Pods, [...READ, 'patch']),
    access(Nodes, READ),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const markers = deps.informers.informerFor<StoredPPM>(PodProbeMarkers, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const nodes = deps.informers.informerFor<Node>(Nodes);
    const nodePodProbes = deps.informers.informerFor<StoredNPP>(NodePodProbes);
    const resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const controller = managerController('podprobemarker', deps, (key) =>
      reconcilePodProbeMarker(key, {
        cache: {
          getMarker: (ns, n) => markers.lister.get(ns, n),
          listPods: (ns, selector) => pods.lister.list(ns, selector),
          getNode: (n) => nodes.lister.get(n),
          listNodePodProbes: () => nodePodProbes.lister.list(),
        },
        client: deps.client,
        recorder: deps.recorder,
        log: deps.logger,
        resourceVersions,
        serverless: deps.features.EnablePodProbeMarkerOnServerless,
      }),
    );
    const handlers = makePodProbeMarkerHandlers({
      queue: controller.queue,
      resourceVersions,
      listMarkers: (ns) => markers.lister.list(ns),
      getNode: (n) => nodes.lister.get(n),
      serverless: deps.features.EnablePodProbeMarkerOnServerless,
    });
    markers.addEventHandler(handlers.marker);
    pods.addEventHandler(handlers.pod);
    nodePodProbes.addEventHandler(handlers.nodePodProbe);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [markers, pods, nodes, nodePodProbes]),
    };
  },
};
