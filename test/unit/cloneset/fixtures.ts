// Builders for CloneSet decision tests.

import type { CloneSet } from '../../../src/apis/apps/cloneset.ts';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import type { PodTemplateSpec } from '../../../src/apis/core.ts';
import type { Pod, Stored } from '../../../src/apis/core-objects.ts';
import { newCloneSetRevision, type ControllerRevision } from '../../../src/util/revision-data.ts';

export const NOW = Date.parse('2026-07-01T12:00:00Z');
export const NOW_S = '2026-07-01T12:00:00Z';
export const EARLIER = '2026-07-01T11:00:00Z';

export function gates(over: Partial<FeatureGates> = {}): FeatureGates {
  return { ...FEATURE_GATE_DEFAULTS, ...over };
}

export function template(image = 'nginx:1.0', extra: Partial<PodTemplateSpec> = {}): PodTemplateSpec {
  return {
    metadata: { labels: { app: 'demo' } },
    spec: { containers: [{ name: 'main', image }] },
    ...extra,
  };
}

export type CloneSetSpec = NonNullable<CloneSet['spec']>;

export function cloneSet(spec: Partial<CloneSetSpec> = {}, status?: CloneSet['status']): Stored<CloneSet> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name: 'cs', namespace: 'default', uid: 'cs-uid', generation: 1 },
    spec: { replicas: 3, selector: { matchLabels: { app: 'demo' } }, template: template(), ...spec },
    ...(status ? { status } : {}),
  };
}

export function revisionOf(cs: CloneSet, number = 1): ControllerRevision {
  return newCloneSetRevision(cs, number, cs.status?.collisionCount ?? 0);
}

export interface PodOpts {
  revision?: string;
  ready?: boolean;
  phase?: string;
  node?: string;
  state?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  created?: string;
  readySince?: string;
  image?: string;
  imageID?: string;
  finalizers?: string[];
  containers?: Pod['spec'] extends infer S ? (S extends { containers: infer C } ? C : never) : never;
  conditions?: NonNullable<Pod['status']>['conditions'];
  /** No controllerRef (default: owned by cloneSet()). */
  orphan?: boolean;
}

export function pod(name: string, o: PodOpts = {}): Pod {
  const ready = o.ready ?? true;
  const containers = o.containers ?? [{ name: 'main', image: o.image ?? 'nginx:1.0' }];
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      namespace: 'default',
      creationTimestamp: o.created ?? '2026-07-01T10:00:00Z',
      labels: {
        app: 'demo',
        'apps.kruise.io/cloneset-instance-id': name.replace(/^cs-/, ''),
        ...(o.revision
          ? { 'controller-revision-hash': o.revision, 'pod-template-hash': o.revision.slice(o.revision.lastIndexOf('-') + 1) }
          : {}),
        ...(o.state ? { 'lifecycle.apps.kruise.io/state': o.state } : {}),
        ...o.labels,
      },
      annotations: o.annotations,
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      // Owned by cloneSet(), as every pod a CloneSet's cache hands it.
      ...(o.orphan
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps.kruise.io/v1beta1',
                kind: 'CloneSet',
                name: 'cs',
                uid: 'cs-uid',
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }),
    },
    spec: {
      nodeName: o.node ?? `node-${name}`,
      containers,
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
    },
    status: {
      phase: o.phase ?? 'Running',
      conditions: o.conditions ?? [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: o.readySince ?? '2026-07-01T10:30:00Z' },
        { type: 'ContainersReady', status: ready ? 'True' : 'False' },
        { type: 'InPlaceUpdateReady', status: 'True' },
      ],
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: o.imageID ?? `id-${c.image}`,
        containerID: `cid-${name}-${c.name}`,
        ready,
        restartCount: 0,
      })),
    },
  };
}
