// NodePodProbe (apps.kruise.io/v1alpha1 only, cluster scoped, one per Node): the probes
// kruise-daemon runs on that node and their results.

import { Type, type Static } from '@sinclair/typebox';
import { KnownString, KubeObject, Opt, Probe, Str, Time, defineKind } from '../schema.ts';
import { APPS_GROUP } from '../constants.ts';
import type { ProbeState } from './podprobemarker.ts';

export const NodePodProbeSpec = Type.Object({
  podProbes: Opt(
    Type.Array(
      Type.Object({
        name: Str(),
        namespace: Str(),
        uid: Str(),
        IP: Str(),
        probes: Opt(
          Type.Array(
            Type.Object({
              name: Str({ description: "'<podProbeMarker>#<probe>'." }),
              containerName: Str(),
              probe: Probe,
            }),
          ),
        ),
      }),
    ),
  ),
});
export type NodePodProbeSpec = Static<typeof NodePodProbeSpec>;

export const NodePodProbeStatus = Type.Object({
  podProbeStatuses: Opt(
    Type.Array(
      Type.Object({
        name: Str(),
        namespace: Str(),
        uid: Str(),
        probeStates: Opt(
          Type.Array(
            Type.Object({
              name: Str(),
              state: KnownString<ProbeState>(),
              lastProbeTime: Opt(Time()),
              lastTransitionTime: Opt(Time()),
              message: Opt(Str()),
            }),
          ),
        ),
      }),
    ),
  ),
});
export type NodePodProbeStatus = Static<typeof NodePodProbeStatus>;

export const NodePodProbe = KubeObject('NodePodProbe is the Schema for the NodePodProbe API', NodePodProbeSpec, NodePodProbeStatus);
export type NodePodProbe = Static<typeof NodePodProbe>;

export const nodePodProbeKind = defineKind({
  group: APPS_GROUP,
  kind: 'NodePodProbe',
  plural: 'nodepodprobes',
  scope: 'Cluster',
  hubVersion: 'v1alpha1',
  versions: [{ name: 'v1alpha1', schema: NodePodProbe, printerColumns: [] }],
});
