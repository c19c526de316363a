// The live view of `rollout status --watch`: a progress bar towards the current batch (replicas
// minus partition), updated / ready / available against desired, the maxUnavailable budget in
// use, and one line per pod (revision, readiness, lifecycle state, in-place update, restarts).
// renderFrame is pure: the command redraws it in place on a terminal.
import {
  CONDITION_INPLACE_UPDATE_READY,
  CONTROLLER_REVISION_HASH_LABEL,
  INPLACE_UPDATE_STATE_ANNOTATION,
  SPECIFIED_DELETE_LABEL,
} from '../../apis/constants.ts';
import type { Pod, KubeObject } from '../../apis/core-objects.ts';
import { Pods, type ResourceType } from '../../runtime/resources.ts';
import { getPodLifecycleState } from '../../util/lifecycle.ts';
import { labelSelectorToString, type LabelSelectorLike } from '../../util/labelselector.ts';
import { isPodReady } from '../../util/pod.ts';
import { equalToRevisionHash } from '../../util/revision.ts';
import { getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { table, typeName, type Session } from './session.ts';
import { partitionCount, type RolloutStatus, type Workload } from './status.ts';

export interface Frame {
  type: ResourceType;
  workload: Workload & KubeObject;
  pods: readonly Pod[];
  status: RolloutStatus;
  nowMs: number;
}

/** Pods the workload selects and controls. */
export async function podsOfWorkload(session: Session, obj: KubeObject & { spec?: { selector?: LabelSelectorLike } }): Promise<Pod[]> {
  const selector = obj.spec?.selector;
  if (!selector) return [];
  const list = await session.client.list<Pod>(Pods, { namespace: obj.metadata.namespace, labelSelector: labelSelectorToString(selector) });
  return list.items
    .filter((p) => p.metadata.ownerReferences?.some((r) => r.controller && r.uid === obj.metadata.uid) ?? true)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

const BAR_WIDTH = 30;

export function progressBar(done: number, total: number, width = BAR_WIDTH): string {
  const fraction = total <= 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(fraction * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(fraction * 100)}%`;
}

/** The maxUnavailable budget of the kinds that have one (CloneSet's default 20%, others 1). */
function unavailableBudget(type: ResourceType, w: Workload, replicas: number): number {
  const rolling = w.spec?.updateStrategy?.rollingUpdate;
  if (type.kind === 'CloneSet') return getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? '20%', replicas, false);
  if (type.kind === 'Deployment') return getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? '25%', replicas, false);
  return getScaledValueFromIntOrPercent(rolling?.maxUnavailable ?? 1, replicas, false);
}

export function podState(pod: Pod): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  const lifecycle = getPodLifecycleState(pod);
  const inPlace = pod.status?.conditions?.find((c) => c.type === CONDITION_INPLACE_UPDATE_READY);
  if (inPlace?.status === 'False') return 'Updating (in place)';
  if (lifecycle) return lifecycle;
  return pod.status?.phase ?? 'Pending';
}

function podNote(pod: Pod): string {
  const notes: string[] = [];
  if (pod.metadata.labels && Object.hasOwn(pod.metadata.labels, SPECIFIED_DELETE_LABEL)) notes.push('specified delete');
  if (getPodLifecycleState(pod) === 'PreparingUpdate' || getPodLifecycleState(pod) === 'PreparingDelete') notes.push('hook waiting');
  if (pod.metadata.annotations?.[INPLACE_UPDATE_STATE_ANNOTATION] && !isPodReady(pod)) notes.push('in-place update in progress');
  const cost = pod.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'];
  if (cost) notes.push(`deletion cost ${cost}`);
  if (!pod.spec?.nodeName) notes.push('not scheduled');
  return notes.join(', ');
}

export function renderFrame(f: Frame, columns = 100): string {
  const w = f.workload;
  const s = w.status ?? {};
  const replicas = w.spec?.replicas ?? s.desiredNumberScheduled ?? 0;
  const partition = f.type.kind === 'CloneSet' || f.type.kind === 'StatefulSet' ? partitionCount(w) : 0;
  const batchTarget = Math.max(0, replicas - partition);
  const updated = s.updatedReplicas ?? s.updatedNumberScheduled ?? 0;
  const ready = s.readyReplicas ?? 0;
  const available = s.availableReplicas ?? s.numberAvailable ?? 0;
  const updateRevision = s.updateRevision ?? '';
  const lines: string[] = [];
  lines.push(
    `${typeName(f.type)}/${w.metadata.name} in ${w.metadata.namespace}${updateRevision ? `  update revision ${updateRevision}` : ''}`,
  );
  lines.push(
    `batch ${progressBar(updated, batchTarget)}  ${updated}/${batchTarget} updated` +
      (partition > 0 ? ` (partition ${partition} keeps ${partition} old)` : ''),
  );
  lines.push(`desired ${replicas}   updated ${updated}   ready ${ready}   available ${available}`);
  if (f.type.kind !== 'DaemonSet') {
    const budget = unavailableBudget(f.type, w, replicas);
    // Unavailable as the controller counts it: desired pods not available (minReadySeconds included).
    const unavailable = Math.max(0, replicas - available);
    lines.push(`budget maxUnavailable ${budget}: ${Math.min(unavailable, budget)} in use, ${Math.max(0, budget - unavailable)} left`);
  }
  if (w.spec?.updateStrategy?.rollingUpdate?.paused || w.spec?.paused)
    lines.push('PAUSED: the controller does not update pods until resumed');
  lines.push(f.status.message);
  if (f.pods.length > 0) {
    const rows = f.pods.map((p) => {
      const hash = p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? p.metadata.labels?.['pod-template-hash'] ?? '';
      const revision = updateRevision && equalToRevisionHash(hash, updateRevision) ? 'updated' : updateRevision ? 'old' : hash;
      const statuses = p.status?.containerStatuses ?? [];
      const readyCount = statuses.filter((c) => c.ready).length;
      const restarts = statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0);
      return [
        p.metadata.name ?? '',
        revision,
        `${readyCount}/${p.spec?.containers?.length ?? statuses.length}`,
        podState(p),
        String(restarts),
        podNote(p),
      ];
    });
    lines.push('', table([['POD', 'REVISION', 'READY', 'STATE', 'RESTARTS', 'NOTE'], ...rows]));
  }
  return lines
    .join('\n')
    .split('\n')
    .map((l) => (l.length > columns ? l.slice(0, columns) : l))
    .join('\n');
}
