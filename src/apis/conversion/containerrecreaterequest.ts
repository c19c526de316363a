// ContainerRecreateRequest v1alpha1 ↔ v1beta1 (behaviour spec §11, §22): v1alpha1 keeps the
// synced container statuses in the JSON annotation `crr.apps.kruise.io/sync-container-statuses`
// and the time the pod was made not-ready in `crr.apps.kruise.io/unready-acquired`; v1beta1 has
// status.containerStatusSnapshot and the metav1.Condition PreRecreateGrace. The v1beta1
// finalizer of the same name is the controller's business: a conversion may only change labels
// and annotations of the metadata.

import { CRR_SYNC_CONTAINER_STATUSES_ANNOTATION, CRR_UNREADY_ACQUIRED_ANNOTATION } from '../constants.ts';
import { deleteMetaValue, metaValue, metadataOf, setMetaValue, withVersion, type KindConversion } from './shared.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

/** v1beta1 condition type: the pod is held not-ready before its containers are recreated. */
export const CRR_PRE_RECREATE_GRACE_CONDITION = 'PreRecreateGrace';
export const CRR_UNREADY_ACQUIRED_REASON = 'UnreadyAcquired';
const UNREADY_ACQUIRED_MESSAGE = 'Pod is held not-ready for unreadyGracePeriodSeconds before its containers are recreated';

// RFC 3339, as metav1.Time accepts it.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

interface SyncContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  containerID?: string;
}

/** The annotation's container statuses; undefined when it is not a JSON list of objects. */
function parseSyncStatuses(raw: string): SyncContainerStatus[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every(isJsonObject)) return undefined;
  return parsed.map(syncStatus);
}

/** One container status with Go's zero values filled in. */
function syncStatus(s: JsonObject): SyncContainerStatus {
  const out: SyncContainerStatus = {
    name: typeof s.name === 'string' ? s.name : '',
    ready: s.ready === true,
    restartCount: typeof s.restartCount === 'number' ? s.restartCount : 0,
  };
  if (typeof s.containerID === 'string' && s.containerID !== '') out.containerID = s.containerID;
  return out;
}

export const containerRecreateRequestConversion: KindConversion = {
  toV1beta1(obj) {
    const out = withVersion(obj, 'v1beta1');
    // Status facts only have a home once the object has a status.
    if (!isJsonObject(out.status)) return out;
    const status: JsonObject = out.status;

    const rawStatuses = metaValue(out.metadata, 'annotations', CRR_SYNC_CONTAINER_STATUSES_ANNOTATION);
    const statuses = rawStatuses === undefined ? undefined : parseSyncStatuses(rawStatuses);
    if (statuses) {
      status.containerStatusSnapshot = statuses;
      deleteMetaValue(out.metadata, 'annotations', CRR_SYNC_CONTAINER_STATUSES_ANNOTATION);
    }

    const acquired = metaValue(out.metadata, 'annotations', CRR_UNREADY_ACQUIRED_ANNOTATION);
    if (acquired !== undefined && RFC3339.test(acquired) && !Number.isNaN(Date.parse(acquired))) {
      const others = (Array.isArray(status.conditions) ? status.conditions : []).filter(
        (c) => !isJsonObject(c) || c.type !== CRR_PRE_RECREATE_GRACE_CONDITION,
      );
      status.conditions = [
        ...others,
        {
          type: CRR_PRE_RECREATE_GRACE_CONDITION,
          status: 'True',
          lastTransitionTime: acquired,
          reason: CRR_UNREADY_ACQUIRED_REASON,
          message: UNREADY_ACQUIRED_MESSAGE,
        },
      ];
      deleteMetaValue(out.metadata, 'annotations', CRR_UNREADY_ACQUIRED_ANNOTATION);
    }
    return out;
  },
  toV1alpha1(obj) {
    const out = withVersion(obj, 'v1alpha1');
    if (!isJsonObject(out.status)) return out;
    const { containerStatusSnapshot, conditions, ...status } = out.status;
    out.status = status;

    if (Array.isArray(containerStatusSnapshot)) {
      const statuses = containerStatusSnapshot.filter(isJsonObject).map(syncStatus);
      setMetaValue(metadataOf(out), 'annotations', CRR_SYNC_CONTAINER_STATUSES_ANNOTATION, JSON.stringify(statuses));
    }

    const grace = (Array.isArray(conditions) ? conditions : []).find(
      (c): c is JsonObject => isJsonObject(c) && c.type === CRR_PRE_RECREATE_GRACE_CONDITION && c.status === 'True',
    );
    if (grace && typeof grace.lastTransitionTime === 'string') {
      setMetaValue(metadataOf(out), 'annotations', CRR_UNREADY_ACQUIRED_ANNOTATION, grace.lastTransitionTime);
    }
    return out;
  },
};
