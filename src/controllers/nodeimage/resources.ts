// The NodeImage resource and the object shape the image pre-pulling controllers read and write.
import type { NodeImage as NodeImageApi } from '../../apis/apps/nodeimage.ts';
import type { Stored } from '../../apis/core-objects.ts';

export type NodeImage = Stored<NodeImageApi>;
export type ImageSpec = NonNullable<NonNullable<NodeImage['spec']>['images']>[string];
export type ImageTagSpec = ImageSpec['tags'][number];
export type NodeImageStatus = NonNullable<NodeImage['status']>;
export type ImageTagStatus = NonNullable<NodeImageStatus['imageStatuses']>[string]['tags'][number];

/** Tags in spec and status are kept sorted by tag, so writers never reorder each other's lists. */
export function byTag(a: { tag: string }, b: { tag: string }): number {
  return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
}


/** ms since the epoch of a metav1.Time, or undefined when unset or unparsable. */
export function parseTime(t: string | undefined | null): number | undefined {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Drops undefined members so plans compare equal to what the API server returns. */
export function pruneUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
