// Per-workload metrics in kube-state-metrics' style (`kruise_cloneset_status_replicas{namespace,
// cloneset}` …), for every Kruise kind with something to show. One table (WORKLOAD_METRICS) says
// which series each kind has and how each is read from an object; the gauges are evaluated at
// scrape time over the informer caches the controllers already keep, so they cost no API call and
// are never stale by more than the cache. Cardinality is bounded by the number of workloads: no
// series has a pod label.
//
// Only the leader exports them: every replica keeps the same caches, and one series per workload
// (not one per replica) keeps `sum` and the alerts honest. The rollout-duration histogram needs to
// remember when a rollout began; that memory is the RolloutTracker, fed by the informers' events
// on every replica (a new leader can time a rollout that began before it led), observing only
// while this replica leads. Nothing is written to the API for it.

import { Gauge, Histogram } from 'prom-client';
import type { KubeObject, Stored } from '../apis/core-objects.ts';
import type { AdvancedCronJob } from '../apis/apps/advancedcronjob.ts';
import type { BroadcastJob } from '../apis/apps/broadcastjob.ts';
import type { CloneSet } from '../apis/apps/cloneset.ts';
import type { DaemonSet } from '../apis/apps/daemonset.ts';
import type { ImagePullJob } from '../apis/apps/imagepulljob.ts';
import type { SidecarSet } from '../apis/apps/sidecarset.ts';
import type { StatefulSet } from '../apis/apps/statefulset.ts';
import type { UnitedDeployment } from '../apis/apps/uniteddeployment.ts';
import type { WorkloadSpread } from '../apis/apps/workloadspread.ts';
import type { PodUnavailableBudget } from '../apis/policy/podunavailablebudget.ts';
import { POLICY_GROUP } from '../apis/constants.ts';
import type { Informer, InformerSelector, InformerSource } from '../runtime/informer-factory.ts';
import { registry } from '../runtime/metrics.ts';
import { kruiseResource, type ResourceType } from '../runtime/resources.ts';
import { unwrapDeleted } from '../runtime/store.ts';
import { realClock, type Clock } from '../util/clock.ts';
import { calculatePartitionReplicas, type IntOrString } from '../util/intstr.ts';

// ---- rollouts ----

/**
 * Where a rollout stands. Completed: every desired pod is on the update revision and ready.
 * Partitioned: the partition holds the rest back and every pod it lets through is updated and
 * ready. Paused: the kind's paused switch stops it. DeadlineExceeded: CloneSet's Progressing
 * condition says spec.progressDeadlineSeconds passed. Progressing: anything else, including a spec
 * the controller has not observed yet.
 */
export const ROLLOUT_PHASES = ['Progressing', 'Paused', 'Partitioned', 'Completed', 'DeadlineExceeded'] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

/** What the rollout phase and duration read of a workload, as its status counts them. */
export interface RolloutView {
  updateRevision: string | undefined;
  generation: number;
  observedGeneration: number;
  desired: number;
  updated: number;
  updatedReady: number;
  /** Pods the partition keeps on old revisions. */
  partition: number;
  paused: boolean;
  deadlineExceeded: boolean;
}

export function rolloutPhase(v: RolloutView): RolloutPhase {
  const observed = v.observedGeneration >= v.generation;
  if (observed && v.updated >= v.desired && v.updatedReady >= v.desired) return 'Completed';
  if (v.deadlineExceeded) return 'DeadlineExceeded';
  if (v.paused) return 'Paused';
  const target = v.desired - v.partition;
  if (observed && v.partition > 0 && v.updated >= target && v.updatedReady >= target) return 'Partitioned';
  return 'Progressing';
}

/**
 * When each workload's rollout began, so the duration can be observed when it ends. A rollout
 * begins when the status first names a new update revision (the round that makes the revision is
 * the round that starts updating pods) and ends at the first status in which it is Completed. What
 * this process never saw begin (a workload's first revision, i.e. its creation; a rollout under
 * way when the process started) is not timed; a rollout overtaken by a newer revision restarts
 * the clock.
 */
export class RolloutTracker {
  private readonly byUid = new Map<string, { revision: string; startedMs: number | undefined; done: boolean }>();

  /** Takes in one observed state; returns the rollout's duration in seconds when it just ended. */
  observe(uid: string, v: RolloutView, nowMs: number): number | undefined {
    const revision = v.updateRevision;
    if (!revision) return undefined;
    const complete = rolloutPhase(v) === 'Completed';
    let seen = this.byUid.get(uid);
    if (!seen) {
      this.byUid.set(uid, { revision, startedMs: undefined, done: complete });
      return undefined;
    }
    if (seen.revision !== revision) this.byUid.set(uid, (seen = { revision, startedMs: nowMs, done: false }));
    if (seen.done || !complete) return undefined;
    seen.done = true;
    return seen.startedMs === undefined ? undefined : (nowMs - seen.startedMs) / 1000;
  }

  forget(uid: string): void {
    this.byUid.delete(uid);
  }
}

// ---- the table ----

/** One sample of a series: its labels beyond the object's identity, and its value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** One series of a kind: `kruise_<kind>_<suffix>`. */
export interface SeriesDefinition<T> {
  suffix: string;
  help: string;
  /** Labels beyond the object's identity (namespace, <kind>). */
  labels: readonly string[];
  samples(obj: T): Sample[];
}

export interface KindMetrics<T extends KubeObject = KubeObject> {
  /** The identity label and the name prefix: `kruise_<label>_…{namespace, <label>}`. */
  label: string;
  resource: ResourceType;
  /** The controller whose caches are read: the kind is exported only where it runs. */
  controller: string;
  series: readonly SeriesDefinition<T>[];
  /** Kinds that roll out revisions: adds `rollout_phase` and `rollout_duration_seconds`. */
  rollout?(obj: T): RolloutView;
}

const gauge = <T>(suffix: string, help: string, value: (o: T) => number | boolean | undefined): SeriesDefinition<T> => ({
  suffix,
  help,
  labels: [],
  samples(o) {
    const v = value(o);
    return v === undefined ? [] : [{ labels: {}, value: Number(v) }];
  },
});

/** An info series: 1 with the value as a label (a revision), nothing while there is none. */
const info = <T>(suffix: string, help: string, label: string, value: (o: T) => string | undefined): SeriesDefinition<T> => ({
  suffix,
  help,
  labels: [label],
  samples(o) {
    const v = value(o);
    return v ? [{ labels: { [label]: v }, value: 1 }] : [];
  },
});

/** A state set: one sample per state, 1 for the current one and 0 for the others. */
const stateSet = <T>(
  suffix: string,
  help: string,
  label: string,
  states: readonly string[],
  value: (o: T) => string | undefined,
): SeriesDefinition<T> => ({
  suffix,
  help,
  labels: [label],
  samples(o) {
    const current = value(o);
    return current === undefined ? [] : states.map((s) => ({ labels: { [label]: s }, value: s === current ? 1 : 0 }));
  },
});

const seconds = (time: string | undefined) => (time ? Date.parse(time) / 1000 : undefined);
const count = (m: Record<string, unknown> | undefined) => Object.keys(m ?? {}).length;
/** A partition the webhook would have refused reads as none, rather than failing the scrape. */
const partitionOf = (partition: IntOrString | undefined, replicas: number) => {
  try {
    return calculatePartitionReplicas(partition, replicas);
  } catch {
    return 0;
  }
};

const generations = <T extends { metadata: KubeObject['metadata']; status?: { observedGeneration?: number } }>(
  kind: string,
): SeriesDefinition<T>[] => [
  gauge('metadata_generation', `Sequence number of the ${kind}'s desired state.`, (o) => o.metadata.generation),
  gauge('status_observed_generation', `The generation the controller last acted on (lag: metadata_generation minus this).`, (o) =>
    o.status ? (o.status.observedGeneration ?? 0) : undefined,
  ),
];

type CS = Stored<CloneSet>;
const cloneSetReplicas = (o: CS) => o.spec?.replicas ?? 1;
const cloneSet: KindMetrics<CS> = {
  label: 'cloneset',
  resource: kruiseResource('CloneSet'),
  controller: 'cloneset',
  series: [
    gauge('spec_replicas', 'Desired number of pods.', cloneSetReplicas),
    gauge('status_replicas', 'Pods the CloneSet owns (active).', (o) => o.status?.replicas),
    gauge('status_replicas_ready', 'Pods ready.', (o) => o.status?.readyReplicas),
    gauge('status_replicas_available', 'Pods ready for minReadySeconds.', (o) => o.status?.availableReplicas),
    gauge('status_replicas_updated', 'Pods on the update revision.', (o) => o.status?.updatedReplicas),
    gauge('status_replicas_updated_ready', 'Pods on the update revision and ready.', (o) => o.status?.updatedReadyReplicas),
    gauge('spec_partition', 'Pods the partition keeps on old revisions (a percentage resolved against spec.replicas).', (o) =>
      partitionOf(o.spec?.updateStrategy?.rollingUpdate?.partition, cloneSetReplicas(o)),
    ),
    gauge(
      'spec_paused',
      '1 while updateStrategy.rollingUpdate.paused stops the rollout.',
      (o) => !!o.spec?.updateStrategy?.rollingUpdate?.paused,
    ),
    info('status_update_revision', 'The revision pods are updated to.', 'revision', (o) => o.status?.updateRevision),
    info(
      'status_current_revision',
      'The revision every pod was on when the last rollout completed.',
      'revision',
      (o) => o.status?.currentRevision,
    ),
    ...generations<CS>('CloneSet'),
  ],
  rollout: (o) => ({
    updateRevision: o.status?.updateRevision,
    generation: o.metadata.generation ?? 0,
    observedGeneration: o.status?.observedGeneration ?? 0,
    desired: cloneSetReplicas(o),
    updated: o.status?.updatedReplicas ?? 0,
    updatedReady: o.status?.updatedReadyReplicas ?? 0,
    partition: partitionOf(o.spec?.updateStrategy?.rollingUpdate?.partition, cloneSetReplicas(o)),
    paused: !!o.spec?.updateStrategy?.rollingUpdate?.paused,
    deadlineExceeded: !!o.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded'),
  }),
};

type STS = Stored<StatefulSet>;
const statefulSetReplicas = (o: STS) => o.spec?.replicas ?? 1;
const statefulSetPartition = (o: STS) =>
  Math.min(Math.max(o.spec?.updateStrategy?.rollingUpdate?.partition ?? 0, 0), statefulSetReplicas(o));
const statefulSet: KindMetrics<STS> = {
  label: 'statefulset',
  resource: kruiseResource('StatefulSet'),
  controller: 'statefulset',
  series: [
    gauge('spec_replicas', 'Desired number of pods.', statefulSetReplicas),
    gauge('status_replicas', 'Pods the StatefulSet owns.', (o) => o.status?.replicas),
    gauge('status_replicas_ready', 'Pods ready.', (o) => o.status?.readyReplicas),
    gauge('status_replicas_available', 'Pods ready for minReadySeconds.', (o) => o.status?.availableReplicas),
    gauge('status_replicas_current', 'Pods on the current revision.', (o) => o.status?.currentReplicas),
    gauge('status_replicas_updated', 'Pods on the update revision.', (o) => o.status?.updatedReplicas),
    gauge('status_replicas_updated_ready', 'Pods on the update revision and ready.', (o) => o.status?.updatedReadyReplicas),
    gauge('spec_partition', 'Pods the partition keeps on old revisions (ordinals below it).', statefulSetPartition),
    gauge(
      'spec_paused',
      '1 while updateStrategy.rollingUpdate.paused stops the rollout.',
      (o) => !!o.spec?.updateStrategy?.rollingUpdate?.paused,
    ),
    info('status_update_revision', 'The revision pods are updated to.', 'revision', (o) => o.status?.updateRevision),
    info('status_current_revision', 'The revision of the pods not yet updated.', 'revision', (o) => o.status?.currentRevision),
    ...generations<STS>('StatefulSet'),
  ],
  rollout: (o) => ({
    updateRevision: o.status?.updateRevision,
    generation: o.metadata.generation ?? 0,
    observedGeneration: o.status?.observedGeneration ?? 0,
    desired: statefulSetReplicas(o),
    updated: o.status?.updatedReplicas ?? 0,
    updatedReady: o.status?.updatedReadyReplicas ?? 0,
    partition: statefulSetPartition(o),
    paused: !!o.spec?.updateStrategy?.rollingUpdate?.paused,
    deadlineExceeded: false,
  }),
};

type DS = Stored<DaemonSet>;
const daemonSetPartition = (o: DS) => partitionOf(o.spec?.updateStrategy?.rollingUpdate?.partition, o.status?.desiredNumberScheduled ?? 0);
const daemonSet: KindMetrics<DS> = {
  label: 'daemonset',
  resource: kruiseResource('DaemonSet'),
  controller: 'daemonset',
  series: [
    gauge('status_desired_number_scheduled', 'Nodes that should run the daemon pod.', (o) => o.status?.desiredNumberScheduled),
    gauge('status_current_number_scheduled', 'Nodes running at least one daemon pod that should.', (o) => o.status?.currentNumberScheduled),
    gauge('status_number_ready', 'Nodes whose daemon pod is ready.', (o) => o.status?.numberReady),
    gauge('status_number_available', 'Nodes whose daemon pod is ready for minReadySeconds.', (o) => o.status?.numberAvailable ?? 0),
    gauge('status_number_unavailable', 'Nodes that should run a ready daemon pod and do not.', (o) => o.status?.numberUnavailable ?? 0),
    gauge('status_number_misscheduled', 'Nodes running the daemon pod that should not.', (o) => o.status?.numberMisscheduled),
    gauge('status_updated_number_scheduled', 'Nodes running the update revision.', (o) => o.status?.updatedNumberScheduled),
    gauge(
      'spec_partition',
      'Pods the partition keeps on old revisions (a percentage resolved against the desired number).',
      daemonSetPartition,
    ),
    gauge(
      'spec_paused',
      '1 while updateStrategy.rollingUpdate.paused stops the rollout.',
      (o) => !!o.spec?.updateStrategy?.rollingUpdate?.paused,
    ),
    info('status_update_revision', 'The revision pods are updated to.', 'revision', (o) => o.status?.updateRevision),
    ...generations<DS>('DaemonSet'),
  ],
  rollout: (o) => {
    const desired = o.status?.desiredNumberScheduled ?? 0;
    const updated = o.status?.updatedNumberScheduled ?? 0;
    return {
      updateRevision: o.status?.updateRevision,
      generation: o.metadata.generation ?? 0,
      observedGeneration: o.status?.observedGeneration ?? 0,
      desired,
      updated,
      // The status has no updated-and-ready count: at least the ready pods beyond the old ones.
      updatedReady: Math.max(0, (o.status?.numberReady ?? 0) - (desired - updated)),
      partition: daemonSetPartition(o),
      paused: !!o.spec?.updateStrategy?.rollingUpdate?.paused,
      deadlineExceeded: false,
    };
  },
};

type SCS = Stored<SidecarSet>;
const sidecarSetPartition = (o: SCS) => partitionOf(o.spec?.updateStrategy?.partition, o.status?.matchedPods ?? 0);
const sidecarSet: KindMetrics<SCS> = {
  label: 'sidecarset',
  resource: kruiseResource('SidecarSet'),
  controller: 'sidecarset',
  series: [
    gauge('status_matched_pods', 'Pods the selector matches.', (o) => o.status?.matchedPods),
    gauge('status_updated_pods', 'Matched pods with the latest sidecars.', (o) => o.status?.updatedPods),
    gauge('status_ready_pods', 'Matched pods ready.', (o) => o.status?.readyPods),
    gauge('status_updated_ready_pods', 'Matched pods with the latest sidecars and ready.', (o) => o.status?.updatedReadyPods ?? 0),
    gauge(
      'spec_partition',
      'Matched pods the partition keeps on old sidecars (a percentage resolved against matched pods).',
      sidecarSetPartition,
    ),
    gauge('spec_paused', '1 while updateStrategy.paused stops the sidecar upgrade.', (o) => !!o.spec?.updateStrategy?.paused),
    info('status_latest_revision', 'The revision sidecars are upgraded to.', 'revision', (o) => o.status?.latestRevision),
    ...generations<SCS>('SidecarSet'),
  ],
  rollout: (o) => ({
    updateRevision: o.status?.latestRevision,
    generation: o.metadata.generation ?? 0,
    observedGeneration: o.status?.observedGeneration ?? 0,
    desired: o.status?.matchedPods ?? 0,
    updated: o.status?.updatedPods ?? 0,
    updatedReady: o.status?.updatedReadyPods ?? 0,
    partition: sidecarSetPartition(o),
    paused: !!o.spec?.updateStrategy?.paused,
    deadlineExceeded: false,
  }),
};

type UD = Stored<UnitedDeployment>;
const unitedReplicas = (o: UD) => o.spec?.replicas ?? 1;
const unitedPartition = (o: UD) =>
  Math.min(
    Object.values(o.spec?.updateStrategy?.manualUpdate?.partitions ?? {}).reduce((sum, p) => sum + Math.max(p, 0), 0),
    unitedReplicas(o),
  );
const unitedDeployment: KindMetrics<UD> = {
  label: 'uniteddeployment',
  resource: kruiseResource('UnitedDeployment'),
  controller: 'uniteddeployment',
  series: [
    gauge('spec_replicas', 'Desired number of pods over all subsets.', unitedReplicas),
    gauge('status_replicas', 'Pods of all subsets.', (o) => o.status?.replicas),
    gauge('status_replicas_ready', 'Pods ready.', (o) => o.status?.readyReplicas ?? 0),
    gauge('status_replicas_updated', 'Pods on the updated revision.', (o) => o.status?.updatedReplicas),
    gauge('status_replicas_updated_ready', 'Pods on the updated revision and ready.', (o) => o.status?.updatedReadyReplicas ?? 0),
    gauge('spec_partition', 'Pods the subsets’ manual partitions keep on old revisions, summed.', unitedPartition),
    info(
      'status_update_revision',
      'The revision subsets are updated to (status.updatedRevision).',
      'revision',
      (o) => o.status?.updatedRevision,
    ),
    info('status_current_revision', 'The current revision.', 'revision', (o) => o.status?.currentRevision),
    ...generations<UD>('UnitedDeployment'),
  ],
  rollout: (o) => ({
    updateRevision: o.status?.updatedRevision,
    generation: o.metadata.generation ?? 0,
    observedGeneration: o.status?.observedGeneration ?? 0,
    desired: unitedReplicas(o),
    updated: o.status?.updatedReplicas ?? 0,
    updatedReady: o.status?.updatedReadyReplicas ?? 0,
    partition: unitedPartition(o),
    paused: false,
    deadlineExceeded: false,
  }),
};

type BCJ = Stored<BroadcastJob>;
const broadcastJob: KindMetrics<BCJ> = {
  label: 'broadcastjob',
  resource: kruiseResource('BroadcastJob'),
  controller: 'broadcastjob',
  series: [
    gauge('status_desired', 'Pods the job should run (one per eligible node).', (o) => o.status?.desired ?? 0),
    gauge('status_active', 'Pods running.', (o) => o.status?.active ?? 0),
    gauge('status_succeeded', 'Pods that succeeded.', (o) => o.status?.succeeded ?? 0),
    gauge('status_failed', 'Pods that failed.', (o) => o.status?.failed ?? 0),
    gauge('spec_paused', '1 while spec.paused holds the job.', (o) => !!o.spec?.paused),
    stateSet(
      'status_phase',
      'The job’s phase (status.phase).',
      'phase',
      ['running', 'paused', 'completed', 'failed'],
      (o) => o.status?.phase,
    ),
    gauge('metadata_generation', "Sequence number of the BroadcastJob's desired state.", (o) => o.metadata.generation),
  ],
};

type ACJ = Stored<AdvancedCronJob>;
const advancedCronJob: KindMetrics<ACJ> = {
  label: 'advancedcronjob',
  resource: kruiseResource('AdvancedCronJob'),
  controller: 'advancedcronjob',
  series: [
    gauge('status_active', 'Jobs running now.', (o) => o.status?.active?.length ?? 0),
    gauge('status_last_schedule_time', 'When a job was last scheduled (Unix seconds).', (o) =>
      seconds(o.status?.lastScheduleTime ?? undefined),
    ),
    gauge('spec_paused', '1 while spec.paused suspends scheduling.', (o) => !!o.spec?.paused),
    gauge('metadata_generation', "Sequence number of the AdvancedCronJob's desired state.", (o) => o.metadata.generation),
  ],
};

type IPJ = Stored<ImagePullJob>;
const imagePullJob: KindMetrics<IPJ> = {
  label: 'imagepulljob',
  resource: kruiseResource('ImagePullJob'),
  controller: 'imagepulljob',
  series: [
    gauge('status_desired', 'Nodes that should pull the image.', (o) => o.status?.desired ?? 0),
    gauge('status_active', 'Nodes pulling now.', (o) => o.status?.active ?? 0),
    gauge('status_succeeded', 'Nodes that pulled the image.', (o) => o.status?.succeeded ?? 0),
    gauge('status_failed', 'Nodes that failed to pull it.', (o) => o.status?.failed ?? 0),
    gauge('status_start_time', 'When the job started (Unix seconds).', (o) => seconds(o.status?.startTime ?? undefined)),
    gauge('status_completion_time', 'When the job completed (Unix seconds).', (o) => seconds(o.status?.completionTime ?? undefined)),
    gauge('metadata_generation', "Sequence number of the ImagePullJob's desired state.", (o) => o.metadata.generation),
  ],
};

type PUB = Stored<PodUnavailableBudget>;
const podUnavailableBudget: KindMetrics<PUB> = {
  label: 'podunavailablebudget',
  resource: kruiseResource('PodUnavailableBudget', POLICY_GROUP),
  controller: 'podunavailablebudget',
  series: [
    gauge(
      'status_unavailable_allowed',
      'Pods that may still be disrupted (0: the budget is exhausted).',
      (o) => o.status?.unavailableAllowed,
    ),
    gauge('status_current_available', 'Protected pods available now.', (o) => o.status?.currentAvailable),
    gauge('status_desired_available', 'Protected pods that must stay available.', (o) => o.status?.desiredAvailable),
    gauge('status_total_replicas', 'Pods the budget protects.', (o) => o.status?.totalReplicas),
    gauge('status_disrupted_pods', 'Pods being deleted or evicted under the budget.', (o) =>
      o.status ? count(o.status.disruptedPods) : undefined,
    ),
    gauge('status_unavailable_pods', 'Pods being updated under the budget.', (o) =>
      o.status ? count(o.status.unavailablePods) : undefined,
    ),
    ...generations<PUB>('PodUnavailableBudget'),
  ],
};

type WS = Stored<WorkloadSpread>;
const perSubset = (
  suffix: string,
  help: string,
  value: (s: NonNullable<NonNullable<WS['status']>['subsetStatuses']>[number]) => number,
) => ({
  suffix,
  help,
  labels: ['subset'],
  samples: (o: WS): Sample[] => (o.status?.subsetStatuses ?? []).map((s) => ({ labels: { subset: s.name }, value: value(s) })),
});
const workloadSpread: KindMetrics<WS> = {
  label: 'workloadspread',
  resource: kruiseResource('WorkloadSpread'),
  controller: 'workloadspread',
  series: [
    perSubset('status_subset_replicas', 'Pods of the workload in the subset.', (s) => s.replicas),
    perSubset('status_subset_missing_replicas', 'Pods the subset may still take (-1: no maxReplicas).', (s) => s.missingReplicas),
    ...generations<WS>('WorkloadSpread'),
  ],
};

/** Every kind with per-object metrics, in the order docs/metrics.md and the dashboard show them. */
export const WORKLOAD_METRICS: readonly KindMetrics[] = [
  cloneSet,
  statefulSet,
  daemonSet,
  sidecarSet,
  unitedDeployment,
  broadcastJob,
  advancedCronJob,
  imagePullJob,
  podUnavailableBudget,
  workloadSpread,
];

/** `kruise_<label>_<suffix>`. */
export const seriesName = (kind: Pick<KindMetrics, 'label'>, suffix: string) => `kruise_${kind.label}_${suffix}`;

/** The identity labels of a kind's series: namespace (when namespaced) and the kind's own. */
export const identityLabels = (kind: Pick<KindMetrics, 'label' | 'resource'>): string[] =>
  kind.resource.namespaced ? ['namespace', kind.label] : [kind.label];

/** Seconds from a rollout's first updated pod to its last: rollouts of minutes to hours. */
export const ROLLOUT_DURATION_BUCKETS = [5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400];

/** Every series name the table defines (gauges and the histogram's base name), for docs and tests. */
export function workloadSeriesNames(): string[] {
  return WORKLOAD_METRICS.flatMap((k) => [
    ...k.series.map((s) => seriesName(k, s.suffix)),
    ...(k.rollout ? [seriesName(k, 'rollout_phase'), seriesName(k, 'rollout_duration_seconds')] : []),
  ]);
}

// ---- the exporter ----

/** One manager's caches of one kind, and whether that manager leads. */
interface Source {
  informer: Informer<KubeObject>;
  isLeader(): boolean;
}

const sources = new Map<KindMetrics, Set<Source>>();
const leading = (kind: KindMetrics) => [...(sources.get(kind) ?? [])].filter((s) => s.isLeader());

const identity = (kind: KindMetrics, o: KubeObject): Record<string, string> =>
  kind.resource.namespaced
    ? { namespace: o.metadata.namespace ?? '', [kind.label]: o.metadata.name ?? '' }
    : { [kind.label]: o.metadata.name ?? '' };

/**
 * A kind's rollout-duration histogram. Each workload the leader caches has its series from the
 * first scrape on, at zero: a series that appeared at its first observation would lose that
 * rollout to increase() and rate(). A deleted workload's series goes with it; a replica that does
 * not lead shows none (the leader's are the only ones).
 */
class RolloutDurations {
  private readonly present = new Set<string>();
  private readonly histogram: Histogram<string>;

  constructor(private readonly kind: KindMetrics) {
    this.histogram = new Histogram({
      name: seriesName(kind, 'rollout_duration_seconds'),
      help: 'Seconds from the first status naming a new update revision to the first in which every desired pod is updated and ready, for rollouts that ended while this replica led.',
      labelNames: identityLabels(kind),
      buckets: ROLLOUT_DURATION_BUCKETS,
      registers: [registry],
      collect: () => this.sync(),
    });
  }

  observe(o: KubeObject, seconds: number): void {
    this.histogram.observe(this.ensure(o), seconds);
  }

  forget(o: KubeObject): void {
    const labels = identity(this.kind, o);
    if (this.present.delete(JSON.stringify(labels))) this.histogram.remove(labels);
  }

  private ensure(o: KubeObject): Record<string, string> {
    const labels = identity(this.kind, o);
    const key = JSON.stringify(labels);
    if (!this.present.has(key)) {
      this.histogram.zero(labels);
      this.present.add(key);
    }
    return labels;
  }

  private sync(): void {
    const sources = leading(this.kind);
    if (!sources.length) {
      this.histogram.reset();
      this.present.clear();
    }
    for (const source of sources) for (const o of source.informer.lister.list()) this.ensure(o);
  }
}

const durations = new Map<KindMetrics, RolloutDurations>();

// Registered once per process (the registry is the process's): each gauge reads, at scrape time,
// the caches of every leading manager attached to its kind (one in production).
for (const kind of WORKLOAD_METRICS) {
  const series: SeriesDefinition<KubeObject>[] = [...kind.series];
  if (kind.rollout) {
    const view = kind.rollout;
    series.push(
      stateSet('rollout_phase', `Where the ${kind.label}'s rollout stands (one of the phases is 1).`, 'phase', ROLLOUT_PHASES, (o) =>
        rolloutPhase(view(o)),
      ),
    );
  }
  for (const s of series) {
    new Gauge({
      name: seriesName(kind, s.suffix),
      help: s.help,
      labelNames: [...identityLabels(kind), ...s.labels],
      registers: [registry],
      collect() {
        this.reset();
        for (const source of leading(kind))
          for (const o of source.informer.lister.list())
            for (const sample of s.samples(o)) this.set({ ...identity(kind, o), ...sample.labels }, sample.value);
      },
    });
  }
  if (kind.rollout) durations.set(kind, new RolloutDurations(kind));
}

export interface WorkloadMetricsOptions {
  /** The process's informers: the same ones (same selector) the controllers read. */
  informers: InformerSource;
  /** Names of the controllers that run: a kind is exported only where its controller runs. */
  controllers: ReadonlySet<string>;
  /** --namespace: the selector the controllers' informers of namespaced kinds use. */
  namespace: string;
  isLeader(): boolean;
  clock?: Clock;
}

/**
 * Exports the per-workload series of one manager (its leader's caches) and starts timing its
 * rollouts. Returns what detaches them (the manager's stop).
 */
export function attachWorkloadMetrics(opts: WorkloadMetricsOptions): () => void {
  const clock = opts.clock ?? realClock;
  const detach: Array<() => void> = [];
  for (const kind of WORKLOAD_METRICS) {
    if (!opts.controllers.has(kind.controller)) continue;
    const selector: InformerSelector = kind.resource.namespaced && opts.namespace ? { namespace: opts.namespace } : {};
    const source: Source = { informer: opts.informers.informerFor<KubeObject>(kind.resource, selector), isLeader: opts.isLeader };
    let set = sources.get(kind);
    if (!set) sources.set(kind, (set = new Set()));
    set.add(source);
    detach.push(() => set.delete(source));
    const view = kind.rollout;
    const histogram = durations.get(kind);
    if (!view || !histogram) continue;
    const tracker = new RolloutTracker();
    const observe = (o: KubeObject) => {
      const uid = o.metadata.uid;
      if (!uid) return;
      const secs = tracker.observe(uid, view(o), clock.now());
      if (secs !== undefined && opts.isLeader()) histogram.observe(o, secs);
    };
    const registration = source.informer.addEventHandler({
      onAdd: observe,
      onUpdate: (_, o) => observe(o),
      onDelete: (deleted) => {
        const o = unwrapDeleted(deleted);
        if (o.metadata.uid) tracker.forget(o.metadata.uid);
        histogram.forget(o);
      },
    });
    detach.push(() => registration.remove());
  }
  return () => detach.forEach((d) => d());
}
