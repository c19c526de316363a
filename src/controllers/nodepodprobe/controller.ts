// The NodePodProbe controller (spec §15, upstream pkg/controller/nodepodprobe, gates
// PodProbeMarkerGate + KruiseDaemon): creates the NodePodProbe of every Ready node (named as the
// node) and deletes it with the node, drops entries of pods that are gone, and turns the probe
// states kruise-daemon writes into pod conditions and markerPolicy labels/annotations. It reads the
// caches, waits while the NodePodProbe's copy is behind our own write, asks planNodePodProbe
// (plan.ts) for the round and hands it to the executor (executor.ts).
import type { Node, Pod, Stored } from '../../apis/core-objects.ts';
import type { KubeClient } from '../../runtime/client.ts';
import { NodePodProbes, Nodes, PodProbeMarkers, Pods } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { isDeepStrictEqual } from 'node:util';
import type { PodProbeMarker } from '../../apis/apps/podprobemarker.ts';
import { isPodActive } from '../../util/pod.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { executeNodePodProbePlan } from './executor.ts';
import { planNodePodProbe, wantsNodePodProbe, type StoredNPP } from './plan.ts';

const CACHE_WAIT_MS = 500;

export interface NodePodProbeCache {
  getNode(name: string): Node | undefined;
  getNodePodProbe(name: string): StoredNPP | undefined;
  getPod(namespace: string, name: string): Pod | undefined;
  getMarker(namespace: string, name: string): Stored<PodProbeMarker> | undefined;
}

export interface NodePodProbeDeps {
  cache: NodePodProbeCache;
  client: Pick<KubeClient, 'create' | 'update' | 'delete' | 'patch'>;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
}

export async function reconcileNodePodProbe(name: string, deps: NodePodProbeDeps): Promise<ReconcileResult> {
  const { cache, log, resourceVersions } = deps;
  const npp = cache.getNodePodProbe(name);
  if (npp) {
    const wait = expectationGate([resourceVersions.check(npp, 'NodePodProbe resourceVersion', CACHE_WAIT_MS)], log);
    if (wait !== undefined) return { requeueAfterMs: wait };
  }
  const plan = planNodePodProbe({ name, node: cache.getNode(name), npp, getPod: cache.getPod, getMarker: cache.getMarker });
  return executeNodePodProbePlan(deps, name, npp, plan);
}

/** Upstream nodepodprobe_event_handler.go. */
export function makeNodePodProbeHandlers(deps: {
  queue: { add(key: string, opts?: { priority?: number }): void };
  resourceVersions: ResourceVersionExpectations;
  getNodePodProbe(name: string): StoredNPP | undefined;
}) {
  const lists = (nodeName: string | undefined, pod: Pod) =>
    !!nodeName &&
    (deps.getNodePodProbe(nodeName)?.spec?.podProbes ?? []).some(
      (e) => e.namespace === pod.metadata.namespace && e.name === pod.metadata.name,
    );
  const nodePodProbe: EventHandler<StoredNPP> = {
    onAdd: (npp, initial) => {
      deps.resourceVersions.observe(npp);
      deps.queue.add(npp.metadata.name!, initial ? { priority: LowPriority } : {});
    },
    onUpdate: (old, cur) => {
      deps.resourceVersions.observe(cur);
      if (!isDeepStrictEqual(old.status, cur.status)) deps.queue.add(cur.metadata.name!);
    },
    onDelete: (obj) => {
      const npp = unwrapDeleted(obj);
      deps.resourceVersions.delete(npp);
      // Deleted by hand while its node is still there: created again.
      deps.queue.add(npp.metadata.name!);
    },
  };
  const pod: EventHandler<Pod> = {
    onUpdate: (old, cur) => {
      if (isPodActive(old) && !isPodActive(cur) && lists(cur.spec?.nodeName, cur)) deps.queue.add(cur.spec!.nodeName!);
    },
    onDelete: (obj) => {
      const p = unwrapDeleted(obj);
      if (lists(p.spec?.nodeName, p)) deps.queue.add(p.spec!.nodeName!);
    },
  };
  const nodeChanged = (node: Node) => {
    const name = node.metadata.name!;
    const npp = deps.getNodePodProbe(name);
    if (npp ? !!node.metadata.deletionTimestamp : wantsNodePodProbe(node)) deps.queue.add(name);
  };
  const node: EventHandler<Node> = {
    onAdd: (n) => nodeChanged(n),
    onUpdate: (_old, cur) => nodeChanged(cur),
    onDelete: (obj) => {
      const name = unwrapDeleted(obj).metadata.name!;
      if (deps.getNodePodProbe(name)) deps.queue.add(name);
    },
  };
  return { nodePodProbe, pod, node };
}

export const nodePodProbeController: ControllerSetup = {
  name: 'nodepodprobe',
  clientName: 'NodePodProbe-controller',
  kinds: ['NodePodProbe', 'PodProbeMarker'],
  gate: 'PodProbeMarkerGate',
  access: [
    access(NodePodProbes, [...READ, ...WRITE]),
    access(PodProbeMarkers, READ),
    access(Pods, READ),
    access(Pods, ['update', 'patch'], 'status'),
    access(Nodes, READ),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const nodePodProbes = deps.informers.informerFor<StoredNPP>(NodePodProbes);
    const nodes = deps.informers.informerFor<Node>(Nodes);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const markers = deps.informers.informerFor<Stored<PodProbeMarker>>(PodProbeMarkers, scope);
    const resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const controller = managerController('nodepodprobe', deps, (key) =>
      reconcileNodePodProbe(key, {
        cache: {
          getNode: (n) => nodes.lister.get(n),
          getNodePodProbe: (n) => nodePodProbes.lister.get(n),
          getPod: (ns, n) => pods.lister.get(ns, n),
          getMarker: (ns, n) => markers.lister.get(ns, n),
        },
        client: deps.client,
        log: deps.logger,
        resourceVersions,
      }),
    );
    const handlers = makeNodePodProbeHandlers({
      queue: controller.queue,
      resourceVersions,
      getNodePodProbe: (n) => nodePodProbes.lister.get(n),
    });
    nodePodProbes.addEventHandler(handlers.nodePodProbe);
    pods.addEventHandler(handlers.pod);
    nodes.addEventHandler(handlers.node);
    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [nodePodProbes, nodes, pods, markers]),
    };
  },
};
