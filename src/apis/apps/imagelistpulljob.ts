// ImageListPullJob (apps.kruise.io): one ImagePullJob per listed image. v1alpha1 and v1beta1
// share one schema.

import { Type, type Static } from '@sinclair/typebox';
import { AGE_COLUMN, Int32, KubeObject, Opt, Str, StringList, Time, defineKind, type PrinterColumn } from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { imagePullJobTemplateFields } from './imagepulljob.ts';

export const ImageListPullJobSpec = Type.Object({
  images: StringList({ description: 'Images to pull.' }),
  ...imagePullJobTemplateFields,
});
export type ImageListPullJobSpec = Static<typeof ImageListPullJobSpec>;

export const ImageListPullJobStatus = Type.Object({
  startTime: Opt(Time()),
  completionTime: Opt(Time()),
  desired: Int32(),
  active: Opt(Int32()),
  completed: Opt(Int32()),
  succeeded: Opt(Int32()),
  failedImageStatuses: Opt(Type.Array(Type.Object({ imagePullJob: Opt(Str()), name: Opt(Str()), message: Opt(Str()) }))),
});
export type ImageListPullJobStatus = Static<typeof ImageListPullJobStatus>;

export const ImageListPullJob = KubeObject(
  'ImageListPullJob is the Schema for the imagelistpulljobs API',
  ImageListPullJobSpec,
  ImageListPullJobStatus,
);
export type ImageListPullJob = Static<typeof ImageListPullJob>;

const printerColumns: PrinterColumn[] = [
  { name: 'TOTAL', type: 'integer', jsonPath: '.status.desired', description: 'Number of image pull job' },
  { name: 'SUCCEEDED', type: 'integer', jsonPath: '.status.succeeded', description: 'Number of image pull job succeeded' },
  {
    name: 'COMPLETED',
    type: 'integer',
    jsonPath: '.status.completed',
    description: 'Number of ImagePullJobs which are finished',
  },
  AGE_COLUMN,
];

export const imageListPullJobKind = defineKind({
  group: APPS_GROUP,
  kind: 'ImageListPullJob',
  plural: 'imagelistpulljobs',
  scope: 'Namespaced',
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: ImageListPullJob, printerColumns },
    { name: 'v1beta1', schema: ImageListPullJob, printerColumns },
  ],
});
