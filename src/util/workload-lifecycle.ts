// The lifecycle steps every Kruise workload (CloneSet, Advanced StatefulSet, Advanced DaemonSet)
// takes around in-place updates (upstream refreshPodState and the hook checks before
// inPlaceUpdatePod): one place for the transitions of behaviour spec §3.7.

import type { Lifecycle, LifecycleHook } from '../apis/apps/pub.ts';
import { LifecycleState } from '../apis/constants.ts';
import type { Pod } from '../apis/core-objects.ts';
import { checkInPlaceUpdateCompleted, planInPlaceRefresh, type InPlaceRefreshPlan } from './inplaceupdate.ts';
import { getPodLifecycleState, isPodAllHooked, isPodHooked, planLifecycleTransition, type LifecycleTransition } from './lifecycle.ts';

export interface PodStateRefresh {
  /** In-place progress: grace finished, next container batch, InPlaceUpdateReady=True. */
  refresh: InPlaceRefreshPlan;
  transition?: LifecycleTransition;
}

/**
 * refreshPodState: the in-place engine's Refresh plus the lifecycle transition it allows
 * (PreparingNormal → Normal once scheduled or all preNormal-hooked; PreparingUpdate of a pod
 * already at the update revision, Updating once in-place completed → Updated/Normal;
 * Updated → Normal once the inPlaceUpdate hook is all-hooked or absent).
 */
export function refreshPodState(
  lifecycle: Lifecycle | undefined,
  pod: Pod,
  updateRevision: string,
  now: string,
  isPodAtRevision: (pod: Pod, revision: string) => boolean,
): PodStateRefresh {
  let refresh = planInPlaceRefresh(pod, { now, isPodAtRevision });
  const inPlaceHook = lifecycle?.inPlaceUpdate;
  const afterUpdate = () => (lifecycle && !isPodAllHooked(inPlaceHook, pod) ? LifecycleState.Updated : LifecycleState.Normal);
  let state: LifecycleState | undefined;
  switch (getPodLifecycleState(pod)) {
    case LifecycleState.PreparingNormal:
      if (lifecycle?.preNormal) {
        if (isPodAllHooked(lifecycle.preNormal, pod)) state = LifecycleState.Normal;
      } else if (pod.spec?.nodeName || pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True')) {
        state = LifecycleState.Normal;
      } else if (refresh.conditions && !refresh.pod) {
        // Not scheduled yet: its first InPlaceUpdateReady waits to go with the move to Normal, one
        // pods/status write instead of two (WorkloadWriter.writeLifecycleWithConditions) however
        // far the scheduler lags. Upstream writes it at once; nothing reads it before the pod runs.
        refresh = { ...refresh, conditions: undefined };
      }
      break;
    case LifecycleState.PreparingUpdate:
      if (isPodAtRevision(pod, updateRevision)) state = afterUpdate();
      break;
    case LifecycleState.Updating:
      if (checkInPlaceUpdateCompleted(pod) === undefined) state = afterUpdate();
      break;
    case LifecycleState.Updated:
      if (!inPlaceHook || isPodAllHooked(inPlaceHook, pod)) state = LifecycleState.Normal;
      break;
  }
  const transition = state ? planLifecycleTransition(pod, state, { now, markPodNotReady: !!inPlaceHook?.markPodNotReady }) : undefined;
  return { refresh, transition };
}

export type InPlaceHookStep =
  /** Move to PreparingUpdate (or re-arm the hook) first; the update itself waits. */
  | { kind: 'transition'; transition?: LifecycleTransition }
  /** PreparingUpdate and still hooked: the user's controller has not released the pod yet. */
  | { kind: 'wait' }
  /** Update in place now. */
  | { kind: 'proceed' }
  | { kind: 'error'; message: string };

/** Where the inPlaceUpdate hook leaves a pod that can be updated in place. */
export function inPlaceHookStep(hook: LifecycleHook | undefined, pod: Pod, now: string): InPlaceHookStep {
  const state = getPodLifecycleState(pod);
  switch (state) {
    case '':
    case LifecycleState.PreparingNormal:
    case LifecycleState.Normal:
      if (hook && isPodHooked(hook, pod)) {
        return {
          kind: 'transition',
          transition: planLifecycleTransition(pod, LifecycleState.PreparingUpdate, { now, markPodNotReady: !!hook.markPodNotReady }),
        };
      }
      return { kind: 'proceed' };
    case LifecycleState.Updated:
      return {
        kind: 'transition',
        transition: hook ? planLifecycleTransition(pod, LifecycleState.PreparingUpdate, { now, handler: hook }) : undefined,
      };
    case LifecycleState.PreparingUpdate:
      return hook && isPodHooked(hook, pod) ? { kind: 'wait' } : { kind: 'proceed' };
    case LifecycleState.Updating:
      return { kind: 'proceed' };
    default:
      return { kind: 'error', message: `not allowed to in-place update pod ${pod.metadata.name ?? ''} in state ${state}` };
  }
}
