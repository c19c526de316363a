// What `kubectl kruise dashboard` shows, as pure functions of the objects its watches hold: one row
// per Kruise workload with its rollout progress, and one workload's page (pods grouped by revision
// with their lifecycle state, the partition and the maxUnavailable / maxSurge budget as the
// controller's own planner counts them, events). The browser renders these shapes (ui/app.ts).
import { CONTROLLER_REVISION_HASH_LABEL } from '../../../apis/constants.ts';
import type { KubeObject, Pod } from '../../../apis/core-objects.ts';
import { getScaledValueFromIntOrPercent } from '../../../util/intstr.ts';
import { getPodLifecycleState } from '../../../util/lifecycle.ts';
import { isPodReady } from '../../../util/pod.ts';
import { equalToRevisionHash } from '../../../util/revision.ts';
import { podState } from '../liveview.ts';
import type { PlanReport } from '../plan.ts';
import { partitionCount, rolloutStatus, type Workload } from '../status.ts';
import { CliError } from '../session.ts';
import type { ResourceType } from '../../../runtime/resources.ts';

/** The workload kinds the dashboard lists, in its order; the first three have a planner. */
export const DASHBOARD_KINDS = ['CloneSet', 'StatefulSet', 'DaemonSet', 'UnitedDeployment', 'SidecarSet', 'BroadcastJob'] as const;
export type DashboardKind = (typeof DASHBOARD_KINDS)[number];

const TITLES: Record<DashboardKind, string> = {
  CloneSet: 'CloneSet',
  StatefulSet: 'Advanced StatefulSet',
  DaemonSet: 'Advanced DaemonSet',
  UnitedDeployment: 'UnitedDeployment',
  SidecarSet: 'SidecarSet',
  BroadcastJob: 'BroadcastJob',
};

export interface WorkloadSummary {
  kind: DashboardKind;
  title: string;
  namespace: string;
  name: string;
  /** Pods the workload wants (a DaemonSet: nodes that should run it; a SidecarSet: matched pods). */
  desired: number;
  updated: number;
  ready: number;
  /** Pods the partition keeps at old revisions. */
  partition: number;
  paused: boolean;
  /** The rollout's target: desired minus partition (desired once every pod is updated). */
  target: number;
  updateRevision: string;
  /** rollout status's words (kubectl kruise rollout status), or the kind's own summary. */
  message: string;
  done: boolean;
}

type Status = Record<string, unknown>;
const num = (s: Status, key: string) => (typeof s[key] === 'number' ? (s[key] as number) : 0);
const str = (s: Status, key: string) => (typeof s[key] === 'string' ? (s[key] as string) : '');

export function summarize(kind: DashboardKind, type: ResourceType, obj: KubeObject): WorkloadSummary {
  const w = obj as Workload & KubeObject;
  const s = ((obj as { status?: Status }).status ?? {}) as Status;
  const spec = ((obj as { spec?: Record<string, unknown> }).spec ?? {}) as Workload['spec'] & Record<string, unknown>;
  const base = { kind, title: TITLES[kind], namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
  let desired: number;
  let updated: number;
  let ready: number;
  let partition = 0;
  let message: string;
  let done: boolean;
  let updateRevision = str(s, 'updateRevision');
  const paused = !!(spec?.updateStrategy?.rollingUpdate?.paused || spec?.paused);
  if (kind === 'CloneSet' || kind === 'StatefulSet' || kind === 'DaemonSet') {
    const daemon = kind === 'DaemonSet';
    desired = daemon ? num(s, 'desiredNumberScheduled') : (spec?.replicas ?? 1);
    updated = daemon ? num(s, 'updatedNumberScheduled') : num(s, 'updatedReplicas');
    ready = daemon ? num(s, 'numberReady') : num(s, 'readyReplicas');
    // A DaemonSet's percentage rounds down against the nodes, as its controller does.
    const daemonPartition = spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
    partition = daemon ? Math.min(desired, getScaledValueFromIntOrPercent(daemonPartition, desired, false)) : partitionCount(w);
    if (daemon) updateRevision = str(s, 'updateRevision') || str(s, 'daemonSetHash');
    try {
      ({ message, done } = rolloutStatus(type, w));
    } catch (err) {
      ({ message, done } = { message: err instanceof CliError ? err.message : String(err), done: false });
    }
  } else if (kind === 'UnitedDeployment') {
    desired = spec?.replicas ?? 1;
    updated = num(s, 'updatedReplicas');
    ready = num(s, 'readyReplicas');
    updateRevision = str(s, 'updatedRevision');
    done = updated >= desired && ready >= desired;
    message = `${updated} of ${desired} pods updated, ${ready} ready across subsets`;
  } else if (kind === 'SidecarSet') {
    desired = num(s, 'matchedPods');
    updated = num(s, 'updatedPods');
    ready = num(s, 'updatedReadyPods') || num(s, 'readyPods');
    updateRevision = str(s, 'latestRevision');
    done = updated >= desired;
    message = `${updated} of ${desired} matched pods run the latest sidecars`;
  } else {
    desired = num(s, 'desired');
    updated = num(s, 'succeeded');
    ready = num(s, 'active');
    done = desired > 0 && updated + num(s, 'failed') >= desired;
    message = `${num(s, 'succeeded')} succeeded, ${num(s, 'active')} active, ${num(s, 'failed')} failed of ${desired}`;
  }
  // Every pod at the update revision (nothing to roll out, or a partition lowered): the whole is the target.
  const target = updated >= desired ? desired : Math.max(0, desired - partition);
  return { ...base, desired, updated, ready, partition, paused, target, updateRevision, message, done };
}

export interface PodRow {
  name: string;
  /** ready containers / containers */
  ready: string;
  podReady: boolean;
  /** Terminating, Updating (in place), the lifecycle state, or the phase. */
  state: string;
  lifecycle: string;
  node: string;
  restarts: number;
}

export interface RevisionGroup {
  revision: string;
  /** The workload's update revision (the rollout's target). */
  update: boolean;
  pods: PodRow[];
}

export interface EventRow {
  type: string;
  reason: string;
  /** What the event is about: the workload, or one of its pods. */
  object: string;
  message: string;
  time: string;
}

export interface WorkloadDetail {
  summary: WorkloadSummary;
  /** The update revision first, then the others by name. */
  revisions: RevisionGroup[];
  /** The planned kinds only (plan-rollout.ts isPlanned): the partition and budget as the controller's planner counts them now. */
  partition?: PlanReport['partition'];
  budget?: PlanReport['budget'];
  events: EventRow[];
}

const revisionLabel = (p: Pod) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';

export function podRow(p: Pod): PodRow {
  const statuses = p.status?.containerStatuses ?? [];
  return {
    name: p.metadata.name ?? '',
    ready: `${statuses.filter((c) => c.ready).length}/${p.spec?.containers?.length ?? statuses.length}`,
    podReady: isPodReady(p),
    state: podState(p),
    lifecycle: getPodLifecycleState(p) ?? '',
    node: p.spec?.nodeName ?? '',
    restarts: statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0),
  };
}

/** Pods grouped by their revision label; the update revision's group first (present even when empty). */
export function groupByRevision(pods: readonly Pod[], updateRevision: string): RevisionGroup[] {
  const groups = new Map<string, Pod[]>();
  if (updateRevision) groups.set(updateRevision, []);
  for (const p of pods) {
    const label = revisionLabel(p);
    const key = updateRevision && equalToRevisionHash(label, updateRevision) ? updateRevision : label;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  const byName = (a: Pod, b: Pod) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1);
  return [...groups]
    .map(([revision, members]) => ({ revision, update: revision === updateRevision, pods: [...members].sort(byName).map(podRow) }))
    .sort((a, b) => Number(b.update) - Number(a.update) || (a.revision < b.revision ? -1 : 1));
}

/** An events.k8s.io/v1 Event, the fields shown. */
export interface EventObject extends KubeObject {
  type?: string;
  reason?: string;
  note?: string;
  eventTime?: string;
  deprecatedLastTimestamp?: string;
  series?: { lastObservedTime?: string };
  regarding?: { kind?: string; name?: string; uid?: string };
}

const eventTime = (e: EventObject) =>
  e.series?.lastObservedTime ?? e.eventTime ?? e.deprecatedLastTimestamp ?? e.metadata.creationTimestamp ?? '';

/** Events about the workload or its pods, newest first (at most `limit`). */
export function eventRows(events: readonly EventObject[], uids: ReadonlySet<string>, limit = 30): EventRow[] {
  return events
    .filter((e) => e.regarding?.uid && uids.has(e.regarding.uid))
    .sort((a, b) => (eventTime(a) < eventTime(b) ? 1 : eventTime(a) > eventTime(b) ? -1 : 0))
    .slice(0, limit)
    .map((e) => ({
      type: e.type ?? '',
      reason: e.reason ?? '',
      object: `${e.regarding?.kind ?? ''}/${e.regarding?.name ?? ''}`,
      message: e.note ?? '',
      time: eventTime(e),
    }));
}
