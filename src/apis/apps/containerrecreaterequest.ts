// ContainerRecreateRequest (apps.kruise.io): recreate containers of a running pod through
// kruise-daemon. v1beta1 adds status.containerStatusSnapshot and status.conditions, which
// v1alpha1 keeps in annotations.

import { Type, type Static } from '@sinclair/typebox';
import {
  AGE_COLUMN,
  Bool,
  ContainerPort,
  ExecAction,
  HTTPGetAction,
  Int32,
  Int64,
  KnownString,
  KubeObject,
  MetaCondition,
  Opt,
  Str,
  TCPSocketAction,
  Time,
  defineKind,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';

export type ContainerRecreateRequestPhase = 'Pending' | 'Recreating' | 'Succeeded' | 'Failed' | 'Completed';

export const ContainerRecreateRequestSpec = Type.Object({
  podName: Str({ description: 'Name of the pod that owns the containers.' }),
  containers: Type.Array(
    Type.Object({
      name: Str(),
      preStop: Opt(
        Type.Object(
          { exec: Opt(ExecAction), httpGet: Opt(HTTPGetAction), tcpSocket: Opt(TCPSocketAction) },
          { description: 'Copied from the pod at creation. Read-only.' },
        ),
      ),
      ports: Opt(Type.Array(ContainerPort, { description: 'Copied from the pod at creation. Read-only.' })),
      statusContext: Opt(
        Type.Object({ containerID: Str(), restartCount: Int32() }, { description: 'Container status at creation. Read-only.' }),
      ),
    }),
  ),
  strategy: Opt(
    Type.Object({
      failurePolicy: Opt(KnownString<'Fail' | 'Ignore'>({ description: 'Default is Fail.' })),
      orderedRecreate: Opt(Bool()),
      forceRecreate: Opt(Bool()),
      terminationGracePeriodSeconds: Opt(Int64()),
      unreadyGracePeriodSeconds: Opt(Int64()),
      minStartedSeconds: Opt(Int32()),
    }),
  ),
  activeDeadlineSeconds: Opt(Int64()),
  ttlSecondsAfterFinished: Opt(Int32()),
});
export type ContainerRecreateRequestSpec = Static<typeof ContainerRecreateRequestSpec>;

const commonStatus = {
  phase: KnownString<ContainerRecreateRequestPhase>(),
  completionTime: Opt(Time()),
  message: Opt(Str()),
  containerRecreateStates: Opt(
    Type.Array(
      Type.Object({
        name: Str(),
        phase: KnownString<ContainerRecreateRequestPhase>(),
        message: Opt(Str()),
        isKilled: Opt(Bool()),
      }),
    ),
  ),
};

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const ContainerRecreateRequestStatus = Type.Object({
  ...commonStatus,
  containerStatusSnapshot: Opt(Type.Array(Type.Object({ name: Str(), ready: Bool(), restartCount: Int32(), containerID: Opt(Str()) }))),
  conditions: Opt(Type.Array(MetaCondition)),
});
export type ContainerRecreateRequestStatus = Static<typeof ContainerRecreateRequestStatus>;

export const ContainerRecreateRequest = KubeObject(
  'ContainerRecreateRequest is the Schema for the containerrecreaterequests API',
  ContainerRecreateRequestSpec,
  ContainerRecreateRequestStatus,
);
export type ContainerRecreateRequest = Static<typeof ContainerRecreateRequest>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const ContainerRecreateRequestStatusV1alpha1 = Type.Object(commonStatus);
export type ContainerRecreateRequestStatusV1alpha1 = Static<typeof ContainerRecreateRequestStatusV1alpha1>;

export const ContainerRecreateRequestV1alpha1 = KubeObject(
  'ContainerRecreateRequest is the Schema for the containerrecreaterequests API',
  ContainerRecreateRequestSpec,
  ContainerRecreateRequestStatusV1alpha1,
);
export type ContainerRecreateRequestV1alpha1 = Static<typeof ContainerRecreateRequestV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  { name: 'PHASE', type: 'string', jsonPath: '.status.phase', description: 'Phase of this ContainerRecreateRequest.' },
  { name: 'POD', type: 'string', jsonPath: '.spec.podName', description: 'Pod name of this ContainerRecreateRequest.' },
  {
    name: 'NODE',
    type: 'string',
    jsonPath: '.metadata.labels.crr\\.apps\\.kruise\\.io/node-name',
    description: 'Pod name of this ContainerRecreateRequest.',
  },
  AGE_COLUMN,
];

export const containerRecreateRequestKind = defineKind({
  group: APPS_GROUP,
  kind: 'ContainerRecreateRequest',
  plural: 'containerrecreaterequests',
  scope: 'Namespaced',
  shortNames: ['crr'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: ContainerRecreateRequestV1alpha1, printerColumns },
    { name: 'v1beta1', schema: ContainerRecreateRequest, printerColumns },
  ],
});
