// Advanced DaemonSet v1alpha1 ↔ v1beta1 (behaviour spec §5.1, §22): the deprecated v1alpha1
// rollingUpdateType `Surging` is a Standard update driven by maxSurge; v1beta1's
// scaleStrategy.partitionedScaling is the v1alpha1 annotation
// `daemonset.kruise.io/progressive-create-pod=true` (upstream daemonset_conversion.go);
// status.daemonSetHash is status.updateRevision.

import { deleteMetaValue, metaValue, metadataOf, setMetaValue, withVersion, type KindConversion } from './shared.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

/** v1alpha1 annotation standing for v1beta1 spec.scaleStrategy.partitionedScaling. */
export const DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION = 'daemonset.kruise.io/progressive-create-pod';

function rollingUpdateOf(spec: unknown): JsonObject | undefined {
  if (!isJsonObject(spec) || !isJsonObject(spec.updateStrategy)) return undefined;
  const ru = spec.updateStrategy.rollingUpdate;
  return isJsonObject(ru) ? ru : undefined;
}

export const daemonSetConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    const ru = rollingUpdateOf(out.spec);
    if (ru?.rollingUpdateType === 'Surging') ru.rollingUpdateType = 'Standard';
    if (metaValue(out.metadata, 'annotations', DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION) === 'true') {
      deleteMetaValue(out.metadata, 'annotations', DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION);
      const spec = isJsonObject(out.spec) ? out.spec : (out.spec = {});
      spec.scaleStrategy = { ...(isJsonObject(spec.scaleStrategy) ? spec.scaleStrategy : {}), partitionedScaling: true };
    }
    if (isJsonObject(out.status)) {
      const { daemonSetHash, ...status } = out.status;
      out.status = daemonSetHash === undefined ? status : { ...status, updateRevision: daemonSetHash };
    }
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    const ru = rollingUpdateOf(out.spec);
    // v1alpha1 partition is an integer only; a percentage has no v1alpha1 form.
    if (ru && typeof ru.partition === 'string') delete ru.partition;
    if (isJsonObject(out.spec) && out.spec.scaleStrategy !== undefined) {
      const scale = out.spec.scaleStrategy;
      if (isJsonObject(scale) && scale.partitionedScaling === true) {
        setMetaValue(metadataOf(out), 'annotations', DAEMONSET_PROGRESSIVE_CREATE_POD_ANNOTATION, 'true');
      }
      delete out.spec.scaleStrategy;
    }
    if (isJsonObject(out.status)) {
      const { updateRevision, ...status } = out.status;
      out.status = { ...status, daemonSetHash: updateRevision ?? '' };
    }
    return out;
  },
};
