// SidecarSet v1alpha1 ↔ v1beta1 (behaviour spec §22): v1alpha1 spec.namespace becomes a
// namespaceSelector on the `kubernetes.io/metadata.name` namespace label (taking precedence over
// a v1alpha1 namespaceSelector); the v1alpha1 custom-version label is v1beta1 spec.customVersion.

import { SIDECARSET_CUSTOM_VERSION_LABEL } from '../constants.ts';
import { deleteMetaValue, metaValue, metadataOf, setMetaValue, withVersion, type KindConversion } from './shared.ts';
import { isJsonObject } from '../json.ts';

/** Label every namespace carries with its own name (Kubernetes ≥ 1.21). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export const sidecarSetConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    const spec = isJsonObject(out.spec) ? out.spec : undefined;
    if (spec && spec.namespace !== undefined) {
      if (typeof spec.namespace === 'string' && spec.namespace !== '') {
        spec.namespaceSelector = { matchLabels: { [NAMESPACE_NAME_LABEL]: spec.namespace } };
      }
      delete spec.namespace;
    }
    const customVersion = metaValue(out.metadata, 'labels', SIDECARSET_CUSTOM_VERSION_LABEL);
    if (customVersion !== undefined) {
      deleteMetaValue(out.metadata, 'labels', SIDECARSET_CUSTOM_VERSION_LABEL);
      (isJsonObject(out.spec) ? out.spec : (out.spec = {})).customVersion = customVersion;
    }
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    if (isJsonObject(out.spec) && out.spec.customVersion !== undefined) {
      const customVersion = out.spec.customVersion;
      delete out.spec.customVersion;
      if (typeof customVersion === 'string' && customVersion !== '') {
        setMetaValue(metadataOf(out), 'labels', SIDECARSET_CUSTOM_VERSION_LABEL, customVersion);
      }
    }
    return out;
  },
};
