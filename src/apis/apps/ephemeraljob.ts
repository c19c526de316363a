// EphemeralJob (apps.kruise.io/v1alpha1 only): injects ephemeral containers into matching pods.

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Bool,
  Int32,
  Int64,
  KnownString,
  KruiseCondition,
  KubeObject,
  LabelSelector,
  Opt,
  Schemaless,
  Time,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { EphemeralContainer } from '../core.ts';
import { APPS_GROUP } from '../constants.ts';

export const EphemeralJobSpec = Type.Object({
  selector: describe(LabelSelector, 'Pods in the namespace to inject into.'),
  replicas: Opt(Int32({ description: 'Maximum pods to inject; unset means all matched pods.' })),
  parallelism: Opt(Int32({ description: 'Pods injected at the same time.' })),
  template: Type.Object({
    ephemeralContainers: Schemaless<EphemeralContainer[]>(
      { description: 'Ephemeral containers to inject.' },
      Type.Array(EphemeralContainer),
    ),
  }),
  paused: Opt(Bool()),
  activeDeadlineSeconds: Opt(Int64()),
  ttlSecondsAfterFinished: Opt(Int32({ description: 'Defaults to 1800.' })),
});
export type EphemeralJobSpec = Static<typeof EphemeralJobSpec>;

export type EphemeralJobPhase = 'Waiting' | 'Running' | 'Succeeded' | 'Failed' | 'Paused' | 'Error' | 'Unknown';

export const EphemeralJobStatus = Type.Object({
  conditions: Opt(
    Type.Array(
      KruiseCondition(KnownString<'Initialized' | 'MatchedEmpty' | 'JobSucceeded' | 'JobFailed' | 'JobError'>(), {
        lastProbeTime: Opt(Time()),
      }),
    ),
  ),
  startTime: Opt(Time()),
  completionTime: Opt(Time()),
  phase: Opt(KnownString<EphemeralJobPhase>()),
  match: Opt(Int32()),
  running: Opt(Int32()),
  succeeded: Opt(Int32()),
  waiting: Opt(Int32()),
  failed: Opt(Int32()),
});
export type EphemeralJobStatus = Static<typeof EphemeralJobStatus>;

export const EphemeralJob = KubeObject('EphemeralJob is the Schema for the ephemeraljobs API', EphemeralJobSpec, EphemeralJobStatus);
export type EphemeralJob = Static<typeof EphemeralJob>;

const printerColumns: PrinterColumn[] = [
  { name: 'STATUS', type: 'string', jsonPath: '.status.phase', description: 'The status of ephemeral job' },
  {
    name: 'MATCH',
    type: 'integer',
    jsonPath: '.status.match',
    description: 'Number of ephemeral container matched by this job',
  },
  { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded', description: 'Number of succeed ephemeral containers' },
  { name: 'FAILED', type: 'integer', jsonPath: '.status.failed', description: 'Number of failed ephemeral containers' },
  { name: 'RUNNING', type: 'integer', jsonPath: '.status.running', description: 'Number of running ephemeral containers' },
  { name: 'WAITING', type: 'integer', jsonPath: '.status.waiting', description: 'Number of waiting ephemeral containers' },
  AGE_COLUMN,
];

export const ephemeralJobKind = defineKind({
  group: APPS_GROUP,
  kind: 'EphemeralJob',
  plural: 'ephemeraljobs',
  scope: 'Namespaced',
  shortNames: ['ejob'],
  hubVersion: 'v1alpha1',
  versions: [{ name: 'v1alpha1', schema: EphemeralJob, printerColumns }],
});
