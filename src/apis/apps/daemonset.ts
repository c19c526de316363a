// Advanced DaemonSet (apps.kruise.io DaemonSet): v1beta1 makes rollingUpdate.partition an
// int-or-percent, adds scaleStrategy.partitionedScaling and renames status.daemonSetHash to
// status.updateRevision.

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
  PodTemplate,
  Str,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { Lifecycle } from './pub.ts';

const rollingUpdateFields = {
  maxUnavailable: Opt(IntOrString({ description: 'Defaults to 1 when maxSurge is unset too.' })),
  maxSurge: Opt(IntOrString({ description: 'Defaults to 0.' })),
  selector: Opt(describe(LabelSelector, 'Only pods on nodes whose labels match are updated.')),
  paused: Opt(Bool()),
};

const commonSpec = {
  selector: describe(LabelSelector, "Label query over pods; must match the template's labels."),
  template: PodTemplate({ description: 'Template of the pod created on every eligible node.' }),
  minReadySeconds: Opt(Int32()),
  burstReplicas: Opt(IntOrString({ description: 'Maximum pods created per reconcile; defaults to 250.' })),
  revisionHistoryLimit: Opt(Int32()),
  lifecycle: Opt(Lifecycle),
};

const DaemonSetCondition = KruiseCondition(Str());

const commonStatus = {
  currentNumberScheduled: Int32(),
  numberMisscheduled: Int32(),
  desiredNumberScheduled: Int32(),
  numberReady: Int32(),
  observedGeneration: Opt(Int64()),
  updatedNumberScheduled: Int32(),
  numberAvailable: Opt(Int32()),
  numberUnavailable: Opt(Int32()),
  collisionCount: Opt(Int32()),
  conditions: Opt(Type.Array(DaemonSetCondition)),
};

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const DaemonSetSpec = Type.Object({
  ...commonSpec,
  updateStrategy: Opt(
    Type.Object({
      type: Opt(KnownString<'RollingUpdate' | 'OnDelete'>({ description: 'Default is RollingUpdate.' })),
      rollingUpdate: Opt(
        Type.Object({
          rollingUpdateType: Opt(KnownString<'Standard' | 'InPlaceIfPossible'>({ description: 'Default is Standard.' })),
          ...rollingUpdateFields,
          partition: Opt(IntOrString({ description: 'Number or percent of pods kept at the old revision.' })),
        }),
      ),
    }),
  ),
  scaleStrategy: Opt(Type.Object({ partitionedScaling: Opt(Bool()) })),
});
export type DaemonSetSpec = Static<typeof DaemonSetSpec>;

export const DaemonSetStatus = Type.Object({ ...commonStatus, updateRevision: Opt(Str()) });
export type DaemonSetStatus = Static<typeof DaemonSetStatus>;

export const DaemonSet = KubeObject('DaemonSet is the Schema for the daemonsets API', DaemonSetSpec, DaemonSetStatus);
export type DaemonSet = Static<typeof DaemonSet>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const DaemonSetSpecV1alpha1 = Type.Object({
  ...commonSpec,
  updateStrategy: Opt(
    Type.Object({
      type: Opt(KnownString<'RollingUpdate' | 'OnDelete'>()),
      rollingUpdate: Opt(
        Type.Object({
          rollingUpdateType: Opt(KnownString<'Standard' | 'InPlaceIfPossible' | 'Surging'>()),
          ...rollingUpdateFields,
          partition: Opt(Int32()),
        }),
      ),
    }),
  ),
});
export type DaemonSetSpecV1alpha1 = Static<typeof DaemonSetSpecV1alpha1>;

export const DaemonSetStatusV1alpha1 = Type.Object({ ...commonStatus, daemonSetHash: Str() });
export type DaemonSetStatusV1alpha1 = Static<typeof DaemonSetStatusV1alpha1>;

export const DaemonSetV1alpha1 = KubeObject(
  'DaemonSet is the Schema for the daemonsets API',
  DaemonSetSpecV1alpha1,
  DaemonSetStatusV1alpha1,
);
export type DaemonSetV1alpha1 = Static<typeof DaemonSetV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  {
    name: 'DESIRED',
    type: 'integer',
    jsonPath: '.status.desiredNumberScheduled',
    description: 'The desired number of pods.',
  },
  {
    name: 'CURRENT',
    type: 'integer',
    jsonPath: '.status.currentNumberScheduled',
    description: 'The current number of pods.',
  },
  { name: 'READY', type: 'integer', jsonPath: '.status.numberReady', description: 'The ready number of pods.' },
  {
    name: 'UP-TO-DATE',
    type: 'integer',
    jsonPath: '.status.updatedNumberScheduled',
    description: 'The updated number of pods.',
  },
  {
    name: 'AVAILABLE',
    type: 'integer',
    jsonPath: '.status.numberAvailable',
    description: 'The updated number of pods.',
  },
  AGE_COLUMN,
  {
    name: 'CONTAINERS',
    type: 'string',
    priority: 1,
    jsonPath: '.spec.template.spec.containers[*].name',
    description: 'The containers of currently  daemonset.',
  },
  {
    name: 'IMAGES',
    type: 'string',
    priority: 1,
    jsonPath: '.spec.template.spec.containers[*].image',
    description: 'The images of currently advanced daemonset.',
  },
];

export const daemonSetKind = defineKind({
  group: APPS_GROUP,
  kind: 'DaemonSet',
  plural: 'daemonsets',
  scope: 'Namespaced',
  shortNames: ['daemon', 'ads'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: DaemonSetV1alpha1, printerColumns },
    { name: 'v1beta1', schema: DaemonSet, printerColumns },
  ],
});
