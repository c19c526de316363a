// Which pods a PodUnavailableBudget covers and how many it expects (pubControl.GetPodsForPub and
// controllerfinder): by targetRef — a Deployment (through its ReplicaSets), ReplicaSet, StatefulSet,
// CloneSet, Advanced StatefulSet, or any other workload with a scale subresource (its pods are those
// naming it as controller, else, when none does, those its Scale's selector matches) — or by
// selector, whose expected count is the sum of the replicas of the distinct workloads owning the
// matched pods. Pods matching ignoredPodSelector are left out; protectTotalReplicas overrides the count.
import type { LabelSelector, OwnerReference, Pod, Stored } from '../apis/core-objects.ts';
import { labelSelectorAsSelector } from './labelselector.ts';
import { isPodActive } from './pod.ts';
import { apiGroupOf, isPodIgnoredByPub, type StoredPub } from './pub.ts';

/** A workload as the budget reads it: replicas and selector (spec, or a Scale's status). */
export type Workload = Stored<{
  spec?: { replicas?: number | null; selector?: LabelSelector | null };
  /**
   * The selector a workload read through its scale subresource reports (status.selector): upstream
   * finds such a workload's pods by it when no pod names the workload as controller.
   */
  scaleSelector?: LabelSelector;
}>;

/** What resolving reads; informer caches in production, plain objects in unit tests. */
export interface PubTargetCache {
  /** Active and inactive pods of a namespace. */
  podsIn(namespace: string): Pod[];
  /** Objects whose controller owner has this UID. */
  podsOwnedBy(uid: string): Pod[];
  replicaSetsOwnedBy(uid: string): Workload[];
  /**
   * The workload apiVersion/kind/name in namespace: undefined when it does not exist; throws for a
   * kind it cannot read.
   */
  workload(apiVersion: string, kind: string, namespace: string, name: string): Promise<Workload | undefined>;
}

export interface PubTargets {
  pods: Pod[];
  totalReplicas: number;
}

const replicasOf = (w: Workload | undefined): number => (w && !w.metadata.deletionTimestamp ? (w.spec?.replicas ?? 1) : 0);

/**
 * The workload a pod's controller reference stands for: the Deployment when the controller is a
 * ReplicaSet a Deployment controls (as upstream's finder), else the controller itself.
 */
export async function workloadOfPod(
  pod: Pick<Pod, 'metadata'>,
  cache: Pick<PubTargetCache, 'workload'>,
): Promise<{ ref: OwnerReference; workload?: Workload } | undefined> {
  const ref = pod.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref) return undefined;
  const ns = pod.metadata.namespace ?? '';
  const workload = await cache.workload(ref.apiVersion, ref.kind, ns, ref.name).catch(() => undefined);
  if (workload && workload.metadata.uid !== ref.uid) return { ref, workload: undefined };
  if (ref.kind === 'ReplicaSet' && apiGroupOf(ref.apiVersion) === 'apps' && workload) {
    const owner = workload.metadata.ownerReferences?.find((r) => r.controller);
    if (owner?.kind === 'Deployment' && apiGroupOf(owner.apiVersion) === 'apps') {
      const deployment = await cache.workload(owner.apiVersion, owner.kind, ns, owner.name).catch(() => undefined);
      return { ref: owner, workload: deployment && deployment.metadata.uid === owner.uid ? deployment : undefined };
    }
  }
  return { ref, workload };
}

/** The pods a selector matches; a malformed or empty selector matches none. */
function podsSelectedBy(ls: LabelSelector, pods: Pod[]): Pod[] {
  try {
    const selector = labelSelectorAsSelector(ls);
    return selector.isEverything() ? [] : pods.filter((p) => selector.matches(p.metadata.labels));
  } catch {
    return [];
  }
}

export async function resolvePubTargets(pub: StoredPub, cache: PubTargetCache): Promise<PubTargets> {
  const ns = pub.metadata.namespace ?? '';
  const keep = (pods: Pod[]) => pods.filter((p) => isPodActive(p) && !isPodIgnoredByPub(pub, p));
  const override = pub.spec?.protectTotalReplicas;
  const ref = pub.spec?.targetRef;
  if (ref) {
    const workload = await cache.workload(ref.apiVersion ?? '', ref.kind ?? '', ns, ref.name ?? '');
    if (!workload) return { pods: [], totalReplicas: override ?? 0 };
    let owned: Pod[];
    if (ref.kind === 'Deployment' && apiGroupOf(ref.apiVersion) === 'apps') {
      owned = cache.replicaSetsOwnedBy(workload.metadata.uid ?? '').flatMap((rs) => cache.podsOwnedBy(rs.metadata.uid ?? ''));
    } else {
      owned = cache.podsOwnedBy(workload.metadata.uid ?? '');
    }
    owned = owned.filter((p) => p.metadata.namespace === ns);
    if (!owned.length && workload.scaleSelector) owned = podsSelectedBy(workload.scaleSelector, cache.podsIn(ns));
    return { pods: keep(owned), totalReplicas: override ?? replicasOf(workload) };
  }
  if (!pub.spec?.selector) return { pods: [], totalReplicas: 0 };
  let selector;
  try {
    selector = labelSelectorAsSelector(pub.spec.selector);
  } catch {
    return { pods: [], totalReplicas: 0 };
  }
  const pods = keep(cache.podsIn(ns).filter((p) => selector.matches(p.metadata.labels)));
  if (override !== undefined) return { pods, totalReplicas: override };
  const seen = new Map<string, number>();
  for (const pod of pods) {
    const owner = await workloadOfPod(pod, cache);
    if (!owner || seen.has(owner.ref.uid)) continue;
    seen.set(owner.ref.uid, replicasOf(owner.workload));
  }
  return { pods, totalReplicas: [...seen.values()].reduce((a, b) => a + b, 0) };
}

/** Whether the budget covers the pod (webhook/controller GetPubForPod): its workload is the targetRef, or its selector matches. */
export async function pubCoversPod(pub: StoredPub, pod: Pick<Pod, 'metadata'>, cache: Pick<PubTargetCache, 'workload'>): Promise<boolean> {
  const ref = pub.spec?.targetRef;
  if (ref) {
    const owner = await workloadOfPod(pod, cache);
    if (!owner) return false;
    return apiGroupOf(ref.apiVersion) === apiGroupOf(owner.ref.apiVersion) && ref.kind === owner.ref.kind && ref.name === owner.ref.name;
  }
  if (!pub.spec?.selector) return false;
  try {
    const s = labelSelectorAsSelector(pub.spec.selector);
    return !s.isEverything() && s.matches(pod.metadata.labels);
  } catch {
    return false;
  }
}
