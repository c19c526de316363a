// CloneSet status (behaviour spec §3.2): replica counts, revisions, expectedUpdatedReplicas,
// labelSelector and the Progressing condition.

import type { CloneSet, CloneSetStatus } from '../../apis/apps/cloneset.ts';
import { calculatePartitionReplicas } from '../../util/intstr.ts';
import { labelSelectorToString } from '../../util/labelselector.ts';
import { isPodAtRevision, isPodAvailable, isPodUpdateReady, minReadySecondsOf, replicasOf, type Pod } from './pods.ts';
import { metaTime } from '../../util/clock.ts';

type Condition = NonNullable<CloneSetStatus['conditions']>[number];

export interface StatusInput {
  cloneSet: CloneSet;
  /** Active owned pods. */
  pods: readonly Pod[];
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  nowMs: number;
  /** Errors of this round's Scale / Update, recorded as FailedScale / FailedUpdate. */
  scaleError?: string;
  updateError?: string;
}

export interface StatusResult {
  status: CloneSetStatus;
  /** Whether it differs from cloneSet.status (only then is it written). */
  changed: boolean;
  requeueAfterMs?: number;
}

const MAX_INT32 = 2147483647;

/** SetCloneSetCondition: unchanged status+reason keeps the old condition; a reason-only change keeps lastTransitionTime. */
export function setCondition(conditions: Condition[] | undefined, c: Condition): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  if (i < 0) return [...list, c];
  const old = list[i];
  if (old.status === c.status && old.reason === c.reason) return list;
  list[i] = old.status === c.status ? { ...c, lastTransitionTime: old.lastTransitionTime } : c;
  return list;
}

function progressing(cs: CloneSet, s: CloneSetStatus, nowMs: number): { condition?: Condition; requeueAfterMs?: number } {
  const deadline = cs.spec?.progressDeadlineSeconds;
  const replicas = replicasOf(cs);
  const now = metaTime(nowMs);
  const mk = (status: string, reason: string, message: string): Condition => ({
    type: 'Progressing',
    status,
    reason,
    message,
    lastUpdateTime: now,
    lastTransitionTime: now,
  });
  if (
    s.currentRevision === s.updateRevision &&
    s.replicas === replicas &&
    s.updatedReplicas === replicas &&
    s.updatedAvailableReplicas === replicas
  ) {
    return { condition: mk('True', 'CloneSetAvailable', 'CloneSet is available') };
  }
  if (cs.spec?.updateStrategy?.rollingUpdate?.paused) return { condition: mk('True', 'CloneSetPaused', 'CloneSet is paused') };
  const expected = s.expectedUpdatedReplicas ?? replicas;
  if (expected < replicas && expected <= (s.updatedAvailableReplicas ?? 0)) {
    return { condition: mk('True', 'ProgressPartitionAvailable', 'CloneSet has been paused due to partition ready') };
  }
  const existing = cs.status?.conditions?.find((c) => c.type === 'Progressing');
  const since = existing?.lastUpdateTime ? Date.parse(existing.lastUpdateTime) : undefined;
  if (existing?.reason === 'ProgressDeadlineExceeded' || (since !== undefined && since + deadline! * 1000 < nowMs)) {
    return { condition: mk('False', 'ProgressDeadlineExceeded', `CloneSet revision ${s.updateRevision} has timed out progressing`) };
  }
  const start = existing?.reason === 'CloneSetUpdated' && since !== undefined ? since : nowMs;
  return {
    condition: mk('True', 'CloneSetUpdated', 'CloneSet is progressing'),
    requeueAfterMs: (Math.max(Math.ceil((start + deadline! * 1000 - nowMs) / 1000), 0) + 1) * 1000,
  };
}

export function computeStatus(input: StatusInput): StatusResult {
  const { cloneSet: cs, pods, nowMs } = input;
  const minReady = minReadySecondsOf(cs);
  const replicas = replicasOf(cs);
  const status: CloneSetStatus = {
    observedGeneration: cs.metadata?.generation,
    replicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    updatedReplicas: 0,
    updatedReadyReplicas: 0,
    updatedAvailableReplicas: 0,
    expectedUpdatedReplicas: 0,
    updateRevision: input.updateRevision,
    currentRevision: input.currentRevision,
    collisionCount: input.collisionCount,
    labelSelector: labelSelectorToString(cs.spec?.selector),
  };
  for (const pod of pods) {
    const ready = isPodUpdateReady(pod, 0, nowMs);
    const available = isPodAvailable(pod, minReady, nowMs);
    const updated = isPodAtRevision(pod, input.updateRevision);
    status.replicas++;
    if (ready) status.readyReplicas++;
    if (available) status.availableReplicas++;
    if (updated) status.updatedReplicas++;
    if (updated && ready) status.updatedReadyReplicas++;
    if (updated && available) status.updatedAvailableReplicas!++;
  }
  // Stable once every pod carries the update revision; readiness is not awaited.
  if (status.updatedReplicas === status.replicas && status.replicas === replicas) status.currentRevision = status.updateRevision;
  try {
    status.expectedUpdatedReplicas = replicas - calculatePartitionReplicas(cs.spec?.updateStrategy?.rollingUpdate?.partition, replicas);
  } catch {
    status.expectedUpdatedReplicas = replicas;
  }

  let conditions = cs.status?.conditions ? [...cs.status.conditions] : undefined;
  const now = metaTime(nowMs);
  if (input.scaleError)
    conditions = setCondition(conditions, { type: 'FailedScale', status: 'True', message: input.scaleError, lastTransitionTime: now });
  if (input.updateError)
    conditions = setCondition(conditions, { type: 'FailedUpdate', status: 'True', message: input.updateError, lastTransitionTime: now });

  let requeueAfterMs: number | undefined;
  const deadline = cs.spec?.progressDeadlineSeconds;
  if (deadline === undefined || deadline === MAX_INT32) {
    conditions = conditions?.filter((c) => c.type !== 'Progressing');
  } else {
    const p = progressing(cs, status, nowMs);
    if (p.condition) conditions = setCondition(conditions, p.condition);
    requeueAfterMs = p.requeueAfterMs;
  }
  if (conditions && conditions.length > 0) status.conditions = conditions;
  if (status.availableReplicas !== status.readyReplicas && minReady > 0) {
    requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, minReady * 1000);
  }
  const changed = JSON.stringify(normalise(status)) !== JSON.stringify(normalise(cs.status));
  return { status, changed, requeueAfterMs };
}

function normalise(s: CloneSetStatus | undefined): unknown {
  if (!s) return undefined;
  return Object.fromEntries(
    Object.entries(s)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}
