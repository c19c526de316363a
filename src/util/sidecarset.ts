// What the pod webhook (injection) and the SidecarSet controller (upgrade) both know about a
// SidecarSet and the pods it manages (upstream pkg/control/sidecarcontrol): matching, the per-pod
// hash records, hot-upgrade container names and the ControllerRevision data of a SidecarSet.
import type { SidecarContainer, SidecarSet } from '../apis/apps/sidecarset.ts';
import type { Container } from '../apis/core.ts';
import type { ControllerRevision, Namespace, Pod } from '../apis/core-objects.ts';
import {
  SIDECARSET_BASE_ANNOTATION,
  SIDECARSET_CANARY_ANNOTATION,
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_HASH_ANNOTATION,
  SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
  SIDECARSET_INJECTED_LIST_ANNOTATION,
  SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION,
  SIDECARSET_NAME_REVISION_LABEL,
  SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION,
} from '../apis/constants.ts';
import { marshalGoSidecarContainers } from './go-container.ts';
import { matchesLabelSelector } from './labelselector.ts';
import { applyMergePatch } from './merge-patch.ts';
import { controllerRevisionName, marshalGoJSON } from './revision.ts';
import { isJsonObject } from '../apis/json.ts';

export type StoredSidecarSet = SidecarSet & { metadata: NonNullable<SidecarSet['metadata']> & { name: string } };

/** The record a pod keeps per SidecarSet in kruise.io/sidecarset-hash(-without-image) (SidecarSetUpgradeSpec). */
export interface SidecarSetUpgradeSpec {
  /** metav1.Time: RFC 3339 whole seconds, or null (zero time). */
  updateTimestamp: string | null;
  hash: string;
  sidecarSetName: string;
  sidecarList: string[] | null;
  /** omitempty */
  controllerRevision?: string;
}

/** The SidecarSet's own hashes (set by its mutating webhook). */
export const sidecarSetHashOf = (s: Pick<SidecarSet, 'metadata'>): string => s.metadata?.annotations?.[SIDECARSET_HASH_ANNOTATION] ?? '';
export const sidecarSetHashWithoutImageOf = (s: Pick<SidecarSet, 'metadata'>): string =>
  s.metadata?.annotations?.[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION] ?? '';

/**
 * A pod's records under one of the two hash annotations. Like upstream, a value that is not a map
 * of records but an older map of plain hash strings is read as records carrying only the hash.
 */
export function parseUpgradeSpecs(annotation: string | undefined): Record<string, SidecarSetUpgradeSpec> {
  if (!annotation) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(annotation);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const out: Record<string, SidecarSetUpgradeSpec> = {};
  for (const [name, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof v === 'string') {
      out[name] = { updateTimestamp: null, hash: v, sidecarSetName: name, sidecarList: null };
    } else if (typeof v === 'object' && v !== null) {
      const r = v as Record<string, unknown>;
      out[name] = {
        updateTimestamp: typeof r.updateTimestamp === 'string' ? r.updateTimestamp : null,
        hash: typeof r.hash === 'string' ? r.hash : '',
        sidecarSetName: typeof r.sidecarSetName === 'string' ? r.sidecarSetName : '',
        sidecarList: Array.isArray(r.sidecarList) ? r.sidecarList.filter((x): x is string => typeof x === 'string') : null,
        ...(typeof r.controllerRevision === 'string' && r.controllerRevision ? { controllerRevision: r.controllerRevision } : {}),
      };
    }
  }
  return out;
}

/** Go's json.Marshal of map[string]SidecarSetUpgradeSpec: keys sorted, struct fields in declaration order. */
export function formatUpgradeSpecs(specs: Record<string, SidecarSetUpgradeSpec>): string {
  const names = Object.keys(specs).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const entries = names.map((name) => {
    const s = specs[name]!;
    const fields = [
      `"updateTimestamp":${marshalGoJSON(s.updateTimestamp)}`,
      `"hash":${marshalGoJSON(s.hash)}`,
      `"sidecarSetName":${marshalGoJSON(s.sidecarSetName)}`,
      `"sidecarList":${marshalGoJSON(s.sidecarList)}`,
      ...(s.controllerRevision ? [`"controllerRevision":${marshalGoJSON(s.controllerRevision)}`] : []),
    ];
    return `${marshalGoJSON(name)}:{${fields.join(',')}}`;
  });
  return `{${entries.join(',')}}`;
}

/** metav1.Now() as it marshals. */
export const metaTime = (now: Date): string => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function podSidecarSetHash(name: string, pod: Pick<Pod, 'metadata'>): string {
  return podUpgradeSpec(pod, SIDECARSET_HASH_ANNOTATION, name)?.hash ?? '';
}

export function podSidecarSetHashWithoutImage(name: string, pod: Pick<Pod, 'metadata'>): string {
  return podUpgradeSpec(pod, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, name)?.hash ?? '';
}

export function podSidecarSetControllerRevision(name: string, pod: Pick<Pod, 'metadata'>): string {
  return podUpgradeSpec(pod, SIDECARSET_HASH_ANNOTATION, name)?.controllerRevision ?? '';
}

interface ParsedRecords {
  text: string;
  records: Readonly<Record<string, SidecarSetUpgradeSpec>>;
}

/**
 * The records parsed from a pod's hash annotations, by its annotations object. A SidecarSet round
 * reads the record of every pod it manages two or three times (status, candidates, unavailable
 * count), and a round runs on each of those pods' events. The text is compared on every read, so
 * an annotation changed in place is parsed again.
 */
const parsedRecords = new WeakMap<Record<string, string>, Map<string, ParsedRecords>>();

/** One SidecarSet's record under one of the hash annotations, read-only (parseUpgradeSpecs gives a copy to change). */
function podUpgradeSpec(pod: Pick<Pod, 'metadata'>, annotation: string, name: string): SidecarSetUpgradeSpec | undefined {
  const annotations = pod.metadata.annotations;
  const text = annotations?.[annotation];
  if (!annotations || !text) return undefined;
  let byAnnotation = parsedRecords.get(annotations);
  if (!byAnnotation) parsedRecords.set(annotations, (byAnnotation = new Map()));
  let parsed = byAnnotation.get(annotation);
  if (parsed?.text !== text) byAnnotation.set(annotation, (parsed = { text, records: parseUpgradeSpecs(text) }));
  return parsed.records[name];
}

/** Whether the pod carries this SidecarSet's current sidecars (IsPodSidecarUpdated). */
export function isPodSidecarUpdated(s: StoredSidecarSet, pod: Pick<Pod, 'metadata'>): boolean {
  return sidecarSetHashOf(s) === podSidecarSetHash(s.metadata.name, pod);
}

/** One SidecarSet's entry of kruise.io/sidecarset-inplace-update-state (InPlaceUpdateState). */
export interface SidecarUpdateState {
  revision: string;
  updateTimestamp: string | null;
  /** The imageID each sidecar ran before its last in-place image change. */
  lastContainerStatuses: Record<string, { imageID?: string }> | null;
}

/** kruise.io/sidecarset-inplace-update-state by SidecarSet name: {} when absent, undefined when malformed. */
export function sidecarUpdateStatesOf(pod: Pick<Pod, 'metadata'>): Record<string, SidecarUpdateState> | undefined {
  const raw = pod.metadata.annotations?.[SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION];
  if (raw === undefined) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return isJsonObject(v) ? (v as Record<string, SidecarUpdateState>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * IsSidecarContainerUpdateCompleted: no container of `containers` still runs the imageID recorded
 * before an in-place image change by one of `sidecarSets` while its spec asks for another image. A
 * pod never upgraded in place (no record) is complete; a malformed record is not.
 */
export function isSidecarUpdateCompleted(pod: Pod, sidecarSets: Iterable<string>, containers: ReadonlySet<string>): boolean {
  const states = sidecarUpdateStatesOf(pod);
  if (!states) return false;
  const last: Record<string, { imageID?: string }> = {};
  for (const name of sidecarSets) Object.assign(last, states[name]?.lastContainerStatuses);
  for (const cs of pod.status?.containerStatuses ?? []) {
    if (!containers.has(cs.name)) continue;
    const old = last[cs.name];
    if (old && (old.imageID ?? '') === (cs.imageID ?? '') && pod.spec?.containers.find((c) => c.name === cs.name)?.image !== cs.image)
      return false;
  }
  return true;
}

/** The SidecarSet names in kruise.io/sidecarset-injected-list. */
export function injectedSidecarSetNames(pod: Pick<Pod, 'metadata'>): string[] {
  const v = pod.metadata.annotations?.[SIDECARSET_INJECTED_LIST_ANNOTATION];
  return v ? v.split(',') : [];
}

/**
 * PodMatchedSidecarSet: the namespace (labels of the pod's Namespace) matches namespaceSelector
 * when one is set, and the non-empty selector matches the pod's labels. A namespace the cache does
 * not hold matches no namespaceSelector.
 */
export function podMatchesSidecarSet(
  pod: Pick<Pod, 'metadata'>,
  s: Pick<SidecarSet, 'spec'>,
  namespace: Pick<Namespace, 'metadata'> | undefined,
): boolean {
  const spec = s.spec ?? {};
  if (spec.namespaceSelector && (!namespace || !matchesLabelSelector(spec.namespaceSelector, namespace.metadata.labels))) return false;
  const sel = spec.selector;
  if (!sel || (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length)) return false;
  try {
    return matchesLabelSelector(sel, pod.metadata.labels);
  } catch {
    // An invalid selector (the webhook refuses them; an old object may still carry one) matches nothing.
    return false;
  }
}

/** A native sidecar: an init container that keeps running (restartPolicy Always). */
export const isNativeSidecar = (c: { restartPolicy?: string | null }): boolean => c.restartPolicy === 'Always';

export const isHotUpgradeContainer = (c: SidecarContainer): boolean => c.upgradeStrategy?.upgradeType === 'HotUpgrade';

/** `<name>-1`, `<name>-2`. */
export const hotUpgradeContainerNames = (name: string): [string, string] => [`${name}-1`, `${name}-2`];

/** kruise.io/sidecarset-working-hotupgrade-container: sidecar name → the pod container working now. */
export function hotUpgradeWorkInfo(pod: Pick<Pod, 'metadata'>): Record<string, string> {
  const raw = pod.metadata.annotations?.[SIDECARSET_WORKING_HOTUPGRADE_CONTAINER_ANNOTATION];
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return isJsonObject(v) ? (v as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/**
 * GetPodHotUpgradeContainers: the pod container of a hot-upgrade sidecar that works now (the
 * annotation names it; `<name>-2` when it names neither) and the other one (idle: the empty image,
 * or the older version while an upgrade is in flight).
 */
export function podHotUpgradeContainers(sidecarName: string, pod: Pick<Pod, 'metadata'>): { work: string; other: string } {
  const [name1, name2] = hotUpgradeContainerNames(sidecarName);
  return hotUpgradeWorkInfo(pod)[sidecarName] === name1 ? { work: name1, other: name2 } : { work: name2, other: name1 };
}

/** The names of the sidecars a SidecarSet keeps in a pod's containers (hot-upgrade pairs expanded). */
export function sidecarContainerNamesInPod(s: Pick<SidecarSet, 'spec'>): ReadonlySet<string> {
  const containers = s.spec?.containers ?? [];
  const cached = containerNamesBySpec.get(containers);
  if (cached) return cached;
  const names = new Set<string>();
  for (const c of containers) {
    if (isHotUpgradeContainer(c)) for (const n of hotUpgradeContainerNames(c.name)) names.add(n);
    else names.add(c.name);
  }
  containerNamesBySpec.set(containers, names);
  return names;
}

/** sidecarContainerNamesInPod by the SidecarSet's containers list: asked once per managed pod each round. */
const containerNamesBySpec = new WeakMap<readonly SidecarContainer[], ReadonlySet<string>>();

/** The sidecarList of a pod record: containers plus native sidecar init containers, sorted. */
export function sidecarListOf(s: Pick<SidecarSet, 'spec'>): string[] {
  const names = new Set<string>();
  for (const c of s.spec?.initContainers ?? []) if (isNativeSidecar(c)) names.add(c.name);
  for (const c of s.spec?.containers ?? []) names.add(c.name);
  return [...names].sort();
}

/** The plain core/v1 container of a sidecar (the sidecar-only fields do not exist on pods). */
export function plainContainer(c: SidecarContainer): Container {
  const {
    podInjectPolicy: _inject,
    upgradeStrategy: _upgrade,
    shareVolumePolicy: _share,
    shareVolumeDevicePolicy: _shareDevice,
    transferEnv: _transfer,
    resourcesPolicy: _resources,
    ...container
  } = c;
  return container;
}

// ---------------------------------------------------------------------------------------------
// ControllerRevisions (sidecarcontrol history control)

/** The fields a SidecarSet revision records; the rest of the spec is not versioned. */
const REVISION_FIELDS = ['volumes', 'containers', 'initContainers', 'imagePullSecrets', 'patchPodMetadata'] as const;

/**
 * The revision data: `{"spec": {"$patch": "replace", <revision fields>}}` (getPatch). v1.8.2 takes the
 * fields from its typed SidecarSet re-encoded, so the containers are written as Go marshals a
 * SidecarContainer (`resources: {}` and the other struct members present whether or not the stored
 * object has them: an object OpenKruise stored has them, one created through Kruise TS does not), and
 * an absent or empty field (all are omitempty) is null.
 */
export function sidecarSetRevisionData(s: Pick<SidecarSet, 'spec'>): { spec: Record<string, unknown> } {
  const spec: Record<string, unknown> = { $patch: 'replace' };
  for (const f of REVISION_FIELDS) {
    const v = s.spec?.[f];
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) spec[f] = null;
    else if (f === 'containers' || f === 'initContainers') spec[f] = JSON.parse(marshalGoSidecarContainers(v as unknown[]));
    else spec[f] = v;
  }
  return { spec };
}

/** The revision's name: `<sidecarset>-<hash of the data and collisionCount>`. */
export function sidecarSetRevisionName(s: StoredSidecarSet, collisionCount: number | undefined): string {
  return controllerRevisionName(s.metadata.name, marshalGoJSON(sidecarSetRevisionData(s)), collisionCount);
}

/** Labels every revision of the SidecarSet carries. */
export function revisionLabels(s: StoredSidecarSet): Record<string, string> {
  const labels: Record<string, string> = { ...s.metadata.labels, [SIDECARSET_NAME_REVISION_LABEL]: s.metadata.name };
  if (s.spec?.customVersion) labels[SIDECARSET_CUSTOM_VERSION_LABEL] = s.spec.customVersion;
  return labels;
}

/**
 * The SidecarSet as a history revision restores it (GetHistorySidecarSet): the spec replaced by the
 * revision's recorded fields, the hashes from the revision, latestRevision = the revision's name.
 */
export function restoreSidecarSetRevision(s: StoredSidecarSet, revision: ControllerRevision): StoredSidecarSet {
  const recorded = ((revision.data as { spec?: Record<string, unknown> } | undefined)?.spec ?? {}) as Record<string, unknown>;
  const spec: Record<string, unknown> = {};
  for (const f of REVISION_FIELDS) if (recorded[f] != null) spec[f] = structuredClone(recorded[f]);
  const restored = structuredClone(s);
  restored.spec = spec as SidecarSet['spec'];
  const annotations = (restored.metadata.annotations ??= {});
  for (const key of [SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION]) {
    const v = revision.metadata.annotations?.[key];
    if (v) annotations[key] = v;
  }
  restored.status = { ...(restored.status ?? { matchedPods: 0, updatedPods: 0, readyPods: 0 }), latestRevision: revision.metadata.name };
  return restored;
}

/**
 * The SidecarSet a canary SidecarSet stands in for, when it is one: in the pods both match only the
 * canary is injected (spec §6.2 step 2), so the two may also share their sidecars' names.
 */
export const canaryBaseOf = (s: { metadata?: { annotations?: Record<string, string> } }): string | undefined =>
  s.metadata?.annotations?.[SIDECARSET_CANARY_ANNOTATION] === 'true' ? s.metadata.annotations[SIDECARSET_BASE_ANNOTATION] : undefined;

/**
 * A SidecarSet's patchPodMetadata applied to a pod's annotations (PatchPodMetadata), at injection
 * and at every in-place upgrade: Retain adds missing keys, Overwrite sets them, MergePatchJson
 * merges the JSON object into the annotation's (RFC 7386; keys sorted, as Go marshals it). Throws
 * when a MergePatchJson annotation or patch is not JSON.
 */
export function patchPodMetadata(
  annotations: Record<string, string>,
  patches: NonNullable<NonNullable<SidecarSet['spec']>['patchPodMetadata']>,
): void {
  for (const patch of patches) {
    for (const [key, value] of Object.entries(patch.annotations ?? {})) {
      switch (patch.patchPolicy ?? 'Retain') {
        case 'Retain':
          if (!(key in annotations)) annotations[key] = value;
          break;
        case 'Overwrite':
          annotations[key] = value;
          break;
        case 'MergePatchJson':
          annotations[key] = annotations[key]
            ? marshalGoJSON(applyMergePatch(parseJSON(annotations[key], key), parseJSON(value, key)))
            : value;
          break;
      }
    }
  }
}

function parseJSON(text: string, key: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`annotation ${key}: ${(err as Error).message}`, { cause: err });
  }
}
