// PodProbeMarker (apps.kruise.io/v1alpha1 only): custom probes run by kruise-daemon whose results
// mark pods with labels, annotations or a condition.

import { Type, type Static } from '@sinclair/typebox';
import { Int64, KnownString, KubeObject, LabelSelector, Opt, Probe, Str, StringMap, defineKind, describe } from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';

export type ProbeState = 'Succeeded' | 'Failed' | 'Unknown';

export const PodProbeMarkerSpec = Type.Object({
  selector: describe(LabelSelector, 'Pods that run the probes.'),
  probes: Type.Array(
    Type.Object({
      name: Str({ description: 'Unique within the pod.' }),
      containerName: Str(),
      probe: describe(Probe, 'Container probe spec (exec, tcpSocket, httpGet).'),
      markerPolicy: Opt(
        Type.Array(
          Type.Object({
            state: KnownString<'Succeeded' | 'Failed'>(),
            labels: Opt(StringMap()),
            annotations: Opt(StringMap()),
          }),
        ),
      ),
      podConditionType: Opt(Str({ description: 'Pod condition recording the probe result.' })),
    }),
  ),
});
export type PodProbeMarkerSpec = Static<typeof PodProbeMarkerSpec>;

export const PodProbeMarkerStatus = Type.Object({
  observedGeneration: Int64(),
  matchedPods: Opt(Int64()),
});
export type PodProbeMarkerStatus = Static<typeof PodProbeMarkerStatus>;

export const PodProbeMarker = KubeObject(
  'PodProbeMarker is the Schema for the PodProbeMarker API',
  PodProbeMarkerSpec,
  PodProbeMarkerStatus,
);
export type PodProbeMarker = Static<typeof PodProbeMarker>;

export const podProbeMarkerKind = defineKind({
  group: APPS_GROUP,
  kind: 'PodProbeMarker',
  plural: 'podprobemarkers',
  scope: 'Namespaced',
  hubVersion: 'v1alpha1',
  versions: [{ name: 'v1alpha1', schema: PodProbeMarker, printerColumns: [] }],
});
