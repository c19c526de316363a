// Well-known names shared between Kruise components and users' manifests: API groups, labels,
// annotations, envs, condition types and finalizers (behaviour spec §1). One module so that every
// key is spelled once.

// ---------------------------------------------------------------------------------------------
// API groups

/** Group of all workload and job kinds. */
export const APPS_GROUP = 'apps.kruise.io';
/** Group of PodUnavailableBudget. */
export const POLICY_GROUP = 'policy.kruise.io';

// ---------------------------------------------------------------------------------------------
// Pod / workload labels

/** Revision name on every Kruise-managed pod (apps/v1 ControllerRevisionHashLabelKey). */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
/** Kruise-level revision hash label, used on ControllerRevisions of SidecarSet and others. */
export const KRUISE_CONTROLLER_REVISION_HASH_LABEL = 'apps.kruise.io/controller-revision-hash';
/** Short hash (suffix after the last '-') of the revision, written by CloneSet. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** 5-char instance id shared by a CloneSet pod and its PVCs. */
export const CLONESET_INSTANCE_ID_LABEL = 'apps.kruise.io/cloneset-instance-id';
/** Any value asks the owning workload to delete this pod. */
export const SPECIFIED_DELETE_LABEL = 'apps.kruise.io/specified-delete';
/** Lifecycle state of a pod (see LifecycleState). */
export const LIFECYCLE_STATE_LABEL = 'lifecycle.apps.kruise.io/state';
/** v1alpha1 CloneSet label for scaleStrategy.excludePreparingDelete ('true'). */
export const CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL = 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete';
/** Deletion protection mode: 'Always' or 'Cascading'. */
export const DELETION_PROTECTION_LABEL = 'policy.kruise.io/delete-protection';
/** UnitedDeployment subset name on subset workloads and their pods. */
export const SUBSET_NAME_LABEL = 'apps.kruise.io/subset-name';
/** Marks pods reserved by an adaptive UnitedDeployment. */
export const UNITED_DEPLOYMENT_RESERVED_POD_LABEL = 'apps.kruise.io/united-deployment-reserved-pod';
/** Any label with this prefix marks a pod unavailable for PodUnavailableBudget. */
export const POD_UNAVAILABLE_LABEL_PREFIX = 'unavailable-pod.kruise.io/';
/** Labels ControllerRevisions of a SidecarSet with its name. */
export const SIDECARSET_NAME_REVISION_LABEL = 'kruise.io/sidecarset-name';
/** Name of the BroadcastJob owning a pod. */
export const BROADCASTJOB_NAME_LABEL = 'broadcastjob-name';
/** UID of the BroadcastJob owning a pod. */
export const BROADCASTJOB_CONTROLLER_UID_LABEL = 'broadcastjob-controller-uid';
/** [Immutable] UID of the pod a ContainerRecreateRequest targets. */
export const CRR_POD_UID_LABEL = 'crr.apps.kruise.io/pod-uid';
/** [Immutable] Node of the pod a ContainerRecreateRequest targets. */
export const CRR_NODE_NAME_LABEL = 'crr.apps.kruise.io/node-name';
/** Present while a ContainerRecreateRequest is unfinished. */
export const CRR_ACTIVE_LABEL = 'crr.apps.kruise.io/active';
/** v1alpha1 SidecarSet label for v1beta1 spec.customVersion. */
export const SIDECARSET_CUSTOM_VERSION_LABEL = 'apps.kruise.io/sidecarset-custom-version';
/** Pod ordinal label written by Advanced StatefulSet (gate PodIndexLabel). */
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

// ---------------------------------------------------------------------------------------------
// Pod / workload annotations

/** Time of the last lifecycle state transition. */
export const LIFECYCLE_TIMESTAMP_ANNOTATION = 'lifecycle.apps.kruise.io/timestamp';
/** InPlaceUpdateState JSON. */
export const INPLACE_UPDATE_STATE_ANNOTATION = 'apps.kruise.io/inplace-update-state';
/** Pre-v1.0 key of the in-place update state, still read. */
export const INPLACE_UPDATE_STATE_ANNOTATION_OLD = 'inplace-update-state';
/** Delayed in-place update spec, applied once the grace period ends. */
export const INPLACE_UPDATE_GRACE_ANNOTATION = 'apps.kruise.io/inplace-update-grace';
/** Pre-v1.0 key of the in-place update grace spec, still read. */
export const INPLACE_UPDATE_GRACE_ANNOTATION_OLD = 'inplace-update-grace';
/** RuntimeContainerMetaSet JSON written by kruise-daemon. */
export const RUNTIME_CONTAINERS_META_ANNOTATION = 'apps.kruise.io/runtime-containers-meta';
/** 'Ordered' starts containers in declaration order. */
export const CONTAINER_LAUNCH_PRIORITY_ANNOTATION = 'apps.kruise.io/container-launch-priority';
/** Set once the launch barrier has released every priority. */
export const CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION = 'apps.kruise.io/container-launch-priority-completed';
/** Integer cost; lower is deleted first. */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
/** JSON {name, subset, uid} of the WorkloadSpread subset a pod was injected into. */
export const MATCHED_WORKLOADSPREAD_ANNOTATION = 'apps.kruise.io/matched-workloadspread';
/** v1alpha1 annotation for inPlaceUpdateStrategy.imagePreDownloadParallelism. */
export const IMAGE_PREDOWNLOAD_PARALLELISM_ANNOTATION = 'apps.kruise.io/image-predownload-parallelism';
/** v1alpha1 annotation for inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds. */
export const IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS_ANNOTATION = 'apps.kruise.io/image-predownload-timeout-seconds';
/** v1alpha1 annotation for inPlaceUpdateStrategy.imagePreDownloadMinUpdatedReadyPods. */
export const IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION = 'apps.kruise.io/image-predownload-min-updated-ready-pods';
/** Label on a ControllerRevision whose pre-download ImagePullJobs were created. */
export const IMAGE_PREDOWNLOAD_CREATED_KEY = 'apps.kruise.io/pre-predownload-created';
/**
 * Label on a ControllerRevision that needs no pre-download; as an annotation on a workload, skip
 * pre-download altogether.
 */
export const IMAGE_PREDOWNLOAD_IGNORED_KEY = 'apps.kruise.io/image-predownload-ignored';
/** UnitedDeployment: patch applied to the subset, recorded on the subset workload. */
export const SUBSET_PATCH_ANNOTATION = 'apps.kruise.io/subset-patch';
/** SidecarSet hash (on the SidecarSet: plain hash; on pods: JSON map per SidecarSet). */
export const SIDECARSET_HASH_ANNOTATION = 'kruise.io/sidecarset-hash';
/** SidecarSet hash computed with images removed. */
export const SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION = 'kruise.io/sidecarset-hash-without-image';
/** Comma list of SidecarSets injected into a pod. */
export const SIDECARSET_INJECTED_LIST_ANNOTATION = 'kruise.io/sidecarset-injected-list';
/** Per-SidecarSet in-place update state on pods. */
export const SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION = 'kruise.io/sidecarset-inplace-update-state';
/** JSON {sidecar: working container} for hot-upgrade sidecars. */
export const SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION = 'kruise.io/sidecarset-working-hotupgrade-container';
/** Prefix + container name: hot-upgrade version counter of the '-1'/'-2' container. */
export const SIDECARSET_VERSION_ANNOTATION_PREFIX = 'version.sidecarset.kruise.io/';
/** Prefix + container name: alternate hot-upgrade version counter. */
export const SIDECARSET_VERSION_ALT_ANNOTATION_PREFIX = 'versionalt.sidecarset.kruise.io/';
/** 'true' marks a canary SidecarSet. */
export const SIDECARSET_CANARY_ANNOTATION = 'apps.kruise.io/sidecarset-canary';
/** Name of the base SidecarSet of a canary. */
export const SIDECARSET_BASE_ANNOTATION = 'apps.kruise.io/sidecarset-base';
/** Name of the PodUnavailableBudget protecting a pod. */
export const PUB_RELATED_ANNOTATION = 'pub.kruise.io/related-pub';
/** Deprecated key of the protecting PodUnavailableBudget, written alongside. */
export const PUB_RELATED_ANNOTATION_OLD = 'kruise.io/related-pub';
/** 'true': the pod opts out of PodUnavailableBudget protection. */
export const PUB_NO_PROTECT_ANNOTATION = 'pub.kruise.io/no-protect';
/** Deprecated comma list of protected operations (DELETE,UPDATE,EVICT,RESIZE). */
export const PUB_PROTECT_OPERATIONS_ANNOTATION = 'kruise.io/pub-protect-operations';
/** Deprecated integer total replicas for a PodUnavailableBudget. */
export const PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION = 'pub.kruise.io/protect-total-replicas';
/** Hash of the distributed resource, on ResourceDistribution copies. */
export const RESOURCE_DISTRIBUTION_HASH_ANNOTATION = 'kruise.io/resourcedistribution.resource.hashcode';
/** Name of the ResourceDistribution a copy came from. */
export const RESOURCE_DISTRIBUTION_FROM_ANNOTATION = 'kruise.io/resourcedistribution.resource.from';
/** AdvancedCronJob: scheduled time (RFC3339) on the created job. */
export const SCHEDULED_AT_ANNOTATION = 'apps.kruise.io/scheduled-at';
/** 'manual' on jobs created by `kubectl kruise create job --from`. */
export const CRONJOB_INSTANTIATE_ANNOTATION = 'cronjob.kubernetes.io/instantiate';
/** Pod-template restart stamp written by `kubectl kruise rollout restart`. */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';
/** 'true' on a workload: generate a PersistentPodState for it. */
export const AUTO_GENERATE_PERSISTENT_POD_STATE_ANNOTATION = 'kruise.io/auto-generate-persistent-pod-state';
/** Comma list of node label keys pods must return to. */
export const REQUIRED_PERSISTENT_TOPOLOGY_ANNOTATION = 'kruise.io/required-persistent-topology';
/** Comma list of node label keys pods prefer to return to (weight 100). */
export const PREFERRED_PERSISTENT_TOPOLOGY_ANNOTATION = 'kruise.io/preferred-persistent-topology';
/** Comma list of pod annotation keys a PersistentPodState records. */
export const PERSISTENT_POD_ANNOTATIONS_ANNOTATION = 'kruise.io/persistent-pod-annotations';
/** On a pod: name of the PersistentPodState whose affinity was injected. */
export const INJECTED_PERSISTENT_POD_STATE_ANNOTATION = 'kruise.io/injected-persistent-pod-state';
/** PodProbeMarker probe specs on a pod (serverless mode). */
export const POD_PROBE_ANNOTATION = 'kruise.io/podprobe';
/** Comma list of PodProbeMarkers injected into a pod. */
export const POD_PROBE_MARKER_LIST_ANNOTATION = 'kruise.io/podprobemarker-list';
/** Marks a pod using the enhanced liveness probe. */
export const USING_ENHANCED_LIVENESS_ANNOTATION = 'apps.kruise.io/using-enhanced-liveness';
/** Container probe context for the enhanced liveness probe. */
export const CONTAINER_PROBE_CONTEXT_ANNOTATION = 'apps.kruise.io/container-probe-context';
/** fnv32a hash of a CloneSet's volumeClaimTemplates, on its ControllerRevisions. */
export const CLONESET_VCT_HASH_ANNOTATION = 'kruise.io/cloneset-volumeclaimtemplate-hash';
/** On copied pull secrets: '<namespace>/<name>' of the source secret. */
export const IMAGEPULLJOB_SOURCE_KEY_ANNOTATION = 'imagepulljobs.kruise.io/source-key';
/** Label on copied pull secrets: the source secret's uid (what OpenKruise's e2e lists the copies by). */
export const IMAGEPULLJOB_SOURCE_UID_LABEL = 'imagepulljobs.kruise.io/source-uid';
/** On copied pull secrets: comma list of referencing ImagePullJobs. */
export const IMAGEPULLJOB_REFERENCES_ANNOTATION = 'imagepulljobs.kruise.io/references';
/** On copied pull secrets: copy mode (`batch`, as upstream's controller writes it). */
export const IMAGEPULLJOB_MODE_ANNOTATION = 'imagepulljobs.kruise.io/mode';
/** v1alpha1 ContainerRecreateRequest: JSON container statuses (v1beta1 status.containerStatusSnapshot). */
export const CRR_SYNC_CONTAINER_STATUSES_ANNOTATION = 'crr.apps.kruise.io/sync-container-statuses';
/** v1alpha1 ContainerRecreateRequest: pod held not-ready (v1beta1 condition PreRecreateGrace). */
export const CRR_UNREADY_ACQUIRED_ANNOTATION = 'crr.apps.kruise.io/unready-acquired';

// ---------------------------------------------------------------------------------------------
// Envs

/** Container launch priority (integer, higher starts first). */
export const ENV_CONTAINER_PRIORITY = 'KRUISE_CONTAINER_PRIORITY';
/** Injected barrier env (configMapKeyRef '<pod>-barrier', key 'p_<priority>'). */
export const ENV_CONTAINER_BARRIER = 'KRUISE_CONTAINER_BARRIER';
/** 'true': the sidecar terminator stops this sidecar when the main containers finish. */
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT';
/** Image to swap in (in place) to stop a sidecar when the job exits. */
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE';
/** Sidecar exit code ignored when judging job success. */
export const ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE = 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE';
/** 'true' on every injected sidecar container. */
export const ENV_IS_INJECTED = 'IS_INJECTED';
/** Hot-upgrade sidecar version (fieldRef to the version annotation). */
export const ENV_SIDECARSET_VERSION = 'SIDECARSET_VERSION';
/** Hot-upgrade sidecar alternate version (fieldRef to the versionalt annotation). */
export const ENV_SIDECARSET_VERSION_ALT = 'SIDECARSET_VERSION_ALT';
/** Manager env: comma list of enabled custom resources. */
export const ENV_CUSTOM_RESOURCE_ENABLE = 'CUSTOM_RESOURCE_ENABLE';
/** Marks an ephemeral container as owned by the EphemeralJob with this UID. */
export const ENV_EPHEMERAL_JOB_ID = 'KRUISE_EJOB_ID';
/** Namespace kruise-manager runs in. */
export const ENV_POD_NAMESPACE = 'POD_NAMESPACE';

// ---------------------------------------------------------------------------------------------
// Pod condition types (readiness gates)

/** Readiness gate held False while a pod is updated in place. */
export const CONDITION_INPLACE_UPDATE_READY = 'InPlaceUpdateReady';
/** Readiness gate Kruise uses to hold a pod not-ready (lifecycle hooks, CRR). */
export const CONDITION_KRUISE_POD_READY = 'KruisePodReady';
/** False when a SidecarSet change cannot be applied to the pod in place. */
export const CONDITION_SIDECARSET_UPGRADABLE = 'SidecarSetUpgradable';
/** Set after the sidecar terminator stopped the sidecars. */
export const CONDITION_SIDECAR_TERMINATED = 'SidecarTerminated';

// ---------------------------------------------------------------------------------------------
// Finalizers

/** ImagePullJob: release copied pull secrets before deletion. */
export const FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION = 'apps.kruise.io/deletion-protection';
/** ContainerRecreateRequest (v1beta1): pod held not-ready. */
export const FINALIZER_CRR_UNREADY_ACQUIRED = 'crr.apps.kruise.io/unready-acquired';
/** PodProbeMarker: remove its probes from NodePodProbes. */
export const FINALIZER_NODE_POD_PROBE_CLEANUP = 'kruise.io/node-pod-probe-cleanup';
/** EphemeralJob: clean up the ephemeral containers it created. */
export const FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP = 'apps.kruise.io/ephemeralcontainers-cleanup';

// ---------------------------------------------------------------------------------------------
// Values

/** Values of LIFECYCLE_STATE_LABEL. */
export const LifecycleState = {
  PreparingNormal: 'PreparingNormal',
  Normal: 'Normal',
  PreparingUpdate: 'PreparingUpdate',
  Updating: 'Updating',
  Updated: 'Updated',
  PreparingDelete: 'PreparingDelete',
} as const;
export type LifecycleState = (typeof LifecycleState)[keyof typeof LifecycleState];

/** Values of DELETION_PROTECTION_LABEL. */
export const DeletionProtection = { Always: 'Always', Cascading: 'Cascading' } as const;

/** Namespace kruise-manager uses when POD_NAMESPACE is unset. */
export const DEFAULT_KRUISE_NAMESPACE = 'kruise-system';
/** Namespace holding kruise-daemon's copies of pull secrets. */
export const KRUISE_DAEMON_CONFIG_NAMESPACE = 'kruise-daemon-config';
/** ConfigMap (in the kruise namespace) with runtime configuration whitelists. */
export const KRUISE_CONFIGURATION_NAME = 'kruise-configuration';
/** Key of kruise-configuration listing custom workloads PersistentPodState may target. */
export const PPS_CUSTOM_WORKLOAD_WHITELIST_KEY = 'PPS_Watch_Custom_Workload_WhiteList';
/** Key of kruise-configuration listing custom workloads WorkloadSpread may target. */
export const WS_CUSTOM_WORKLOAD_WHITELIST_KEY = 'WorkloadSpread_Watch_Custom_Workload_WhiteList';
