// Applies one Advanced DaemonSet plan (plan.ts) through the API: revisions first, then pod writes
// (in-place refreshes, PreparingDelete, in-place updates), creations in slow-start batches and
// deletions, events, status and history. Every create and delete is a scale expectation recorded
// before the call; every pod write a resourceVersion expectation, so the next reconcile never
// acts on a cache that has not seen our own writes.

import type { DaemonSet, DaemonSetStatus } from '../../apis/apps/daemonset.ts';
import type { Pod, Stored } from '../../apis/core-objects.ts';
import { ignoreNotFound, isConflict } from '../../runtime/errors.ts';
import { ControllerRevisions, AdvancedDaemonSets } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { applyPreDownload } from '../imagejobs/predownload.ts';
import {
  COLLISION_REQUEUE_MS,
  slowStartBatches,
  WorkloadWriter,
  type ExecutorClient,
  type WorkloadEventNotes,
  type WorkloadWriterDeps,
} from '../workload-writes.ts';
import type { DaemonSetPlan } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

export type { ExecutorClient };

export interface ExecutorDeps extends WorkloadWriterDeps {
  /** Steps up the failed-pod backoff of a node. */
  failedPodDeleted(ds: DaemonSet, node: string): void;
}

/** Upstream DaemonSet's event notes. */
const notes: WorkloadEventNotes = {
  created: (pod) => `Created pod: ${pod}`,
  createFailed: (_pod, _ds, err) => `Error creating: ${err}`,
  deleted: (pod) => `Deleted pod: ${pod}`,
  deleteFailed: (_pod, _ds, err) => `Error deleting: ${err}`,
  inPlaceFailed: (u, err) => `failed to update pod ${u.pod} in-place: ${err}`,
  inPlaceUpdated: (u) => `successfully update pod ${u.pod} in-place`,
};

export const keyOf = (ds: DaemonSet) => `${ds.metadata?.namespace ?? ''}/${ds.metadata?.name ?? ''}`;

export class DaemonSetExecutor {
  private readonly writer: WorkloadWriter<DaemonSet>;

  constructor(private readonly deps: ExecutorDeps) {
    this.writer = new WorkloadWriter({ type: AdvancedDaemonSets, notes }, deps);
  }

  private event(ds: Stored<DaemonSet>, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.writer.event(ds, type, reason, note);
  }

  async execute(ds: Stored<DaemonSet>, plan: DaemonSetPlan, pods: readonly Pod[]): Promise<ReconcileResult> {
    const key = keyOf(ds);
    const ns = ds.metadata.namespace ?? '';

    if (plan.newRevision) {
      const outcome = await this.writer.createRevision(ds, plan.newRevision);
      if (outcome === 'collision') return { requeueAfterMs: COLLISION_REQUEUE_MS };
      if (outcome === 'namespaceTerminating') return {};
    }
    if (plan.revisionBump) await this.writer.renumberRevision(ns, plan.revisionBump);

    // Best effort, as upstream: a failed pre-download never holds the rollout.
    if (plan.preDownload) {
      await applyPreDownload(
        { client: this.deps.client, log: this.deps.log, resourceVersions: this.deps.expectations.resourceVersions },
        ds,
        plan.preDownload,
        (type, reason, note) => this.event(ds, type, reason, note),
      );
    }

    const podByName = new Map(pods.map((p) => [p.metadata.name ?? '', p]));
    const errors: string[] = [];
    try {
      await this.writePods(ds, plan, podByName);
    } catch (err) {
      if (isConflict(err)) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
      errors.push(errMessage(err));
    }
    try {
      if (plan.createPods.length) {
        await this.writer.createPods(
          ds,
          plan.createPods.map((pod) => ({ pod, pvcs: [] })),
          slowStartBatches(plan.createPods.length),
        );
      }
    } catch (err) {
      errors.push(errMessage(err));
    }
    try {
      // All at once, as upstream's syncNodes: one batch.
      if (plan.deletePods.length) {
        await this.writer.deletePods(ds, plan.deletePods, [plan.deletePods.length], (name) => podByName.get(name)?.metadata.uid);
      }
    } catch (err) {
      errors.push(errMessage(err));
    }
    for (const node of plan.failedPodNodes) this.deps.failedPodDeleted(ds, node);
    for (const e of plan.events) this.event(ds, e.type, e.reason, e.message);

    if (plan.statusChanged) {
      const w = await writeStatus(this.deps.client, AdvancedDaemonSets, ds, plan.status);
      if (w.ended) return w.ended;
    }
    for (const name of plan.revisionsToDelete) {
      await ignoreNotFound(this.deps.client.delete(ControllerRevisions, name, { namespace: ns }));
    }
    if (errors.length) throw new Error(errors.join('; '));
    // As upstream: failed pods are retried through the rate-limited queue.
    if (plan.failedPodNodes.length) throw new Error(`deleted ${plan.failedPodNodes.length} failed pods of DaemonSet ${key}`);
    return { requeueAfterMs: plan.requeueAfterMs };
  }

  /** A waiting round's status (planWaitingStatus); a write race ends the round like execute's. */
  async writeWaitingStatus(ds: Stored<DaemonSet>, status: DaemonSetStatus | undefined): Promise<ReconcileResult | undefined> {
    if (!status) return undefined;
    return (await writeStatus(this.deps.client, AdvancedDaemonSets, ds, status)).ended;
  }

  private async writePods(ds: Stored<DaemonSet>, plan: DaemonSetPlan, pods: Map<string, Pod>): Promise<void> {
    const ns = ds.metadata.namespace ?? '';
    const rest = await this.writer.writeLifecycleWithConditions(ns, plan.lifecycleTransitions, plan.refreshes, pods);
    await this.writer.refreshPods(ns, rest.refreshes, pods);
    await this.writer.applyLifecycleTransitions(ns, rest.transitions, pods);
    for (const t of plan.lifecycleTransitions) {
      if (t.stateChanged && pods.has(t.pod))
        this.event(ds, 'Normal', 'PreDelete', `pod ${t.pod} is moved to PreparingDelete by the preDelete hook`);
    }
    await this.writer.updateInPlace(ds, plan.inPlaceUpdates, pods);
  }
}
