// Kubernetes objects as the API server stores and serves them: the one object model every layer
// reads and writes. core.ts holds the TypeBox schemas (the parts Kruise CRDs embed, and the pod
// template fields); this file builds the stored objects on them. A stored object always has
// metadata; narrower views (what one planner reads) are derived from these types with
// Pick/Partial where they are used, never declared again.

import type { LabelSelector, ObjectMeta, ObjectReference, PodSpec, ResourceRequirements } from './core.ts';

export type { LabelSelector, ObjectMeta, ObjectReference, OwnerReference, PodSpec } from './core.ts';

/** Any object the API server stores: metadata is always there. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** A kind defined with optional metadata (the CRD/TypeBox types), as the API server stores it. */
export type Stored<T> = T & KubeObject;

// ---------------------------------------------------------------------------------------------
// core/v1 Pod

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerStateRunning {
  startedAt?: string;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  containerID?: string;
  ready?: boolean;
  started?: boolean;
  restartCount: number;
  state?: ContainerState;
  lastState?: ContainerState;
  allocatedResources?: Record<string, string>;
  resources?: ResourceRequirements;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: Array<{ ip: string }>;
  startTime?: string;
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: string;
  resize?: string;
}

export interface Pod extends KubeObject {
  spec?: PodSpec;
  status?: PodStatus;
}

// ---------------------------------------------------------------------------------------------
// Other core/v1 and cluster objects the controllers, webhooks and daemon use

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Node extends KubeObject {
  spec?: {
    podCIDR?: string;
    providerID?: string;
    unschedulable?: boolean;
    taints?: Array<{ key: string; value?: string; effect: string; timeAdded?: string }>;
  };
  status?: {
    conditions?: NodeCondition[];
    addresses?: Array<{ type: string; address: string }>;
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    nodeInfo?: Record<string, string>;
  };
}

export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: string };
}

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  immutable?: boolean;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** core/v1 PersistentVolume (what the local cluster's provisioner writes). */
export interface PersistentVolume extends KubeObject {
  spec?: {
    capacity?: Record<string, string>;
    accessModes?: string[];
    persistentVolumeReclaimPolicy?: string;
    storageClassName?: string;
    volumeMode?: string;
    claimRef?: ObjectReference;
    hostPath?: { path: string; type?: string };
    nodeAffinity?: {
      required?: { nodeSelectorTerms: Array<{ matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> }> };
    };
  };
  status?: { phase?: string };
}

/** storage.k8s.io/v1 StorageClass. */
export interface StorageClass extends KubeObject {
  provisioner: string;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
  allowVolumeExpansion?: boolean;
  parameters?: Record<string, string>;
}

/** apps/v1 ControllerRevision. */
export interface ControllerRevision extends KubeObject {
  /** The decoded revision data (the API returns it as a JSON object). */
  data?: unknown;
  revision: number;
}

/** coordination.k8s.io/v1 Lease. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  /** The record's leaderTransitions (client-go maps it to this field name). */
  leaseTransitions?: number;
  preferredHolder?: string;
  strategy?: string;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** events.k8s.io/v1 Event. */
export type EventType = 'Normal' | 'Warning';

export interface EventSeries {
  count: number;
  lastObservedTime: string;
}

export interface Event extends KubeObject {
  eventTime: string;
  series?: EventSeries;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  note?: string;
  type: EventType;
}

export type LabelSelectorRequirement = NonNullable<LabelSelector['matchExpressions']>[number];

/**
 * A narrow view of a Pod for a reader that needs only some of its fields: the one Pod's metadata,
 * spec and status cut down with Pick, each part optional (a full Pod always fits).
 */
export interface PodView<M extends keyof ObjectMeta = never, S extends keyof PodSpec = never, T extends keyof PodStatus = never> {
  metadata?: Pick<ObjectMeta, M>;
  spec?: Pick<PodSpec, S>;
  status?: Pick<PodStatus, T>;
}
