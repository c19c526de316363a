// The NodePodProbe controller's decisions (spec §15, upstream pkg/controller/nodepodprobe), pure:
// one NodePodProbe per Ready node (not virtual-kubelet), gone with its node; entries of pods that
// are gone, finished or replaced (another uid) dropped from the spec; and, for every probed pod,
// the pod condition (`podConditionType`) and markerPolicy labels/annotations its probe states ask
// for — as one patch holding only what differs, so an unchanged pod is never written.
import type { Node, Pod, PodCondition } from '../../apis/core-objects.ts';
import type { NodePodProbe, NodePodProbeSpec, NodePodProbeStatus } from '../../apis/apps/nodepodprobe.ts';
import type { PodProbeMarker } from '../../apis/apps/podprobemarker.ts';
import type { Stored } from '../../apis/core-objects.ts';
import { isPodActive } from '../../util/pod.ts';
import { applyMarkerPolicy, emptyMarkWants, markPatch, type MarkPatch } from '../../util/probe-marker.ts';
import { isVirtualKubeletNode } from '../../util/virtual-kubelet.ts';

export type StoredNPP = Stored<NodePodProbe>;
type PodProbeStatus = NonNullable<NodePodProbeStatus['podProbeStatuses']>[number];

export function isNodeReady(node: Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The node's NodePodProbe should be created: Ready, not being deleted, not a virtual kubelet. */
export function wantsNodePodProbe(node: Node | undefined): boolean {
  return !!node && !node.metadata.deletionTimestamp && !isVirtualKubeletNode(node) && isNodeReady(node);
}

/** A pod's metadata and status changes: null removes a key. */
export interface PodProbePatch extends MarkPatch {
  conditions?: PodCondition[];
}

/**
 * Upstream updatePodProbeStatus: for each probe state (in order) of a marker that still exists and
 * is not being deleted, the probe's `podConditionType` becomes True when Succeeded and False
 * otherwise (the first state per type wins; the condition is rewritten only when its status or
 * message changes, as SetPodConditionIfMsgChanged), and its markerPolicy applies (applyMarkerPolicy:
 * keys of policies for other states are removed, then the labels and annotations of the policy for
 * this state are set). Returns only what differs from the pod; undefined when nothing does.
 */
export function planPodMarks(
  pod: Pod,
  status: PodProbeStatus,
  getMarker: (namespace: string, name: string) => Stored<PodProbeMarker> | undefined,
): PodProbePatch | undefined {
  const wants = emptyMarkWants();
  const conditions: PodCondition[] = [];
  const seenTypes = new Set<string>();
  for (const st of status.probeStates ?? []) {
    if (!st.state) continue;
    const hash = st.name.indexOf('#');
    if (hash < 0) continue;
    const ppm = getMarker(pod.metadata.namespace ?? '', st.name.slice(0, hash));
    if (!ppm || ppm.metadata.deletionTimestamp) continue;
    const probe = (ppm.spec?.probes ?? []).find((p) => p.name === st.name.slice(hash + 1));
    if (!probe) continue;
    const type = probe.podConditionType;
    if (type && !seenTypes.has(type)) {
      seenTypes.add(type);
      const cond: PodCondition = {
        type,
        status: st.state === 'Succeeded' ? 'True' : 'False',
        ...(st.lastProbeTime ? { lastProbeTime: st.lastProbeTime } : {}),
        ...(st.lastTransitionTime ? { lastTransitionTime: st.lastTransitionTime } : {}),
        ...(st.message ? { message: st.message } : {}),
      };
      const old = pod.status?.conditions?.find((c) => c.type === type);
      if (!old || old.status !== cond.status || (old.message ?? '') !== (cond.message ?? '')) conditions.push(cond);
    }
    applyMarkerPolicy(wants, probe.markerPolicy ?? [], st.state);
  }
  const patch: PodProbePatch = markPatch(wants, pod.metadata);
  if (conditions.length) patch.conditions = conditions;
  return Object.keys(patch).length ? patch : undefined;
}

export type NodePodProbePlan =
  | { action: 'create' }
  | { action: 'delete' }
  | { action: 'none' }
  | {
      action: 'sync';
      /** The spec without entries of gone pods; undefined when unchanged. */
      spec?: NodePodProbeSpec;
      pods: Array<{ pod: Pod; patch: PodProbePatch }>;
    };

export interface NodePodProbeInput {
  name: string;
  node: Node | undefined;
  npp: StoredNPP | undefined;
  getPod(namespace: string, name: string): Pod | undefined;
  getMarker(namespace: string, name: string): Stored<PodProbeMarker> | undefined;
}

/** One round of the NodePodProbe controller for the node `name`. */
export function planNodePodProbe({ node, npp, getPod, getMarker }: NodePodProbeInput): NodePodProbePlan {
  if (!npp) return wantsNodePodProbe(node) ? { action: 'create' } : { action: 'none' };
  if (!node || node.metadata.deletionTimestamp) return { action: 'delete' };
  const live = new Map<string, Pod>();
  for (const entry of npp.spec?.podProbes ?? []) {
    const pod = getPod(entry.namespace, entry.name);
    if (pod && isPodActive(pod) && pod.metadata.uid === entry.uid) live.set(entry.uid, pod);
  }
  const before = npp.spec?.podProbes ?? [];
  const kept = before.filter((e) => live.has(e.uid));
  const plan: NodePodProbePlan = { action: 'sync', pods: [] };
  if (kept.length !== before.length) plan.spec = { ...npp.spec, podProbes: kept };
  for (const status of npp.status?.podProbeStatuses ?? []) {
    const pod = live.get(status.uid);
    if (!pod) continue;
    const patch = planPodMarks(pod, status, getMarker);
    if (patch) plan.pods.push({ pod, patch });
  }
  return plan;
}
