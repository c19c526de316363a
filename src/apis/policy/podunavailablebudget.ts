// PodUnavailableBudget (policy.kruise.io): limits voluntary disruption of matched pods. v1beta1
// adds protectOperations, protectTotalReplicas and ignoredPodSelector (v1alpha1 keeps the first
// two in annotations).

import { Type, type Static } from '@sinclair/typebox';
import {
  Int32,
  Int64,
  IntOrString,
  KnownString,
  KubeObject,
  LabelSelector,
  MapOf,
  Opt,
  Str,
  Time,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { POLICY_GROUP } from '../constants.ts';

export type PubOperation = 'DELETE' | 'UPDATE' | 'EVICT' | 'RESIZE';

const commonSpec = {
  selector: Opt(describe(LabelSelector, 'Pods protected by the budget; exclusive with targetRef.')),
  targetRef: Opt(
    Type.Object(
      { apiVersion: Opt(Str()), kind: Opt(Str()), name: Opt(Str()) },
      { description: 'Workload whose pods are protected; exclusive with selector.' },
    ),
  ),
  maxUnavailable: Opt(IntOrString()),
  minAvailable: Opt(IntOrString()),
};

export const PodUnavailableBudgetStatus = Type.Object({
  observedGeneration: Opt(Int64()),
  disruptedPods: Opt(MapOf(Time(), { description: 'Pods being deleted or evicted, by name.' })),
  unavailablePods: Opt(MapOf(Time(), { description: 'Pods being updated, by name.' })),
  unavailableAllowed: Int32(),
  currentAvailable: Int32(),
  desiredAvailable: Int32(),
  totalReplicas: Int32(),
});
export type PodUnavailableBudgetStatus = Static<typeof PodUnavailableBudgetStatus>;

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const PodUnavailableBudgetSpec = Type.Object({
  ...commonSpec,
  protectOperations: Opt(
    Type.Array(KnownString<PubOperation>(), { description: 'Protected operations; defaults to DELETE, UPDATE, EVICT.' }),
  ),
  protectTotalReplicas: Opt(Int32()),
  ignoredPodSelector: Opt(describe(LabelSelector, 'Matched pods that the budget ignores.')),
});
export type PodUnavailableBudgetSpec = Static<typeof PodUnavailableBudgetSpec>;

export const PodUnavailableBudget = KubeObject(
  'PodUnavailableBudget is the Schema for the podunavailablebudgets API',
  PodUnavailableBudgetSpec,
  PodUnavailableBudgetStatus,
);
export type PodUnavailableBudget = Static<typeof PodUnavailableBudget>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const PodUnavailableBudgetSpecV1alpha1 = Type.Object(commonSpec);
export type PodUnavailableBudgetSpecV1alpha1 = Static<typeof PodUnavailableBudgetSpecV1alpha1>;

export const PodUnavailableBudgetV1alpha1 = KubeObject(
  'PodUnavailableBudget is the Schema for the podunavailablebudgets API',
  PodUnavailableBudgetSpecV1alpha1,
  PodUnavailableBudgetStatus,
);
export type PodUnavailableBudgetV1alpha1 = Static<typeof PodUnavailableBudgetV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  {
    name: 'Allowed',
    type: 'integer',
    jsonPath: '.status.unavailableAllowed',
    description: 'UnavailableAllowed number of pod unavailable that are currently allowed',
  },
  {
    name: 'Current',
    type: 'integer',
    jsonPath: '.status.currentAvailable',
    description: 'CurrentAvailable current number of available pods',
  },
  {
    name: 'Desired',
    type: 'integer',
    jsonPath: '.status.desiredAvailable',
    description: 'DesiredAvailable minimum desired number of available pods',
  },
  {
    name: 'Total',
    type: 'integer',
    jsonPath: '.status.totalReplicas',
    description: 'TotalReplicas total number of pods counted by this budget',
  },
];

export const podUnavailableBudgetKind = defineKind({
  group: POLICY_GROUP,
  kind: 'PodUnavailableBudget',
  plural: 'podunavailablebudgets',
  scope: 'Namespaced',
  shortNames: ['pub'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: PodUnavailableBudgetV1alpha1, printerColumns },
    { name: 'v1beta1', schema: PodUnavailableBudget, printerColumns },
  ],
});
