// Every Kruise kind with its group, versions, names and scope: the client resolves resources
// (GVR) through it and hack/gen-crds.ts writes one CRD per entry.

import type { TObject } from '@sinclair/typebox';
import type { KindDefinition, VersionDefinition } from './schema.ts';
import { advancedCronJobKind } from './apps/advancedcronjob.ts';
import { broadcastJobKind } from './apps/broadcastjob.ts';
import { cloneSetKind } from './apps/cloneset.ts';
import { containerRecreateRequestKind } from './apps/containerrecreaterequest.ts';
import { daemonSetKind } from './apps/daemonset.ts';
import { ephemeralJobKind } from './apps/ephemeraljob.ts';
import { imageListPullJobKind } from './apps/imagelistpulljob.ts';
import { imagePullJobKind } from './apps/imagepulljob.ts';
import { nodeImageKind } from './apps/nodeimage.ts';
import { nodePodProbeKind } from './apps/nodepodprobe.ts';
import { persistentPodStateKind } from './apps/persistentpodstate.ts';
import { podProbeMarkerKind } from './apps/podprobemarker.ts';
import { resourceDistributionKind } from './apps/resourcedistribution.ts';
import { sidecarSetKind } from './apps/sidecarset.ts';
import { statefulSetKind } from './apps/statefulset.ts';
import { unitedDeploymentKind } from './apps/uniteddeployment.ts';
import { workloadSpreadKind } from './apps/workloadspread.ts';
import { podUnavailableBudgetKind } from './policy/podunavailablebudget.ts';

export type { KindDefinition, PrinterColumn, ScaleSubresource, Scope, VersionDefinition } from './schema.ts';

export const kinds: readonly KindDefinition[] = [
  cloneSetKind,
  statefulSetKind,
  daemonSetKind,
  sidecarSetKind,
  broadcastJobKind,
  advancedCronJobKind,
  unitedDeploymentKind,
  workloadSpreadKind,
  containerRecreateRequestKind,
  imagePullJobKind,
  imageListPullJobKind,
  nodeImageKind,
  resourceDistributionKind,
  persistentPodStateKind,
  podProbeMarkerKind,
  nodePodProbeKind,
  ephemeralJobKind,
  podUnavailableBudgetKind,
];

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** Splits 'group/version' (or a core 'version'). */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The kind registered under group + kind name. */
export function kindFor(group: string, kind: string): KindDefinition | undefined {
  return kinds.find((k) => k.group === group && k.kind === kind);
}

/**
 * Resolves a resource as kubectl does: by plural, singular, short name or kind (case-insensitive),
 * optionally qualified with its group ('clonesets.apps.kruise.io').
 */
export function resolveResource(name: string): KindDefinition | undefined {
  const lower = name.toLowerCase();
  const dot = lower.indexOf('.');
  const bare = dot < 0 ? lower : lower.slice(0, dot);
  const group = dot < 0 ? undefined : lower.slice(dot + 1);
  return kinds.find(
    (k) =>
      (group === undefined || k.group === group) &&
      (k.plural === bare || k.singular === bare || k.kind.toLowerCase() === bare || k.shortNames.includes(bare)),
  );
}

/** GVR of an object's apiVersion + kind; undefined when the kind or version is not Kruise's. */
export function gvrFor(apiVersion: string, kind: string): GroupVersionResource | undefined {
  const { group, version } = parseApiVersion(apiVersion);
  const def = kindFor(group, kind);
  if (!def || !def.versions.some((v) => v.name === version)) return undefined;
  return { group, version, resource: def.plural };
}

/**
 * Which versions the Kruise CRDs serve. `openkruise-v1.8` (the default) is exactly what OpenKruise
 * v1.8.2 serves and stores, so that kubectl, scripts and clients see what they saw under OpenKruise;
 * `v1beta1` adds the v1beta1 API of every kind that has one and stores it there.
 */
export type APIVersionSet = 'openkruise-v1.8' | 'v1beta1';
export const API_VERSION_SETS: readonly APIVersionSet[] = ['openkruise-v1.8', 'v1beta1'];
export const DEFAULT_API_VERSION_SET: APIVersionSet = 'openkruise-v1.8';

/** The kinds OpenKruise v1.8.2 serves at v1beta1 too (and stores there): Advanced StatefulSet only. */
const OPENKRUISE_V18_V1BETA1_KINDS: ReadonlySet<string> = new Set(['statefulsets.apps.kruise.io']);

export interface ServedVersions {
  versions: readonly VersionDefinition[];
  storage: string;
}

/** The versions a kind's CRD serves, and the one it stores, under an API version set. */
export function servedVersions(def: KindDefinition, set: APIVersionSet): ServedVersions {
  const alpha = def.versions.find((v) => v.name === 'v1alpha1');
  if (set === 'openkruise-v1.8' && alpha && !OPENKRUISE_V18_V1BETA1_KINDS.has(`${def.plural}.${def.group}`)) {
    return { versions: [alpha], storage: alpha.name };
  }
  return { versions: def.versions, storage: def.hubVersion };
}

/** GVR of a kind at its hub version (the version controllers work with). */
export function hubGVR(def: KindDefinition): GroupVersionResource {
  return { group: def.group, version: def.hubVersion, resource: def.plural };
}

/** The schema of one served version of a kind. */
export function schemaFor(apiVersion: string, kind: string): TObject | undefined {
  const { group, version } = parseApiVersion(apiVersion);
  return kindFor(group, kind)?.versions.find((v) => v.name === version)?.schema;
}
