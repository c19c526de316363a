// The PodProbeMarker controller's decisions (spec §15, upstream pkg/controller/podprobemarker),
// pure: which pods a PodProbeMarker probes, what each node's NodePodProbe must list for it, the
// finalizer, and the status. The NodePodProbes themselves are created per Ready node by the
// NodePodProbe controller; a node without one yet is skipped and picked up when it appears.
//
// Serverless mode (gate EnablePodProbeMarkerOnServerless): pods on virtual-kubelet nodes have no
// kruise-daemon and no NodePodProbe; the serverless provider runs the probes (the pod webhook
// hands them over in the kruise.io/podprobe annotation) and reports each result as the pod
// condition `podConditionType`. The marker then applies its markerPolicy from that condition
// itself (upstream markServerlessPod): True is Succeeded, False is Failed, anything else Unknown.
//
// Differences from upstream, all what a user would expect: a marker's probes are also removed
// from pods it no longer matches (relabelled, moved away) and probes it no longer has (renamed or
// dropped from the spec); upstream leaves them until the pod or the marker goes. Removal matches
// the exact `<marker>#` prefix in the marker's own namespace (upstream matches the substring in
// every namespace, so same-named markers elsewhere lose their probes too). On serverless pods the
// keys of the policy for the other state are removed as on ordinary nodes (upstream only sets the
// matching policy's keys there, so a flipped result left both states' marks on the pod).
import { isDeepStrictEqual } from 'node:util';
import { FINALIZER_NODE_POD_PROBE_CLEANUP } from '../../apis/constants.ts';
import type { Node, Pod, Stored } from '../../apis/core-objects.ts';
import type { NodePodProbe, NodePodProbeSpec } from '../../apis/apps/nodepodprobe.ts';
import type { PodProbeMarker, PodProbeMarkerSpec, PodProbeMarkerStatus } from '../../apis/apps/podprobemarker.ts';
import type { ProbeState } from '../../apis/apps/podprobemarker.ts';
import type { Probe } from '../../apis/core.ts';
import { isPodActive } from '../../util/pod.ts';
import { applyMarkerPolicy, emptyMarkWants, markPatch, type MarkPatch } from '../../util/probe-marker.ts';
import { isVirtualKubeletNode } from '../../util/virtual-kubelet.ts';

export type StoredPPM = Stored<PodProbeMarker>;
export type StoredNPP = Stored<NodePodProbe>;
type PodProbe = NonNullable<NodePodProbeSpec['podProbes']>[number];
type ContainerProbe = NonNullable<PodProbe['probes']>[number];
type MarkerProbe = PodProbeMarkerSpec['probes'][number];

/** `<marker>#<probe>`: a NodePodProbe probe's name. */
export const probeName = (ppm: string, probe: string) => `${ppm}#${probe}`;

export interface MatchedPods {
  /** Pods on ordinary nodes, whose probes kruise-daemon runs (grouped by node). */
  normal: Pod[];
  /** Pods on virtual-kubelet nodes (serverless mode, gate EnablePodProbeMarkerOnServerless). */
  serverless: Pod[];
}

const initialized = (pod: Pod) => pod.status?.conditions?.some((c) => c.type === 'Initialized' && c.status === 'True') ?? false;

/**
 * Upstream getMatchingPods: the selected pods (already filtered by namespace and selector) that are
 * active, Initialized and bound to a node that exists; pods on virtual-kubelet nodes apart.
 */
export function matchingPods(pods: readonly Pod[], getNode: (name: string) => Node | undefined): MatchedPods {
  const out: MatchedPods = { normal: [], serverless: [] };
  for (const pod of pods) {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName || !isPodActive(pod) || !initialized(pod)) continue;
    const node = getNode(nodeName);
    if (!node) continue;
    (isVirtualKubeletNode(node) ? out.serverless : out.normal).push(pod);
  }
  return out;
}

/** The port a named probe port resolves to in the container, or an error (upstream ExtractPort). */
function resolvePort(port: number | string, pod: Pod, containerName: string): number | string | { error: string } {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const container = pod.spec?.containers?.find((c) => c.name === containerName);
  if (!container)
    return { error: `Failed to get container by name: ${containerName} in pod: ${pod.metadata.namespace}/${pod.metadata.name}` };
  const found = container.ports?.find((p) => p.name === port)?.containerPort;
  if (found === undefined)
    return { error: `Failed to extract port for container: ${containerName} in pod: ${pod.metadata.namespace}/${pod.metadata.name}` };
  return found;
}

/** The marker's probe as the node runs it for this pod: named ports resolved to numbers. */
export function containerProbe(ppmName: string, probe: MarkerProbe, pod: Pod): ContainerProbe | { error: string } {
  const spec: Probe = structuredClone(probe.probe);
  for (const handler of [spec.tcpSocket, spec.httpGet]) {
    if (!handler) continue;
    const port = resolvePort(handler.port, pod, probe.containerName);
    if (typeof port === 'object') return port;
    handler.port = port;
  }
  return { name: probeName(ppmName, probe.name), containerName: probe.containerName, probe: spec };
}

export interface NodeProbesPlan {
  /** The new spec, or undefined when it is unchanged. */
  spec?: NodePodProbeSpec;
  /** Probes that could not be listed (a named port the container does not have). */
  errors: string[];
}

/**
 * One NodePodProbe's spec with the marker's probes as they must be: every pod in `pods` (the
 * marker's matched pods on this node; empty when the marker is being deleted) lists exactly the
 * marker's probes, and no other pod of the marker's namespace lists any of them. Other markers'
 * probes and entries are left as they are; a pod entry left without probes is dropped.
 */
export function planNodeProbes(npp: StoredNPP, ppm: StoredPPM, pods: readonly Pod[]): NodeProbesPlan {
  const ns = ppm.metadata.namespace ?? '';
  const ppmName = ppm.metadata.name ?? '';
  const prefix = `${ppmName}#`;
  const errors: string[] = [];
  const wanted = new Map<string, { pod: Pod; probes: ContainerProbe[] }>();
  for (const pod of pods) {
    const probes: ContainerProbe[] = [];
    for (const p of ppm.spec?.probes ?? []) {
      const cp = containerProbe(ppmName, p, pod);
      if ('error' in cp) errors.push(cp.error);
      else probes.push(cp);
    }
    wanted.set(pod.metadata.uid ?? '', { pod, probes });
  }
  const before = npp.spec?.podProbes ?? [];
  const podProbes: PodProbe[] = [];
  for (const entry of before) {
    const want = entry.namespace === ns ? wanted.get(entry.uid) : undefined;
    const mine = (p: ContainerProbe) => entry.namespace === ns && p.name.startsWith(prefix);
    const others = (entry.probes ?? []).filter((p) => !mine(p));
    if (!want || want.pod.metadata.name !== entry.name) {
      if (others.length) podProbes.push({ ...entry, probes: others });
      else if (!(entry.probes ?? []).some(mine)) podProbes.push(entry);
      continue;
    }
    wanted.delete(entry.uid);
    // Upstream keeps a probe's place in the list when it only changes; new ones go last.
    const probes = (entry.probes ?? [])
      .map((p) => (mine(p) ? want.probes.find((w) => w.name === p.name) : p))
      .filter((p): p is ContainerProbe => !!p);
    for (const w of want.probes) if (!probes.some((p) => p.name === w.name)) probes.push(w);
    const ip = entry.IP || (want.pod.status?.podIP ?? '');
    if (probes.length) podProbes.push({ ...entry, IP: ip, probes });
  }
  for (const { pod, probes } of wanted.values()) {
    if (!probes.length) continue;
    podProbes.push({
      name: pod.metadata.name ?? '',
      namespace: pod.metadata.namespace ?? '',
      uid: pod.metadata.uid ?? '',
      IP: pod.status?.podIP ?? '',
      probes,
    });
  }
  if (isDeepStrictEqual(podProbes, before)) return { errors };
  return { spec: { ...npp.spec, podProbes }, errors };
}

/** The probe state a serverless provider's pod condition status stands for (IsEqualPodConditionStatus). */
export function stateOfConditionStatus(status: string): ProbeState {
  return status === 'True' ? 'Succeeded' : status === 'False' ? 'Failed' : 'Unknown';
}

/**
 * The marks a serverless pod must carry from the conditions its provider wrote: for each probe with
 * both a podConditionType and a markerPolicy whose condition the pod has, the policy applied for
 * the condition's state. Only what differs from the pod; undefined when nothing does.
 */
export function planServerlessMarks(pod: Pod, ppm: StoredPPM): MarkPatch | undefined {
  const wants = emptyMarkWants();
  for (const probe of ppm.spec?.probes ?? []) {
    if (!probe.podConditionType || !probe.markerPolicy?.length) continue;
    const condition = pod.status?.conditions?.find((c) => c.type === probe.podConditionType);
    if (!condition) continue;
    applyMarkerPolicy(wants, probe.markerPolicy, stateOfConditionStatus(condition.status));
  }
  const patch = markPatch(wants, pod.metadata);
  return Object.keys(patch).length ? patch : undefined;
}

export interface PodProbeMarkerPlan {
  /** Add the cleanup finalizer before anything else. */
  addFinalizer: boolean;
  /** Being deleted and cleaned up: remove the finalizer (after the NodePodProbe writes). */
  removeFinalizer: boolean;
  /** NodePodProbes whose spec changes, by node name. */
  nodeProbes: Array<{ npp: StoredNPP; spec: NodePodProbeSpec }>;
  /** Serverless pods whose marks change (serverless mode only). */
  serverlessMarks: Array<{ pod: Pod; patch: MarkPatch }>;
  /** The new status, or undefined when unchanged (never while being deleted). */
  status?: PodProbeMarkerStatus;
  errors: string[];
}

export interface PodProbeMarkerInput {
  ppm: StoredPPM;
  /** Pods of the marker's namespace its selector matches. */
  pods: readonly Pod[];
  getNode: (name: string) => Node | undefined;
  /** Every NodePodProbe in the cache. */
  nodePodProbes: readonly StoredNPP[];
  /** Gate EnablePodProbeMarkerOnServerless: mark pods on virtual-kubelet nodes from their conditions. */
  serverless: boolean;
}

/** One round of the PodProbeMarker controller. */
export function planPodProbeMarker({ ppm, pods, getNode, nodePodProbes, serverless }: PodProbeMarkerInput): PodProbeMarkerPlan {
  const deleting = !!ppm.metadata.deletionTimestamp;
  const hasFinalizer = (ppm.metadata.finalizers ?? []).includes(FINALIZER_NODE_POD_PROBE_CLEANUP);
  const plan: PodProbeMarkerPlan = { addFinalizer: false, removeFinalizer: false, nodeProbes: [], serverlessMarks: [], errors: [] };
  if (deleting && !hasFinalizer) return plan;
  plan.addFinalizer = !deleting && !hasFinalizer;
  const matched = matchingPods(pods, getNode);
  const byNode = new Map<string, Pod[]>();
  if (!deleting) {
    for (const pod of matched.normal) {
      const list = byNode.get(pod.spec!.nodeName!) ?? [];
      byNode.set(pod.spec!.nodeName!, [...list, pod]);
    }
  }
  for (const npp of nodePodProbes) {
    const { spec, errors } = planNodeProbes(npp, ppm, byNode.get(npp.metadata.name ?? '') ?? []);
    plan.errors.push(...errors);
    if (spec) plan.nodeProbes.push({ npp, spec });
  }
  if (deleting) {
    plan.removeFinalizer = true;
    return plan;
  }
  if (serverless) {
    for (const pod of matched.serverless) {
      const patch = planServerlessMarks(pod, ppm);
      if (patch) plan.serverlessMarks.push({ pod, patch });
    }
  }
  const matchedPods = matched.normal.length + matched.serverless.length;
  const generation = ppm.metadata.generation ?? 0;
  if (ppm.status?.observedGeneration !== generation || (ppm.status?.matchedPods ?? 0) !== matchedPods) {
    plan.status = { ...ppm.status, observedGeneration: generation, matchedPods };
  }
  return plan;
}
