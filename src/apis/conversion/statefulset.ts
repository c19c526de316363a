// Advanced StatefulSet v1alpha1 ↔ v1beta1 (behaviour spec §22): v1alpha1 is the v1beta1 shape
// without reserveOrdinals, lifecycle, scaleStrategy, persistentVolumeClaimRetentionPolicy,
// ordinals, volumeClaimUpdateStrategy and status.volumeClaims. Those are dropped here and carried
// across a round trip by the conversion residual annotation.

import { withVersion, type KindConversion } from './shared.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

const V1BETA1_ONLY_SPEC_FIELDS = [
  'volumeClaimUpdateStrategy',
  'reserveOrdinals',
  'lifecycle',
  'scaleStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'ordinals',
] as const;

export const statefulSetConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    // availableReplicas is required in v1beta1; older v1alpha1 objects do not report it.
    if (isJsonObject(out.status) && out.status.availableReplicas === undefined) out.status.availableReplicas = 0;
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    if (isJsonObject(out.spec)) {
      const spec: JsonObject = out.spec;
      for (const field of V1BETA1_ONLY_SPEC_FIELDS) delete spec[field];
    }
    if (isJsonObject(out.status)) delete out.status.volumeClaims;
    return out;
  },
};
