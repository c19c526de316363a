// Event handlers of the WorkloadSpread controller (upstream workloadspread_event_handler.go): what
// makes a WorkloadSpread look again, as upstream decides it.
//   - a pod reaches only the WorkloadSpread its matched-workloadspread annotation names: when it is
//     created or deleted, and when an update takes it out of service (active → inactive) or changes
//     its version. A pod without the annotation (one no subset had room for, or created before the
//     WorkloadSpread) starts no round: upstream lets the next round for another reason rank it, so
//     pods a full subset turned away keep no pod-deletion-cost until then.
//     Kruise TS adds one trigger: an annotated pending pod the scheduler has just found
//     Unschedulable, so an Adaptive subset's rescheduleCriticalSeconds is timed from the round that
//     sees it rather than from an unrelated event.
//   - a workload reaches the WorkloadSpreads targeting it (a ReplicaSet also those of its
//     Deployment) when it is created or deleted, and on an update that changes its replicas (a Job's
//     parallelism, a custom workload's replicasPath) or starts a rollout (a CloneSet's
//     updateRevision leaving the currentRevision, a Deployment's revision annotation): status
//     churn of the workload starts no round.
// A deleted pod is also observed against the scale expectations of the WorkloadSpread that deleted it.

import type { Pod } from '../../apis/core-objects.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import type { ScaleExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import { isPodActive } from '../../util/pod.ts';
import { isPendingUnschedulable } from './plan.ts';
import { controllerOf, groupOf, matchedWorkloadSpreadOf, podVersion, replicasAtPath } from '../../util/workloadspread.ts';

/** A Deployment's rollout sequence, on it and its ReplicaSets. */
export const DEPLOYMENT_REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/** A workload as the handlers read it. */
export type Workload = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

export interface Enqueuer {
  add(key: string): void;
}

/** The key of the WorkloadSpread a pod's annotation names; undefined without one. */
export function spreadKeyOfPod(pod: Pick<Pod, 'metadata'>): string | undefined {
  const matched = matchedWorkloadSpreadOf(pod);
  return matched ? `${pod.metadata.namespace ?? ''}/${matched.name}` : undefined;
}

/** Whether a pod update concerns the WorkloadSpread its annotation names. */
export function podUpdateMatters(old: Pod, cur: Pod): boolean {
  if (isPodActive(old) && !isPodActive(cur)) return true;
  if (podVersion(old) !== podVersion(cur)) return true;
  return !isPendingUnschedulable(old) && isPendingUnschedulable(cur);
}

/**
 * Whether a workload update concerns the WorkloadSpreads targeting it: its replicas changed, or a
 * rollout began. `replicasPath`: a custom workload's, from the whitelist.
 */
export function workloadUpdateMatters(kind: string, old: Workload, cur: Workload, replicasPath?: string): boolean {
  const replicas = (w: Workload) => {
    if (replicasPath) return replicasAtPathOrZero(w, replicasPath);
    return kind === 'Job' ? w.spec?.parallelism : w.spec?.replicas;
  };
  if (replicas(old) !== replicas(cur)) return true;
  if (kind === 'CloneSet') return cur.status?.updateRevision !== old.status?.currentRevision;
  if (kind === 'Deployment')
    return cur.metadata.annotations?.[DEPLOYMENT_REVISION_ANNOTATION] !== old.metadata.annotations?.[DEPLOYMENT_REVISION_ANNOTATION];
  return false;
}

/** A replicas path that does not hold an integer reads as 0, as upstream's GetReplicasFromCustomWorkload. */
function replicasAtPathOrZero(w: Workload, path: string): number {
  try {
    return replicasAtPath(w, path);
  } catch {
    return 0;
  }
}

export interface SpreadHandlerDeps {
  queue: Enqueuer;
  scale: ScaleExpectations;
  /** Keys of the WorkloadSpreads of a namespace targeting the workload (group, kind, name). */
  targeting(namespace: string, group: string, kind: string, name: string): string[];
}

export function makeSpreadHandlers(deps: SpreadHandlerDeps) {
  const pod: EventHandler<Pod> = {
    onAdd: (p) => {
      const key = spreadKeyOfPod(p);
      if (key) deps.queue.add(key);
    },
    onUpdate: (old, cur) => {
      const key = spreadKeyOfPod(cur);
      if (key && podUpdateMatters(old, cur)) deps.queue.add(key);
    },
    onDelete: (obj) => {
      const p = unwrapDeleted(obj);
      const key = spreadKeyOfPod(p);
      if (!key) return;
      deps.scale.observeScale(key, 'delete', p.metadata.name ?? '');
      deps.queue.add(key);
    },
  };

  /** The handler of one workload kind; `replicasPath` reads a custom workload's replicas. */
  const workload = (group: string, kind: string, replicasPath?: () => string | undefined): EventHandler<Workload> => {
    const enqueue = (w: Workload) => {
      const ns = w.metadata.namespace ?? '';
      const keys = deps.targeting(ns, group, kind, w.metadata.name ?? '');
      const owner = controllerOf(w);
      // A ReplicaSet's change also concerns the WorkloadSpreads of its Deployment.
      if (kind === 'ReplicaSet' && owner?.kind === 'Deployment' && groupOf(owner.apiVersion) === 'apps') {
        keys.push(...deps.targeting(ns, 'apps', 'Deployment', owner.name));
      }
      for (const key of new Set(keys)) deps.queue.add(key);
    };
    return {
      onAdd: enqueue,
      onUpdate: (old, cur) => {
        if (workloadUpdateMatters(kind, old, cur, replicasPath?.())) enqueue(cur);
      },
      onDelete: (obj) => enqueue(unwrapDeleted(obj)),
    };
  };
  return { pod, workload };
}
