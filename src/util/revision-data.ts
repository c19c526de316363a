// ControllerRevisions of a CloneSet (upstream pkg/controller/cloneset/revision and
// k8s pkg/controller/history.NewControllerRevision): the revision data is the template as a
// strategic-merge "replace" patch, serialised the way Go Kruise would so that revision names
// (hashes of those bytes) agree between Kruise TS and Go Kruise.

import type { CloneSet } from '../apis/apps/cloneset.ts';
import { CLONESET_VCT_HASH_ANNOTATION } from '../apis/constants.ts';
import type { PersistentVolumeClaim, PodTemplateSpec } from '../apis/core.ts';
import type { ControllerRevision } from '../apis/core-objects.ts';
import { CONTROLLER_REVISION_HASH_KEY, controllerRevisionName, fnv1a_32, hashControllerRevision, marshalGoJSON } from './revision.ts';

export type { ControllerRevision };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

// Go's json.Marshal of a typed corev1 struct always emits struct-typed fields (omitempty has no
// effect on structs) and non-omitempty fields. These are the ones present in ordinary templates.
function normaliseContainer(c: unknown): unknown {
  if (!isObject(c)) return c;
  return { ...c, resources: isObject(c.resources) ? c.resources : {} };
}

function normaliseContainers(list: unknown): unknown {
  return Array.isArray(list) ? list.map(normaliseContainer) : list;
}

/**
 * A pod template as Go writes a decoded corev1.PodTemplateSpec: `metadata` with
 * `creationTimestamp: null`, `spec` with `containers` (null when absent), every container with
 * `resources` (`{}` when absent).
 */
export function normalisePodTemplate(template: PodTemplateSpec | undefined): Json {
  const t: Json = isObject(template) ? { ...(template as Json) } : {};
  const metadata: Json = isObject(t.metadata) ? { ...t.metadata } : {};
  if (metadata.creationTimestamp === undefined) metadata.creationTimestamp = null;
  const spec: Json = isObject(t.spec) ? { ...t.spec } : {};
  spec.containers = spec.containers === undefined ? null : normaliseContainers(spec.containers);
  if (spec.initContainers !== undefined) spec.initContainers = normaliseContainers(spec.initContainers);
  if (spec.ephemeralContainers !== undefined) spec.ephemeralContainers = normaliseContainers(spec.ephemeralContainers);
  return { ...t, metadata, spec };
}

/** The revision data bytes: {"spec":{"template":{…,"$patch":"replace"}}}. */
export function cloneSetRevisionData(cs: CloneSet): string {
  const template = { ...normalisePodTemplate(cs.spec?.template), $patch: 'replace' };
  return marshalGoJSON({ spec: { template } });
}

/**
 * fnv32a over the VCTs reduced to name + spec, sorted by name; "" when there are none. The
 * bytes hashed are Kruise TS's own (Go feeds a spew dump of its JSON), so the value is only
 * comparable between revisions written by Kruise TS.
 */
export function volumeClaimTemplatesHash(templates: readonly PersistentVolumeClaim[] | undefined): string {
  if (!templates || templates.length === 0) return '';
  const reduced = templates
    .map((t) => ({ metadata: { name: t.metadata?.name ?? '', creationTimestamp: null }, spec: t.spec ?? {}, status: {} }))
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  return String(fnv1a_32(marshalGoJSON(reduced)));
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

/** The pod template a revision records (GetTemplateFromRevision), without the `$patch` marker. */
export function templateFromRevision(rev: ControllerRevision): PodTemplateSpec {
  const data = typeof rev.data === 'string' ? JSON.parse(rev.data) : rev.data;
  const template = isObject(data) && isObject(data.spec) && isObject(data.spec.template) ? { ...data.spec.template } : {};
  delete template.$patch;
  return template as PodTemplateSpec;
}
