// Event handlers of the CloneSet controller (upstream cloneset_event_handler.go): they only observe
// expectations and enqueue the owning CloneSet (found through the controllerRef), or, for an orphan
// pod, every CloneSet whose selector matches it so that one may adopt it. Objects from an
// informer's initial list are queued at low priority so that real changes go first after a restart.

import type { CloneSet } from '../../apis/apps/cloneset.ts';
import { CONDITION_INPLACE_UPDATE_READY } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { KubeObject, OwnerReference, Stored } from '../../apis/core-objects.ts';
import type { WorkloadExpectations } from '../workload.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { checkContainersUpdateCompleted, getInPlaceUpdateState } from '../../util/inplaceupdate.ts';
import { getCondition } from '../../util/lifecycle.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';
import { isPodReady } from '../../util/pod.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import type { Pod } from './pods.ts';

export interface Enqueuer {
  add(key: string, opts?: { priority?: number }): void;
}

export interface HandlerDeps {
  queue: Enqueuer;
  expectations: WorkloadExpectations;
  /** The cached CloneSet, to check that a controllerRef still points at it (same UID). */
  getCloneSet(namespace: string, name: string): CloneSet | undefined;
  /** The cached CloneSets of a namespace, to find those that may adopt an orphan pod. */
  listCloneSets(namespace: string): CloneSet[];
  /** Gate CloneSetEventHandlerOptimization: drop pod updates that cannot change a decision. */
  filterPodUpdates?: boolean;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

function lifecycleFinalizers(cs: CloneSet, pod: Pod): string[] {
  const lc = cs.spec?.lifecycle;
  const handled = [lc?.preDelete, lc?.inPlaceUpdate, lc?.preNormal].flatMap((h) => h?.finalizersHandler ?? []);
  return (pod.metadata.finalizers ?? []).filter((f) => handled.includes(f));
}

const containerProgress = (pod: Pod) =>
  JSON.stringify((pod.status?.containerStatuses ?? []).map((c) => [c.name, c.ready, c.imageID, c.containerID, c.restartCount]));

const containerResources = (pod: Pod) => JSON.stringify((pod.status?.containerStatuses ?? []).map((c) => [c.name, c.resources]));

/**
 * Whether an update of a pod owned by `cs` can be dropped without a reconcile (upstream
 * IgnorePodUpdateEvent, gate CloneSetEventHandlerOptimization). Label, ownerRef and deletion changes
 * are decided by the caller. A pod update matters when its generation (spec), lifecycle
 * finalizers or readiness changed, or while an in-place update is unfinished and its containers
 * moved: upstream only looks at the moment the update completes, but our refresh also starts the
 * next container-priority batch when the previous containers turn ready, and such a pod is not
 * Ready, so without this the next batch would wait for an unrelated event. A resize (in-place
 * vertical scaling) matters while the kubelet reports the containers' new resources: the pod
 * stays Ready and keeps InPlaceUpdateReady=True throughout, so nothing else would show it done.
 */
export function podUpdateCannotChangeDecision(cs: CloneSet, old: Pod, cur: Pod): boolean {
  if ((old.metadata.generation ?? 0) !== (cur.metadata.generation ?? 0)) return false;
  if (!sameSet(lifecycleFinalizers(cs, old), lifecycleFinalizers(cs, cur))) return false;
  if (isPodReady(old) !== isPodReady(cur)) return false;
  const state = getInPlaceUpdateState(cur);
  if (state?.updateResources && containerResources(old) !== containerResources(cur)) return false;
  if (cur.spec?.readinessGates?.some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY)) {
    const inPlaceReady = getCondition(cur, CONDITION_INPLACE_UPDATE_READY)?.status === 'True';
    if (state && !inPlaceReady) {
      if (checkContainersUpdateCompleted(cur, state) === undefined) return false;
      if (containerProgress(old) !== containerProgress(cur)) return false;
    }
  }
  return true;
}

/** The CloneSet controllerRef of an object, if it has one. */
export function cloneSetRef(obj: KubeObject): OwnerReference | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'CloneSet' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return ref;
}

/** getPodCloneSets: CloneSets of the pod's namespace whose non-empty, valid selector matches it. */
export function cloneSetsSelecting(pod: Pod, cloneSets: readonly CloneSet[]): CloneSet[] {
  return cloneSets.filter((cs) => {
    if ((cs.metadata?.namespace ?? '') !== (pod.metadata.namespace ?? '')) return false;
    try {
      const selector = labelSelectorAsSelector(cs.spec?.selector);
      return selector.requirements.length > 0 && selector.matches(pod.metadata.labels);
    } catch {
      return false;
    }
  });
}

const ownerKey = (obj: KubeObject, ref: OwnerReference) => `${obj.metadata.namespace ?? ''}/${ref.name}`;
const sameRef = (a?: OwnerReference, b?: OwnerReference) => a?.uid === b?.uid && a?.name === b?.name;
const sameLabels = (a: KubeObject, b: KubeObject) => {
  const x = a.metadata.labels ?? {};
  const y = b.metadata.labels ?? {};
  return Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([k, v]) => y[k] === v);
};

export function makeHandlers(deps: HandlerDeps) {
  const enqueueOwner = (obj: KubeObject, ref: OwnerReference | undefined, initial = false) => {
    if (!ref) return;
    const cs = deps.getCloneSet(obj.metadata.namespace ?? '', ref.name);
    if (!cs || cs.metadata?.uid !== ref.uid) return;
    deps.queue.add(ownerKey(obj, ref), initial ? { priority: LowPriority } : {});
  };

  const cloneSet: EventHandler<Stored<CloneSet>> = {
    onAdd: (cs, initial) => deps.queue.add(`${cs.metadata.namespace}/${cs.metadata.name}`, initial ? { priority: LowPriority } : {}),
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.queue.add(`${cur.metadata.namespace}/${cur.metadata.name}`);
    },
    onDelete: (obj) => {
      const cs = unwrapDeleted(obj);
      const key = `${cs.metadata.namespace}/${cs.metadata.name}`;
      deps.expectations.forget(key);
      deps.queue.add(key);
    },
  };

  // A pod with a deletionTimestamp counts as deleted at once (as upstream), so replacements are
  // created without waiting for the grace period.
  const observePodDeleted = (pod: Pod, ref: OwnerReference) =>
    deps.expectations.scale.observeScale(ownerKey(pod, ref), 'delete', pod.metadata.name ?? '');

  // No expectation is observed for an orphan: no CloneSet waits for one.
  const enqueueAdopters = (p: Pod, initial = false) => {
    for (const cs of cloneSetsSelecting(p, deps.listCloneSets(p.metadata.namespace ?? ''))) {
      deps.queue.add(`${cs.metadata?.namespace}/${cs.metadata?.name}`, initial ? { priority: LowPriority } : {});
    }
  };

  const podDeleted = (p: Pod) => {
    const ref = cloneSetRef(p);
    if (!ref) return;
    observePodDeleted(p, ref);
    enqueueOwner(p, ref);
  };

  const pod: EventHandler<Pod> = {
    onAdd: (p, initial) => {
      deps.expectations.resourceVersions.observe(p);
      if (p.metadata.deletionTimestamp) return podDeleted(p);
      const ref = cloneSetRef(p);
      if (!ref) {
        if (!p.metadata.ownerReferences?.some((r) => r.controller)) enqueueAdopters(p, initial);
        return;
      }
      deps.expectations.scale.observeScale(ownerKey(p, ref), 'create', p.metadata.name ?? '');
      enqueueOwner(p, ref, initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.expectations.resourceVersions.observe(cur);
      const labelsChanged = !sameLabels(old, cur);
      if (cur.metadata.deletionTimestamp) {
        podDeleted(cur);
        // the old labels may have tied the pod to another CloneSet
        if (labelsChanged) podDeleted(old);
        return;
      }
      const ref = cloneSetRef(cur);
      const oldRef = cloneSetRef(old);
      const refChanged = !sameRef(oldRef, ref);
      if (oldRef && refChanged) enqueueOwner(old, oldRef);
      if (ref) {
        if (deps.filterPodUpdates && !refChanged && !labelsChanged) {
          const cs = deps.getCloneSet(cur.metadata.namespace ?? '', ref.name);
          if (cs && podUpdateCannotChangeDecision(cs, old, cur)) return;
        }
        enqueueOwner(cur, ref);
      } else if ((labelsChanged || refChanged) && !cur.metadata.ownerReferences?.some((r) => r.controller)) {
        enqueueAdopters(cur);
      }
    },
    onDelete: (obj) => {
      const p = unwrapDeleted(obj);
      deps.expectations.resourceVersions.delete(p);
      podDeleted(p);
    },
  };

  const pvc: EventHandler<Stored<PersistentVolumeClaim>> = {
    onAdd: (c, initial) => {
      const ref = cloneSetRef(c);
      if (!ref) return;
      deps.expectations.scale.observeScale(ownerKey(c, ref), 'create', c.metadata.name ?? '');
      enqueueOwner(c, ref, initial);
    },
    onDelete: (obj) => {
      const c = unwrapDeleted(obj);
      enqueueOwner(c, cloneSetRef(c));
    },
  };

  const revision: EventHandler<ControllerRevision> = {
    onAdd: (r, initial) => {
      deps.expectations.resourceVersions.observe(r);
      const ref = cloneSetRef(r);
      if (!ref) return;
      deps.expectations.revisions.observeScale(ownerKey(r, ref), 'create', r.metadata.name ?? '');
      enqueueOwner(r, ref, initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.expectations.resourceVersions.observe(cur);
      enqueueOwner(cur, cloneSetRef(cur));
    },
    onDelete: (obj) => deps.expectations.resourceVersions.delete(unwrapDeleted(obj)),
  };

  return { cloneSet, pod, pvc, revision };
}
