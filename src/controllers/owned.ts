// The objects a controller owns, read from an informer's cache through its controller-UID index.

import type { KubeObject } from '../apis/core-objects.ts';
import { OwnerUIDIndex, type Lister } from '../runtime/store.ts';

/**
 * The cached objects whose controller reference is `owner` (by UID), in the owner's namespace (an
 * owner reference never crosses namespaces; a copy in another one is not the owner's).
 */
export function ownedBy<T extends KubeObject>(
  lister: Pick<Lister<T>, 'byIndex'>,
  owner: { metadata?: { uid?: string; namespace?: string } },
): T[] {
  const uid = owner.metadata?.uid;
  if (!uid) return [];
  return lister.byIndex(OwnerUIDIndex, uid).filter((o) => o.metadata.namespace === owner.metadata?.namespace);
}
