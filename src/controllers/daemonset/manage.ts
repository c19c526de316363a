// The manage phase of an Advanced DaemonSet round (upstream manage / podsShouldBeOnNode): one pod
// per eligible node, failed-pod backoff, surplus and misscheduled pods, progressive creation, and
// the pods it creates.

import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import { CONDITION_INPLACE_UPDATE_READY, CONTROLLER_REVISION_HASH_LABEL, SPECIFIED_DELETE_LABEL } from '../../apis/constants.ts';
import type { Node, Pod } from '../../apis/core-objects.ts';
import { isPodHooked } from '../../util/lifecycle.ts';
import { withDaemonPodTolerations, withNodeNameAffinity, type DaemonPlacement } from '../../util/nodefit.ts';
import { isPodReady } from '../../util/pod.ts';
import type { DaemonSetPlan, PlanInput } from './types.ts';
import { allowsSurge, compareDaemonPods, isDaemonPodAvailable, isPodUpdated, isPreDeleting, podName, rollingUpdateOf } from './pods.ts';
import { daemonSetControllerRef } from './revisions.ts';

/**
 * GetNodesNeedingPods: without progressive creation every node, sorted; with it (scaleStrategy
 * .partitionedScaling) only the first `desired - newPods - partition` node names, in lexical order.
 */
export function getNodesNeedingPods(
  newPods: number,
  desired: number,
  partition: number,
  progressive: boolean,
  nodes: readonly string[],
): string[] {
  const sorted = [...nodes].sort();
  if (!progressive) return sorted;
  const p = Math.max(Math.min(partition, desired), 0);
  const maxCreate = Math.min(Math.max(desired - newPods - p, 0), sorted.length);
  return maxCreate > 0 ? sorted.slice(0, maxCreate) : [];
}

/** A new pod for `node` (NewPod + CreatePodTemplate + ReplaceDaemonSetPodNodeNameNodeAffinity). */
export function newDaemonPod(ds: DaemonSet, hash: string, node: string, name: string): Pod {
  const template = structuredClone(ds.spec?.template ?? {});
  const spec = { ...(template.spec ?? { containers: [] }) };
  spec.tolerations = withDaemonPodTolerations(spec);
  spec.affinity = withNodeNameAffinity(spec.affinity, node);
  if (
    rollingUpdateOf(ds)?.rollingUpdateType === 'InPlaceIfPossible' &&
    !(spec.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY)
  ) {
    spec.readinessGates = [...(spec.readinessGates ?? []), { conditionType: CONDITION_INPLACE_UPDATE_READY }];
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${ds.metadata?.name ?? ''}-`,
      namespace: ds.metadata?.namespace,
      labels: { ...(template.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ...(template.metadata?.finalizers?.length ? { finalizers: [...template.metadata.finalizers] } : {}),
      ownerReferences: [daemonSetControllerRef(ds)],
    },
    spec,
  };
}

export interface ManageResult {
  nodesNeedingPods: string[];
  podsToDelete: string[];
  failedPodNodes: string[];
  backoffMs?: number;
  events: DaemonSetPlan['events'];
}

/** podsShouldBeOnNode for every node, plus unscheduled pods whose node is gone. */
export function manage(
  ds: DaemonSet,
  hash: string,
  nodes: readonly Node[],
  placements: ReadonlyMap<string, DaemonPlacement>,
  byNode: ReadonlyMap<string, Pod[]>,
  nowMs: number,
  failedPodBackoff: PlanInput['failedPodBackoff'],
): ManageResult {
  const r: ManageResult = { nodesNeedingPods: [], podsToDelete: [], failedPodNodes: [], events: [] };
  const minReadySeconds = ds.spec?.minReadySeconds ?? 0;
  const surge = allowsSurge(ds);
  for (const node of nodes) {
    const name = node.metadata.name ?? '';
    const { shouldRun, shouldContinueRunning } = placements.get(name)!;
    const pods = byNode.get(name);
    if (shouldRun && !pods) {
      r.nodesNeedingPods.push(name);
    } else if (shouldContinueRunning) {
      const running: Pod[] = [];
      for (const p of pods ?? []) {
        if (p.metadata.deletionTimestamp) continue;
        if (p.status?.phase === 'Failed') {
          // Kubelet may keep rejecting the pod: recreate it no faster than the node's backoff.
          const wait = failedPodBackoff?.(name);
          if (wait !== undefined) {
            r.backoffMs = r.backoffMs === undefined ? wait : Math.min(r.backoffMs, wait);
            continue;
          }
          r.failedPodNodes.push(name);
          r.events.push({
            type: 'Warning',
            reason: 'FailedDaemonPod',
            message: `Found failed daemon pod ${ds.metadata?.namespace}/${podName(p)} on node ${name}, will try to kill it`,
          });
          r.podsToDelete.push(podName(p));
        } else if (p.status?.phase === 'Succeeded' || p.metadata.labels?.[SPECIFIED_DELETE_LABEL] !== undefined) {
          r.podsToDelete.push(podName(p));
        } else if (isPreDeleting(p)) {
          // PreparingDelete: deleted once the preDelete hook lets go; until then it holds the node.
          if (!isPodHooked(ds.spec?.lifecycle?.preDelete, p)) r.podsToDelete.push(podName(p));
        } else {
          running.push(p);
        }
      }
      running.sort(compareDaemonPods);
      if (!surge) {
        for (const p of running.slice(1)) r.podsToDelete.push(podName(p));
      } else {
        // Two pods only while the oldest new one is not yet available and the oldest old one is ready.
        let oldestNew: Pod | undefined;
        let oldestOld: Pod | undefined;
        for (const p of running) {
          if (isPodUpdated(p, hash) && !oldestNew) oldestNew = p;
          else if (!isPodUpdated(p, hash) && !oldestOld) oldestOld = p;
          else r.podsToDelete.push(podName(p));
        }
        if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isDaemonPodAvailable(oldestNew, minReadySeconds, nowMs))) {
          r.podsToDelete.push(podName(oldestOld));
        }
      }
    } else if (pods) {
      for (const p of pods) if (!p.metadata.deletionTimestamp) r.podsToDelete.push(podName(p));
    }
  }
  // Pods bound (by affinity) to a node that no longer exists never schedule: delete them.
  for (const [node, pods] of byNode) {
    if (placements.has(node)) continue;
    for (const p of pods) if (!p.spec?.nodeName && !p.metadata.deletionTimestamp) r.podsToDelete.push(podName(p));
  }
  return r;
}
