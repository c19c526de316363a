// ResourceDistribution (apps.kruise.io, cluster scoped): copies a Secret or ConfigMap into target
// namespaces. v1beta1 renames targets.namespaceLabelSelector to namespaceSelector and the
// condition field failedNamespace to failedNamespaces.

import { Type, type Static, type TProperties } from '@sinclair/typebox';
import {
  Bool,
  EmbeddedResource,
  Int32,
  Int64,
  KnownString,
  KubeObject,
  LabelSelector,
  ObjectMeta,
  Opt,
  Str,
  StringList,
  Time,
  defineKind,
  describe,
  type PrinterColumn,
} from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';

export type ResourceDistributionConditionType =
  | 'GetResourceFailed'
  | 'CreateResourceFailed'
  | 'UpdateResourceFailed'
  | 'DeleteResourceFailed'
  | 'ConflictOccurred'
  | 'NamespaceNotExists';

const TargetNamespaces = Type.Object({
  list: Opt(Type.Array(Type.Object({ name: Opt(Str()) }))),
  pattern: Opt(Str()),
});

function spec<P extends TProperties>(selector: P) {
  return Type.Object({
    resource: EmbeddedResource<Record<string, unknown>>(
      { description: 'The complete Secret or ConfigMap to distribute (no namespace).' },
      // The API server checks an embedded object's type and object meta.
      Type.Object({ apiVersion: Opt(Str()), kind: Opt(Str()), metadata: Opt(ObjectMeta) }),
    ),
    targets: Type.Object({
      allNamespaces: Opt(Bool({ description: 'All namespaces except kube-system and kube-public.' })),
      excludedNamespaces: Opt(TargetNamespaces),
      includedNamespaces: Opt(TargetNamespaces),
      ...selector,
    }),
  });
}

function status<P extends TProperties>(failedNamespaces: P) {
  return Type.Object({
    desired: Opt(Int32()),
    succeeded: Opt(Int32()),
    failed: Opt(Int32()),
    observedGeneration: Opt(Int64()),
    conditions: Opt(
      Type.Array(
        Type.Object({
          type: KnownString<ResourceDistributionConditionType>(),
          status: KnownString<'True' | 'False' | 'Unknown'>(),
          lastTransitionTime: Opt(Time()),
          reason: Opt(Str()),
          ...failedNamespaces,
        }),
      ),
    ),
  });
}

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const ResourceDistributionSpec = spec({
  namespaceSelector: Opt(describe(LabelSelector, 'Namespaces whose labels match are targets.')),
});
export type ResourceDistributionSpec = Static<typeof ResourceDistributionSpec>;

export const ResourceDistributionStatus = status({ failedNamespaces: Opt(StringList()) });
export type ResourceDistributionStatus = Static<typeof ResourceDistributionStatus>;

export const ResourceDistribution = KubeObject(
  'ResourceDistribution is the Schema for the resourcedistributions API.',
  ResourceDistributionSpec,
  ResourceDistributionStatus,
);
export type ResourceDistribution = Static<typeof ResourceDistribution>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const ResourceDistributionSpecV1alpha1 = spec({
  namespaceLabelSelector: Opt(describe(LabelSelector, 'Namespaces whose labels match are targets.')),
});
export type ResourceDistributionSpecV1alpha1 = Static<typeof ResourceDistributionSpecV1alpha1>;

export const ResourceDistributionStatusV1alpha1 = status({ failedNamespace: Opt(StringList()) });
export type ResourceDistributionStatusV1alpha1 = Static<typeof ResourceDistributionStatusV1alpha1>;

export const ResourceDistributionV1alpha1 = KubeObject(
  'ResourceDistribution is the Schema for the resourcedistributions API.',
  ResourceDistributionSpecV1alpha1,
  ResourceDistributionStatusV1alpha1,
);
export type ResourceDistributionV1alpha1 = Static<typeof ResourceDistributionV1alpha1>;

// ---------------------------------------------------------------------------------------------

const printerColumns: PrinterColumn[] = [
  {
    name: 'TOTAL',
    type: 'integer',
    jsonPath: '.status.desired',
    description: 'The desired number of desired distribution and syncs.',
  },
  {
    name: 'SUCCEED',
    type: 'integer',
    jsonPath: '.status.succeeded',
    description: 'The number of successful distribution and syncs.',
  },
  {
    name: 'FAILED',
    type: 'integer',
    jsonPath: '.status.failed',
    description: 'The number of failed distributions and syncs.',
  },
];

export const resourceDistributionKind = defineKind({
  group: APPS_GROUP,
  kind: 'ResourceDistribution',
  plural: 'resourcedistributions',
  scope: 'Cluster',
  shortNames: ['distributor'],
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: ResourceDistributionV1alpha1, printerColumns },
    { name: 'v1beta1', schema: ResourceDistribution, printerColumns },
  ],
});
