// In-place update engine shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet
// (behaviour spec §3.8, upstream pkg/util/inplaceupdate). Pure: the functions take the observed pod
// and revisions and return the pod (and status conditions) the executor should write.
//
// Flow: calculateInPlaceUpdateSpec diffs two revisions; planInPlaceUpdate turns the spec into the
// first write (InPlaceUpdateReady=False, new images/metadata/resources for the highest-priority
// container batch, the inplace-update-state annotation — or, with a grace period, the grace annotation
// only); planInPlaceRefresh later finishes the grace period, starts the next container batch once
// the previous one is ready, and flips InPlaceUpdateReady back to True when the update completed.

import {
  CONDITION_INPLACE_UPDATE_READY,
  CONTAINER_LAUNCH_PRIORITY_ANNOTATION,
  CONTROLLER_REVISION_HASH_LABEL,
  ENV_CONTAINER_BARRIER,
  ENV_CONTAINER_PRIORITY,
  INPLACE_UPDATE_GRACE_ANNOTATION,
  INPLACE_UPDATE_GRACE_ANNOTATION_OLD,
  INPLACE_UPDATE_STATE_ANNOTATION,
  INPLACE_UPDATE_STATE_ANNOTATION_OLD,
  RUNTIME_CONTAINERS_META_ANNOTATION,
} from '../apis/constants.ts';
import type { Container, ResourceRequirements } from '../apis/core.ts';
import type { Pod, PodCondition } from '../apis/core-objects.ts';
import {
  applyContainerResources,
  checkResourcesResized,
  CONTAINER_RESOURCES_PATH,
  podQOSClass,
  recordResourceChange,
  resizeRestartsContainer,
} from './inplaceupdate-vertical.ts';
import { getCondition, setCondition } from './lifecycle.ts';
import { deepHashBytes } from './go-pod-template.ts';
import { compareCodePoints, equalToRevisionHash, marshalGoJSON } from './revision.ts';
import { templateFromRevision, type ControllerRevision } from './revision-data.ts';
import { isJsonObject } from '../apis/json.ts';

// ---------------------------------------------------------------------------------------------
// Annotations

export interface InPlaceUpdateState {
  revision: string;
  updateTimestamp: string;
  lastContainerStatuses: Record<string, { imageID?: string }> | null;
  updateEnvFromMetadata?: boolean;
  updateResources?: boolean;
  updateImages?: boolean;
  nextContainerImages?: Record<string, string>;
  nextContainerRefMetadata?: Record<string, RefMetadata>;
  /** Resources of lower-priority containers, resized in a later batch (gate InPlaceWorkloadVerticalScaling). */
  nextContainerResources?: Record<string, ResourceRequirements>;
  preCheckBeforeNext?: { containersRequiredReady?: string[] };
  containerBatchesRecord?: Array<{ timestamp: string; containers: string[] }>;
}

/** Labels/annotations a container's env reads through the downward API. */
export interface RefMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** What an in-place update changes (upstream UpdateSpec; stored in the grace annotation). */
export interface UpdateSpec {
  revision: string;
  containerImages: Record<string, string>;
  containerRefMetadata: Record<string, RefMetadata>;
  /** New cpu/memory limits and requests per container (gate InPlaceWorkloadVerticalScaling). */
  containerResources: Record<string, ResourceRequirements>;
  /** Strategic-merge patch `{"metadata":{…}}` of template label/annotation changes. */
  metaDataPatch?: string;
  updateEnvFromMetadata?: boolean;
  graceSeconds?: number;
}

export interface RuntimeContainerMetaSet {
  containers: Array<{
    name: string;
    containerID: string;
    restartCount?: number;
    hashes?: { plainHash?: number; plainHashWithoutResources?: number; extractedEnvFromMetadataHash?: number };
  }>;
}

const omitEmpty = <T extends object>(m: T | undefined): T | undefined => (m && Object.keys(m).length > 0 ? m : undefined);

// ObjectMeta is a struct in Go: it always carries creationTimestamp.
const refMetaJSON = (m: RefMetadata) => ({ creationTimestamp: null, labels: m.labels, annotations: m.annotations });

/** The state annotation with Go's field order and omitempty rules. */
export function serializeInPlaceUpdateState(s: InPlaceUpdateState): string {
  const next = omitEmpty(s.nextContainerRefMetadata);
  return JSON.stringify({
    revision: s.revision,
    updateTimestamp: s.updateTimestamp,
    lastContainerStatuses: s.lastContainerStatuses,
    updateEnvFromMetadata: s.updateEnvFromMetadata || undefined,
    updateResources: s.updateResources || undefined,
    updateImages: s.updateImages || undefined,
    nextContainerImages: omitEmpty(s.nextContainerImages),
    nextContainerRefMetadata: next && Object.fromEntries(Object.entries(next).map(([k, v]) => [k, refMetaJSON(v)])),
    nextContainerResources: omitEmpty(s.nextContainerResources),
    preCheckBeforeNext: s.preCheckBeforeNext,
    containerBatchesRecord: s.containerBatchesRecord?.length ? s.containerBatchesRecord : undefined,
  });
}

export function getInPlaceUpdateState(pod: Pod): InPlaceUpdateState | undefined {
  const a = pod.metadata.annotations ?? {};
  const raw = a[INPLACE_UPDATE_STATE_ANNOTATION] ?? a[INPLACE_UPDATE_STATE_ANNOTATION_OLD];
  if (raw === undefined) return undefined;
  const s = JSON.parse(raw) as InPlaceUpdateState;
  if (s.nextContainerRefMetadata) {
    for (const [k, v] of Object.entries(s.nextContainerRefMetadata)) {
      s.nextContainerRefMetadata[k] = { labels: v.labels, annotations: v.annotations };
    }
  }
  return s;
}

export function getInPlaceUpdateGrace(pod: Pod): string | undefined {
  const a = pod.metadata.annotations ?? {};
  const raw = a[INPLACE_UPDATE_GRACE_ANNOTATION] ?? a[INPLACE_UPDATE_GRACE_ANNOTATION_OLD];
  return raw === '' ? undefined : raw;
}

function serializeUpdateSpec(spec: UpdateSpec): string {
  const refs = omitEmpty(spec.containerRefMetadata);
  return JSON.stringify({
    revision: spec.revision,
    containerImages: omitEmpty(spec.containerImages),
    containerRefMetadata: refs && Object.fromEntries(Object.entries(refs).map(([k, v]) => [k, refMetaJSON(v)])),
    containerResources: omitEmpty(spec.containerResources),
    // []byte in Go, hence base64.
    metaDataPatch: spec.metaDataPatch === undefined ? undefined : Buffer.from(spec.metaDataPatch).toString('base64'),
    updateEnvFromMetadata: spec.updateEnvFromMetadata || undefined,
    graceSeconds: spec.graceSeconds || undefined,
  });
}

function parseUpdateSpec(raw: string): UpdateSpec {
  const o = JSON.parse(raw);
  const refs: Record<string, RefMetadata> = {};
  for (const [k, v] of Object.entries((o.containerRefMetadata ?? {}) as Record<string, RefMetadata>)) {
    refs[k] = { labels: v.labels, annotations: v.annotations };
  }
  return {
    revision: o.revision ?? '',
    containerImages: o.containerImages ?? {},
    containerRefMetadata: refs,
    containerResources: o.containerResources ?? {},
    metaDataPatch: o.metaDataPatch ? Buffer.from(o.metaDataPatch, 'base64').toString('utf8') : undefined,
    updateEnvFromMetadata: !!o.updateEnvFromMetadata,
    graceSeconds: o.graceSeconds ?? 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Revision diff

export interface PatchOp {
  op: 'add' | 'remove' | 'replace';
  path: string;
  value?: unknown;
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

/** A JSON patch turning a into b (objects by key, arrays by index, anything else replaced). */
export function diffJSON(a: unknown, b: unknown, path = ''): PatchOp[] {
  if (isJsonObject(a) && isJsonObject(b)) {
    const ops: PatchOp[] = [];
    for (const k of Object.keys(a)) {
      const p = `${path}/${escapePointer(k)}`;
      if (!(k in b)) ops.push({ op: 'remove', path: p });
      else ops.push(...diffJSON(a[k], b[k], p));
    }
    for (const k of Object.keys(b)) if (!(k in a)) ops.push({ op: 'add', path: `${path}/${escapePointer(k)}`, value: b[k] });
    return ops;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const ops: PatchOp[] = [];
    const common = Math.min(a.length, b.length);
    for (let i = 0; i < common; i++) ops.push(...diffJSON(a[i], b[i], `${path}/${i}`));
    for (let i = a.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `${path}/${i}` });
    for (let i = common; i < b.length; i++) ops.push({ op: 'add', path: `${path}/${i}`, value: b[i] });
    return ops;
  }
  return marshalGoJSON(a) === marshalGoJSON(b) ? [] : [{ op: 'replace', path, value: b }];
}

const CONTAINER_IMAGE_PATH = /^\/spec\/containers\/([0-9]+)\/image$/;

/**
 * fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['k']` → ['metadata.labels', 'k'], split at
 * the first `['` (so `a['x['y']` is ['a', "x['y"]); undefined when not subscripted.
 */
function splitSubscriptedPath(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const s = fieldPath.slice(0, -2);
  const at = s.indexOf("['");
  return at > 0 ? [s.slice(0, at), s.slice(at + 2)] : undefined;
}

// SidecarSet writes these itself; they never count as env from metadata.
const EXCLUDED_ENVS = new Set(['SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT']);

export interface MetadataEnvRef {
  /** The env var's name. */
  name: string;
  path: 'metadata.labels' | 'metadata.annotations';
  /** The label / annotation key. */
  key: string;
}

/**
 * The env vars of a container that take their value from a pod label or annotation
 * (`fieldRef: metadata.labels['k']` / `metadata.annotations['k']`), as OpenKruise v1.8.2 counts
 * them (pkg/util/containermeta): no literal value, not SidecarSet's version envs; in spec order.
 */
export function metadataEnvRefs(c: Container): MetadataEnvRef[] {
  const refs: MetadataEnvRef[] = [];
  for (const e of c.env ?? []) {
    const fp = e?.valueFrom?.fieldRef?.fieldPath;
    if (!fp || e.value || EXCLUDED_ENVS.has(e.name)) continue;
    const split = splitSubscriptedPath(fp);
    if (split && (split[0] === 'metadata.labels' || split[0] === 'metadata.annotations'))
      refs.push({ name: e.name, path: split[0], key: split[1] });
  }
  return refs;
}

/** Whether a container's env reads `metadata.labels['key']` / `metadata.annotations['key']`. */
export function isContainerReferenceToMeta(c: Container, metaPath: string, key: string): boolean {
  return metadataEnvRefs(c).some((r) => r.path === metaPath && r.key === key);
}

/** A Go map lookup: the value, or '' when the key is absent. */
const lookup = (m: Record<string, string> | undefined, key: string) => (m && Object.hasOwn(m, key) ? m[key] : '');

/**
 * OpenKruise's hashEnvs: the []v1.EnvVar{name, value} list, stably sorted by name (Go string
 * order), json.Marshal'ed (value omitted when empty, `null` for no env), then
 * hashutil.DeepHashObject of those bytes. No env from metadata still hashes (the bytes `null`).
 */
function hashEnvs(envs: Array<{ name: string; value: string }>): number {
  const sorted = [...envs].sort((a, b) => compareCodePoints(a.name, b.name));
  const json = sorted.length === 0 ? 'null' : marshalGoJSON(sorted.map((e) => ({ name: e.name, value: e.value || undefined })));
  return deepHashBytes(json);
}

/**
 * `extractedEnvFromMetadataHash` as the pod's metadata would set it today (upstream
 * GetExpectHash): the values a container's env takes from labels/annotations, hashed. Bit for bit
 * OpenKruise v1.8.2's number (test/fixtures/go-env-hash.json), so a runtime-containers-meta written
 * by either daemon is read correctly by either manager.
 */
export function envFromMetadataHash(c: Container, meta: { labels?: Record<string, string>; annotations?: Record<string, string> }): number {
  return hashEnvs(
    metadataEnvRefs(c).map((r) => ({ name: r.name, value: lookup(r.path === 'metadata.labels' ? meta.labels : meta.annotations, r.key) })),
  );
}

/**
 * The same hash over the values a running container's env actually holds (upstream
 * GetCurrentHash, the value kruise-daemon reports): equal to envFromMetadataHash exactly when the
 * container runs with the current labels/annotations.
 */
export function runtimeEnvFromMetadataHash(c: Container, env: Record<string, string>): number {
  return hashEnvs(metadataEnvRefs(c).map((r) => ({ name: r.name, value: lookup(env, r.name) })));
}

export interface CalculateOptions {
  /** Gate InPlaceUpdateEnvFromMetadata. */
  envFromMetadata: boolean;
  /** Gate InPlaceWorkloadVerticalScaling: container cpu/memory changes resize the pod in place. */
  verticalScaling: boolean;
  gracePeriodSeconds?: number;
  /** The revision value written to pods (CloneSet: full name, or the hash under CloneSetShortHash). */
  revisionValue?: (rev: ControllerRevision) => string;
}

/**
 * Whether (and how) the change from oldRev to newRev can be applied in place: container image
 * replacements, metadata changes and, with verticalScaling, cpu/memory value changes that keep the
 * pod's QoS class qualify. Undefined means "recreate".
 */
export function calculateInPlaceUpdateSpec(
  oldRev: ControllerRevision | undefined,
  newRev: ControllerRevision | undefined,
  opts: CalculateOptions,
): UpdateSpec | undefined {
  if (!oldRev || !newRev) return undefined;
  const oldTemp = templateFromRevision(oldRev);
  const newTemp = templateFromRevision(newRev);
  const oldData = typeof oldRev.data === 'string' ? JSON.parse(oldRev.data) : oldRev.data;
  const newData = typeof newRev.data === 'string' ? JSON.parse(newRev.data) : newRev.data;
  const spec: UpdateSpec = {
    revision: opts.revisionValue ? opts.revisionValue(newRev) : (newRev.metadata.name ?? ''),
    containerImages: {},
    containerRefMetadata: {},
    containerResources: {},
    graceSeconds: opts.gracePeriodSeconds ?? 0,
  };
  const metadataOps: PatchOp[] = [];
  for (const raw of diffJSON(oldData, newData)) {
    const op = { ...raw, path: raw.path.replace('/spec/template', '') };
    if (!op.path.startsWith('/spec/')) {
      if (op.path.startsWith('/metadata/')) {
        metadataOps.push(op);
        continue;
      }
      return undefined;
    }
    if (op.op !== 'replace') return undefined;
    const m = CONTAINER_IMAGE_PATH.exec(op.path);
    if (m) {
      const container = oldTemp.spec?.containers?.[Number(m[1])];
      if (!container || typeof op.value !== 'string') return undefined;
      spec.containerImages[container.name] = op.value;
      continue;
    }
    if (!opts.verticalScaling || !CONTAINER_RESOURCES_PATH.test(op.path)) return undefined;
    if (recordResourceChange(op, oldTemp.spec?.containers ?? [], spec.containerResources) !== undefined) return undefined;
  }
  // A resize cannot move the pod to another QoS class.
  if (Object.keys(spec.containerResources).length > 0 && podQOSClass(oldTemp.spec) !== podQOSClass(newTemp.spec)) return undefined;
  if (metadataOps.length === 0) return spec;

  const oldMeta = { labels: { ...oldTemp.metadata?.labels }, annotations: { ...oldTemp.metadata?.annotations } };
  const newMeta = { labels: { ...newTemp.metadata?.labels }, annotations: { ...newTemp.metadata?.annotations } };
  if (opts.envFromMetadata) {
    for (const op of metadataOps) {
      if (op.op !== 'replace' && op.op !== 'add') continue;
      const words = op.path.split('/');
      if (words.length < 4 || (words[2] !== 'labels' && words[2] !== 'annotations')) continue;
      const kind = words[2] as 'labels' | 'annotations';
      const key = unescapePointer(words.slice(3).join('/'));
      for (const c of newTemp.spec?.containers ?? []) {
        if (!isContainerReferenceToMeta(c, `metadata.${kind}`, key)) continue;
        const ref = (spec.containerRefMetadata[c.name] ??= {});
        (ref[kind] ??= {})[key] = String(op.value);
        delete oldMeta[kind][key];
        delete newMeta[kind][key];
        spec.updateEnvFromMetadata = true;
      }
    }
  }
  const patch = twoWayMetadataPatch(oldMeta, newMeta);
  if (patch !== undefined) spec.metaDataPatch = patch;
  return spec;
}

type MetaMaps = { labels: Record<string, string>; annotations: Record<string, string> };

function twoWayMetadataPatch(oldMeta: MetaMaps, newMeta: MetaMaps): string | undefined {
  const metadata: Record<string, Record<string, string | null>> = {};
  for (const kind of ['labels', 'annotations'] as const) {
    const delta: Record<string, string | null> = {};
    for (const k of Object.keys(oldMeta[kind])) if (!(k in newMeta[kind])) delta[k] = null;
    for (const [k, v] of Object.entries(newMeta[kind])) if (oldMeta[kind][k] !== v) delta[k] = v;
    if (Object.keys(delta).length) metadata[kind] = delta;
  }
  return Object.keys(metadata).length ? marshalGoJSON({ metadata }) : undefined;
}

export function canUpdateInPlace(
  oldRev: ControllerRevision | undefined,
  newRev: ControllerRevision | undefined,
  opts: CalculateOptions,
): boolean {
  return calculateInPlaceUpdateSpec(oldRev, newRev, opts) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Container launch priority

/**
 * Launch priority of each container, undefined when the pod has none: the barrier env the pod
 * webhook injected (`p_<n>`), else the `Ordered` annotation (0, -1, -2, …), else differing
 * KRUISE_CONTAINER_PRIORITY envs (missing = 0).
 */
export function containerPriorities(pod: Pod): Map<string, number | undefined> {
  const containers = pod.spec?.containers ?? [];
  const out = new Map<string, number | undefined>();
  const barrier = (c: Container) => {
    const key = c.env?.find((e) => e.name === ENV_CONTAINER_BARRIER)?.valueFrom?.configMapKeyRef?.key;
    return key?.startsWith('p_') ? Number.parseInt(key.slice(2), 10) : undefined;
  };
  if (containers.some((c) => barrier(c) !== undefined)) {
    for (const c of containers) out.set(c.name, barrier(c));
    return out;
  }
  if (pod.metadata.annotations?.[CONTAINER_LAUNCH_PRIORITY_ANNOTATION] === 'Ordered') {
    containers.forEach((c, i) => out.set(c.name, -i));
    return out;
  }
  const envPriority = (c: Container) => {
    const v = c.env?.find((e) => e.name === ENV_CONTAINER_PRIORITY)?.value;
    const n = v === undefined ? 0 : Number.parseInt(v, 10);
    return Number.isNaN(n) ? 0 : n;
  };
  const values = containers.map(envPriority);
  const differ = values.some((v) => v !== values[0]);
  containers.forEach((c, i) => out.set(c.name, differ ? values[i] : undefined));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Applying an UpdateSpec to a pod (one container batch)

function clonePod(pod: Pod): Pod {
  return structuredClone(pod);
}

function applyMetadataPatch(pod: Pod, patch: string | undefined): void {
  if (!patch) return;
  const meta = (JSON.parse(patch) as { metadata?: Record<string, Record<string, string | null>> }).metadata ?? {};
  for (const kind of ['labels', 'annotations'] as const) {
    const delta = meta[kind];
    if (!delta) continue;
    const target: Record<string, string> = { ...(pod.metadata[kind] ?? {}) };
    for (const [k, v] of Object.entries(delta)) {
      if (v === null) delete target[k];
      else target[k] = v;
    }
    pod.metadata[kind] = target;
  }
}

/**
 * Extends `toUpdate` with every container that reads a label/annotation some container in it
 * changes, until stable: a shared key is written once for all its readers.
 */
function addMetadataSharedContainers(toUpdate: Set<string>, refs: Record<string, RefMetadata>): void {
  for (;;) {
    const labels = new Set<string>();
    const annotations = new Set<string>();
    for (const name of toUpdate) {
      Object.keys(refs[name]?.labels ?? {}).forEach((k) => labels.add(k));
      Object.keys(refs[name]?.annotations ?? {}).forEach((k) => annotations.add(k));
    }
    let added = false;
    for (const [name, ref] of Object.entries(refs)) {
      if (toUpdate.has(name)) continue;
      if (Object.keys(ref.labels ?? {}).some((k) => labels.has(k)) || Object.keys(ref.annotations ?? {}).some((k) => annotations.has(k))) {
        toUpdate.add(name);
        added = true;
      }
    }
    if (!added) return;
  }
}

/** Whether containers of lower priority wait for a later batch of the recorded update. */
const hasNextBatch = (state: InPlaceUpdateState) =>
  Object.keys(state.nextContainerImages ?? {}).length > 0 ||
  Object.keys(state.nextContainerRefMetadata ?? {}).length > 0 ||
  Object.keys(state.nextContainerResources ?? {}).length > 0;

/**
 * Writes the first container batch of `spec` into a copy of `pod` and records the rest in the
 * state's next* fields (upstream defaultPatchUpdateSpecToPod). Mutates and returns `state`.
 */
export function patchUpdateSpecToPod(pod: Pod, spec: UpdateSpec, state: InPlaceUpdateState, now: string): Pod {
  const out = clonePod(pod);
  state.nextContainerImages = {};
  state.nextContainerRefMetadata = {};
  state.nextContainerResources = {};
  applyMetadataPatch(out, spec.metaDataPatch);
  out.metadata.labels ??= {};
  out.metadata.annotations ??= {};

  const priorities = containerPriorities(out);
  const toUpdate = new Set<string>();
  let highest: number | undefined;
  let highestGroup: string[] = [];
  for (const c of out.spec?.containers ?? []) {
    if (!(c.name in spec.containerImages) && !(c.name in spec.containerRefMetadata) && !(c.name in spec.containerResources)) continue;
    const p = priorities.get(c.name);
    if (p === undefined) toUpdate.add(c.name);
    else if (highest === undefined || highest < p) {
      highest = p;
      highestGroup = [c.name];
    } else if (highest === p) highestGroup.push(c.name);
  }
  highestGroup.forEach((n) => toUpdate.add(n));
  addMetadataSharedContainers(toUpdate, spec.containerRefMetadata);

  const imageChanged = new Set<string>();
  for (const c of out.spec?.containers ?? []) {
    const image = spec.containerImages[c.name];
    if (image === undefined) continue;
    if (toUpdate.has(c.name)) {
      c.image = image;
      imageChanged.add(c.name);
    } else state.nextContainerImages[c.name] = image;
  }
  for (const cs of out.status?.containerStatuses ?? []) {
    if (imageChanged.has(cs.name)) (state.lastContainerStatuses ??= {})[cs.name] = { imageID: cs.imageID };
  }
  const resized: Record<string, ResourceRequirements> = {};
  for (const [name, resources] of Object.entries(spec.containerResources)) {
    if (toUpdate.has(name)) resized[name] = resources;
    else state.nextContainerResources[name] = resources;
  }
  applyContainerResources(out, resized);
  for (const [name, ref] of Object.entries(spec.containerRefMetadata)) {
    if (toUpdate.has(name)) {
      Object.assign(out.metadata.labels, ref.labels ?? {});
      Object.assign(out.metadata.annotations, ref.annotations ?? {});
    } else state.nextContainerRefMetadata[name] = ref;
  }
  const sortedBatch = [...toUpdate].sort();
  const hasNext = hasNextBatch(state);
  state.preCheckBeforeNext = hasNext ? { containersRequiredReady: sortedBatch } : undefined;
  state.containerBatchesRecord = [...(state.containerBatchesRecord ?? []), { timestamp: now, containers: sortedBatch }];
  out.metadata.annotations[INPLACE_UPDATE_STATE_ANNOTATION] = serializeInPlaceUpdateState(state);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Conditions

/**
 * Conditions after setting `condition` (no change → undefined). Setting a readiness gate False
 * also turns Ready False, as kubelet would, so the pod leaves endpoints at once.
 */
export function conditionsWith(pod: Pod, condition: PodCondition): PodCondition[] | undefined {
  const old = getCondition(pod, condition.type);
  if (
    old &&
    old.status === condition.status &&
    (old.reason ?? '') === (condition.reason ?? '') &&
    (old.message ?? '') === (condition.message ?? '')
  ) {
    return undefined;
  }
  let conditions = setCondition(pod.status?.conditions, condition);
  if (condition.status === 'False') {
    const ready = conditions.find((c) => c.type === 'Ready');
    const containersReady = conditions.find((c) => c.type === 'ContainersReady');
    if (ready && containersReady?.status === 'True') {
      const unready: string[] = [];
      for (const g of pod.spec?.readinessGates ?? []) {
        const c = conditions.find((x) => x.type === g.conditionType);
        if (!c) unready.push(`corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`);
        else if (c.status !== 'True') unready.push(`the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`);
      }
      if (unready.length && ready.status !== 'False') {
        conditions = setCondition(conditions, {
          type: 'Ready',
          status: 'False',
          reason: 'ReadinessGatesNotReady',
          message: unready.join(', '),
          lastTransitionTime: condition.lastTransitionTime,
        });
      }
    }
  }
  return conditions;
}

const hasInPlaceReadinessGate = (pod: Pod) =>
  (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY);

// ---------------------------------------------------------------------------------------------
// Update

export interface InPlaceUpdatePlan {
  /** The pod to write (labels, annotations, images). */
  pod: Pod;
  /** New status.conditions to write first (InPlaceUpdateReady=False), when the pod has the gate. */
  conditions?: PodCondition[];
  /** Seconds until the grace period ends (Refresh applies the spec then). */
  delaySeconds: number;
  spec: UpdateSpec;
}

export interface UpdateOptions extends CalculateOptions {
  now: string;
  /** Writes the target revision onto the pod (revision label(s)). */
  writeRevision?: (pod: Pod, revision: string) => void;
  /** Extra mutations on the written pod (e.g. lifecycle state Updating). */
  mutate?: (pod: Pod) => void;
}

export function defaultWriteRevision(pod: Pod, revision: string): void {
  pod.metadata.labels = { ...pod.metadata.labels, [CONTROLLER_REVISION_HASH_LABEL]: revision };
}

/**
 * Whether the update takes the pod out of endpoints first (InPlaceUpdateReady=False): always when
 * it has the readiness gate, except for a resize alone that restarts none of its containers.
 */
function needsUnready(pod: Pod, spec: UpdateSpec): boolean {
  const resizeOnly =
    Object.keys(spec.containerResources).length > 0 && Object.keys(spec.containerImages).length === 0 && !spec.updateEnvFromMetadata;
  if (resizeOnly && !resizeRestartsContainer(pod, spec.containerResources)) return false;
  return hasInPlaceReadinessGate(pod);
}

/** Plans an in-place update of pod from oldRev to newRev; undefined when it cannot be in place. */
export function planInPlaceUpdate(
  pod: Pod,
  oldRev: ControllerRevision | undefined,
  newRev: ControllerRevision,
  opts: UpdateOptions,
): InPlaceUpdatePlan | undefined {
  const spec = calculateInPlaceUpdateSpec(oldRev, newRev, opts);
  if (!spec) return undefined;
  const conditions = needsUnready(pod, spec)
    ? conditionsWith(pod, {
        type: CONDITION_INPLACE_UPDATE_READY,
        status: 'False',
        reason: 'StartInPlaceUpdate',
        lastTransitionTime: opts.now,
      })
    : undefined;
  let clone = clonePod(pod);
  if (conditions) clone.status = { ...clone.status, conditions };
  (opts.writeRevision ?? defaultWriteRevision)(clone, spec.revision);
  clone.metadata.annotations ??= {};
  opts.mutate?.(clone);
  const state: InPlaceUpdateState = {
    revision: spec.revision,
    updateTimestamp: opts.now,
    lastContainerStatuses: null,
    updateEnvFromMetadata: spec.updateEnvFromMetadata,
    updateImages: Object.keys(spec.containerImages).length > 0,
    updateResources: Object.keys(spec.containerResources).length > 0,
  };
  clone.metadata.annotations[INPLACE_UPDATE_STATE_ANNOTATION] = serializeInPlaceUpdateState(state);
  delete clone.metadata.annotations[INPLACE_UPDATE_STATE_ANNOTATION_OLD];
  const grace = spec.graceSeconds ?? 0;
  if (grace <= 0) {
    clone = patchUpdateSpecToPod(clone, spec, state, opts.now);
    delete clone.metadata.annotations![INPLACE_UPDATE_GRACE_ANNOTATION];
    delete clone.metadata.annotations![INPLACE_UPDATE_GRACE_ANNOTATION_OLD];
  } else {
    clone.metadata.annotations[INPLACE_UPDATE_GRACE_ANNOTATION] = serializeUpdateSpec(spec);
  }
  return { pod: clone, conditions, delaySeconds: Math.max(grace, 0), spec };
}

// ---------------------------------------------------------------------------------------------
// Completion and refresh

function getRuntimeContainerMetaSet(pod: Pod): RuntimeContainerMetaSet | undefined {
  const raw = pod.metadata.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION];
  return raw ? (JSON.parse(raw) as RuntimeContainerMetaSet) : undefined;
}

function allEnvHashesConsistent(pod: Pod, metaSet: RuntimeContainerMetaSet): boolean {
  for (const c of pod.spec?.containers ?? []) {
    const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
    const meta = metaSet.containers.find((m) => m.name === c.name);
    if (!status || !meta || meta.containerID !== status.containerID) return false;
    if ((meta.hashes?.extractedEnvFromMetadataHash ?? 0) !== envFromMetadataHash(c, pod.metadata)) return false;
  }
  return true;
}

/**
 * Why the containers of the recorded in-place update have not finished, or undefined when done:
 * env-from-metadata updates wait for the daemon's hashes; resizes for the kubelet to report the
 * spec's resources in every container status; image updates for a changed imageID (an unchanged
 * imageID counts when the status already shows the new image).
 */
export function checkContainersUpdateCompleted(pod: Pod, state: InPlaceUpdateState): string | undefined {
  if (state.updateEnvFromMetadata) {
    const metaSet = getRuntimeContainerMetaSet(pod);
    if (!metaSet) return 'waiting for all containers hash consistent, but runtime-container-meta not found';
    if (!allEnvHashesConsistent(pod, metaSet)) return 'waiting for all containers hash consistent';
  }
  if (state.updateResources) {
    const notResized = checkResourcesResized(pod);
    if (notResized !== undefined) return notResized;
  }
  const images = new Map<string, string>();
  for (const c of pod.spec?.containers ?? []) {
    const image = c.image ?? '';
    images.set(c.name, image.split(':').length <= 1 ? `${image}:latest` : image);
  }
  const pending = new Set(Object.keys(state.lastContainerStatuses ?? {}));
  for (const cs of pod.status?.containerStatuses ?? []) {
    const old = state.lastContainerStatuses?.[cs.name];
    if (!old) continue;
    if ((old.imageID ?? '') === (cs.imageID ?? '') && images.get(cs.name) !== cs.image) return `container ${cs.name} imageID not changed`;
    pending.delete(cs.name);
  }
  if (pending.size > 0) return `not found statuses of containers ${[...pending].sort().join(',')}`;
  return undefined;
}

/** Whole-pod completion (upstream DefaultCheckInPlaceUpdateCompleted). */
export function checkInPlaceUpdateCompleted(pod: Pod): string | undefined {
  if (getInPlaceUpdateGrace(pod) !== undefined) return 'still in grace period of in-place update';
  const state = getInPlaceUpdateState(pod);
  if (!state) return undefined;
  if (hasNextBatch(state)) return 'existing containers to in-place update in next batches';
  return checkContainersUpdateCompleted(pod, state);
}

export interface RefreshOptions {
  now: string;
  /** Whether a pod's revision label names `revision` (CloneSet: full or short hash). */
  isPodAtRevision?: (pod: Pod, revision: string) => boolean;
}

export interface InPlaceRefreshPlan {
  /** Pod write: grace period finished or next container batch started. */
  pod?: Pod;
  /** New status.conditions (InPlaceUpdateReady=True). */
  conditions?: PodCondition[];
  /** Seconds until the grace period ends. */
  delaySeconds?: number;
}

function preCheckBeforeNext(pod: Pod, state: InPlaceUpdateState): boolean {
  return (state.preCheckBeforeNext?.containersRequiredReady ?? []).every(
    (name) => pod.status?.containerStatuses?.find((s) => s.name === name)?.ready === true,
  );
}

/** upstream Refresh: finish grace periods, start next batches, mark InPlaceUpdateReady. */
export function planInPlaceRefresh(pod: Pod, opts: RefreshOptions): InPlaceRefreshPlan {
  const graceRaw = getInPlaceUpdateGrace(pod);
  if (graceRaw !== undefined) return finishGracePeriod(pod, graceRaw, opts);

  const state = getInPlaceUpdateState(pod);
  if (state) {
    if (checkContainersUpdateCompleted(pod, state) !== undefined) return {};
    if (hasNextBatch(state)) {
      if (!preCheckBeforeNext(pod, state)) return {};
      const spec: UpdateSpec = {
        revision: state.revision,
        containerImages: state.nextContainerImages ?? {},
        containerRefMetadata: state.nextContainerRefMetadata ?? {},
        containerResources: state.nextContainerResources ?? {},
        updateEnvFromMetadata: state.updateEnvFromMetadata,
      };
      return { pod: patchUpdateSpecToPod(pod, spec, state, opts.now) };
    }
  }
  if (!hasInPlaceReadinessGate(pod)) return {};
  const conditions = conditionsWith(pod, { type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: opts.now });
  return conditions ? { conditions } : {};
}

function finishGracePeriod(pod: Pod, graceRaw: string, opts: RefreshOptions): InPlaceRefreshPlan {
  const spec = parseUpdateSpec(graceRaw);
  const state = getInPlaceUpdateState(pod);
  if (!state) return {};
  const atRevision =
    opts.isPodAtRevision ?? ((p: Pod, r: string) => equalToRevisionHash(p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL], r));
  const dropGrace = (p: Pod) => {
    delete p.metadata.annotations?.[INPLACE_UPDATE_GRACE_ANNOTATION];
    delete p.metadata.annotations?.[INPLACE_UPDATE_GRACE_ANNOTATION_OLD];
    return p;
  };
  if (!atRevision(pod, spec.revision)) return { pod: dropGrace(clonePod(pod)) };
  const elapsedMs = Date.parse(opts.now) - Date.parse(state.updateTimestamp);
  const graceMs = (spec.graceSeconds ?? 0) * 1000;
  if (elapsedMs < graceMs) return { delaySeconds: Math.ceil((graceMs - elapsedMs) / 1000) };
  return { pod: dropGrace(patchUpdateSpecToPod(pod, spec, state, opts.now)) };
}
