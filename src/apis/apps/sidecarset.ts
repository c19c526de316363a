// SidecarSet (apps.kruise.io, cluster scoped): v1beta1 drops spec.namespace (expressed as a
// namespaceSelector) and adds spec.customVersion (v1alpha1 keeps it in a label).

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Bool,
  DecodedAs,
  Int32,
  Int64,
  IntOrString,
  KnownString,
  KubeObject,
  LabelSelector,
  LocalObjectReference,
  ObjectFieldSelector,
  Opt,
  Schemaless,
  Str,
  StringEnum,
  StringList,
  StringMap,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { Container, Volume } from '../core.ts';
import { APPS_GROUP } from '../constants.ts';
import { UpdatePriorityStrategy, UpdateScatterStrategy } from './pub.ts';

const resourceExprs = Type.Object({ cpu: Opt(Str()), memory: Opt(Str()) });

const sidecarFields = Type.Object({
  podInjectPolicy: Opt(
    KnownString<'BeforeAppContainer' | 'AfterAppContainer'>({
      description: 'Where the container is injected into pod.spec.containers; default BeforeAppContainer.',
    }),
  ),
  upgradeStrategy: Opt(
    Type.Object({
      upgradeType: Opt(KnownString<'ColdUpgrade' | 'HotUpgrade'>({ description: 'Default is ColdUpgrade.' })),
      hotUpgradeEmptyImage: Opt(Str()),
    }),
  ),
  shareVolumePolicy: Opt(Type.Object({ type: Opt(KnownString<'enabled' | 'disabled'>()) })),
  shareVolumeDevicePolicy: Opt(Type.Object({ type: Opt(KnownString<'enabled' | 'disabled'>()) })),
  transferEnv: Opt(
    Type.Array(
      Type.Object({
        sourceContainerName: Opt(Str()),
        sourceContainerNameFrom: Opt(Type.Object({ fieldRef: Opt(ObjectFieldSelector) })),
        envName: Opt(Str()),
        envNames: Opt(StringList()),
      }),
    ),
  ),
  resourcesPolicy: Opt(
    Type.Object({
      targetContainersMode: Opt(KnownString<'sum' | 'max'>()),
      targetContainersNameRegex: Opt(Str({ default: '.*' })),
      resourcesExpr: Opt(Type.Object({ limits: Opt(resourceExprs), requests: Opt(resourceExprs) })),
    }),
  ),
});

// The container part is schemaless upstream (only the sidecar fields are typed), so the CRD
// keeps every container field verbatim while TS sees a full Container.
const SidecarContainer = Type.Unsafe<Container & Static<typeof sidecarFields>>({
  ...sidecarFields,
  description: 'SidecarContainer defines the container of Sidecar',
  'x-kubernetes-preserve-unknown-fields': true,
  [DecodedAs]: Type.Object({ ...Container.properties, ...sidecarFields.properties }),
});
export type SidecarContainer = Static<typeof SidecarContainer>;

const commonSpec = {
  selector: Opt(describe(LabelSelector, 'Label query over pods that should be injected.')),
  namespaceSelector: Opt(describe(LabelSelector, 'Namespaces whose pods are injected; empty matches all.')),
  initContainers: Opt(Type.Array(SidecarContainer)),
  containers: Opt(Type.Array(SidecarContainer)),
  volumes: Opt(Schemaless<Volume[]>({ description: 'Volumes that can be mounted by sidecar containers.' }, Type.Array(Volume))),
  updateStrategy: Opt(
    Type.Object({
      type: Opt(KnownString<'RollingUpdate' | 'NotUpdate'>({ description: 'Default is RollingUpdate.' })),
      paused: Opt(Bool()),
      selector: Opt(describe(LabelSelector, 'Only pods matching it are upgraded.')),
      partition: Opt(IntOrString()),
      maxUnavailable: Opt(IntOrString({ description: 'Defaults to 1.' })),
      priorityStrategy: Opt(UpdatePriorityStrategy),
      scatterStrategy: Opt(UpdateScatterStrategy),
    }),
  ),
  injectionStrategy: Opt(
    Type.Object({
      paused: Opt(Bool()),
      revision: Opt(
        Type.Object({
          customVersion: Opt(Str()),
          revisionName: Opt(Str()),
          policy: Opt(StringEnum(['Always', 'Partial'], { default: 'Always' })),
        }),
      ),
    }),
  ),
  imagePullSecrets: Opt(Type.Array(LocalObjectReference)),
  revisionHistoryLimit: Opt(Int32()),
  patchPodMetadata: Opt(
    Type.Array(
      Type.Object({
        annotations: Opt(StringMap()),
        patchPolicy: Opt(KnownString<'Retain' | 'Overwrite' | 'MergePatchJson'>({ description: 'Default is Retain.' })),
      }),
    ),
  ),
};

export const SidecarSetStatus = Type.Object({
  observedGeneration: Opt(Int64()),
  matchedPods: Int32(),
  updatedPods: Int32(),
  readyPods: Int32(),
  updatedReadyPods: Opt(Int32()),
  latestRevision: Opt(Str()),
  collisionCount: Opt(Int32()),
});
export type SidecarSetStatus = Static<typeof SidecarSetStatus>;

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const SidecarSetSpec = Type.Object({
  ...commonSpec,
  customVersion: Opt(Str({ description: 'Labels the ControllerRevisions of this SidecarSet.' })),
});
export type SidecarSetSpec = Static<typeof SidecarSetSpec>;

export const SidecarSet = KubeObject('SidecarSet is the Schema for the sidecarsets API', SidecarSetSpec, SidecarSetStatus);
export type SidecarSet = Static<typeof SidecarSet>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const SidecarSetSpecV1alpha1 = Type.Object({
  ...commonSpec,
  namespace: Opt(Str({ description: 'Only pods in this namespace are matched.' })),
});
export type SidecarSetSpecV1alpha1 = Static<typeof SidecarSetSpecV1alpha1>;

export const SidecarSetV1alpha1 = KubeObject('SidecarSet is the Schema for the sidecarsets API', SidecarSetSpecV1alpha1, SidecarSetStatus);
export type SidecarSetV1alpha1 = Static<typeof SidecarSetV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  { name: 'MATCHED', type: 'integer', jsonPath: '.status.matchedPods', description: 'The number of pods matched.' },
  {
    name: 'UPDATED',
    type: 'integer',
    jsonPath: '.status.updatedPods',
    description: 'The number of pods matched and updated.',
  },
  { name: 'READY', type: 'integer', jsonPath: '.status.readyPods', description: 'The number of pods matched and ready.' },
  AGE_COLUMN,
];

export const sidecarSetKind = defineKind({
  group: APPS_GROUP,
  kind: 'SidecarSet',
  plural: 'sidecarsets',
  scope: 'Cluster',
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: SidecarSetV1alpha1, printerColumns },
    { name: 'v1beta1', schema: SidecarSet, printerColumns },
  ],
});
