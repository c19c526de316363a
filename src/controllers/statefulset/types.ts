// The shapes statefulset's planner reads and returns, apart from plan.ts so that the files of its
// phases can name them without importing the planner back.
import type { StatefulSetStatus } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { OwnerReference } from '../../apis/core-objects.ts';
import type { LifecycleTransition } from '../../util/lifecycle.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import type { InPlaceUpdateAction, LabelPatch, PodCreation, PodRefresh } from '../plan-types.ts';

export interface StatefulSetPlan {
  newRevision?: ControllerRevision;
  /** An older equal revision brought back as the update revision (rollback): its new number. */
  revisionUpdate?: { name: string; revision: number };
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  /** OrderedReady: at most one; Parallel: in slow-start batches. */
  createPods: PodCreation[];
  /** Missing claims of Pending pods (a user deleted one). */
  createPVCs: PersistentVolumeClaim[];
  deletePods: string[];
  pvcOwnerUpdates: PvcOwnerUpdate[];
  /** volumeClaimUpdateStrategy OnPodRollingUpdate: claims whose storage request grows to the template's. */
  pvcResizes: Array<{ pvc: string; storage: string }>;
  labelPatches: LabelPatch[];
  lifecycleTransitions: LifecycleTransition[];
  refreshes: PodRefresh[];
  inPlaceUpdates: InPlaceUpdateAction[];
  events: PlanEvent[];
  status: StatefulSetStatus;
  statusChanged: boolean;
  revisionsToDelete: string[];
  requeueAfterMs?: number;
  /** FailedUpdatePod (e.g. InPlaceOnly and the change cannot be made in place). */
  updateError?: string;
  /** Whether creations run one at a time (OrderedReady). */
  monotonic: boolean;
}

export interface PvcOwnerUpdate {
  pvc: string;
  resourceVersion?: string;
  ownerReferences: OwnerReference[];
}

export interface PlanEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}
