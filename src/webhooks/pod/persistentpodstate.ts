// The PersistentPodState hook of /mutate-pod (upstream persistentPodStateMutatingPod, spec §14): a
// pod created again by a StatefulSet (or whitelisted workload) whose PersistentPodState recorded
// where it ran gets the required topology as nodeSelector entries, each preferred term as a
// weighted node-affinity preference, and kruise.io/injected-persistent-pod-state naming the
// PersistentPodState. Cache-only: a pod with no controller, or whose workload has no
// PersistentPodState in the namespace, costs one in-memory list.
import {
  APPS_GROUP,
  DEFAULT_KRUISE_NAMESPACE,
  ENV_POD_NAMESPACE,
  INJECTED_PERSISTENT_POD_STATE_ANNOTATION,
  KRUISE_CONFIGURATION_NAME,
  PPS_CUSTOM_WORKLOAD_WHITELIST_KEY,
} from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { apiGroupOf, persistentNodeAffinity, persistentPodStateFor, type StoredPersistentPodState } from '../../util/persistentpodstate.ts';
import { isWhitelisted, parseCustomWorkloadWhitelist } from '../../util/custom-workloads.ts';
import type { PodAdmission } from './types.ts';

const STATEFULSET_GROUPS = new Set(['apps', APPS_GROUP]);

/** Whether the pod's owner kind may carry a PersistentPodState (StatefulSet, or kruise-configuration's whitelist). */
async function ownerKindAllowed(ref: { apiVersion: string; kind: string }, req: PodAdmission): Promise<boolean> {
  if (ref.kind === 'StatefulSet' && STATEFULSET_GROUPS.has(apiGroupOf(ref.apiVersion))) return true;
  const ns = process.env[ENV_POD_NAMESPACE] || DEFAULT_KRUISE_NAMESPACE;
  const cm = await req.cache?.get<{ data?: Record<string, string> }>('v1', 'ConfigMap', KRUISE_CONFIGURATION_NAME, ns);
  const raw = cm?.data?.[PPS_CUSTOM_WORKLOAD_WHITELIST_KEY];
  if (!raw) return false;
  try {
    return isWhitelisted(ref, parseCustomWorkloadWhitelist(raw));
  } catch {
    return false;
  }
}

export async function injectPersistentPodState(pod: Pod, req: PodAdmission): Promise<boolean> {
  const ref = pod.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || !req.cache) return false;
  const namespace = pod.metadata.namespace ?? '';
  const states = await req.cache.list<StoredPersistentPodState>(`${APPS_GROUP}/v1beta1`, 'PersistentPodState', { namespace });
  const pps = persistentPodStateFor(states, { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name });
  // A pod with no recorded state is created for the first time: nothing to persist yet.
  const state = pps?.status?.podStates?.[pod.metadata.name ?? ''];
  if (!pps?.spec || !state || !Object.keys(state.nodeTopologyLabels ?? {}).length) return false;
  if (!(await ownerKindAllowed(ref, req))) return false;
  const { nodeSelector, preferred } = persistentNodeAffinity(pps.spec, state);
  if (!Object.keys(nodeSelector ?? {}).length && !preferred.length) return false;

  pod.metadata.annotations = { ...pod.metadata.annotations, [INJECTED_PERSISTENT_POD_STATE_ANNOTATION]: pps.metadata.name ?? '' };
  pod.spec ??= { containers: [] };
  if (nodeSelector && Object.keys(nodeSelector).length) pod.spec.nodeSelector = { ...pod.spec.nodeSelector, ...nodeSelector };
  if (preferred.length) {
    const affinity = (pod.spec.affinity ??= {});
    const nodeAffinity = (affinity.nodeAffinity ??= {});
    nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution = [
      ...(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? []),
      ...preferred,
    ];
  }
  return true;
}
