// The vocabulary of pod-writing plans: what a workload planner (CloneSet, Advanced StatefulSet,
// Advanced DaemonSet, …) asks its executor to write. A leaf module: planners import these types
// without reaching the executors' write code (workload-writes.ts), which consumes them.

import type { PersistentVolumeClaim } from '../apis/core.ts';
import type { Pod, PodCondition } from '../apis/core-objects.ts';

/** A pod to create, with the claims it needs first. */
export interface PodCreation {
  pod: Pod;
  /** Claims that do not exist yet, created before the pod. */
  pvcs: PersistentVolumeClaim[];
}

/** In-place progress of one pod: grace finished, next container batch, InPlaceUpdateReady=True. */
export interface PodRefresh {
  pod: string;
  /** Pod write from the in-place engine (grace finished / next container batch). */
  updatedPod?: Pod;
  conditions?: PodCondition[];
}

/** One in-place update: the conditions go first (InPlaceUpdateReady=False), then the pod. */
export interface InPlaceUpdateAction {
  pod: string;
  /** The revision the pod moves to. */
  revision: string;
  /** Pod to write (metadata + spec). */
  updatedPod: Pod;
  /** status.conditions to write before the pod (InPlaceUpdateReady=False). */
  conditions?: PodCondition[];
}

/** Labels to merge into one pod's. */
export interface LabelPatch {
  pod: string;
  labels: Record<string, string>;
}
