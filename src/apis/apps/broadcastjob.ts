// BroadcastJob (apps.kruise.io): runs a pod to completion on every eligible node. v1alpha1 and
// v1beta1 share one schema.

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Bool,
  Int32,
  IntOrString,
  KnownString,
  KruiseCondition,
  KubeObject,
  Opt,
  PodTemplate,
  Time,
  defineKind,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { CompletionPolicy } from './pub.ts';

export const BroadcastJobSpec = Type.Object({
  parallelism: Opt(IntOrString({ description: 'Maximum number of pods running at any time; unset means no limit.' })),
  template: PodTemplate({ description: 'Template of the pod run on each node.' }),
  completionPolicy: Opt(CompletionPolicy),
  paused: Opt(Bool()),
  failurePolicy: Opt(
    Type.Object({
      type: Opt(KnownString<'FailFast' | 'Continue' | 'Pause'>({ description: 'Default is FailFast.' })),
      restartLimit: Opt(Int32()),
    }),
  ),
});
export type BroadcastJobSpec = Static<typeof BroadcastJobSpec>;

export const JobCondition = KruiseCondition(KnownString<'Complete' | 'Failed'>(), { lastProbeTime: Opt(Time()) });

export const BroadcastJobStatus = Type.Object({
  conditions: Opt(Type.Array(JobCondition)),
  startTime: Opt(Time()),
  completionTime: Opt(Time()),
  active: Opt(Int32()),
  succeeded: Opt(Int32()),
  failed: Opt(Int32()),
  desired: Opt(Int32()),
  phase: Opt(KnownString<'running' | 'paused' | 'completed' | 'failed'>()),
});
export type BroadcastJobStatus = Static<typeof BroadcastJobStatus>;

export const BroadcastJob = KubeObject('BroadcastJob is the Schema for the broadcastjobs API', BroadcastJobSpec, BroadcastJobStatus);
export type BroadcastJob = Static<typeof BroadcastJob>;

const printerColumns: PrinterColumn[] = [
  {
    name: 'Desired',
    type: 'integer',
    jsonPath: '.status.desired',
    description: 'The desired number of pods. This is typically equal to the number of nodes satisfied to run pods.',
  },
  { name: 'Active', type: 'integer', jsonPath: '.status.active', description: 'The number of actively running pods.' },
  {
    name: 'Succeeded',
    type: 'integer',
    jsonPath: '.status.succeeded',
    description: 'The number of pods which reached phase Succeeded.',
  },
  {
    name: 'Failed',
    type: 'integer',
    jsonPath: '.status.failed',
    description: 'The number of pods which reached phase Failed.',
  },
  AGE_COLUMN,
];

export const broadcastJobKind = defineKind({
  group: APPS_GROUP,
  kind: 'BroadcastJob',
  plural: 'broadcastjobs',
  scope: 'Namespaced',
  shortNames: ['bcj'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: BroadcastJob, printerColumns },
    { name: 'v1beta1', schema: BroadcastJob, printerColumns },
  ],
});
