// The manager side of a ContainerRecreateRequest (behaviour spec §11, upstream
// pkg/controller/containerrecreaterequest): kruise-daemon on the pod's node does the recreating; the
// manager bounds it in time (no answer from the daemon, activeDeadlineSeconds, pod gone), mirrors
// the pod's container statuses into the CRR while it recreates, holds the pod not-ready through
// KruisePodReady for unreadyGracePeriodSeconds, and cleans up once the CRR is finished.
//
// planContainerRecreateRequest is pure: the CRR, its pod and the time in, the writes out, in the
// order the executor must apply them.

import type { ContainerRecreateRequest } from '../../apis/apps/containerrecreaterequest.ts';
import type { Pod, PodCondition, Stored } from '../../apis/core-objects.ts';
import type { MetaCondition } from '../../apis/schema.ts';
import { CRR_ACTIVE_LABEL, CRR_POD_UID_LABEL, FINALIZER_CRR_UNREADY_ACQUIRED, CONDITION_KRUISE_POD_READY } from '../../apis/constants.ts';
import { addNotReadyKey, containsReadinessGate, removeNotReadyKey, type NotReadyMessage } from '../../util/lifecycle.ts';
import { timeMillis } from '../../util/pod.ts';
import { metaTime } from '../../util/clock.ts';

/** How long a new CRR may stay without a phase before the daemon counts as absent. */
export const DAEMON_RESPONSE_TIMEOUT_MS = 60_000;
/** While recreating, the pod's container statuses are mirrored at least this often. */
export const RECREATING_POLL_MS = 3_000;
export const PRE_RECREATE_GRACE_CONDITION = 'PreRecreateGrace';
/** The user agent of the not-ready key a CRR holds on its pod's KruisePodReady condition. */
export const CRR_READINESS_USER_AGENT = 'ContainerRecreateRequest';

export const MSG_POD_GONE = 'pod has gone';
export const MSG_DAEMON_TIMEOUT = 'daemon has not responded for a long time';
export const MSG_DEADLINE = 'recreating has exceeded the activeDeadlineSeconds';

export type CRR = Stored<ContainerRecreateRequest>;
export type ContainerStatusSnapshot = NonNullable<NonNullable<CRR['status']>['containerStatusSnapshot']>[number];

export type CRRAction =
  /** Drop this CRR's not-ready key from the pod (when it changes anything), then the finalizer. */
  | { kind: 'releasePodNotReady'; podCondition?: PodCondition }
  | { kind: 'removeActiveLabel' }
  | { kind: 'delete' }
  /** Status: phase Completed, completionTime, message (+ states failed by the deadline). */
  | { kind: 'complete'; message: string }
  | { kind: 'syncSnapshot'; snapshot: ContainerStatusSnapshot[] }
  /** Finalizer first, so the not-ready key is never left behind by a deleted CRR; then the pod. */
  | { kind: 'acquirePodNotReady'; addFinalizer: boolean; podCondition?: PodCondition }
  | { kind: 'setPreRecreateGrace'; conditions: MetaCondition[] };

export interface CRRPlan {
  actions: CRRAction[];
  /** When the next deadline falls (or the next poll while recreating). */
  requeueAfterMs?: number;
  /** Why nothing more was done, for the log. */
  note?: string;
}

export interface CRRInput {
  crr: CRR;
  /** The pod named spec.podName, undefined when it does not exist. */
  pod: Pod | undefined;
  now: number;
}

export const readinessMessage = (crr: CRR): NotReadyMessage => ({
  userAgent: CRR_READINESS_USER_AGENT,
  key: `${crr.metadata.namespace ?? ''}/${crr.metadata.name ?? ''}`,
});

const hasFinalizer = (crr: CRR) => (crr.metadata.finalizers ?? []).includes(FINALIZER_CRR_UNREADY_ACQUIRED);

function isFinished(crr: CRR): boolean {
  return !!crr.metadata.deletionTimestamp || timeMillis(crr.status?.completionTime) !== undefined;
}

function podHasGone(crr: CRR, pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp || (pod.metadata.uid ?? '') !== (crr.metadata.labels?.[CRR_POD_UID_LABEL] ?? '');
}

function minPositive(a: number | undefined, b: number): number {
  return a === undefined ? b : Math.min(a, b);
}

function planFinished(crr: CRR, pod: Pod | undefined, now: number): CRRPlan {
  const actions: CRRAction[] = [];
  if (hasFinalizer(crr)) {
    const holdsPod = pod && !pod.metadata.deletionTimestamp && containsReadinessGate(pod, CONDITION_KRUISE_POD_READY);
    const iso = metaTime(now);
    actions.push({ kind: 'releasePodNotReady', podCondition: holdsPod ? removeNotReadyKey(pod, readinessMessage(crr), iso) : undefined });
  }
  if (crr.metadata.deletionTimestamp) return { actions };

  const ttl = crr.spec?.ttlSecondsAfterFinished;
  const completedAt = timeMillis(crr.status?.completionTime) ?? now;
  const left = ttl === undefined || ttl === null ? undefined : ttl * 1000 - (now - completedAt);
  if (left !== undefined && left <= 0) return { actions: [...actions, { kind: 'delete' }] };
  if (crr.metadata.labels && Object.hasOwn(crr.metadata.labels, CRR_ACTIVE_LABEL)) actions.push({ kind: 'removeActiveLabel' });
  return { actions, requeueAfterMs: left };
}

/** Running containers of the request that started after it was created (older ones are history). */
export function containerStatusSnapshot(crr: CRR, pod: Pod): ContainerStatusSnapshot[] {
  const created = timeMillis(crr.metadata.creationTimestamp) ?? 0;
  const out: ContainerStatusSnapshot[] = [];
  for (const c of crr.spec?.containers ?? []) {
    const s =
      pod.status?.containerStatuses?.find((x) => x.name === c.name) ?? pod.status?.initContainerStatuses?.find((x) => x.name === c.name);
    const started = timeMillis(s?.state?.running?.startedAt);
    if (!s || started === undefined || started < created) continue;
    out.push({
      name: s.name,
      ready: !!s.ready,
      restartCount: s.restartCount ?? 0,
      ...(s.containerID ? { containerID: s.containerID } : {}),
    });
  }
  return out;
}

function sameSnapshot(a: readonly ContainerStatusSnapshot[] | undefined, b: readonly ContainerStatusSnapshot[]): boolean {
  const x = a ?? [];
  if (x.length !== b.length) return false;
  return x.every(
    (s, i) =>
      s.name === b[i].name &&
      s.ready === b[i].ready &&
      s.restartCount === b[i].restartCount &&
      (s.containerID ?? '') === (b[i].containerID ?? ''),
  );
}

function planUnreadyGrace(crr: CRR, pod: Pod, now: number): CRRAction[] {
  if (crr.spec?.strategy?.unreadyGracePeriodSeconds === undefined || crr.spec.strategy.unreadyGracePeriodSeconds === null) return [];
  const existing = crr.status?.conditions?.find((c) => c.type === PRE_RECREATE_GRACE_CONDITION);
  // The daemon counts the grace period from the condition's transition time: never move it.
  if (existing?.status === 'True') return [];
  const iso = metaTime(now);
  const actions: CRRAction[] = [];
  const gated = containsReadinessGate(pod, CONDITION_KRUISE_POD_READY);
  if (gated)
    actions.push({
      kind: 'acquirePodNotReady',
      addFinalizer: !hasFinalizer(crr),
      podCondition: addNotReadyKey(pod, readinessMessage(crr), iso),
    });
  const condition: MetaCondition = {
    type: PRE_RECREATE_GRACE_CONDITION,
    status: 'True',
    reason: PRE_RECREATE_GRACE_CONDITION,
    message: gated
      ? `Pod marked not-ready through ${CONDITION_KRUISE_POD_READY}`
      : `Pod has no readinessGate ${CONDITION_KRUISE_POD_READY}, not marked not-ready`,
    lastTransitionTime: iso,
  };
  const others = (crr.status?.conditions ?? []).filter((c) => c.type !== PRE_RECREATE_GRACE_CONDITION);
  actions.push({ kind: 'setPreRecreateGrace', conditions: [...others, condition] });
  return actions;
}

export function planContainerRecreateRequest({ crr, pod, now }: CRRInput): CRRPlan {
  if (isFinished(crr)) return planFinished(crr, pod, now);

  if (!pod || podHasGone(crr, pod)) return { actions: [{ kind: 'complete', message: MSG_POD_GONE }] };

  const created = timeMillis(crr.metadata.creationTimestamp) ?? now;
  let requeueAfterMs: number | undefined;
  const phase = crr.status?.phase ?? '';
  if (phase === '') {
    const left = DAEMON_RESPONSE_TIMEOUT_MS - (now - created);
    if (left <= 0) return { actions: [{ kind: 'complete', message: MSG_DAEMON_TIMEOUT }] };
    requeueAfterMs = left;
  }

  const deadline = crr.spec?.activeDeadlineSeconds;
  if (deadline !== undefined && deadline !== null) {
    const left = deadline * 1000 - (now - created);
    // The container states stay as the daemon last wrote them (v1.8.2's completeCRR touches only
    // phase, message and completionTime; its e2e expects a deadline hit during a preStop to leave
    // them Pending).
    if (left <= 0) return { actions: [{ kind: 'complete', message: MSG_DEADLINE }] };
    requeueAfterMs = minPositive(requeueAfterMs, left);
  }

  if (phase !== 'Recreating') return { actions: [], requeueAfterMs, note: `waiting for the daemon (phase ${phase || 'unset'})` };

  const actions: CRRAction[] = [];
  const snapshot = containerStatusSnapshot(crr, pod);
  if (!sameSnapshot(crr.status?.containerStatusSnapshot, snapshot)) actions.push({ kind: 'syncSnapshot', snapshot });
  actions.push(...planUnreadyGrace(crr, pod, now));
  // No event announces every container-status change the daemon waits on: poll.
  return { actions, requeueAfterMs: minPositive(requeueAfterMs, RECREATING_POLL_MS) };
}
