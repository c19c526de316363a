// The PodUnavailableBudget planner (spec §16; upstream pkg/controller/podunavailablebudget): from the
// budget, the pods it covers, the workloads' replicas and the time, one round's plan —
//   - the related-pub annotation for covered pods without it (pods created before the budget: the
//     pod webhook would let them go unguarded);
//   - the status (syncPodUnavailableBudget, planPubStatus);
//   - the events: NoPods, NotDeleted for a pod whose recorded deletion did not happen in time, and
//     CalculateExpectedPodCountFailed (upstream's) for a percent that cannot be parsed, which
//     leaves the status alone;
//   - when an entry expires next: the budget must be looked at again then.
// Pure: no API calls, no clock reads.

import type { Pod } from '../../apis/core-objects.ts';
import type { PodUnavailableBudgetStatus } from '../../apis/policy/podunavailablebudget.ts';
import { errMessage } from '../../util/errors.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { isPodActive } from '../../util/pod.ts';
import { isPodStateConsistent, isPubPodReady, relatedPubName, type StoredPub } from '../../util/pub.ts';

/** A disruptedPods entry older than this is dropped: the pod should have gone by then (DeletionTimeout). */
export const PUB_DELETION_TIMEOUT_MS = 20_000;
/** An unavailablePods entry is kept this long, for the pod caches to catch up (UpdatedDelayCheckTime). */
export const PUB_UPDATED_DELAY_CHECK_MS = 10_000;

/** desiredAvailable: total − roundUp(maxUnavailable) (≥ 0), or minAvailable (a percent rounded up). Throws on a bad percent. */
export function pubDesiredAvailable(pub: Pick<StoredPub, 'spec'>, total: number): number {
  const { maxUnavailable, minAvailable } = pub.spec ?? {};
  if (maxUnavailable !== undefined && maxUnavailable !== null) {
    return Math.max(total - getScaledValueFromIntOrPercent(maxUnavailable, total, true), 0);
  }
  if (minAvailable !== undefined && minAvailable !== null) {
    return typeof minAvailable === 'number' ? minAvailable : getScaledValueFromIntOrPercent(minAvailable, total, true);
  }
  return 0;
}

export interface PubStatusInputs {
  pub: StoredPub;
  /** The pods the budget covers (ignoredPodSelector already applied). */
  pods: readonly Pod[];
  /** totalReplicas: protectTotalReplicas, or the workloads' replicas. */
  totalReplicas: number;
  /** ms since the epoch. */
  now: number;
}

export interface PubStatusPlan {
  /** The new status; undefined when the stored one is already right. */
  status?: PodUnavailableBudgetStatus;
  /** Computed status, written or not. */
  computed: PodUnavailableBudgetStatus;
  /** Pods recorded as disrupted whose deletion did not happen within PUB_DELETION_TIMEOUT_MS ("NotDeleted"). */
  notDeleted: string[];
  /** When an entry of disruptedPods/unavailablePods expires next, ms from now. */
  requeueAfterMs?: number;
}

/**
 * The budget's status (syncPodUnavailableBudget): expired disrupted/unavailable entries are dropped
 * (only active pods keep theirs), currentAvailable counts the active, ready, state-consistent pods
 * not recorded in either map, unavailableAllowed = max(current − desired, 0). Throws on a percent
 * that cannot be parsed.
 */
export function planPubStatus({ pub, pods, totalReplicas, now }: PubStatusInputs): PubStatusPlan {
  const desiredAvailable = pubDesiredAvailable(pub, totalReplicas);
  const disrupted: Record<string, string> = {};
  const unavailable: Record<string, string> = {};
  const notDeleted: string[] = [];
  let recheckMs: number | undefined;
  const recheck = (ms: number) => {
    if (recheckMs === undefined || ms < recheckMs) recheckMs = ms;
  };
  const oldDisrupted = pub.status?.disruptedPods ?? {};
  const oldUnavailable = pub.status?.unavailablePods ?? {};
  for (const pod of pods) {
    if (!isPodActive(pod)) continue;
    const name = pod.metadata.name ?? '';
    const d = oldDisrupted[name];
    if (d !== undefined) {
      const expires = Date.parse(d) + PUB_DELETION_TIMEOUT_MS;
      if (expires < now) notDeleted.push(name);
      else {
        disrupted[name] = d;
        recheck(expires);
      }
    }
    const u = oldUnavailable[name];
    if (u !== undefined) {
      const expires = Date.parse(u) + PUB_UPDATED_DELAY_CHECK_MS;
      if (expires >= now) {
        unavailable[name] = u;
        recheck(expires);
      }
    }
  }
  let currentAvailable = 0;
  for (const pod of pods) {
    const name = pod.metadata.name ?? '';
    if (!isPodActive(pod) || name in disrupted || name in unavailable) continue;
    if (isPodStateConsistent(pod) && isPubPodReady(pod)) currentAvailable++;
  }
  const computed: PodUnavailableBudgetStatus = {
    observedGeneration: pub.metadata.generation ?? 0,
    disruptedPods: disrupted,
    unavailablePods: unavailable,
    unavailableAllowed: Math.max(currentAvailable - desiredAvailable, 0),
    currentAvailable,
    desiredAvailable,
    totalReplicas,
  };
  const old = pub.status;
  const same =
    !!old &&
    old.currentAvailable === computed.currentAvailable &&
    old.desiredAvailable === computed.desiredAvailable &&
    old.totalReplicas === computed.totalReplicas &&
    old.unavailableAllowed === computed.unavailableAllowed &&
    (old.observedGeneration ?? 0) === computed.observedGeneration &&
    sameMap(old.disruptedPods, disrupted) &&
    sameMap(old.unavailablePods, unavailable);
  return {
    ...(same ? {} : { status: computed }),
    computed,
    notDeleted,
    // An entry is kept up to and including its expiry instant: look again the millisecond after.
    ...(recheckMs !== undefined ? { requeueAfterMs: Math.max(recheckMs - now, 0) + 1 } : {}),
  };
}

export interface PubEvent {
  /** The pod the event is about; undefined: the budget. */
  pod?: Pod;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface PubPlan {
  /** Names of covered pods to annotate with the related-pub annotation. */
  annotate: string[];
  events: PubEvent[];
  /** The status part; undefined when desiredAvailable cannot be computed (reported as an event). */
  status?: PubStatusPlan;
}

/**
 * One round: the related-pub annotation for covered pods without it, NoPods, the status
 * (planPubStatus) and NotDeleted for each pod whose recorded deletion did not happen; a percent
 * that cannot be parsed is upstream's CalculateExpectedPodCountFailed and leaves the status alone.
 */
export function planPub(inputs: PubStatusInputs): PubPlan {
  const { pub, pods } = inputs;
  const plan: PubPlan = { annotate: [], events: [] };
  if (!pods.length) plan.events.push({ type: 'Normal', reason: 'NoPods', message: 'No matching pods found' });
  for (const pod of pods) if (!relatedPubName(pod)) plan.annotate.push(pod.metadata.name ?? '');
  try {
    plan.status = planPubStatus(inputs);
  } catch (err) {
    const message = `Failed to calculate the number of expected pods: ${errMessage(err)}`;
    plan.events.push({ type: 'Warning', reason: 'CalculateExpectedPodCountFailed', message });
    return plan;
  }
  const { namespace = '', name = '' } = pub.metadata;
  for (const podName of plan.status.notDeleted) {
    const pod = pods.find((p) => p.metadata.name === podName);
    const message = `Pod was expected by PUB ${namespace}/${name} to be deleted but it wasn't`;
    if (pod) plan.events.push({ pod, type: 'Warning', reason: 'NotDeleted', message });
  }
  return plan;
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ak = Object.keys(a ?? {});
  return ak.length === Object.keys(b).length && ak.every((k) => a![k] === b[k]);
}
