// PersistentPodState concepts shared by its controller and the pod webhook (spec §14): which
// PersistentPodState a workload has, and the node selector and preferred node affinity a recorded
// pod state turns into when the pod is created again.
import type { PersistentPodState } from '../apis/apps/persistentpodstate.ts';
import type { TargetReference } from '../apis/apps/pub.ts';
import type { PodSpec, Stored } from '../apis/core-objects.ts';

export type StoredPersistentPodState = Stored<PersistentPodState>;
export type PodState = NonNullable<NonNullable<PersistentPodState['status']>['podStates']>[string];
export type PreferredSchedulingTerm = NonNullable<
  NonNullable<NonNullable<PodSpec['affinity']>['nodeAffinity']>['preferredDuringSchedulingIgnoredDuringExecution']
>[number];

/** The API group of an apiVersion ("apps/v1" → "apps", "v1" → ""). */
export function apiGroupOf(apiVersion: string | undefined): string {
  const parts = (apiVersion ?? '').split('/');
  return parts.length === 2 ? parts[0]! : '';
}

/** Same workload: group, kind and name equal, whatever the version (upstream IsReferenceEqual). */
export function isSameWorkload(a: TargetReference, b: TargetReference): boolean {
  return apiGroupOf(a.apiVersion) === apiGroupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

/** The live PersistentPodState of a workload among those of its namespace (SelectorPersistentPodState). */
export function persistentPodStateFor(
  states: readonly StoredPersistentPodState[],
  ref: TargetReference,
): StoredPersistentPodState | undefined {
  return states.find((pps) => !pps.metadata.deletionTimestamp && pps.spec?.targetRef && isSameWorkload(pps.spec.targetRef, ref));
}

/**
 * What a recorded state asks of the scheduler (createNodeAffinity): the required keys as a node
 * selector, each preferred term as a weighted `key In [value]` preference (keys the state did not
 * record are left out).
 */
export function persistentNodeAffinity(
  spec: NonNullable<PersistentPodState['spec']>,
  state: PodState,
): { nodeSelector?: Record<string, string>; preferred: PreferredSchedulingTerm[] } {
  const labels = state.nodeTopologyLabels ?? {};
  let nodeSelector: Record<string, string> | undefined;
  if (spec.requiredPersistentTopology) {
    nodeSelector = {};
    for (const key of spec.requiredPersistentTopology.keys ?? []) if (key in labels) nodeSelector[key] = labels[key]!;
  }
  const preferred = (spec.preferredPersistentTopology ?? []).map((term): PreferredSchedulingTerm => {
    const matchExpressions = (term.preference.keys ?? [])
      .filter((key) => key in labels)
      .map((key) => ({ key, operator: 'In', values: [labels[key]!] }));
    return { weight: term.weight, preference: matchExpressions.length ? { matchExpressions } : {} };
  });
  return { ...(nodeSelector ? { nodeSelector } : {}), preferred };
}
