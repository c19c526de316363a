// Claims against their template (upstream pkg/util/pvc): what may differ between a
// PersistentVolumeClaim and the volumeClaimTemplate it came from apart from its size. Shared by the
// Advanced StatefulSet webhook (which template changes are a resize) and its controller (which
// claims count as compatible).

import type { PersistentVolumeClaim } from '../apis/core.ts';

/**
 * IsClaimCompatibleWithoutSize: the storage class (when both name one; a claim given the default
 * class by the API server still matches a template naming none) and the access modes, in order.
 * Everything else a template says may change without making its claims incompatible.
 */
export function claimCompatibleWithoutSize(claim: PersistentVolumeClaim, template: PersistentVolumeClaim): boolean {
  const a = claim.spec?.storageClassName;
  const b = template.spec?.storageClassName;
  if (a != null && b != null && a !== b) return false;
  const modes = claim.spec?.accessModes ?? [];
  const wanted = template.spec?.accessModes ?? [];
  return modes.length === wanted.length && modes.every((m, i) => m === wanted[i]);
}
