// Advanced StatefulSet (apps.kruise.io StatefulSet): v1beta1 adds reserveOrdinals, lifecycle,
// scaleStrategy, persistentVolumeClaimRetentionPolicy, ordinals, volumeClaimUpdateStrategy and
// status.volumeClaims to the v1alpha1 shape.

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Bool,
  Int32,
  Int64,
  IntOrString,
  KnownString,
  KruiseCondition,
  KubeObject,
  LabelSelector,
  Opt,
  PersistentVolumeClaimTemplates,
  PodTemplate,
  REPLICAS_SCALE,
  Str,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy, type PodUpdatePolicy } from './pub.ts';

const updateStrategy = Type.Object({
  type: Opt(KnownString<'RollingUpdate' | 'OnDelete'>({ description: 'Default is RollingUpdate.' })),
  rollingUpdate: Opt(
    Type.Object({
      partition: Opt(Int32({ description: 'Number of pods kept at the current revision.' })),
      maxUnavailable: Opt(IntOrString({ description: 'Pods that may be unavailable during the update (Parallel only); defaults to 1.' })),
      podUpdatePolicy: Opt(KnownString<PodUpdatePolicy>({ description: 'Default is ReCreate.' })),
      paused: Opt(Bool()),
      unorderedUpdate: Opt(Type.Object({ priorityStrategy: Opt(UpdatePriorityStrategy) })),
      inPlaceUpdateStrategy: Opt(InPlaceUpdateStrategy),
      minReadySeconds: Opt(Int32({ description: 'Seconds an updated pod must be ready; 0..300.' })),
    }),
  ),
});

const commonSpec = {
  replicas: Opt(Int32({ description: 'Desired number of replicas; defaults to 1.' })),
  selector: describe(LabelSelector, "Label query over pods; must match the template's labels."),
  template: PodTemplate({ description: 'Template of the pods created for missing replicas.' }),
  volumeClaimTemplates: Opt(PersistentVolumeClaimTemplates()),
  serviceName: Opt(Str()),
  podManagementPolicy: Opt(KnownString<'OrderedReady' | 'Parallel'>({ description: 'Default is OrderedReady.' })),
  updateStrategy: Opt(updateStrategy),
  revisionHistoryLimit: Opt(Int32()),
};

const StatefulSetCondition = KruiseCondition(KnownString<'FailedCreatePod' | 'FailedUpdatePod'>());

const commonStatus = {
  observedGeneration: Opt(Int64()),
  replicas: Int32(),
  readyReplicas: Int32(),
  availableReplicas: Int32(),
  currentReplicas: Int32(),
  updatedReplicas: Int32(),
  updatedReadyReplicas: Opt(Int32()),
  updatedAvailableReplicas: Opt(Int32()),
  currentRevision: Opt(Str()),
  updateRevision: Opt(Str()),
  collisionCount: Opt(Int32()),
  conditions: Opt(Type.Array(StatefulSetCondition)),
  labelSelector: Opt(Str()),
};

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const StatefulSetSpec = Type.Object({
  ...commonSpec,
  volumeClaimUpdateStrategy: Opt(Type.Object({ type: Opt(KnownString<'OnDelete' | 'OnPodRollingUpdate'>()) })),
  reserveOrdinals: Opt(Type.Array(IntOrString(), { description: "Ordinals to skip: integers or 'start-end' ranges." })),
  lifecycle: Opt(Lifecycle),
  scaleStrategy: Opt(Type.Object({ maxUnavailable: Opt(IntOrString()) })),
  persistentVolumeClaimRetentionPolicy: Opt(
    Type.Object({
      whenDeleted: Opt(KnownString<'Retain' | 'Delete'>()),
      whenScaled: Opt(KnownString<'Retain' | 'Delete'>()),
    }),
  ),
  ordinals: Opt(Type.Object({ start: Opt(Int32()) })),
});
export type StatefulSetSpec = Static<typeof StatefulSetSpec>;

export const StatefulSetStatus = Type.Object({
  ...commonStatus,
  volumeClaims: Opt(
    Type.Array(
      Type.Object({
        volumeClaimName: Str(),
        compatibleReplicas: Int32(),
        compatibleReadyReplicas: Int32(),
      }),
    ),
  ),
});
export type StatefulSetStatus = Static<typeof StatefulSetStatus>;

export const StatefulSet = KubeObject('StatefulSet is the Schema for the statefulsets API', StatefulSetSpec, StatefulSetStatus);
export type StatefulSet = Static<typeof StatefulSet>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const StatefulSetSpecV1alpha1 = Type.Object(commonSpec);
export type StatefulSetSpecV1alpha1 = Static<typeof StatefulSetSpecV1alpha1>;

export const StatefulSetStatusV1alpha1 = Type.Object({
  ...commonStatus,
  // Older v1alpha1 objects carry no availableReplicas.
  availableReplicas: Opt(Int32()),
});
export type StatefulSetStatusV1alpha1 = Static<typeof StatefulSetStatusV1alpha1>;

export const StatefulSetV1alpha1 = KubeObject(
  'StatefulSet is the Schema for the statefulsets API',
  StatefulSetSpecV1alpha1,
  StatefulSetStatusV1alpha1,
);
export type StatefulSetV1alpha1 = Static<typeof StatefulSetV1alpha1>;

// ---------------------------------------------------------------------------------------------

const alphaColumns: PrinterColumn[] = [
  { name: 'DESIRED', type: 'integer', jsonPath: '.spec.replicas', description: 'The desired number of pods.' },
  { name: 'CURRENT', type: 'integer', jsonPath: '.status.replicas', description: 'The number of currently all pods.' },
  { name: 'UPDATED', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'The number of pods updated.' },
  { name: 'READY', type: 'integer', jsonPath: '.status.readyReplicas', description: 'The number of pods ready.' },
  AGE_COLUMN,
];

const betaColumns: PrinterColumn[] = [
  ...alphaColumns,
  {
    name: 'CONTAINERS',
    type: 'string',
    priority: 1,
    jsonPath: '.spec.template.spec.containers[*].name',
    description: 'The containers of currently advanced statefulset.',
  },
  {
    name: 'IMAGES',
    type: 'string',
    priority: 1,
    jsonPath: '.spec.template.spec.containers[*].image',
    description: 'The images of currently advanced statefulset.',
  },
];

export const statefulSetKind = defineKind({
  group: APPS_GROUP,
  kind: 'StatefulSet',
  plural: 'statefulsets',
  scope: 'Namespaced',
  shortNames: ['sts', 'asts'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: StatefulSetV1alpha1, printerColumns: alphaColumns, scale: REPLICAS_SCALE },
    { name: 'v1beta1', schema: StatefulSet, printerColumns: betaColumns, scale: REPLICAS_SCALE },
  ],
});
