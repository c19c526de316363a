// The shapes daemonset's planner reads and returns, apart from plan.ts so that the files of its
// phases can name them without importing the planner back.
import type { DaemonSet, DaemonSetStatus } from '../../apis/apps/daemonset.ts';
import type { Node, Pod } from '../../apis/core-objects.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { PreDownloadPlan } from '../../util/imagepredownload.ts';
import type { LifecycleTransition } from '../../util/lifecycle.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import type { InPlaceUpdateAction, PodRefresh } from '../plan-types.ts';

export interface PlanInput {
  daemonSet: DaemonSet;
  /** ControllerRevisions the DaemonSet owns. */
  revisions: readonly ControllerRevision[];
  /** Pods the DaemonSet owns (claimed), active or not. */
  pods: readonly Pod[];
  nodes: readonly Node[];
  /** Milliseconds since the epoch. */
  now: number;
  features: Pick<FeatureGates, 'DaemonSetPruneIneligibleNodes' | 'InPlaceUpdateEnvFromMetadata' | 'InPlaceWorkloadVerticalScaling'>;
  /** Milliseconds a node's failed-pod backoff still runs, undefined when not backing off. */
  failedPodBackoff?: (node: string) => number | undefined;
  /** 5-character pod name suffixes (random by default, as the API server's generateName). */
  randomSuffix?: () => string;
  /**
   * Names of the ImagePullJobs this DaemonSet controls; given only when image pre-download is on
   * (gate PreDownloadImageForDaemonSetUpdate).
   */
  imagePullJobs?: readonly string[];
}

export interface DaemonSetPlan {
  newRevision?: ControllerRevision;
  revisionBump?: { name: string; revision: number };
  /** The update revision's hash (pod label value, status.updateRevision). */
  hash: string;
  /** status.collisionCount; absent until a name collision (upstream's nil). */
  collisionCount?: number;
  refreshes: PodRefresh[];
  /** Pods moved to PreparingDelete instead of being deleted (preDelete hook). */
  lifecycleTransitions: LifecycleTransition[];
  inPlaceUpdates: InPlaceUpdateAction[];
  /** Complete pods (with names) to create, in creation order. */
  createPods: Pod[];
  deletePods: string[];
  /** Nodes whose failed pod is deleted now: their backoff steps up. */
  failedPodNodes: string[];
  events: Array<{ type: 'Normal' | 'Warning'; reason: string; message: string }>;
  status: DaemonSetStatus;
  statusChanged: boolean;
  revisionsToDelete: string[];
  /** Image pre-download for the update revision's new images. */
  preDownload?: PreDownloadPlan;
  requeueAfterMs?: number;
}
