// PersistentPodState (apps.kruise.io): remembers where a StatefulSet's pods ran so recreated pods
// return there. v1beta1 renames the topology terms' nodeTopologyKeys to keys.

import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { Int32, Int64, KnownString, KubeObject, MapOf, Opt, Str, StringList, StringMap, defineKind, describe } from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import { TargetReference } from './pub.ts';

function spec<K extends TProperties>(keys: K) {
  const NodeTopologyTerm = Type.Object(keys);
  return Type.Object({
    targetRef: describe(TargetReference, 'The StatefulSet (or whitelisted workload) whose pods are recorded.'),
    persistentPodAnnotations: Opt(Type.Array(Type.Object({ key: Str() }))),
    requiredPersistentTopology: Opt(NodeTopologyTerm),
    preferredPersistentTopology: Opt(Type.Array(Type.Object({ weight: Int32({ description: '1-100.' }), preference: NodeTopologyTerm }))),
    persistentPodStateRetentionPolicy: Opt(KnownString<'WhenScaled' | 'WhenDeleted'>({ description: 'Default is WhenScaled.' })),
  });
}

export const PersistentPodStateStatus = Type.Object({
  observedGeneration: Int64(),
  podStates: Opt(
    MapOf(
      Type.Object({
        nodeName: Opt(Str()),
        nodeTopologyLabels: Opt(StringMap()),
        annotations: Opt(StringMap()),
      }),
      { description: 'Recorded state by pod name.' },
    ),
  ),
});
export type PersistentPodStateStatus = Static<typeof PersistentPodStateStatus>;

// ---------------------------------------------------------------------------------------------
// v1beta1 (storage)

export const PersistentPodStateSpec = spec({ keys: StringList({ description: 'Node label keys.' }) });
export type PersistentPodStateSpec = Static<typeof PersistentPodStateSpec>;

export const PersistentPodState = KubeObject(
  'PersistentPodState is the Schema for the PersistentPodState API',
  PersistentPodStateSpec,
  PersistentPodStateStatus,
);
export type PersistentPodState = Static<typeof PersistentPodState>;

// ---------------------------------------------------------------------------------------------
// v1alpha1

export const PersistentPodStateSpecV1alpha1 = spec({
  nodeTopologyKeys: StringList({ description: 'Node label keys.' }),
});
export type PersistentPodStateSpecV1alpha1 = Static<typeof PersistentPodStateSpecV1alpha1>;

export const PersistentPodStateV1alpha1 = KubeObject(
  'PersistentPodState is the Schema for the PersistentPodState API',
  PersistentPodStateSpecV1alpha1,
  PersistentPodStateStatus,
);
export type PersistentPodStateV1alpha1 = Static<typeof PersistentPodStateV1alpha1>;

export const persistentPodStateKind = defineKind({
  group: APPS_GROUP,
  kind: 'PersistentPodState',
  plural: 'persistentpodstates',
  scope: 'Namespaced',
  hubVersion: 'v1beta1',
  versions: [
    { name: 'v1alpha1', schema: PersistentPodStateV1alpha1, printerColumns: [] },
    { name: 'v1beta1', schema: PersistentPodState, printerColumns: [] },
  ],
});
