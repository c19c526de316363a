// WorkloadSpread (apps.kruise.io): spreads a workload's pods over subsets via the pod webhook.
// v1beta1 renames requiredNodeSelectorTerm/preferredNodeSelectorTerms to
// requiredNodeSelector/preferredNodeSelector and uses metav1.Condition for subset conditions.

import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';
import {
  Bool,
  Int32,
  Int64,
  IntOrString,
  KnownString,
  KruiseCondition,
  KubeObject,
  LabelSelector,
  MapOf,
  MetaCondition,
  NodeSelectorTerm,
  Opt,
  PreferredSchedulingTerm,
  RawPatch,
  Str,
  StringEnum,
  StringList,
  Time,
  Toleration,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { TargetReference } from './pub.ts';

const subsetFields = {
  name: Str({ description: 'Unique among the subsets of one WorkloadSpread.' }),
  tolerations: Opt(Type.Array(Toleration)),
  maxReplicas: Opt(IntOrString({ description: 'Maximum replicas of this subset; unset means unlimited.' })),
  minReplicas: Opt(IntOrString()),
  patch: Opt(RawPatch({ description: 'Patch applied to pods of this subset.' })),
};

function spec<P extends TProperties>(placement: P) {
  return Type.Object({
    targetRef: describe(TargetReference, 'The workload whose pods are spread.'),
    targetFilter: Opt(
      Type.Object({
        selector: Opt(describe(LabelSelector, 'Only pods matching it are managed.')),
        replicasPathList: Opt(StringList({ description: 'Paths in the workload whose sum is the replica count.' })),
      }),
    ),
    subsets: Type.Array(Type.Object({ ...subsetFields, ...placement })),
    scheduleStrategy: Opt(
      Type.Object({
        type: Opt(StringEnum(['Adaptive', 'Fixed', ''], { description: 'Default is Fixed.' })),
        adaptive: Opt(Type.Object({ disableSimulationSchedule: Opt(Bool()), rescheduleCriticalSeconds: Opt(Int32()) })),
      }),
    ),
  });
}

function status<C extends TSchema>(condition: C) {
  const SubsetStatus = Type.Object({
    name: Str(),
    replicas: Int32(),
    conditions: Opt(Type.Array(condition)),
    missingReplicas: Int32({ description: '-1 means the subset has no maxReplicas.' }),
    creatingPods: Opt(MapOf(Time())),
    deletingPods: Opt(MapOf(Time())),
  });
  return Type.Object({
    observedGeneration: Opt(Int64()),
    subsetStatuses: Opt(Type.Array(SubsetStatus)),
    versionedSubsetStatuses: Opt(MapOf(Type.Array(SubsetStatus))),
  });
}

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const WorkloadSpreadSpec = spec({
  requiredNodeSelector: Opt(NodeSelectorTerm),
  preferredNodeSelector: Opt(Type.Array(PreferredSchedulingTerm)),
});
export type WorkloadSpreadSpec = Static<typeof WorkloadSpreadSpec>;

export const WorkloadSpreadStatus = status(MetaCondition);
export type WorkloadSpreadStatus = Static<typeof WorkloadSpreadStatus>;

export const WorkloadSpread = KubeObject(
  'WorkloadSpread is the Schema for the WorkloadSpread API',
  WorkloadSpreadSpec,
  WorkloadSpreadStatus,
);
export type WorkloadSpread = Static<typeof WorkloadSpread>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const WorkloadSpreadSpecV1alpha1 = spec({
  requiredNodeSelectorTerm: Opt(NodeSelectorTerm),
  preferredNodeSelectorTerms: Opt(Type.Array(PreferredSchedulingTerm)),
});
export type WorkloadSpreadSpecV1alpha1 = Static<typeof WorkloadSpreadSpecV1alpha1>;

export const WorkloadSpreadStatusV1alpha1 = status(KruiseCondition(KnownString<'Schedulable'>()));
export type WorkloadSpreadStatusV1alpha1 = Static<typeof WorkloadSpreadStatusV1alpha1>;

export const WorkloadSpreadV1alpha1 = KubeObject(
  'WorkloadSpread is the Schema for the WorkloadSpread API',
  WorkloadSpreadSpecV1alpha1,
  WorkloadSpreadStatusV1alpha1,
);
export type WorkloadSpreadV1alpha1 = Static<typeof WorkloadSpreadV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  { name: 'WorkloadName', type: 'string', jsonPath: '.spec.targetRef.name' },
  { name: 'WorkloadKind', type: 'string', jsonPath: '.spec.targetRef.kind' },
  {
    name: 'Adaptive',
    type: 'boolean',
    jsonPath: '.spec.scheduleStrategy.type[?(@ == "Adaptive")]',
    description: 'Whether use the adaptive reschedule strategy',
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

export const workloadSpreadKind = defineKind({
  group: APPS_GROUP,
  kind: 'WorkloadSpread',
  plural: 'workloadspreads',
  scope: 'Namespaced',
  shortNames: ['ws'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: WorkloadSpreadV1alpha1, printerColumns },
    { name: 'v1beta1', schema: WorkloadSpread, printerColumns },
  ],
});
