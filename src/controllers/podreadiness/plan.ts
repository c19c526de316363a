// The podreadiness plan (behaviour spec §18.5): the KruisePodReady condition a pod carrying that
// readiness gate still lacks.

import { CONDITION_KRUISE_POD_READY } from '../../apis/constants.ts';
import type { Pod, PodCondition } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { containsReadinessGate, getCondition } from '../../util/lifecycle.ts';

/** The KruisePodReady condition to add, or undefined when the pod needs none. */
export function planPodReadiness(pod: Pod, now: number): PodCondition | undefined {
  if (pod.metadata?.deletionTimestamp) return undefined;
  if (!containsReadinessGate(pod, CONDITION_KRUISE_POD_READY) || getCondition(pod, CONDITION_KRUISE_POD_READY)) return undefined;
  return { type: CONDITION_KRUISE_POD_READY, status: 'True', lastTransitionTime: metaTime(now) };
}
