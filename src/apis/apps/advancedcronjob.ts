// AdvancedCronJob (apps.kruise.io): creates a Job, BroadcastJob or ImageListPullJob on a cron
// schedule. v1alpha1 and v1beta1 share one schema.

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Bool,
  Int32,
  Int64,
  JobTemplate,
  KnownString,
  KubeObject,
  ObjectReference,
  Opt,
  Str,
  StringEnum,
  TemplateMetadata,
  Time,
  defineKind,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { BroadcastJobSpec } from './broadcastjob.ts';
import { CompletionPolicy } from './pub.ts';
import { ImageListPullJobSpec } from './imagelistpulljob.ts';

export const AdvancedCronJobSpec = Type.Object({
  schedule: Str({ minLength: 0, description: 'The schedule in Cron format.' }),
  timeZone: Opt(Str({ description: 'Time zone name for the schedule; defaults to the manager time zone.' })),
  startingDeadlineSeconds: Opt(Int64()),
  concurrencyPolicy: Opt(StringEnum(['Allow', 'Forbid', 'Replace'], { description: 'Default is Allow.' })),
  paused: Opt(Bool()),
  successfulJobsHistoryLimit: Opt(Int32()),
  failedJobsHistoryLimit: Opt(Int32()),
  template: Type.Object(
    {
      jobTemplate: Opt(JobTemplate({ description: 'Job created on schedule.' })),
      broadcastJobTemplate: Opt(Type.Object({ metadata: Opt(TemplateMetadata()), spec: Opt(BroadcastJobSpec) })),
      imageListPullJobTemplate: Opt(
        Type.Object({
          metadata: Opt(TemplateMetadata()),
          // completionPolicy is left to the defaulting webhook here: upstream examples omit it.
          spec: Opt(Type.Object({ ...ImageListPullJobSpec.properties, completionPolicy: Opt(CompletionPolicy) })),
        }),
      ),
    },
    { description: 'Exactly one of the templates.' },
  ),
});
export type AdvancedCronJobSpec = Static<typeof AdvancedCronJobSpec>;

export const AdvancedCronJobStatus = Type.Object({
  type: Opt(KnownString<'Job' | 'BroadcastJob' | 'ImageListPullJob'>()),
  active: Opt(Type.Array(ObjectReference)),
  lastScheduleTime: Opt(Time()),
});
export type AdvancedCronJobStatus = Static<typeof AdvancedCronJobStatus>;

export const AdvancedCronJob = KubeObject(
  'AdvancedCronJob is the Schema for the advancedcronjobs API',
  AdvancedCronJobSpec,
  AdvancedCronJobStatus,
);
export type AdvancedCronJob = Static<typeof AdvancedCronJob>;

const printerColumns: PrinterColumn[] = [
  { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', description: 'The schedule of advanced cron job.' },
  { name: 'Type', type: 'string', jsonPath: '.status.type', description: 'Type of cron job.' },
  {
    name: 'LastScheduleTime',
    type: 'date',
    jsonPath: '.status.lastScheduleTime',
    description: 'The last time at which job was scheduled.',
  },
  AGE_COLUMN,
];

export const advancedCronJobKind = defineKind({
  group: APPS_GROUP,
  kind: 'AdvancedCronJob',
  plural: 'advancedcronjobs',
  scope: 'Namespaced',
  shortNames: ['acj'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: AdvancedCronJob, printerColumns },
    { name: 'v1beta1', schema: AdvancedCronJob, printerColumns },
  ],
});
