// PodUnavailableBudget v1alpha1 ↔ v1beta1 (behaviour spec §16, §22): v1alpha1 expresses
// spec.protectOperations as the comma-list annotation `kruise.io/pub-protect-operations` and
// spec.protectTotalReplicas as `pub.kruise.io/protect-total-replicas`. v1beta1's
// ignoredPodSelector has no v1alpha1 form (kept by the conversion residual).

import { PUB_PROTECT_OPERATIONS_ANNOTATION, PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION } from '../constants.ts';
import { deleteMetaValue, metaValue, metadataOf, parseInt32, setMetaValue, withVersion, type KindConversion } from './shared.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

function parseOperations(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export const podUnavailableBudgetConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    const specOf = (): JsonObject => (isJsonObject(out.spec) ? out.spec : (out.spec = {}));

    const ops = metaValue(out.metadata, 'annotations', PUB_PROTECT_OPERATIONS_ANNOTATION);
    if (ops !== undefined && parseOperations(ops).length > 0) {
      specOf().protectOperations = parseOperations(ops);
      deleteMetaValue(out.metadata, 'annotations', PUB_PROTECT_OPERATIONS_ANNOTATION);
    }
    const rawTotal = metaValue(out.metadata, 'annotations', PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION);
    const total = rawTotal === undefined ? undefined : parseInt32(rawTotal);
    if (total !== undefined) {
      specOf().protectTotalReplicas = total;
      deleteMetaValue(out.metadata, 'annotations', PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION);
    }
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    if (!isJsonObject(out.spec)) return out;
    const { protectOperations, protectTotalReplicas, ignoredPodSelector: _ignored, ...spec } = out.spec;
    out.spec = spec;
    if (Array.isArray(protectOperations) && protectOperations.length > 0) {
      setMetaValue(metadataOf(out), 'annotations', PUB_PROTECT_OPERATIONS_ANNOTATION, protectOperations.join(','));
    }
    if (typeof protectTotalReplicas === 'number') {
      setMetaValue(metadataOf(out), 'annotations', PUB_PROTECT_TOTAL_REPLICAS_ANNOTATION, String(protectTotalReplicas));
    }
    return out;
  },
};
