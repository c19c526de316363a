// WorkloadSpread v1alpha1 ↔ v1beta1 (behaviour spec §22): subsets' requiredNodeSelectorTerm /
// preferredNodeSelectorTerms are requiredNodeSelector / preferredNodeSelector; subset conditions
// become metav1.Condition, whose lastTransitionTime, reason and message are required.

import { withVersion, type KindConversion, type KubeObject } from './shared.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

/** Reason given to a v1alpha1 subset condition that has none (metav1.Condition requires one). */
export const UNSPECIFIED_CONDITION_REASON = 'Unspecified';
const EPOCH = '1970-01-01T00:00:00Z';

function renameKey(obj: JsonObject, from: string, to: string): void {
  if (!Object.hasOwn(obj, from)) return;
  obj[to] = obj[from];
  delete obj[from];
}

function renameSubsetFields(spec: unknown, renames: [string, string][]): void {
  if (!isJsonObject(spec) || !Array.isArray(spec.subsets)) return;
  for (const subset of spec.subsets) {
    if (isJsonObject(subset)) for (const [from, to] of renames) renameKey(subset, from, to);
  }
}

/** Calls `fn` on every subset condition of status.subsetStatuses and status.versionedSubsetStatuses. */
function eachCondition(status: unknown, fn: (c: JsonObject) => void): void {
  if (!isJsonObject(status)) return;
  const lists: unknown[] = [status.subsetStatuses];
  if (isJsonObject(status.versionedSubsetStatuses)) lists.push(...Object.values(status.versionedSubsetStatuses));
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const subset of list) {
      if (!isJsonObject(subset) || !Array.isArray(subset.conditions)) continue;
      for (const c of subset.conditions) if (isJsonObject(c)) fn(c);
    }
  }
}

function creationTimestamp(obj: KubeObject): string | undefined {
  const ts = obj.metadata?.creationTimestamp;
  return typeof ts === 'string' ? ts : undefined;
}

export const workloadSpreadConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    renameSubsetFields(out.spec, [
      ['requiredNodeSelectorTerm', 'requiredNodeSelector'],
      ['preferredNodeSelectorTerms', 'preferredNodeSelector'],
    ]);
    eachCondition(out.status, (c) => {
      c.lastTransitionTime ??= creationTimestamp(out) ?? EPOCH;
      if (c.reason === undefined || c.reason === '') c.reason = UNSPECIFIED_CONDITION_REASON;
      c.message ??= '';
    });
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    renameSubsetFields(out.spec, [
      ['requiredNodeSelector', 'requiredNodeSelectorTerm'],
      ['preferredNodeSelector', 'preferredNodeSelectorTerms'],
    ]);
    // v1.8.2 writes its subset conditions with no reason or message (omitempty): the hub's stand-ins go.
    eachCondition(out.status, (c) => {
      delete c.observedGeneration;
      if (c.reason === UNSPECIFIED_CONDITION_REASON) delete c.reason;
      if (c.message === '') delete c.message;
    });
    return out;
  },
};
