// CloneSet (apps.kruise.io): v1alpha1 and v1beta1 differ in scaleStrategy (disablePVCReuse vs
// enablePVCReuse/excludePreparingDelete) and updateStrategy (flat vs type + rollingUpdate).

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
  StringList,
  Time,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy, UpdateScatterStrategy, type PodUpdatePolicy } from './pub.ts';

const commonSpec = {
  replicas: Opt(Int32({ description: 'Desired number of replicas; defaults to 1.' })),
  selector: describe(LabelSelector, "Label query over pods; must match the template's labels."),
  template: PodTemplate({ description: 'Template describes the pods that will be created.' }),
  volumeClaimTemplates: Opt(
    PersistentVolumeClaimTemplates({
      description: 'Claims created per pod; a PVC is deleted when its pod is deleted.',
    }),
  ),
  revisionHistoryLimit: Opt(Int32({ description: 'Maximum number of revisions kept; defaults to 10.' })),
  minReadySeconds: Opt(Int32()),
  lifecycle: Opt(Lifecycle),
  progressDeadlineSeconds: Opt(Int32({ description: 'Seconds before a rollout is considered to have failed to progress.' })),
};

const rolloutFields = {
  partition: Opt(IntOrString({ description: 'Desired number or percent of pods kept at old revisions.' })),
  maxUnavailable: Opt(IntOrString({ description: 'Defaults to 20%.' })),
  maxSurge: Opt(IntOrString({ description: 'Defaults to 0.' })),
  paused: Opt(Bool()),
  priorityStrategy: Opt(UpdatePriorityStrategy),
  scatterStrategy: Opt(UpdateScatterStrategy),
  inPlaceUpdateStrategy: Opt(InPlaceUpdateStrategy),
};

const CloneSetCondition = KruiseCondition(KnownString<'FailedScale' | 'FailedUpdate' | 'Progressing'>(), {
  lastUpdateTime: Opt(Time()),
});

export const CloneSetStatus = Type.Object({
  observedGeneration: Opt(Int64()),
  replicas: Int32(),
  readyReplicas: Int32(),
  availableReplicas: Int32(),
  updatedReplicas: Int32(),
  updatedReadyReplicas: Int32(),
  updatedAvailableReplicas: Opt(Int32()),
  expectedUpdatedReplicas: Opt(Int32()),
  updateRevision: Opt(Str()),
  currentRevision: Opt(Str()),
  collisionCount: Opt(Int32()),
  conditions: Opt(Type.Array(CloneSetCondition)),
  labelSelector: Opt(Str({ description: 'Serialized selector, used by HPA through the scale subresource.' })),
});
export type CloneSetStatus = Static<typeof CloneSetStatus>;

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const CloneSetSpec = Type.Object({
  ...commonSpec,
  scaleStrategy: Opt(
    Type.Object({
      podsToDelete: Opt(StringList()),
      maxUnavailable: Opt(IntOrString()),
      enablePVCReuse: Opt(Bool({ default: false, description: 'Reuse the PVCs of a deleted pod for its replacement.' })),
      excludePreparingDelete: Opt(Bool()),
    }),
  ),
  updateStrategy: Opt(
    Type.Object({
      type: Opt(KnownString<'RollingUpdate' | 'OnDelete'>({ description: 'Default is RollingUpdate.' })),
      rollingUpdate: Opt(
        Type.Object({
          ...rolloutFields,
          podUpdatePolicy: Opt(KnownString<PodUpdatePolicy>({ description: 'Default is ReCreate.' })),
        }),
      ),
    }),
  ),
});
export type CloneSetSpec = Static<typeof CloneSetSpec>;

export const CloneSet = KubeObject('CloneSet is the Schema for the clonesets API', CloneSetSpec, CloneSetStatus);
export type CloneSet = Static<typeof CloneSet>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const CloneSetSpecV1alpha1 = Type.Object({
  ...commonSpec,
  scaleStrategy: Opt(
    Type.Object({
      podsToDelete: Opt(StringList()),
      maxUnavailable: Opt(IntOrString()),
      disablePVCReuse: Opt(Bool()),
    }),
  ),
  updateStrategy: Opt(
    Type.Object({
      type: Opt(KnownString<PodUpdatePolicy | 'OnDelete'>({ description: 'Default is ReCreate.' })),
      ...rolloutFields,
    }),
  ),
});
export type CloneSetSpecV1alpha1 = Static<typeof CloneSetSpecV1alpha1>;

export const CloneSetV1alpha1 = KubeObject('CloneSet is the Schema for the clonesets API', CloneSetSpecV1alpha1, CloneSetStatus);
export type CloneSetV1alpha1 = Static<typeof CloneSetV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  { name: 'DESIRED', type: 'integer', jsonPath: '.spec.replicas', description: 'The desired number of pods.' },
  { name: 'UPDATED', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'The number of pods updated.' },
  {
    name: 'UPDATED_READY',
    type: 'integer',
    jsonPath: '.status.updatedReadyReplicas',
    description: 'The number of pods updated and ready.',
  },
  {
    name: 'UPDATED_AVAILABLE',
    type: 'integer',
    jsonPath: '.status.updatedAvailableReplicas',
    description: 'The number of pods updated and available.',
  },
  { name: 'READY', type: 'integer', jsonPath: '.status.readyReplicas', description: 'The number of pods ready.' },
  { name: 'TOTAL', type: 'integer', jsonPath: '.status.replicas', description: 'The number of currently all pods.' },
  AGE_COLUMN,
  {
    name: 'CONTAINERS',
    type: 'string',
    priority: 1,
    jsonPath: '.spec.template.spec.containers[*].name',
    description: 'The containers of currently cloneset.',
  },
  {
    name: 'IMAGES',
    type: 'string',
    priority: 1,
    jsonPath: '.spec.template.spec.containers[*].image',
    description: 'The images of currently cloneset.',
  },
  {
    name: 'SELECTOR',
    type: 'string',
    priority: 1,
    jsonPath: '.status.labelSelector',
    description: 'The selector of currently cloneset.',
  },
];

export const cloneSetKind = defineKind({
  group: APPS_GROUP,
  kind: 'CloneSet',
  plural: 'clonesets',
  scope: 'Namespaced',
  shortNames: ['clone'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: CloneSetV1alpha1, printerColumns, scale: REPLICAS_SCALE },
    { name: 'v1beta1', schema: CloneSet, printerColumns, scale: REPLICAS_SCALE },
  ],
});
