// Advanced StatefulSet rolling update arithmetic (behaviour spec §4.3): which revision a new pod
// gets (isCurrentRevisionNeeded) and in which order pods are updated (sortPodsToUpdate).

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import { LifecycleState } from '../../apis/constants.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { getPodLifecycleState } from '../../util/lifecycle.ts';
import { sortByPriority } from '../../util/updatesort.ts';
import { isPodAtRevision, isTerminating, type Pod } from './pods.ts';

type RollingUpdate = NonNullable<NonNullable<StatefulSet['spec']>['updateStrategy']>['rollingUpdate'];

/** isCurrentRevisionNeeded: whether the new pod of `ordinal` is created at the current revision. */
export function isCurrentRevisionNeeded(
  set: StatefulSet,
  updateRevision: string,
  ordinal: number,
  start: number,
  slots: ReadonlyArray<Pod | undefined>,
): boolean {
  if ((set.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return false;
  const rolling = set.spec?.updateStrategy?.rollingUpdate;
  if (!rolling) return ordinal < start + (set.status?.currentReplicas ?? 0);
  const partition = rolling.partition ?? 0;
  if (!rolling.unorderedUpdate) {
    let before = 0;
    for (let i = 0; i < ordinal - start; i++) if (slots[i]) before++;
    return before + 1 <= partition;
  }
  let notUpdated = 0;
  slots.forEach((p, i) => {
    if (p && i !== ordinal - start && !isPodAtRevision(p, updateRevision)) notUpdated++;
  });
  return notUpdated < partition;
}

/**
 * sortPodsToUpdate: the slot indexes to update, in order. Without unorderedUpdate the highest
 * ordinals first down to the partition; with it, pods already updated (or terminating) first,
 * then the others by priority, at most replicas - partition of them.
 */
export function sortPodsToUpdate(
  rolling: RollingUpdate,
  updateRevision: string,
  replicas: number,
  slots: ReadonlyArray<Pod | undefined>,
  features: Pick<FeatureGates, 'PreparingUpdateAsUpdate'>,
): number[] {
  const updateMin = rolling?.partition ?? 0;
  const maxUpdate = replicas - updateMin;
  if (maxUpdate <= 0) return [];
  if (!rolling?.unorderedUpdate) {
    const out: number[] = [];
    for (let i = slots.length - 1; i >= updateMin && out.length < maxUpdate; i--) if (slots[i]) out.push(i);
    return out;
  }
  const updated: number[] = [];
  const waitUpdate: number[] = [];
  for (let i = slots.length - 1; i >= 0; i--) {
    const p = slots[i];
    if (!p) continue;
    const counted =
      isTerminating(p) ||
      isPodAtRevision(p, updateRevision) ||
      (features.PreparingUpdateAsUpdate && getPodLifecycleState(p) === LifecycleState.PreparingUpdate);
    (counted ? updated : waitUpdate).push(i);
  }
  const prioritised = sortByPriority(rolling.unorderedUpdate.priorityStrategy, slots as Pod[], waitUpdate);
  return [...updated, ...prioritised].slice(0, maxUpdate);
}
