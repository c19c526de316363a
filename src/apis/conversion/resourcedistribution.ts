// ResourceDistribution v1alpha1 ↔ v1beta1 (behaviour spec §22): targets.namespaceLabelSelector
// is targets.namespaceSelector, and each status condition's failedNamespace is failedNamespaces.

import { withVersion, type KindConversion, type KubeObject } from './shared.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

function rename(obj: unknown, from: string, to: string): void {
  if (!isJsonObject(obj) || !Object.hasOwn(obj, from)) return;
  obj[to] = obj[from];
  delete obj[from];
}

function convertFields(obj: KubeObject, selector: [string, string], failed: [string, string]): KubeObject {
  if (isJsonObject(obj.spec)) rename(obj.spec.targets, ...selector);
  const status = obj.status;
  if (isJsonObject(status) && Array.isArray(status.conditions)) {
    for (const c of status.conditions as JsonObject[]) rename(c, ...failed);
  }
  return obj;
}

export const resourceDistributionConversion: KindConversion = {
  toV1beta1: (obj) =>
    convertFields(withVersion(obj, 'v1beta1'), ['namespaceLabelSelector', 'namespaceSelector'], ['failedNamespace', 'failedNamespaces']),
  toV1alpha1: (obj) =>
    convertFields(withVersion(obj, 'v1alpha1'), ['namespaceSelector', 'namespaceLabelSelector'], ['failedNamespaces', 'failedNamespace']),
};
