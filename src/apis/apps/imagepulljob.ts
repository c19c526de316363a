// ImagePullJob (apps.kruise.io): pulls one image on a set of nodes through their NodeImages.
// v1alpha1 and v1beta1 share one schema.

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Int32,
  IntOrString,
  KnownString,
  KubeObject,
  LabelSelectorRequirement,
  Opt,
  Str,
  StringList,
  StringMap,
  Time,
  defineKind,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { CompletionPolicy, SandboxConfig } from './pub.ts';

const labelSelectorFields = {
  matchExpressions: Opt(Type.Array(LabelSelectorRequirement)),
  matchLabels: Opt(StringMap()),
};

/** Fields shared by ImagePullJob and ImageListPullJob specs. */
export const imagePullJobTemplateFields = {
  pullSecrets: Opt(StringList({ description: 'Names of secrets in the job namespace used to pull the image.' })),
  selector: Opt(
    Type.Object(
      { names: Opt(StringList()), ...labelSelectorFields },
      { description: 'Nodes to pull on, by names or labels; unset means all nodes.' },
    ),
  ),
  podSelector: Opt(
    Type.Object(labelSelectorFields, {
      description: 'Pull on the nodes of pods matching this selector; exclusive with selector.',
    }),
  ),
  parallelism: Opt(IntOrString({ description: 'Nodes pulling at the same time; defaults to 1.' })),
  pullPolicy: Opt(
    Type.Object({
      timeoutSeconds: Opt(Int32({ description: 'Defaults to 600.' })),
      backoffLimit: Opt(Int32({ description: 'Defaults to 3.' })),
    }),
  ),
  completionPolicy: CompletionPolicy,
  sandboxConfig: Opt(SandboxConfig),
  imagePullPolicy: Opt(KnownString<'Always' | 'IfNotPresent'>({ description: 'Defaults to IfNotPresent.' })),
};

export const ImagePullJobSpec = Type.Object({
  image: Str({ description: 'Image to pull.' }),
  ...imagePullJobTemplateFields,
});
export type ImagePullJobSpec = Static<typeof ImagePullJobSpec>;

export const ImagePullJobStatus = Type.Object({
  startTime: Opt(Time()),
  completionTime: Opt(Time()),
  desired: Int32(),
  active: Opt(Int32()),
  succeeded: Opt(Int32()),
  failed: Opt(Int32()),
  message: Opt(Str()),
  failedNodes: Opt(StringList()),
});
export type ImagePullJobStatus = Static<typeof ImagePullJobStatus>;

export const ImagePullJob = KubeObject('ImagePullJob is the Schema for the imagepulljobs API', ImagePullJobSpec, ImagePullJobStatus);
export type ImagePullJob = Static<typeof ImagePullJob>;

const printerColumns: PrinterColumn[] = [
  { name: 'TOTAL', type: 'integer', jsonPath: '.status.desired', description: 'Number of all nodes matched by this job' },
  { name: 'ACTIVE', type: 'integer', jsonPath: '.status.active', description: 'Number of image pull task active' },
  { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded', description: 'Number of image pull task succeeded' },
  { name: 'FAILED', type: 'integer', jsonPath: '.status.failed', description: 'Number of image pull tasks failed' },
  AGE_COLUMN,
  { name: 'MESSAGE', type: 'string', jsonPath: '.status.message', description: 'Summary of status when job is failed' },
];

export const imagePullJobKind = defineKind({
  group: APPS_GROUP,
  kind: 'ImagePullJob',
  plural: 'imagepulljobs',
  scope: 'Namespaced',
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: ImagePullJob, printerColumns },
    { name: 'v1beta1', schema: ImagePullJob, printerColumns },
  ],
});
