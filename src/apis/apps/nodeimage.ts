// NodeImage (apps.kruise.io, cluster scoped, one per Node with the Node's name): images to pull on
// that node and their pull status. v1alpha1 and v1beta1 share one schema.

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Int32,
  Int64,
  KnownString,
  KubeObject,
  MapOf,
  ObjectReference,
  Opt,
  Str,
  Time,
  defineKind,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { SandboxConfig } from './pub.ts';

export const ImageTagSpec = Type.Object({
  tag: Str(),
  createdAt: Opt(Time()),
  pullPolicy: Opt(
    Type.Object({
      timeoutSeconds: Opt(Int32({ description: 'Defaults to 600.' })),
      backoffLimit: Opt(Int32({ description: 'Defaults to 3.' })),
      ttlSecondsAfterFinished: Opt(Int32()),
      activeDeadlineSeconds: Opt(Int64()),
    }),
  ),
  ownerReferences: Opt(Type.Array(ObjectReference)),
  version: Opt(Int64({ description: 'Internal version of this tag, bumped when owners change.' })),
  imagePullPolicy: Opt(KnownString<'Always' | 'IfNotPresent'>()),
});
export type ImageTagSpec = Static<typeof ImageTagSpec>;

export const ImageSpec = Type.Object({
  pullSecrets: Opt(Type.Array(Type.Object({ namespace: Opt(Str()), name: Opt(Str()), mode: Opt(KnownString<'batch'>()) }))),
  tags: Type.Array(ImageTagSpec),
  sandboxConfig: Opt(SandboxConfig),
});
export type ImageSpec = Static<typeof ImageSpec>;

export const NodeImageSpec = Type.Object({
  images: Opt(MapOf(ImageSpec, { description: 'Images to pull on this node, by image name (at most 256).' })),
});
export type NodeImageSpec = Static<typeof NodeImageSpec>;

export const ImageTagStatus = Type.Object({
  tag: Str(),
  phase: KnownString<'Waiting' | 'Pulling' | 'Succeeded' | 'Failed'>(),
  progress: Opt(Int32({ description: 'Pulling progress, 0-100.' })),
  startTime: Opt(Time()),
  completionTime: Opt(Time()),
  version: Opt(Int64()),
  imageID: Opt(Str()),
  message: Opt(Str()),
});
export type ImageTagStatus = Static<typeof ImageTagStatus>;

export const NodeImageStatus = Type.Object({
  desired: Int32(),
  succeeded: Opt(Int32()),
  failed: Opt(Int32()),
  pulling: Opt(Int32()),
  waiting: Opt(Int32()),
  imageStatuses: Opt(MapOf(Type.Object({ tags: Type.Array(ImageTagStatus) }))),
  firstSyncStatus: Opt(
    Type.Object({
      syncAt: Opt(Time()),
      status: Opt(KnownString<'Succeeded' | 'Failed'>()),
      message: Opt(Str()),
    }),
  ),
});
export type NodeImageStatus = Static<typeof NodeImageStatus>;

export const NodeImage = KubeObject('NodeImage is the Schema for the nodeimages API', NodeImageSpec, NodeImageStatus);
export type NodeImage = Static<typeof NodeImage>;

const printerColumns: PrinterColumn[] = [
  { name: 'DESIRED', type: 'integer', jsonPath: '.status.desired', description: 'Number of all images on this node' },
  { name: 'PULLING', type: 'integer', jsonPath: '.status.pulling', description: 'Number of image pull task active' },
  { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded', description: 'Number of image pull task succeeded' },
  { name: 'FAILED', type: 'integer', jsonPath: '.status.failed', description: 'Number of image pull tasks failed' },
  AGE_COLUMN,
];

export const nodeImageKind = defineKind({
  group: APPS_GROUP,
  kind: 'NodeImage',
  plural: 'nodeimages',
  scope: 'Cluster',
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: NodeImage, printerColumns },
    { name: 'v1beta1', schema: NodeImage, printerColumns },
  ],
});
