// The catalogue of resources Kruise TS reads and writes, addressed as the API server serves them
// (group, version, plural, kind, scope), and the discovery documents that list what a cluster serves.

import { APPS_GROUP, POLICY_GROUP } from '../apis/constants.ts';
import { kindFor, hubGVR } from '../apis/registry.ts';

/** One resource of a discovery document; subresources are named `<resource>/<sub>`. */
export interface APIResource {
  name: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
  group?: string;
  version?: string;
}

export interface APIResourceList {
  groupVersion: string;
  resources: APIResource[];
}

export interface ResourceType {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural, as in the URL. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

function rt(group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceType {
  return Object.freeze({ group, version, resource, kind, namespaced });
}

export const Pods = rt('', 'v1', 'pods', 'Pod', true);
export const Nodes = rt('', 'v1', 'nodes', 'Node', false);
export const Namespaces = rt('', 'v1', 'namespaces', 'Namespace', false);
export const ConfigMaps = rt('', 'v1', 'configmaps', 'ConfigMap', true);
export const Secrets = rt('', 'v1', 'secrets', 'Secret', true);
export const PersistentVolumeClaims = rt('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true);
export const Events = rt('events.k8s.io', 'v1', 'events', 'Event', true);
export const TokenReviews = rt('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', false);
export const SubjectAccessReviews = rt('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', false);
/** Core v1 Events: where events go when events.k8s.io is not permitted (upstream's RBAC grants only these). */
export const CoreEvents = rt('', 'v1', 'events', 'Event', true);
export const Leases = rt('coordination.k8s.io', 'v1', 'leases', 'Lease', true);
export const ControllerRevisions = rt('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true);
export const Deployments = rt('apps', 'v1', 'deployments', 'Deployment', true);
export const ReplicaSets = rt('apps', 'v1', 'replicasets', 'ReplicaSet', true);
export const StatefulSets = rt('apps', 'v1', 'statefulsets', 'StatefulSet', true);
export const DaemonSets = rt('apps', 'v1', 'daemonsets', 'DaemonSet', true);
export const Jobs = rt('batch', 'v1', 'jobs', 'Job', true);
export const StorageClasses = rt('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false);
export const MutatingWebhookConfigurations = rt(
  'admissionregistration.k8s.io',
  'v1',
  'mutatingwebhookconfigurations',
  'MutatingWebhookConfiguration',
  false,
);
export const ValidatingWebhookConfigurations = rt(
  'admissionregistration.k8s.io',
  'v1',
  'validatingwebhookconfigurations',
  'ValidatingWebhookConfiguration',
  false,
);
/** A Kruise kind at its storage version, from the API registry (one source for group/plural/scope). */
export function kruiseResource(kind: string, group: string = APPS_GROUP): ResourceType {
  const def = kindFor(group, kind);
  if (!def) throw new Error(`${kind}.${group} is not a Kruise kind`);
  const gvr = hubGVR(def);
  return rt(gvr.group, gvr.version, gvr.resource, def.kind, def.scope === 'Namespaced');
}

// The Kruise resources the controllers and the daemon read and write, at their storage version
// (v1beta1: status fields such as containerStatusSnapshot exist only there).
export const CloneSets = kruiseResource('CloneSet');
/** apps.kruise.io DaemonSet (`DaemonSets` is apps/v1's). */
export const AdvancedDaemonSets = kruiseResource('DaemonSet');
export const AdvancedStatefulSets = kruiseResource('StatefulSet');
export const ContainerRecreateRequests = kruiseResource('ContainerRecreateRequest');
export const ImagePullJobs = kruiseResource('ImagePullJob');
export const ImageListPullJobs = kruiseResource('ImageListPullJob');
export const NodeImages = kruiseResource('NodeImage');
export const SidecarSets = kruiseResource('SidecarSet');
export const BroadcastJobs = kruiseResource('BroadcastJob');
export const AdvancedCronJobs = kruiseResource('AdvancedCronJob');
export const UnitedDeployments = kruiseResource('UnitedDeployment');
export const EphemeralJobs = kruiseResource('EphemeralJob');
export const PodUnavailableBudgets = kruiseResource('PodUnavailableBudget', POLICY_GROUP);
export const ResourceDistributions = kruiseResource('ResourceDistribution');
export const PersistentPodStates = kruiseResource('PersistentPodState');
export const PodProbeMarkers = kruiseResource('PodProbeMarker');
export const NodePodProbes = kruiseResource('NodePodProbe');

export const CustomResourceDefinitions = rt('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false);

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** A stable identity for a resource type, e.g. `deployments.v1.apps`. */
export function resourceTypeKey(type: ResourceType): string {
  return `${type.resource}.${type.version}.${type.group}`;
}
