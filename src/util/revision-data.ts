// ControllerRevisions of a CloneSet (upstream pkg/controller/cloneset/revision and
// k8s pkg/controller/history.NewControllerRevision): the revision data is the template as a
// strategic-merge "replace" patch, serialised the way Go Kruise would so that revision names
// (hashes of those bytes) agree between Kruise TS and Go Kruise.

import type { CloneSet } from '../apis/apps/cloneset.ts';
import { CLONESET_VCT_HASH_ANNOTATION, CONTROLLER_REVISION_HASH_LABEL } from '../apis/constants.ts';
import type { PersistentVolumeClaim, PodTemplateSpec } from '../apis/core.ts';
import type { ControllerRevision, Pod } from '../apis/core-objects.ts';
import { formatQuantity, tryParseQuantity } from '../apis/quantity.ts';
import { deepHashBytes } from './go-pod-template.ts';
import { CONTROLLER_REVISION_HASH_KEY, controllerRevisionName, hashControllerRevision, marshalGoJSON, shortHash } from './revision.ts';
import { isJsonObject, type JsonObject } from '../apis/json.ts';

export type { ControllerRevision };

// Go's json.Marshal of a typed corev1 struct always emits struct-typed fields (omitempty has no
// effect on structs) and non-omitempty fields. These are the ones present in ordinary templates.
function canonicalQuantities(list: unknown): unknown {
  return isJsonObject(list) ? Object.fromEntries(Object.entries(list).map(([k, v]) => [k, goQuantity(v)])) : list;
}

function normaliseContainer(c: unknown): unknown {
  if (!isJsonObject(c)) return c;
  const resources: JsonObject = isJsonObject(c.resources) ? { ...c.resources } : {};
  if (resources.limits !== undefined) resources.limits = canonicalQuantities(resources.limits);
  if (resources.requests !== undefined) resources.requests = canonicalQuantities(resources.requests);
  return { ...c, resources };
}

function normaliseContainers(list: unknown): unknown {
  return Array.isArray(list) ? list.map(normaliseContainer) : list;
}

/**
 * A pod template as Go writes a decoded corev1.PodTemplateSpec: `metadata` with
 * `creationTimestamp: null`, `spec` with `containers` (null when absent), every container with
 * `resources` (`{}` when absent), container and overhead quantities in canonical form.
 */
export function normalisePodTemplate(template: PodTemplateSpec | undefined): JsonObject {
  const t: JsonObject = isJsonObject(template) ? { ...(template as JsonObject) } : {};
  const metadata: JsonObject = isJsonObject(t.metadata) ? { ...t.metadata } : {};
  if (metadata.creationTimestamp === undefined) metadata.creationTimestamp = null;
  const spec: JsonObject = isJsonObject(t.spec) ? { ...t.spec } : {};
  spec.containers = spec.containers === undefined ? null : normaliseContainers(spec.containers);
  if (spec.initContainers !== undefined) spec.initContainers = normaliseContainers(spec.initContainers);
  if (spec.ephemeralContainers !== undefined) spec.ephemeralContainers = normaliseContainers(spec.ephemeralContainers);
  if (spec.overhead !== undefined) spec.overhead = canonicalQuantities(spec.overhead);
  return { ...t, metadata, spec };
}

/** The revision data bytes: {"spec":{"template":{…,"$patch":"replace"}}}. */
export function cloneSetRevisionData(cs: CloneSet): string {
  const template = { ...normalisePodTemplate(cs.spec?.template), $patch: 'replace' };
  return marshalGoJSON({ spec: { template } });
}

// Go's json.Marshal of a typed struct: fields in declaration order, omitempty ones dropped when
// empty, non-pointer structs always written. Only the fields Go's types know survive a decode.
export type Field = [key: string, encoded: string | undefined];
export const goStruct = (fields: Field[]) =>
  `{${fields
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([k, v]) => `${marshalGoJSON(k)}:${v}`)
    .join(',')}}`;
export const str = (v: unknown) => (typeof v === 'string' ? marshalGoJSON(v) : undefined);
export const omitEmptyStr = (v: unknown) => (typeof v === 'string' && v !== '' ? marshalGoJSON(v) : undefined);
export const requiredStr = (v: unknown) => marshalGoJSON(typeof v === 'string' ? v : '');
export const nonEmptyList = (v: unknown, item: (x: unknown) => string) =>
  Array.isArray(v) && v.length > 0 ? `[${v.map(item).join(',')}]` : undefined;
export const nonEmptyMap = (v: unknown, value: (x: unknown) => unknown) =>
  isJsonObject(v) && Object.keys(v).length > 0
    ? marshalGoJSON(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, value(x)])))
    : undefined;

/** A quantity as Go marshals it once decoded: canonical text (invalid text is kept; Go would not have decoded it). */
export function goQuantity(v: unknown): unknown {
  if (typeof v !== 'string' && typeof v !== 'number') return v;
  const q = tryParseQuantity(String(v));
  return q ? formatQuantity(q) : v;
}

export function goLabelSelector(v: unknown): string | undefined {
  if (!isJsonObject(v)) return undefined;
  return goStruct([
    ['matchLabels', nonEmptyMap(v.matchLabels, (x) => x)],
    [
      'matchExpressions',
      nonEmptyList(v.matchExpressions, (e) => {
        const r = isJsonObject(e) ? e : {};
        return goStruct([
          ['key', requiredStr(r.key)],
          ['operator', requiredStr(r.operator)],
          ['values', nonEmptyList(r.values, (x) => marshalGoJSON(x))],
        ]);
      }),
    ],
  ]);
}

function goTypedReference(v: unknown, withNamespace: boolean): string | undefined {
  if (!isJsonObject(v)) return undefined;
  return goStruct([
    ['apiGroup', str(v.apiGroup) ?? 'null'],
    ['kind', requiredStr(v.kind)],
    ['name', requiredStr(v.name)],
    ...(withNamespace ? ([['namespace', str(v.namespace)]] as Field[]) : []),
  ]);
}

/** json.Marshal of a corev1.PersistentVolumeClaimSpec (k8s.io/api v0.30, the version v1.8.2 is built with). */
function goClaimSpec(spec: unknown): string {
  const s = isJsonObject(spec) ? spec : {};
  const resources = isJsonObject(s.resources) ? s.resources : {};
  return goStruct([
    ['accessModes', nonEmptyList(s.accessModes, (x) => marshalGoJSON(x))],
    ['selector', goLabelSelector(s.selector)],
    [
      'resources',
      goStruct([
        ['limits', nonEmptyMap(resources.limits, goQuantity)],
        ['requests', nonEmptyMap(resources.requests, goQuantity)],
      ]),
    ],
    ['volumeName', omitEmptyStr(s.volumeName)],
    ['storageClassName', str(s.storageClassName)],
    ['volumeMode', str(s.volumeMode)],
    ['dataSource', goTypedReference(s.dataSource, false)],
    ['dataSourceRef', goTypedReference(s.dataSourceRef, true)],
    ['volumeAttributesClassName', str(s.volumeAttributesClassName)],
  ]);
}

/**
 * The claim-template hash upstream writes to `kruise.io/cloneset-volumeclaimtemplate-hash`: the
 * templates reduced to name + spec and sorted by name, marshalled as Go's typed
 * []PersistentVolumeClaim, then fed to FNV-1a (32-bit) the way Kubernetes' DeepHashObject feeds a
 * []byte — as spew's `%#v` text, `([]uint8)[123 34 …]`. "" when there are none.
 */
export function volumeClaimTemplatesHash(templates: readonly PersistentVolumeClaim[] | undefined): string {
  if (!templates || templates.length === 0) return '';
  const claims = templates
    .map((t) => ({ name: t.metadata?.name ?? '', spec: t.spec }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((t) =>
      goStruct([
        [
          'metadata',
          goStruct([
            ['name', omitEmptyStr(t.name)],
            ['creationTimestamp', 'null'],
          ]),
        ],
        ['spec', goClaimSpec(t.spec)],
        ['status', '{}'],
      ]),
    );
  return String(deepHashBytes(`[${claims.join(',')}]`));
}

/** In-place is allowed across a VCT change only when both hashes are known and equal. */
export function canVolumeClaimTemplatesUpdateInPlace(oldRev: ControllerRevision, newRev: ControllerRevision): boolean {
  const o = oldRev.metadata.annotations?.[CLONESET_VCT_HASH_ANNOTATION];
  const n = newRev.metadata.annotations?.[CLONESET_VCT_HASH_ANNOTATION];
  if (o === undefined || n === undefined) return true;
  return o === n;
}

/**
 * history.NewControllerRevision for a CloneSet: labels = template labels + the bare hash,
 * annotations = the CloneSet's annotations + the VCT hash, controller ownerReference, name
 * `<cs>-<hash>` (hash over the data and collisionCount).
 */
export function newCloneSetRevision(cs: CloneSet, revision: number, collisionCount?: number | null): ControllerRevision {
  const data = cloneSetRevisionData(cs);
  const name = cs.metadata?.name ?? '';
  const hash = hashControllerRevision(data, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(name, data, collisionCount),
      namespace: cs.metadata?.namespace,
      labels: { ...(cs.spec?.template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_KEY]: hash },
      annotations: {
        ...(cs.metadata?.annotations ?? {}),
        [CLONESET_VCT_HASH_ANNOTATION]: volumeClaimTemplatesHash(cs.spec?.volumeClaimTemplates),
      },
      ownerReferences: [
        {
          apiVersion: cs.apiVersion ?? 'apps.kruise.io/v1beta1',
          kind: 'CloneSet',
          name,
          uid: cs.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: JSON.parse(data),
    revision,
  };
}

/** The revision data as Go bytes (sorted keys), whatever form it arrived in. */
export function revisionDataBytes(rev: ControllerRevision): string {
  return typeof rev.data === 'string' ? marshalGoJSON(JSON.parse(rev.data)) : marshalGoJSON(rev.data ?? null);
}

/** history.EqualRevision: same data bytes. */
export function equalRevision(a: ControllerRevision, b: ControllerRevision): boolean {
  return revisionDataBytes(a) === revisionDataBytes(b);
}

/** Where the current template's revision comes from (see chooseUpdateRevision). */
export interface UpdateRevisionChoice {
  /** The revision of the current template, with the number it has after this round. */
  update: ControllerRevision;
  collisionCount: number;
  /** A new revision to create (no stored one is equal). */
  newRevision?: ControllerRevision;
  /** An older equal revision brought back (a rollback): as stored, to be renumbered to update.revision. */
  renumbered?: ControllerRevision;
}

/**
 * The history step every workload shares (upstream's constructHistory / getUpdateRevision): the
 * newest stored revision equal to the current template's is the update revision; an older equal one
 * is renumbered to be the newest; none equal means a new one, whose name skips those taken (each
 * skip bumps collisionCount). `make(revision, collisionCount)` builds the candidate.
 */
export function chooseUpdateRevision(
  revisions: readonly ControllerRevision[],
  collisionCount: number,
  make: (revision: number, collisionCount: number) => ControllerRevision,
): UpdateRevisionChoice {
  const sorted = [...revisions].sort((a, b) => a.revision - b.revision);
  const newest = sorted.at(-1);
  const next = newest ? newest.revision + 1 : 1;
  const candidate = make(next, collisionCount);
  const equal = sorted.filter((r) => equalRevision(r, candidate)).at(-1);
  if (equal && equal === newest) return { update: equal, collisionCount };
  if (equal) return { update: { ...equal, revision: next }, collisionCount, renumbered: equal };
  const names = new Set(sorted.map((r) => r.metadata.name));
  let update = candidate;
  while (names.has(update.metadata.name)) update = make(next, ++collisionCount);
  return { update, collisionCount, newRevision: update };
}

/**
 * History clean-up (CloneSet truncateHistory, StatefulSet truncateHistory): the names of revisions
 * neither current, update, nor named by a pod's revision label (full or short hash), oldest first,
 * beyond `limit`.
 */
export function revisionsToTruncate(
  revisions: readonly ControllerRevision[],
  pods: readonly Pick<Pod, 'metadata'>[],
  current: string,
  update: string,
  limit: number,
): string[] {
  const live = new Set([current, update]);
  for (const p of pods) live.add(shortHash(p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? ''));
  const dead = [...revisions]
    .sort((a, b) => a.revision - b.revision)
    .map((r) => r.metadata.name ?? '')
    .filter((name) => !live.has(name) && !live.has(shortHash(name)));
  return dead.length <= limit ? [] : dead.slice(0, dead.length - limit);
}

/** The pod template a revision records (GetTemplateFromRevision), without the `$patch` marker. */
export function templateFromRevision(rev: ControllerRevision): PodTemplateSpec {
  const data = typeof rev.data === 'string' ? JSON.parse(rev.data) : rev.data;
  const template = isJsonObject(data) && isJsonObject(data.spec) && isJsonObject(data.spec.template) ? { ...data.spec.template } : {};
  delete template.$patch;
  return template as PodTemplateSpec;
}

/** A workload that records its pod template in ControllerRevisions (Advanced StatefulSet, …). */
export interface TemplateOwner {
  apiVersion?: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
  template?: PodTemplateSpec;
}

/**
 * history.NewControllerRevision as upstream StatefulSet's newRevision: the data is the template as a
 * "replace" patch (the same bytes as CloneSet's), labels = template labels + hash, annotations = the
 * owner's annotations, controller ownerReference, name `<owner>-<hash>`.
 */
export function newTemplateRevision(owner: TemplateOwner, revision: number, collisionCount?: number | null): ControllerRevision {
  const data = marshalGoJSON({ spec: { template: { ...normalisePodTemplate(owner.template), $patch: 'replace' } } });
  const name = owner.metadata?.name ?? '';
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(name, data, collisionCount),
      namespace: owner.metadata?.namespace,
      labels: { ...(owner.template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_KEY]: hashControllerRevision(data, collisionCount) },
      annotations: { ...(owner.metadata?.annotations ?? {}) },
      ownerReferences: [
        {
          apiVersion: owner.apiVersion ?? 'apps.kruise.io/v1beta1',
          kind: owner.kind,
          name,
          uid: owner.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: JSON.parse(data),
    revision,
  };
}
