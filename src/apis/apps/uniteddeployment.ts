// UnitedDeployment (apps.kruise.io): one workload per topology subset. v1beta1 replaces
// status.subsetReplicas / status.updateStatus with status.updatedRevision and per-subset
// statuses; its cloneSetTemplate carries a v1beta1 CloneSet spec.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
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
  MapOf,
  NodeSelectorTerm,
  Opt,
  RawPatch,
  REPLICAS_SCALE,
  Schemaless,
  Str,
  TemplateMetadata,
  Time,
  Toleration,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { PersistentVolumeClaim, PodTemplateSpec } from '../core.ts';
import { APPS_GROUP } from '../constants.ts';
import { CloneSetSpec, CloneSetSpecV1alpha1 } from './cloneset.ts';
import { StatefulSetSpec } from './statefulset.ts';

type UpstreamSpec = Record<string, unknown>;

// The part of the apps/v1 StatefulSetSpec / DeploymentSpec the webhooks read, for their shape check.
const UpstreamSpecShape = Type.Object({
  replicas: Opt(Int32()),
  selector: Opt(LabelSelector),
  template: Opt(PodTemplateSpec),
  volumeClaimTemplates: Opt(Type.Array(PersistentVolumeClaim)),
  updateStrategy: Opt(
    Type.Object({
      type: Opt(Str()),
      rollingUpdate: Opt(Type.Object({ partition: Opt(Int32()), maxUnavailable: Opt(IntOrString()), maxSurge: Opt(IntOrString()) })),
    }),
  ),
});

function subsetTemplate<S extends TSchema>(cloneSetSpec: S) {
  return Type.Object({
    statefulSetTemplate: Opt(
      Type.Object({
        metadata: Opt(TemplateMetadata()),
        spec: Schemaless<UpstreamSpec>({ description: 'apps/v1 StatefulSetSpec.' }, UpstreamSpecShape),
      }),
    ),
    advancedStatefulSetTemplate: Opt(Type.Object({ metadata: Opt(TemplateMetadata()), spec: StatefulSetSpec })),
    cloneSetTemplate: Opt(Type.Object({ metadata: Opt(TemplateMetadata()), spec: cloneSetSpec })),
    deploymentTemplate: Opt(
      Type.Object({
        metadata: Opt(TemplateMetadata()),
        spec: Schemaless<UpstreamSpec>({ description: 'apps/v1 DeploymentSpec.' }, UpstreamSpecShape),
      }),
    ),
  });
}

const Subset = Type.Object({
  name: Str({ description: "DNS label; subset workloads are named '<ud>-<subset>-'." }),
  nodeSelectorTerm: Opt(NodeSelectorTerm),
  tolerations: Opt(Type.Array(Toleration)),
  replicas: Opt(IntOrString({ description: 'Replicas or percent of the total; unset subsets share the rest.' })),
  minReplicas: Opt(IntOrString()),
  maxReplicas: Opt(IntOrString()),
  patch: Opt(RawPatch({ description: 'Strategic merge patch applied to the subset pod template.' })),
});

const Topology = Type.Object({
  subsets: Opt(Type.Array(Subset)),
  scheduleStrategy: Opt(
    Type.Object({
      type: Opt(KnownString<'Fixed' | 'Adaptive'>({ description: 'Default is Fixed.' })),
      adaptive: Opt(
        Type.Object({
          rescheduleCriticalSeconds: Opt(Int32({ description: 'Defaults to 30.' })),
          unschedulableDuration: Opt(Int32({ description: 'Defaults to 300.' })),
          unschedulableLastSeconds: Opt(
            Int32({
              description:
                "OpenKruise v1.8's name for unschedulableDuration, accepted as a drop-in; unschedulableDuration wins when both are set.",
            }),
          ),
          reserveUnschedulablePods: Opt(Bool()),
        }),
      ),
    }),
  ),
});

const UpdateStrategy = Type.Object({
  type: Opt(KnownString<'Manual'>({ description: 'Default is Manual.' })),
  manualUpdate: Opt(Type.Object({ partitions: Opt(MapOf(Int32())) })),
});

function spec<S extends TSchema>(cloneSetSpec: S) {
  return Type.Object({
    replicas: Opt(Int32({ description: 'Total desired replicas of all subsets; defaults to 1.' })),
    selector: describe(LabelSelector, "Label query over pods; must match the template's labels."),
    template: Opt(subsetTemplate(cloneSetSpec)),
    topology: Opt(Topology),
    updateStrategy: Opt(UpdateStrategy),
    revisionHistoryLimit: Opt(Int32()),
  });
}

const UnitedDeploymentCondition = Type.Object({
  type: Opt(KnownString<'SubsetProvisioned' | 'SubsetUpdated' | 'SubsetFailure' | 'UnitedDeploymentUpdated'>()),
  status: Opt(Str()),
  lastTransitionTime: Opt(Time()),
  reason: Opt(Str()),
  message: Opt(Str()),
});

const SubsetStatus = Type.Object({
  name: Opt(Str()),
  replicas: Opt(Int32()),
  readyReplicas: Opt(Int32()),
  partition: Opt(Int32()),
  reservedPods: Opt(Int32()),
  conditions: Opt(Type.Array(KruiseCondition(KnownString<'Schedulable'>()))),
});

const commonStatus = {
  observedGeneration: Opt(Int64()),
  readyReplicas: Opt(Int32()),
  replicas: Int32(),
  updatedReplicas: Int32(),
  updatedReadyReplicas: Opt(Int32()),
  reservedPods: Opt(Int32()),
  collisionCount: Opt(Int32()),
  currentRevision: Str(),
  subsetStatuses: Opt(Type.Array(SubsetStatus)),
  conditions: Opt(Type.Array(UnitedDeploymentCondition)),
  labelSelector: Opt(Str()),
};

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const UnitedDeploymentSpec = spec(CloneSetSpec);
export type UnitedDeploymentSpec = Static<typeof UnitedDeploymentSpec>;

export const UnitedDeploymentStatus = Type.Object({ ...commonStatus, updatedRevision: Opt(Str()) });
export type UnitedDeploymentStatus = Static<typeof UnitedDeploymentStatus>;

export const UnitedDeployment = KubeObject(
  'UnitedDeployment is the Schema for the uniteddeployments API',
  UnitedDeploymentSpec,
  UnitedDeploymentStatus,
);
export type UnitedDeployment = Static<typeof UnitedDeployment>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const UnitedDeploymentSpecV1alpha1 = spec(CloneSetSpecV1alpha1);
export type UnitedDeploymentSpecV1alpha1 = Static<typeof UnitedDeploymentSpecV1alpha1>;

export const UnitedDeploymentStatusV1alpha1 = Type.Object({
  ...commonStatus,
  subsetReplicas: Opt(MapOf(Int32())),
  updateStatus: Opt(Type.Object({ updatedRevision: Opt(Str()), currentPartitions: Opt(MapOf(Int32())) })),
});
export type UnitedDeploymentStatusV1alpha1 = Static<typeof UnitedDeploymentStatusV1alpha1>;

export const UnitedDeploymentV1alpha1 = KubeObject(
  'UnitedDeployment is the Schema for the uniteddeployments API',
  UnitedDeploymentSpecV1alpha1,
  UnitedDeploymentStatusV1alpha1,
);
export type UnitedDeploymentV1alpha1 = Static<typeof UnitedDeploymentV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  { name: 'DESIRED', type: 'integer', jsonPath: '.spec.replicas', description: 'The desired number of pods.' },
  { name: 'CURRENT', type: 'integer', jsonPath: '.status.replicas', description: 'The number of currently all pods.' },
  { name: 'UPDATED', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'The number of pods updated.' },
  { name: 'READY', type: 'integer', jsonPath: '.status.readyReplicas', description: 'The number of pods ready.' },
  AGE_COLUMN,
];

export const unitedDeploymentKind = defineKind({
  group: APPS_GROUP,
  kind: 'UnitedDeployment',
  plural: 'uniteddeployments',
  scope: 'Namespaced',
  shortNames: ['ud'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: UnitedDeploymentV1alpha1, printerColumns, scale: REPLICAS_SCALE },
    { name: 'v1beta1', schema: UnitedDeployment, printerColumns, scale: REPLICAS_SCALE },
  ],
});
