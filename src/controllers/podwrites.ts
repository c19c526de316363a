// Removed at merge: sidecarset/controller.ts (helper shape-a's) still imports from here; pod writes
// live in workload-writes.ts.
export { pubAllowsInPlaceUpdate, PUB_BLOCKED_REQUEUE_MS } from './workload-writes.ts';
