// One Advanced StatefulSet round as its phases (replicas.ts, update.ts) see it: what planStatefulSet
// observed and decided before them, and the plan they add to.

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import type { OrdinalRange } from './ordinals.ts';
import type { StatefulSetPlan } from './types.ts';
import type { Pod } from './pods.ts';

export interface Round {
  readonly set: StatefulSet;
  readonly features: FeatureGates;
  readonly nowMs: number;
  /** nowMs as a metav1.Time. */
  readonly now: string;
  readonly name: string;
  readonly replicas: number;
  /** OrderedReady: the round stops at the first pod it has to wait for. */
  readonly monotonic: boolean;
  readonly minReadySeconds: number;
  readonly range: OrdinalRange;
  /** The pod of each ordinal of range (index = ordinal - start), existing or to create; undefined: reserved. */
  readonly slots: ReadonlyArray<Pod | undefined>;
  /** Indexes of the slots whose pod exists. */
  readonly created: ReadonlySet<number>;
  /** Pods outside the range, descending ordinal. */
  readonly condemned: readonly Pod[];
  readonly pvcByName: ReadonlyMap<string, PersistentVolumeClaim>;
  readonly updateRevision: ControllerRevision;
  /** Every revision of the set, the one created this round included. */
  readonly revisions: readonly ControllerRevision[];
  /** What the round writes, filled in phase by phase. */
  readonly plan: StatefulSetPlan;
  /** Look again after this many seconds (the earliest asked for wins). */
  requeue(seconds: number | undefined): void;
  /** Deletes the pod, or moves it to PreparingDelete first when a preDelete hook holds it. */
  deleteOrPrepare(pod: Pod): 'deleted' | 'preparing' | 'waiting';
}
