// The PersistentPodState controller's decisions (upstream pkg/controller/persistentpodstate, spec
// §14), pure: the pod states to record (node, node topology labels, listed pod annotations of ready
// scheduled pods), the states to forget (workload gone; with WhenScaled, pods scaled away), and the
// PersistentPodState a workload's kruise.io/auto-generate-persistent-pod-state annotations ask for.
import { isDeepStrictEqual } from 'node:util';
import {
  AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION,
  PERSISTENT_POD_ANNOTATIONS_ANNOTATION,
  PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION,
  REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION,
} from '../../apis/constants.ts';
import type { KubeObject, Node, Pod } from '../../apis/core-objects.ts';
import { inRange, type OrdinalRange } from '../../util/ordinals.ts';
import type { PodState, StoredPersistentPodState } from '../../util/persistentpodstate.ts';
import { isPodReady } from '../../util/pod.ts';

export type PersistentPodStateStatus = NonNullable<StoredPersistentPodState['status']>;

/** The target workload as the planner needs it; undefined when it does not exist. */
export interface TargetWorkload {
  deleting: boolean;
  /** The ordinals that hold replicas now. */
  replicas: OrdinalRange;
}

export interface PodStatesInput {
  pps: StoredPersistentPodState;
  workload: TargetWorkload | undefined;
  /** The workload's pods (controller reference), by any state. */
  pods: readonly Pod[];
  node(name: string): Node | undefined;
}

/** Node label keys the states record: the required keys and every preferred term's. */
export function topologyKeys(pps: StoredPersistentPodState): string[] {
  const keys = new Set(pps.spec?.requiredPersistentTopology?.keys ?? []);
  for (const term of pps.spec?.preferredPersistentTopology ?? []) for (const key of term.preference.keys ?? []) keys.add(key);
  return [...keys].sort();
}

/** The state to record for a ready, scheduled pod whose node is known; undefined otherwise. */
export function podStateOf(
  pod: Pod,
  node: Node | undefined,
  keys: readonly string[],
  annotationKeys: readonly string[],
): PodState | undefined {
  const nodeName = pod.spec?.nodeName;
  if (!nodeName || !isPodReady(pod) || !node) return undefined;
  const state: PodState = { nodeName };
  const labels: Record<string, string> = {};
  for (const key of keys) if (node.metadata.labels && key in node.metadata.labels) labels[key] = node.metadata.labels[key]!;
  if (Object.keys(labels).length) state.nodeTopologyLabels = labels;
  const annotations: Record<string, string> = {};
  for (const key of annotationKeys)
    if (pod.metadata.annotations && key in pod.metadata.annotations) annotations[key] = pod.metadata.annotations[key]!;
  if (Object.keys(annotations).length) state.annotations = annotations;
  return state;
}

/** The ordinal after a pod name's last '-', or undefined (parseStsPodIndex). */
function ordinalOfName(podName: string): number | undefined {
  const tail = podName.slice(podName.lastIndexOf('-') + 1);
  return /^\d+$/.test(tail) ? Number(tail) : undefined;
}

/**
 * The new status, or undefined when unchanged. Workload gone or being deleted: no states. Else
 * every ready scheduled pod's state is (re)recorded, the states of pods that are not ready are kept
 * (a recreated pod must find its old place), and with WhenScaled (the default) the states of pods
 * that no longer exist and whose ordinal no longer holds a replica are dropped.
 */
export function planPodStates(input: PodStatesInput): PersistentPodStateStatus | undefined {
  const { pps, workload } = input;
  const observedGeneration = pps.metadata.generation ?? 0;
  const old = pps.status;
  let podStates: Record<string, PodState> | undefined;
  if (workload && !workload.deleting) {
    podStates = { ...old?.podStates };
    const keys = topologyKeys(pps);
    const annotationKeys = [...new Set((pps.spec?.persistentPodAnnotations ?? []).map((a) => a.key))].sort();
    for (const pod of input.pods) {
      const state = podStateOf(pod, input.node(pod.spec?.nodeName ?? ''), keys, annotationKeys);
      if (state) podStates[pod.metadata.name ?? ''] = state;
    }
    if (pps.spec?.persistentPodStateRetentionPolicy !== 'WhenDeleted') {
      const existing = new Set(input.pods.map((p) => p.metadata.name));
      for (const name of Object.keys(podStates)) {
        const ordinal = ordinalOfName(name);
        if (ordinal === undefined || inRange(workload.replicas, ordinal) || existing.has(name)) continue;
        delete podStates[name];
      }
    }
    if (!Object.keys(podStates).length) podStates = undefined;
  }
  const status: PersistentPodStateStatus = { observedGeneration, ...(podStates ? { podStates } : {}) };
  const stored: PersistentPodStateStatus | undefined = old && {
    observedGeneration: old.observedGeneration ?? 0,
    ...(old.podStates && Object.keys(old.podStates).length ? { podStates: old.podStates } : {}),
  };
  return isDeepStrictEqual(stored, status) ? undefined : status;
}

/** A workload that may carry the auto-generate annotations. */
export type AnnotatedWorkload = KubeObject & { apiVersion: string; kind: string };

export interface GeneratedStatePlan {
  create?: StoredPersistentPodState;
  /** The existing object with the wanted spec. */
  update?: StoredPersistentPodState;
  delete?: StoredPersistentPodState;
}

const splitKeys = (value: string) => value.split(',');

/**
 * What the auto-generate annotations ask for (autoGeneratePersistentPodState): with
 * kruise.io/auto-generate-persistent-pod-state=true and a required or preferred topology, a
 * PersistentPodState of the workload's name, controlled by it, with the listed keys (preferred
 * weight 100) and annotations; created, or updated when its spec differs. Without the annotation the
 * one it generated (controlled by the workload) is deleted. Incomplete annotations change nothing.
 */
export function planGeneratedState(
  workload: AnnotatedWorkload | undefined,
  existing: StoredPersistentPodState | undefined,
): GeneratedStatePlan {
  if (!workload) return {};
  const annotations = workload.metadata.annotations ?? {};
  if (annotations[AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION] !== 'true') {
    // Only the one generated for this workload goes; a hand-made PersistentPodState of that name stays.
    const generated = existing?.metadata.ownerReferences?.some((r) => r.controller && r.uid === workload.metadata.uid);
    return generated ? { delete: existing } : {};
  }
  const required = annotations[REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION] ?? '';
  const preferred = annotations[PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION] ?? '';
  if (!required && !preferred) return {};
  const podAnnotations = annotations[PERSISTENT_POD_ANNOTATIONS_ANNOTATION] ?? '';
  const ref = { apiVersion: workload.apiVersion, kind: workload.kind, name: workload.metadata.name ?? '' };
  const spec: NonNullable<StoredPersistentPodState['spec']> = { targetRef: ref };
  if (required) spec.requiredPersistentTopology = { keys: splitKeys(required) };
  if (podAnnotations) spec.persistentPodAnnotations = splitKeys(podAnnotations).map((key) => ({ key }));
  if (preferred) spec.preferredPersistentTopology = [{ weight: 100, preference: { keys: splitKeys(preferred) } }];
  if (!existing) {
    return {
      create: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'PersistentPodState',
        metadata: {
          name: ref.name,
          namespace: workload.metadata.namespace ?? '',
          ownerReferences: [{ ...ref, uid: workload.metadata.uid ?? '', controller: true }],
        },
        spec,
      },
    };
  }
  if (isDeepStrictEqual(existing.spec, spec)) return {};
  return { update: { ...existing, spec } };
}

/** The work-queue key of a workload's auto-generation request (generate#<apiVersion>#<kind>#<name>). */
export const GENERATE_PREFIX = 'generate#';

export function generateKey(workload: { apiVersion: string; kind: string; namespace: string; name: string }): string {
  return `${workload.namespace}/${GENERATE_PREFIX}${workload.apiVersion}#${workload.kind}#${workload.name}`;
}

export function parseGenerateName(name: string): { apiVersion: string; kind: string; name: string } | undefined {
  if (!name.startsWith(GENERATE_PREFIX)) return undefined;
  const parts = name.split('#');
  if (parts.length !== 4) return undefined;
  return { apiVersion: parts[1]!, kind: parts[2]!, name: parts[3]! };
}
