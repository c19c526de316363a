// The status of an Advanced DaemonSet round (upstream updateDaemonSetStatus).

import type { DaemonSet, DaemonSetStatus } from '../../apis/apps/daemonset.ts';
import type { Node, Pod } from '../../apis/core-objects.ts';
import type { DaemonPlacement } from '../../util/nodefit.ts';
import { isPodAvailable, isPodReady, timeMillis } from '../../util/pod.ts';
import { compareDaemonPods, isPodUpdated } from './pods.ts';

/** updateDaemonSetStatus over the observed pods. */
export function computeStatus(
  ds: DaemonSet,
  hash: string,
  collisionCount: number | undefined,
  nodes: readonly Node[],
  placements: ReadonlyMap<string, DaemonPlacement>,
  byNode: ReadonlyMap<string, Pod[]>,
  nowMs: number,
): { status: DaemonSetStatus; changed: boolean; requeueAfterMs?: number } {
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  let nextAvailableMs: number | undefined;
  for (const node of nodes) {
    const name = node.metadata.name ?? '';
    const pods = byNode.get(name) ?? [];
    if (!placements.get(name)?.shouldRun) {
      if (pods.length > 0) misscheduled++;
      continue;
    }
    desired++;
    if (pods.length === 0) continue;
    current++;
    const pod = [...pods].sort(compareDaemonPods)[0];
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, minReadySeconds, nowMs)) available++;
      else {
        const readySince = timeMillis(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime) ?? nowMs;
        const wait = readySince + minReadySeconds * 1000 - nowMs;
        if (wait > 0) nextAvailableMs = nextAvailableMs === undefined ? wait : Math.min(nextAvailableMs, wait);
      }
    }
    if (isPodUpdated(pod, hash)) updated++;
  }
  const prev = ds.status;
  const status: DaemonSetStatus = {
    ...prev,
    observedGeneration: ds.metadata?.generation ?? prev?.observedGeneration,
    desiredNumberScheduled: desired,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: desired - available,
    updateRevision: hash,
    ...(collisionCount === undefined ? {} : { collisionCount }),
  };
  const changed = daemonSetStatusChanged(prev, status);
  return { status, changed, requeueAfterMs: nextAvailableMs };
}

/** Whether `next` says anything `prev` does not (upstream's storeDaemonSetStatus early return). */
export function daemonSetStatusChanged(prev: DaemonSetStatus | undefined, next: DaemonSetStatus): boolean {
  return (
    !prev ||
    prev.desiredNumberScheduled !== next.desiredNumberScheduled ||
    prev.currentNumberScheduled !== next.currentNumberScheduled ||
    prev.numberMisscheduled !== next.numberMisscheduled ||
    prev.numberReady !== next.numberReady ||
    prev.updatedNumberScheduled !== next.updatedNumberScheduled ||
    (prev.numberAvailable ?? 0) !== (next.numberAvailable ?? 0) ||
    (prev.numberUnavailable ?? 0) !== (next.numberUnavailable ?? 0) ||
    (prev.observedGeneration ?? 0) < (next.observedGeneration ?? 0) ||
    prev.updateRevision !== next.updateRevision ||
    (prev.collisionCount ?? undefined) !== (next.collisionCount ?? undefined)
  );
}
