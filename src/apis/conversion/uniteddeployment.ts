// UnitedDeployment v1alpha1 ↔ v1beta1 (behaviour spec §22): v1alpha1 status.subsetReplicas and
// status.updateStatus{updatedRevision, currentPartitions} are v1beta1 status.updatedRevision plus
// the replicas/partition of each status.subsetStatuses entry (which v1alpha1's entries leave unset). The cloneSetTemplate carries a
// CloneSet spec of the same version, converted like a CloneSet with the template's metadata.

import type { CloneSetSpec, CloneSetSpecV1alpha1 } from '../apps/cloneset.ts';
import { cloneSetSpecToV1alpha1, cloneSetSpecToV1beta1 } from './cloneset.ts';
import { compact, withVersion, type KindConversion, type ObjectMetaLike } from './shared.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

interface SubsetStatus extends JsonObject {
  name?: string;
  replicas?: number;
  partition?: number;
}

function cloneSetTemplateOf(spec: unknown): JsonObject | undefined {
  if (!isJsonObject(spec) || !isJsonObject(spec.template)) return undefined;
  const t = spec.template.cloneSetTemplate;
  return isJsonObject(t) && isJsonObject(t.spec) ? t : undefined;
}

function numberMap(value: unknown): [string, number][] {
  return isJsonObject(value) ? Object.entries(value).filter((e): e is [string, number] => typeof e[1] === 'number') : [];
}

function statusToV1beta1(status: JsonObject): JsonObject {
  const { subsetReplicas, updateStatus, ...out } = status;
  const subsets: SubsetStatus[] = Array.isArray(out.subsetStatuses) ? (out.subsetStatuses as SubsetStatus[]) : [];
  const ensure = (name: string): SubsetStatus => {
    let s = subsets.find((x) => x.name === name);
    if (!s) subsets.push((s = { name }));
    return s;
  };
  for (const [name, replicas] of numberMap(subsetReplicas)) ensure(name).replicas = replicas;
  const update = isJsonObject(updateStatus) ? updateStatus : {};
  for (const [name, partition] of numberMap(update.currentPartitions)) ensure(name).partition = partition;
  if (subsets.length > 0) out.subsetStatuses = subsets;
  if (update.updatedRevision !== undefined) out.updatedRevision = update.updatedRevision;
  return out;
}

function statusToV1alpha1(status: JsonObject): JsonObject {
  const { updatedRevision, ...out } = status;
  const subsets = (Array.isArray(out.subsetStatuses) ? (out.subsetStatuses as SubsetStatus[]) : []).filter(
    (s) => typeof s.name === 'string' && s.name !== '',
  );
  const replicas = Object.fromEntries(subsets.map((s) => [s.name, s.replicas ?? 0]));
  const partitions = Object.fromEntries(subsets.map((s) => [s.name, s.partition ?? 0]));
  if (subsets.length > 0) out.subsetReplicas = replicas;
  // v1alpha1 keeps them in the two maps; its subset entries' own replicas/partition are "currently
  // unused" in OpenKruise v1.8.2, which leaves them unset.
  if (Array.isArray(out.subsetStatuses))
    out.subsetStatuses = (out.subsetStatuses as SubsetStatus[]).map(({ replicas: _r, partition: _p, ...rest }) => rest);
  if ((updatedRevision !== undefined && updatedRevision !== '') || subsets.length > 0) {
    out.updateStatus = compact({
      updatedRevision,
      currentPartitions: subsets.length > 0 ? partitions : undefined,
    });
  }
  return out;
}

export const unitedDeploymentConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    const template = cloneSetTemplateOf(out.spec);
    if (template) {
      const meta = isJsonObject(template.metadata) ? (template.metadata as ObjectMetaLike) : undefined;
      template.spec = cloneSetSpecToV1beta1(template.spec as CloneSetSpecV1alpha1, meta);
    }
    if (isJsonObject(out.status)) out.status = statusToV1beta1(out.status);
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    const template = cloneSetTemplateOf(out.spec);
    if (template) {
      const meta: ObjectMetaLike = isJsonObject(template.metadata) ? template.metadata : {};
      template.spec = cloneSetSpecToV1alpha1(template.spec as CloneSetSpec, meta);
      if (template.metadata !== undefined || Object.keys(meta).length > 0) template.metadata = meta;
    }
    if (isJsonObject(out.status)) out.status = statusToV1alpha1(out.status);
    return out;
  },
};
