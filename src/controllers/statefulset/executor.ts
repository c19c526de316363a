// Applies one Advanced StatefulSet plan (plan.ts) through the API: revisions, PVC ownerRefs and
// missing claims, pod writes (lifecycle, in-place refreshes, identity labels, in-place updates),
// creations (OrderedReady one at a time, Parallel in slow-start batches) and deletions, events,
// then status and history. Creations and deletions are recorded as scale expectations first; every
// pod write is remembered as a resourceVersion expectation so the next round waits for the cache.

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import { PatchType } from '../../runtime/client.ts';
import type { Stored } from '../../apis/core-objects.ts';
import { ignoreNotFound, isAlreadyExists, isConflict } from '../../runtime/errors.ts';
import { AdvancedStatefulSets, ControllerRevisions, PersistentVolumeClaims } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { metaTime } from '../../util/clock.ts';
import { podName, type Pod } from './pods.ts';
import type { StatefulSetPlan } from './plan.ts';
import {
  COLLISION_REQUEUE_MS,
  PUB_BLOCKED_REQUEUE_MS,
  slowStartBatches,
  WorkloadWriter,
  type ExecutorClient,
  type WorkloadEventNotes,
  type WorkloadWriterDeps,
} from '../workload-writes.ts';
import { errMessage } from '../../util/errors.ts';

export type { ExecutorClient };

export interface ExecutorDeps extends WorkloadWriterDeps {
  now: () => number;
}

export const keyOf = (set: StatefulSet) => `${set.metadata?.namespace ?? ''}/${set.metadata?.name ?? ''}`;

/** Upstream StatefulSet's event notes. */
const notes: WorkloadEventNotes = {
  created: (pod, set) => `create Pod ${pod} in StatefulSet ${set} successful`,
  createFailed: (pod, set, err) => `create Pod ${pod} in StatefulSet ${set} failed error: ${err}`,
  deleted: (pod, set) => `delete Pod ${pod} in StatefulSet ${set} successful`,
  deleteFailed: (pod, set, err) => `delete Pod ${pod} in StatefulSet ${set} failed error: ${err}`,
  inPlaceFailed: (u, err) => `failed to update pod ${u.pod} in-place(revision ${u.revision}): ${err}`,
};

export class StatefulSetExecutor {
  private readonly writer: WorkloadWriter<StatefulSet>;

  constructor(private readonly deps: ExecutorDeps) {
    this.writer = new WorkloadWriter({ type: AdvancedStatefulSets, notes, pubGuarded: true }, deps);
  }

  private event(set: Stored<StatefulSet>, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.writer.event(set, type, reason, note);
  }

  async execute(set: Stored<StatefulSet>, plan: StatefulSetPlan, pods: readonly Pod[]): Promise<ReconcileResult> {
    const ns = set.metadata.namespace ?? '';
    const podByName = new Map(pods.map((p) => [podName(p), p]));

    // 1. revisions
    if (plan.newRevision) {
      const outcome = await this.writer.createRevision(set, plan.newRevision);
      if (outcome === 'collision') return { requeueAfterMs: COLLISION_REQUEUE_MS };
      if (outcome === 'namespaceTerminating') return {};
    }
    if (plan.revisionUpdate) await this.writer.renumberRevision(ns, plan.revisionUpdate);

    let failure: { type: 'FailedCreatePod' | 'FailedUpdatePod'; message: string } | undefined;
    let heldByBudget = 0;
    try {
      // 2. claims: retention ownerRefs, claims a user deleted under a Pending pod
      for (const u of plan.pvcOwnerUpdates) {
        await ignoreNotFound(
          this.deps.client.patch(
            PersistentVolumeClaims,
            u.pvc,
            { metadata: { ownerReferences: u.ownerReferences, ...(u.resourceVersion ? { resourceVersion: u.resourceVersion } : {}) } },
            { namespace: ns, patchType: PatchType.Merge },
          ),
        );
      }
      for (const pvc of plan.createPVCs) await this.createClaim(ns, pvc);
      for (const r of plan.pvcResizes) {
        await ignoreNotFound(
          this.deps.client.patch(
            PersistentVolumeClaims,
            r.pvc,
            { spec: { resources: { requests: { storage: r.storage } } } },
            { namespace: ns, patchType: PatchType.Merge },
          ),
        );
      }

      // 3. pod writes
      heldByBudget = await this.writePods(set, plan, podByName);
    } catch (err) {
      if (isConflict(err)) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
      failure = { type: 'FailedUpdatePod', message: errMessage(err) };
    }

    // 4. creations and deletions
    if (!failure) {
      try {
        const batches = plan.monotonic ? plan.createPods.map(() => 1) : slowStartBatches(plan.createPods.length);
        if ((await this.writer.createPods(set, plan.createPods, batches)) === 'namespaceTerminating') return {};
        await this.writer.deletePods(
          set,
          plan.deletePods,
          plan.monotonic ? plan.deletePods.map(() => 1) : slowStartBatches(plan.deletePods.length),
          (name) => podByName.get(name)?.metadata.uid,
        );
      } catch (err) {
        failure = { type: 'FailedCreatePod', message: errMessage(err) };
      }
    }

    // 5. events
    for (const e of plan.events) this.event(set, e.type, e.reason, e.message);

    // 6. status and history
    let status = plan.status;
    if (failure) {
      const now = metaTime(this.deps.now());
      const conditions = (status.conditions ?? []).filter((c) => c.type !== failure.type);
      conditions.push({ type: failure.type, status: 'True', reason: failure.type, message: failure.message, lastTransitionTime: now });
      status = { ...status, conditions };
    }
    if (plan.statusChanged || failure) {
      try {
        const w = await writeStatus(this.deps.client, AdvancedStatefulSets, set, status, this.deps.expectations.resourceVersions);
        if (w.ended) return w.ended;
      } catch (err) {
        this.deps.log.info({ err: errMessage(err) }, 'could not write the status');
        if (!failure) throw err;
      }
    }
    if (failure) throw new Error(failure.message);
    for (const name of plan.revisionsToDelete) {
      await ignoreNotFound(this.deps.client.delete(ControllerRevisions, name, { namespace: ns }));
    }
    const requeues = [plan.requeueAfterMs, heldByBudget ? PUB_BLOCKED_REQUEUE_MS : undefined];
    return { requeueAfterMs: requeues.filter((r) => r !== undefined).sort((a, b) => a - b)[0] };
  }

  private async createClaim(ns: string, pvc: PersistentVolumeClaim): Promise<void> {
    try {
      await this.deps.client.create(PersistentVolumeClaims, pvc as Stored<PersistentVolumeClaim>, { namespace: ns });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  /** Returns how many in-place updates a PodUnavailableBudget held back. */
  private async writePods(set: Stored<StatefulSet>, plan: StatefulSetPlan, pods: Map<string, Pod>): Promise<number> {
    const ns = set.metadata.namespace ?? '';
    const rest = await this.writer.writeLifecycleWithConditions(ns, plan.lifecycleTransitions, plan.refreshes, pods);
    await this.writer.refreshPods(ns, rest.refreshes, pods);
    await this.writer.applyLifecycleTransitions(ns, rest.transitions, pods);
    await this.writer.patchLabels(ns, plan.labelPatches);
    return this.writer.updateInPlace(set, plan.inPlaceUpdates, pods);
  }
}
