// ContainerRecreateRequest mutating webhook (upstream pkg/webhook/containerrecreaterequest/mutating):
// on CREATE it checks the request, defaults failurePolicy and injects what kruise-daemon needs from
// the target pod and its node (node name, pod UID, virtual-kubelet mark, each container's current
// containerID/restartCount and preStop); on UPDATE it only guards the immutable spec, labels and
// annotation. Refusals are plain messages, as upstream answers them, carried by AdmissionDenied.
import {
  CONDITION_SIDECAR_TERMINATED,
  CRR_ACTIVE_LABEL,
  CRR_NODE_NAME_LABEL,
  CRR_POD_UID_LABEL,
  CRR_UNREADY_ACQUIRED_ANNOTATION,
} from '../../apis/constants.ts';
import type { ContainerRecreateRequest } from '../../apis/apps/containerrecreaterequest.ts';
import type { Container } from '../../apis/core.ts';
import type { ContainerStatus, Node, Pod } from '../../apis/core-objects.ts';
import { fieldErrorsMessage, invalid } from '../../apis/field-errors.ts';
import { isDNS1123Subdomain } from '../../util/labelselector.ts';
import { isPodActive } from '../../util/pod.ts';
import { isVirtualKubeletNode, VIRTUAL_KUBELET_LABEL, VIRTUAL_KUBELET_LABEL_VALUE } from '../../util/virtual-kubelet.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';

const MIN_DEADLINE_SECONDS = 3;

type CRR = ContainerRecreateRequest;

function isDeepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/** UPDATE: spec, the pod-uid/node-name labels and a set unready-acquired annotation are immutable. */
export function checkContainerRecreateRequestUpdate(obj: CRR, old: CRR): void {
  if (!isDeepEqual(obj.spec, old.spec)) throw new AdmissionDenied('spec of ContainerRecreateRequest is immutable', 403);
  for (const key of [CRR_POD_UID_LABEL, CRR_NODE_NAME_LABEL]) {
    if (obj.metadata?.labels?.[key] !== old.metadata?.labels?.[key]) {
      throw new AdmissionDenied(`not allowed to update immutable label ${key}`, 403);
    }
  }
  const oldAcquired = old.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_ANNOTATION] ?? '';
  if (oldAcquired !== '' && obj.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_ANNOTATION] !== oldAcquired) {
    throw new AdmissionDenied(`not allowed to update immutable annotation ${CRR_UNREADY_ACQUIRED_ANNOTATION}`, 403);
  }
}

/** CREATE checks that need no pod, plus the failurePolicy default; mutates obj. */
export function defaultContainerRecreateRequest(obj: CRR): void {
  obj.metadata ??= {};
  obj.metadata.labels ??= {};
  if (!obj.spec?.podName) throw new AdmissionDenied('podName can not be empty');
  assertSpec(obj);
  // Upstream reads the pod from its cache, where a name no pod can have is simply not found; read
  // from the API server, such a name makes a request for another path (`a/b`, `..`) or an error
  // answer, not "not found". Refused as the invalid value it is, before any read.
  const podNameProblems = isDNS1123Subdomain(obj.spec.podName);
  if (podNameProblems.length) {
    throw new AdmissionDenied(fieldErrorsMessage(podNameProblems.map((d) => invalid('spec.podName', obj.spec.podName, d))), 422);
  }
  obj.spec.strategy ??= {};
  obj.metadata.labels[CRR_ACTIVE_LABEL] = 'true';
  if (!obj.spec.containers?.length) throw new AdmissionDenied('containers list can not be null');
  const { activeDeadlineSeconds } = obj.spec;
  if (activeDeadlineSeconds !== undefined && activeDeadlineSeconds !== null && activeDeadlineSeconds < MIN_DEADLINE_SECONDS) {
    throw new AdmissionDenied(`activeDeadlineSeconds can not be less than ${MIN_DEADLINE_SECONDS}s`);
  }
  const strategy = obj.spec.strategy;
  if ((strategy.terminationGracePeriodSeconds ?? 0) < 0) {
    throw new AdmissionDenied('terminationGracePeriodSeconds must be non-negative integer');
  }
  if ((strategy.unreadyGracePeriodSeconds ?? 0) < 0) {
    throw new AdmissionDenied('unreadyGracePeriodSeconds must be non-negative integer');
  }
  const policy: string = strategy.failurePolicy ?? '';
  if (policy === '') strategy.failurePolicy = 'Fail';
  else if (policy !== 'Fail' && policy !== 'Ignore') throw new AdmissionDenied(`unknown failurePolicy ${policy}`);
}

function assertSpec(obj: CRR): asserts obj is CRR & { spec: NonNullable<CRR['spec']> } {
  if (!obj.spec) throw new AdmissionDenied('podName can not be empty');
}

// A pod whose phase the sidecar terminator made terminal still needs CRRs to kill its sidecars.
function isTerminatedBySidecarTerminator(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === CONDITION_SIDECAR_TERMINATED);
}

/** CREATE: the pod must be running (or finished by the sidecar terminator) and bound to a node. */
export function checkTargetPod(pod: Pod): string {
  if (!isPodActive(pod) && !isTerminatedBySidecarTerminator(pod)) {
    throw new AdmissionDenied('not allowed to recreate containers in an inactive Pod');
  }
  const nodeName = pod.spec?.nodeName ?? '';
  if (nodeName === '') throw new AdmissionDenied('not allowed to recreate containers in a pending Pod');
  return nodeName;
}

// A native sidecar (restartable init container) reports under initContainerStatuses, so a CRR may
// name init containers too, as upstream accepts.
function findContainer(pod: Pod, name: string): Container | undefined {
  return pod.spec?.containers?.find((x) => x.name === name) ?? pod.spec?.initContainers?.find((x) => x.name === name);
}

function findStatus(pod: Pod, name: string): ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find((x) => x.name === name) ?? pod.status?.initContainerStatuses?.find((x) => x.name === name);
}

/** CREATE, after defaultContainerRecreateRequest and checkTargetPod: copy pod facts into the request; mutates obj. */
export function injectPodIntoContainerRecreateRequest(obj: CRR, pod: Pod, node: Node): void {
  assertSpec(obj);
  const labels = (obj.metadata!.labels ??= {});
  labels[CRR_NODE_NAME_LABEL] = pod.spec?.nodeName ?? '';
  labels[CRR_POD_UID_LABEL] = pod.metadata?.uid ?? '';
  // No kruise-daemon runs on a virtual node: the mark lets daemons and users tell such CRRs apart.
  if (isVirtualKubeletNode(node)) labels[VIRTUAL_KUBELET_LABEL] = VIRTUAL_KUBELET_LABEL_VALUE;
  const strategy = (obj.spec.strategy ??= {});
  if (strategy.terminationGracePeriodSeconds === undefined || strategy.terminationGracePeriodSeconds === null) {
    if (pod.spec?.terminationGracePeriodSeconds !== undefined && pod.spec.terminationGracePeriodSeconds !== null) {
      strategy.terminationGracePeriodSeconds = pod.spec.terminationGracePeriodSeconds;
    }
  }

  const seen = new Set<string>();
  for (const c of obj.spec.containers) {
    if (seen.has(c.name)) throw new AdmissionDenied(`can not recreate ${c.name} multi times`);
    seen.add(c.name);
    if (c.preStop || c.ports || c.statusContext) {
      throw new AdmissionDenied('preStop, ports, statusContext in container are ready-only fields');
    }
    const podContainer = findContainer(pod, c.name);
    if (!podContainer) throw new AdmissionDenied(`container ${c.name} not found in Pod`);
    const status = findStatus(pod, c.name);
    if (!status) throw new AdmissionDenied(`not found ${c.name} containerStatus in Pod Status`);
    if (!status.containerID) {
      throw new AdmissionDenied(`no containerID in ${c.name} containerStatus, maybe the container has not been initialized`);
    }
    const preStop = podContainer.lifecycle?.preStop;
    if (preStop) {
      c.preStop = {};
      if (preStop.exec) c.preStop.exec = structuredClone(preStop.exec);
      if (preStop.httpGet) c.preStop.httpGet = structuredClone(preStop.httpGet);
      if (preStop.tcpSocket) c.preStop.tcpSocket = structuredClone(preStop.tcpSocket);
      if (preStop.httpGet && podContainer.ports) c.ports = structuredClone(podContainer.ports);
    }
    c.statusContext = { containerID: status.containerID, restartCount: status.restartCount };
  }
}

/**
 * The Defaulter for CREATE (needs ctx.reader to fetch the pod). UPDATE is checked by
 * validateContainerRecreateRequestUpdate because a Defaulter does not see the old object.
 */
export async function mutateContainerRecreateRequest(obj: CRR, ctx: AdmissionContext): Promise<void> {
  if (ctx.operation !== 'CREATE') return;
  defaultContainerRecreateRequest(obj);
  assertSpec(obj);
  if (!ctx.reader) throw new AdmissionDenied(`failed to find Pod ${obj.spec.podName}: no reader`, 500);
  const namespace = obj.metadata?.namespace ?? ctx.namespace;
  let pod: Pod | null;
  try {
    pod = await ctx.reader.get<Pod>('v1', 'Pod', obj.spec.podName, namespace);
  } catch (e) {
    throw new AdmissionDenied(`failed to find Pod ${obj.spec.podName}: ${(e as Error).message}`, 500);
  }
  if (!pod) throw new AdmissionDenied(`no found Pod named ${obj.spec.podName}`);
  const nodeName = checkTargetPod(pod);
  let node: Node | null;
  try {
    node = await ctx.reader.get<Node>('v1', 'Node', nodeName);
  } catch (e) {
    throw new AdmissionDenied(`failed to get Node ${nodeName}: ${(e as Error).message}`, 500);
  }
  // kruise-daemon on that node is what executes the request; without the node nobody would.
  // Upstream (master) words it with the API's NotFound error.
  if (!node) throw new AdmissionDenied(`failed to get Node ${nodeName}: nodes "${nodeName}" not found`);
  injectPodIntoContainerRecreateRequest(obj, pod, node);
}
