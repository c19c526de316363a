// The whole rollout, round by round: `rollout plan` replays the controller's own planner on its
// copy of the objects. A round is what the controller does before it waits for pods: reconciles
// run (each plan's writes applied as the executor would write them) until one writes nothing; then
// every pod is taken to become ready (and available after minReadySeconds) and the next round
// begins. The rollout ends when a round moves no pod: every pod is at the update revision, or the
// partition (or a pause) keeps the rest. Ties in the controllers' orders go by name (src/util/pod.ts
// byPodName), so the pods named here are the pods the controller picks, as long as the pods do
// become ready in that order and nothing else changes them.
import type { CloneSet } from '../../apis/apps/cloneset.ts';
import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import { CONTROLLER_REVISION_HASH_LABEL } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { KubeObject, Node, Pod, PodCondition } from '../../apis/core-objects.ts';
import { equalToRevisionHash } from '../../util/revision.ts';
import type { Labels } from '../../util/labelselector.ts';
import type { ControllerRevision } from '../../util/revision-data.ts';
import { daemonSetRound, nodeOfNewPod, statefulSetRound } from './plan-advanced.ts';
import { cloneSetRound, type PlannedRound, type PlannedWrites, type PlanReport } from './plan.ts';
import { table } from './session.ts';

export type PlannedKind = 'CloneSet' | 'StatefulSet' | 'DaemonSet';

/** The kinds whose controller's planner `rollout plan` runs (their Kruise types: cloneset, asts, ads). */
export const isPlanned = (kind: string): kind is PlannedKind => kind === 'CloneSet' || kind === 'StatefulSet' || kind === 'DaemonSet';

/** What a controller reads for one workload (the previewed change already applied to it). */
export interface PlanState {
  kind: PlannedKind;
  workload: KubeObject;
  pods: Pod[];
  revisions: ControllerRevision[];
  pvcs: PersistentVolumeClaim[];
  /** Advanced DaemonSet: every node; CloneSet: the nodes, when topology spread ranks its pods. */
  nodes: Node[];
}

/** One reconcile of the kind's planner on the state. */
export function planRound(state: PlanState, nowMs: number, featureGates = '', newName?: () => string): PlannedRound {
  const { pods, revisions, pvcs, nodes } = state;
  if (state.kind === 'CloneSet') {
    const labels = new Map(nodes.map((n) => [n.metadata.name, n.metadata.labels]));
    const nodeLabels = nodes.length ? (node: string): Labels | undefined => labels.get(node) : undefined;
    const cloneSet = state.workload as CloneSet & KubeObject;
    return cloneSetRound({ cloneSet, pods, pvcs, revisions, nodeLabels, nowMs, featureGates, randomId: newName });
  }
  if (state.kind === 'StatefulSet') {
    return statefulSetRound({ set: state.workload as StatefulSet & KubeObject, pods, pvcs, revisions, nowMs, featureGates });
  }
  const daemonSet = state.workload as DaemonSet & KubeObject;
  return daemonSetRound({ daemonSet, pods, nodes, revisions, nowMs, featureGates, randomSuffix: newName });
}

export interface RolloutRound {
  round: number;
  /** Pods that leave their old revision this round: updated in place, or deleted (and replaced). */
  moved: Array<{ pod: string; how: 'in place' | 'recreate' }>;
  /** Pods created this round (new names are the API server's to choose: shown as new1-, new2-, …). */
  created: string[];
  /** Pods at the update revision once this round's pods are ready. */
  updated: number;
}

export interface RolloutForecast {
  rounds: RolloutRound[];
  /**
   * complete: every pod at the update revision; partition: the partition keeps the rest at old
   * revisions; paused: updates wait for a resume; stalled: the planner moves no pod for another
   * reason (e.g. a PodUnavailableBudget, or pods the forecast cannot make ready).
   */
  end: 'complete' | 'partition' | 'paused' | 'stalled';
  /** Pods left at old revisions when the rollout ends. */
  kept: string[];
}

const MAX_ROUNDS = 200;
const MAX_RECONCILES_PER_ROUND = 50;
const RECONCILE_MS = 1000;

export function forecastRollout(start: PlanState, nowMs: number, featureGates = ''): RolloutForecast {
  const state: PlanState = structuredClone(start);
  let created = 0;
  const newName = () => `new${++created}`.padEnd(5, '-');
  let now = nowMs;
  const rounds: RolloutRound[] = [];
  let last: PlanReport | undefined;
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const moved: RolloutRound['moved'] = [];
    const newPods: string[] = [];
    for (let i = 0; i < MAX_RECONCILES_PER_ROUND; i++) {
      const { report, writes } = planRound(state, now, featureGates, newName);
      last = report;
      const oldPods = new Set(state.pods.filter((p) => !atRevision(p, report.revisions.update)).map(podName));
      for (const u of writes.inPlaceUpdates) if (oldPods.has(u.pod)) moved.push({ pod: u.pod, how: 'in place' });
      for (const d of writes.deletes) if (oldPods.has(d)) moved.push({ pod: d, how: 'recreate' });
      newPods.push(...writes.creates.map((c) => podName(c.pod)));
      const wrote = replay(state, writes);
      now += RECONCILE_MS;
      if (!wrote) {
        // In-place grace periods and the like: the planner asked to be called back.
        if (writes.requeueAfterMs === undefined) break;
        now += writes.requeueAfterMs;
      }
    }
    if (moved.length === 0 && newPods.length === 0) break;
    now += becomeReady(state, now);
    const updateRevision = last!.revisions.update;
    rounds.push({ round, moved, created: newPods, updated: state.pods.filter((p) => atRevision(p, updateRevision)).length });
  }
  const update = last?.revisions.update ?? '';
  const kept = state.pods
    .filter((p) => !atRevision(p, update))
    .map(podName)
    .sort();
  let end: RolloutForecast['end'] = 'stalled';
  if (kept.length === 0) end = 'complete';
  else if (last?.paused) end = 'paused';
  else if (last && kept.length <= last.partition.oldRevisionPods) end = 'partition';
  return { rounds, end, kept };
}

const podName = (p: Pod) => p.metadata.name ?? '';
const atRevision = (p: Pod, revision: string) => equalToRevisionHash(p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL], revision);

/** Applies one plan's writes to the state, as the executor would; false when it writes nothing to pods or revisions. */
function replay(state: PlanState, w: PlannedWrites): boolean {
  let wrote = false;
  const byName = new Map(state.pods.map((p) => [podName(p), p]));
  const pod = (name: string) => byName.get(name);
  if (w.newRevision) {
    state.revisions.push(structuredClone(w.newRevision));
    wrote = true;
  }
  if (w.revisionUpdate) {
    const r = state.revisions.find((x) => x.metadata.name === w.revisionUpdate!.name);
    if (r) r.revision = w.revisionUpdate.revision;
    wrote = true;
  }
  for (const r of w.refreshes) {
    const p = pod(r.pod);
    if (!p) continue;
    if (r.updatedPod) Object.assign(p, { metadata: structuredClone(r.updatedPod.metadata), spec: structuredClone(r.updatedPod.spec) });
    if (r.conditions) setConditions(p, r.conditions);
    wrote = true;
  }
  for (const t of w.lifecycleTransitions) {
    const p = pod(t.pod);
    if (!p) continue;
    p.metadata.labels = { ...p.metadata.labels, ...t.labels };
    p.metadata.annotations = { ...p.metadata.annotations, ...t.annotations };
    if (t.addFinalizers.length) p.metadata.finalizers = [...new Set([...(p.metadata.finalizers ?? []), ...t.addFinalizers])];
    if (t.readinessCondition) setConditions(p, [t.readinessCondition]);
    if (t.stateChanged || t.readinessCondition) wrote = true;
  }
  for (const l of w.labelPatches) {
    const p = pod(l.pod);
    if (!p) continue;
    p.metadata.labels = { ...p.metadata.labels, ...l.labels };
    wrote = true;
  }
  for (const u of w.inPlaceUpdates) {
    const p = pod(u.pod);
    if (!p) continue;
    Object.assign(p, { metadata: structuredClone(u.updatedPod.metadata), spec: structuredClone(u.updatedPod.spec) });
    if (u.conditions) setConditions(p, u.conditions);
    wrote = true;
  }
  if (w.deletes.length) {
    // Deleted pods go at once: the forecast does not wait out grace periods or finalizers.
    const gone = new Set(w.deletes);
    state.pods = state.pods.filter((p) => !gone.has(podName(p)));
    wrote = true;
  }
  for (const c of w.creates) {
    state.pods.push(structuredClone(c.pod));
    state.pvcs.push(...structuredClone(c.pvcs));
    wrote = true;
  }
  (state.workload as { status?: object }).status = structuredClone(w.status);
  return wrote;
}

function setConditions(p: Pod, conditions: readonly PodCondition[]) {
  const status = (p.status ??= {});
  const rest = (status.conditions ?? []).filter((c) => !conditions.some((n) => n.type === c.type));
  status.conditions = [...rest, ...structuredClone(conditions)];
}

/**
 * Every pod scheduled, running and ready at `now`, its containers running the images of its spec:
 * what the round waits for. Returns how long availability then takes (minReadySeconds, plus a second).
 */
function becomeReady(state: PlanState, nowMs: number): number {
  const now = new Date(nowMs).toISOString().replace(/\.\d+Z$/, 'Z');
  for (const p of state.pods) {
    const spec = p.spec;
    if (spec && !spec.nodeName) spec.nodeName = nodeOfNewPod(p) || 'node';
    const status = (p.status ??= {});
    status.phase = 'Running';
    const gates = (spec?.readinessGates ?? []).map((g) => g.conditionType);
    const ready: PodCondition[] = ['Ready', ...gates]
      .filter((type) => (status.conditions ?? []).find((c) => c.type === type)?.status !== 'True')
      .map((type) => ({ type, status: 'True', lastTransitionTime: now }));
    setConditions(p, ready);
    const before = new Map((status.containerStatuses ?? []).map((c) => [c.name, c]));
    status.containerStatuses = (spec?.containers ?? []).map((c) => {
      const was = before.get(c.name);
      const same = was?.image === c.image;
      return {
        name: c.name,
        image: c.image ?? '',
        imageID: same && was?.imageID ? was.imageID : `forecast://${c.image}`,
        ready: true,
        started: true,
        restartCount: was?.restartCount ?? 0,
        state: { running: { startedAt: now } },
      };
    });
  }
  const spec = (
    state.workload as { spec?: { minReadySeconds?: number; updateStrategy?: { rollingUpdate?: { minReadySeconds?: number } } } }
  ).spec;
  const minReady = Math.max(spec?.minReadySeconds ?? 0, spec?.updateStrategy?.rollingUpdate?.minReadySeconds ?? 0);
  return (minReady + 1) * 1000;
}

export function renderForecast(f: RolloutForecast, report: PlanReport): string {
  const lines = ['', 'the whole rollout, round by round (each round waits until its pods are ready):'];
  const total = report.replicas.desired;
  const rows = f.rounds.map((r) => [
    String(r.round),
    r.moved.map((m) => (m.how === 'in place' ? `${m.pod} (in place)` : m.pod)).join(', ') || '-',
    r.created.length ? String(r.created.length) : '-',
    `${r.updated}/${total}`,
  ]);
  if (rows.length) lines.push(table([['ROUND', 'PODS UPDATED', 'CREATED', 'AT UPDATE REVISION'], ...rows]));
  const after = f.rounds.length ? `after round ${f.rounds.length}` : 'now';
  const kept = f.kept.join(', ');
  if (f.end === 'complete') lines.push(`complete ${after}: every pod at revision ${report.revisions.update}`);
  else if (f.end === 'partition')
    lines.push(`stops ${after}: partition ${report.partition.value} keeps ${f.kept.length} pod(s) at old revisions: ${kept}`);
  else if (f.end === 'paused') lines.push(`paused ${after}: ${kept} wait for \`kubectl kruise rollout resume\``);
  else lines.push(`stalls ${after}: the controller moves none of ${kept} (see the next reconcile's events)`);
  return lines.join('\n');
}
