// Kubernetes meta/v1 and core/v1 types that Kruise kinds embed. Two uses:
//  * expanded into Kruise CRDs where upstream expands them (LabelSelector, Toleration,
//    NodeSelectorTerm, ObjectReference, Probe, ...), so they mirror the Kubernetes-generated shape;
//  * TS types for the fields upstream keeps schemaless (pod templates, PVCs, volumes, containers):
//    those schemas name the fields controllers read and never reach a CRD.

import { Type, type Static } from '@sinclair/typebox';
import { Bool, Int32, Int64, IntOrString, KnownString, MapOf, Opt, Quantity, Str, StringList, StringMap, Time } from './primitives.ts';

const Loose = () => Type.Record(Type.String(), Type.Unknown());

// ---------------------------------------------------------------------------------------------
// meta/v1

export const LabelSelectorRequirement = Type.Object({
  key: Str({ description: 'key is the label key that the selector applies to.' }),
  operator: KnownString<'In' | 'NotIn' | 'Exists' | 'DoesNotExist'>({
    description: "operator represents a key's relationship to a set of values.",
  }),
  values: Opt(StringList()),
});

export const LabelSelector = Type.Object(
  {
    matchExpressions: Opt(Type.Array(LabelSelectorRequirement)),
    matchLabels: Opt(StringMap()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type LabelSelector = Static<typeof LabelSelector>;

export const OwnerReference = Type.Object({
  apiVersion: Str(),
  kind: Str(),
  name: Str(),
  uid: Str(),
  controller: Opt(Bool()),
  blockOwnerDeletion: Opt(Bool()),
});
export type OwnerReference = Static<typeof OwnerReference>;

export const ObjectMeta = Type.Object({
  name: Opt(Str()),
  generateName: Opt(Str()),
  namespace: Opt(Str()),
  uid: Opt(Str()),
  resourceVersion: Opt(Str()),
  generation: Opt(Int64()),
  creationTimestamp: Opt(Time()),
  deletionTimestamp: Opt(Time()),
  deletionGracePeriodSeconds: Opt(Int64()),
  labels: Opt(StringMap()),
  annotations: Opt(StringMap()),
  ownerReferences: Opt(Type.Array(OwnerReference)),
  finalizers: Opt(StringList()),
  managedFields: Opt(Type.Array(Loose())),
});
export type ObjectMeta = Static<typeof ObjectMeta>;

// ---------------------------------------------------------------------------------------------
// core/v1, expanded where Kruise CRDs expand them

export const ObjectReference = Type.Object(
  {
    apiVersion: Opt(Str()),
    fieldPath: Opt(Str()),
    kind: Opt(Str()),
    name: Opt(Str()),
    namespace: Opt(Str()),
    resourceVersion: Opt(Str()),
    uid: Opt(Str()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type ObjectReference = Static<typeof ObjectReference>;

export const LocalObjectReference = Type.Object({ name: Opt(Str()) }, { 'x-kubernetes-map-type': 'atomic' });
export type LocalObjectReference = Static<typeof LocalObjectReference>;

export const ObjectFieldSelector = Type.Object({ apiVersion: Opt(Str()), fieldPath: Str() }, { 'x-kubernetes-map-type': 'atomic' });

export const Toleration = Type.Object({
  effect: Opt(KnownString<'NoSchedule' | 'PreferNoSchedule' | 'NoExecute'>()),
  key: Opt(Str()),
  operator: Opt(KnownString<'Exists' | 'Equal'>()),
  tolerationSeconds: Opt(Int64()),
  value: Opt(Str()),
});
export type Toleration = Static<typeof Toleration>;

export const NodeSelectorRequirement = Type.Object({
  key: Str(),
  operator: KnownString<'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt'>(),
  values: Opt(StringList()),
});

export const NodeSelectorTerm = Type.Object(
  {
    matchExpressions: Opt(Type.Array(NodeSelectorRequirement)),
    matchFields: Opt(Type.Array(NodeSelectorRequirement)),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type NodeSelectorTerm = Static<typeof NodeSelectorTerm>;

export const PreferredSchedulingTerm = Type.Object({
  preference: NodeSelectorTerm,
  weight: Int32(),
});
export type PreferredSchedulingTerm = Static<typeof PreferredSchedulingTerm>;

export const ExecAction = Type.Object({ command: Opt(StringList()) });

export const HTTPGetAction = Type.Object({
  host: Opt(Str()),
  httpHeaders: Opt(Type.Array(Type.Object({ name: Str(), value: Str() }))),
  path: Opt(Str()),
  port: IntOrString(),
  scheme: Opt(KnownString<'HTTP' | 'HTTPS'>()),
});

export const TCPSocketAction = Type.Object({ host: Opt(Str()), port: IntOrString() });

export const GRPCAction = Type.Object({ port: Int32(), service: Opt(Str({ default: '' })) });

export const Probe = Type.Object({
  exec: Opt(ExecAction),
  failureThreshold: Opt(Int32()),
  grpc: Opt(GRPCAction),
  httpGet: Opt(HTTPGetAction),
  initialDelaySeconds: Opt(Int32()),
  periodSeconds: Opt(Int32()),
  successThreshold: Opt(Int32()),
  tcpSocket: Opt(TCPSocketAction),
  terminationGracePeriodSeconds: Opt(Int64()),
  timeoutSeconds: Opt(Int32()),
});
export type Probe = Static<typeof Probe>;

export const ContainerPort = Type.Object({
  containerPort: Int32(),
  hostIP: Opt(Str()),
  hostPort: Opt(Int32()),
  name: Opt(Str()),
  protocol: Opt(KnownString<'TCP' | 'UDP' | 'SCTP'>({ default: 'TCP' })),
});
export type ContainerPort = Static<typeof ContainerPort>;

// ---------------------------------------------------------------------------------------------
// core/v1, TS shapes of schemaless fields (never emitted into a CRD)

export const ResourceRequirements = Type.Object({
  limits: Opt(MapOf(Quantity())),
  requests: Opt(MapOf(Quantity())),
  claims: Opt(Type.Array(Loose())),
});
export type ResourceRequirements = Static<typeof ResourceRequirements>;

export const EnvVar = Type.Object({
  name: Str(),
  value: Opt(Str()),
  valueFrom: Opt(
    Type.Object({
      fieldRef: Opt(ObjectFieldSelector),
      resourceFieldRef: Opt(Loose()),
      configMapKeyRef: Opt(Type.Object({ name: Opt(Str()), key: Str(), optional: Opt(Bool()) })),
      secretKeyRef: Opt(Type.Object({ name: Opt(Str()), key: Str(), optional: Opt(Bool()) })),
    }),
  ),
});
export type EnvVar = Static<typeof EnvVar>;

export const VolumeMount = Type.Object({
  name: Str(),
  mountPath: Str(),
  readOnly: Opt(Bool()),
  subPath: Opt(Str()),
  subPathExpr: Opt(Str()),
  mountPropagation: Opt(Str()),
  recursiveReadOnly: Opt(Str()),
});
export type VolumeMount = Static<typeof VolumeMount>;

export const LifecycleHandler = Type.Object({
  exec: Opt(ExecAction),
  httpGet: Opt(HTTPGetAction),
  tcpSocket: Opt(TCPSocketAction),
  sleep: Opt(Type.Object({ seconds: Int64() })),
});

const containerFields = {
  name: Str(),
  image: Opt(Str()),
  imagePullPolicy: Opt(KnownString<'Always' | 'IfNotPresent' | 'Never'>()),
  command: Opt(StringList()),
  args: Opt(StringList()),
  workingDir: Opt(Str()),
  ports: Opt(Type.Array(ContainerPort)),
  env: Opt(Type.Array(EnvVar)),
  envFrom: Opt(Type.Array(Loose())),
  resources: Opt(ResourceRequirements),
  resizePolicy: Opt(Type.Array(Loose())),
  restartPolicy: Opt(Str()),
  volumeMounts: Opt(Type.Array(VolumeMount)),
  volumeDevices: Opt(Type.Array(Type.Object({ name: Str(), devicePath: Str() }))),
  livenessProbe: Opt(Probe),
  readinessProbe: Opt(Probe),
  startupProbe: Opt(Probe),
  lifecycle: Opt(Type.Object({ postStart: Opt(LifecycleHandler), preStop: Opt(LifecycleHandler) })),
  terminationMessagePath: Opt(Str()),
  terminationMessagePolicy: Opt(Str()),
  securityContext: Opt(Loose()),
  stdin: Opt(Bool()),
  stdinOnce: Opt(Bool()),
  tty: Opt(Bool()),
};

export const Container = Type.Object(containerFields);
export type Container = Static<typeof Container>;

export const EphemeralContainer = Type.Object({ ...containerFields, targetContainerName: Opt(Str()) });
export type EphemeralContainer = Static<typeof EphemeralContainer>;

export const Volume = Type.Object({
  name: Str(),
  emptyDir: Opt(Loose()),
  hostPath: Opt(Loose()),
  configMap: Opt(Loose()),
  secret: Opt(Loose()),
  persistentVolumeClaim: Opt(Type.Object({ claimName: Str(), readOnly: Opt(Bool()) })),
  projected: Opt(Loose()),
  downwardAPI: Opt(Loose()),
});
export type Volume = Static<typeof Volume>;

export const Affinity = Type.Object({
  nodeAffinity: Opt(
    Type.Object({
      requiredDuringSchedulingIgnoredDuringExecution: Opt(Type.Object({ nodeSelectorTerms: Type.Array(NodeSelectorTerm) })),
      preferredDuringSchedulingIgnoredDuringExecution: Opt(Type.Array(PreferredSchedulingTerm)),
    }),
  ),
  podAffinity: Opt(Loose()),
  podAntiAffinity: Opt(Loose()),
});
export type Affinity = Static<typeof Affinity>;

export const PodSpec = Type.Object({
  containers: Type.Array(Container),
  initContainers: Opt(Type.Array(Container)),
  ephemeralContainers: Opt(Type.Array(EphemeralContainer)),
  volumes: Opt(Type.Array(Volume)),
  restartPolicy: Opt(KnownString<'Always' | 'OnFailure' | 'Never'>()),
  terminationGracePeriodSeconds: Opt(Int64()),
  activeDeadlineSeconds: Opt(Int64()),
  dnsPolicy: Opt(Str()),
  nodeSelector: Opt(StringMap()),
  serviceAccountName: Opt(Str()),
  automountServiceAccountToken: Opt(Bool()),
  nodeName: Opt(Str()),
  hostNetwork: Opt(Bool()),
  hostPID: Opt(Bool()),
  hostIPC: Opt(Bool()),
  securityContext: Opt(Loose()),
  imagePullSecrets: Opt(Type.Array(LocalObjectReference)),
  hostname: Opt(Str()),
  subdomain: Opt(Str()),
  affinity: Opt(Affinity),
  schedulerName: Opt(Str()),
  tolerations: Opt(Type.Array(Toleration)),
  priorityClassName: Opt(Str()),
  priority: Opt(Int32()),
  readinessGates: Opt(Type.Array(Type.Object({ conditionType: Str() }))),
  runtimeClassName: Opt(Str()),
  enableServiceLinks: Opt(Bool()),
  topologySpreadConstraints: Opt(Type.Array(Loose())),
});
export type PodSpec = Static<typeof PodSpec>;

export const PodTemplateSpec = Type.Object({ metadata: Opt(ObjectMeta), spec: Opt(PodSpec) });
export type PodTemplateSpec = Static<typeof PodTemplateSpec>;

export const PersistentVolumeClaim = Type.Object({
  apiVersion: Opt(Str()),
  kind: Opt(Str()),
  metadata: Opt(ObjectMeta),
  spec: Opt(
    Type.Object({
      accessModes: Opt(StringList()),
      resources: Opt(ResourceRequirements),
      storageClassName: Opt(Str()),
      volumeMode: Opt(Str()),
      volumeName: Opt(Str()),
      selector: Opt(LabelSelector),
      dataSource: Opt(Loose()),
    }),
  ),
  status: Opt(Type.Object({ phase: Opt(Str()), capacity: Opt(MapOf(Quantity())), conditions: Opt(Type.Array(Loose())) })),
});
export type PersistentVolumeClaim = Static<typeof PersistentVolumeClaim>;

export const JobTemplateSpec = Type.Object({
  metadata: Opt(ObjectMeta),
  spec: Opt(
    Type.Object({
      template: PodTemplateSpec,
      parallelism: Opt(Int32()),
      completions: Opt(Int32()),
      backoffLimit: Opt(Int32()),
      activeDeadlineSeconds: Opt(Int64()),
      ttlSecondsAfterFinished: Opt(Int32()),
      selector: Opt(LabelSelector),
      manualSelector: Opt(Bool()),
      suspend: Opt(Bool()),
    }),
  ),
});
export type JobTemplateSpec = Static<typeof JobTemplateSpec>;
