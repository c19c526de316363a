// Applies one CloneSet plan (plan.ts) through the API, in the plan's write order: revisions, PVC
// clean-up, pod writes, creations and deletions, events, then status, spec and history. Scale
// expectations are recorded before every create and delete; every pod write is remembered as a
// resourceVersion expectation so the next reconcile does not act on a stale cache.

import type { CloneSet } from '../../apis/apps/cloneset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import { PatchType } from '../../runtime/client.ts';
import type { Stored } from '../../apis/core-objects.ts';
import { ignoreNotFound, isConflict, isNotFound } from '../../runtime/errors.ts';
import { ControllerRevisions, CloneSets, PersistentVolumeClaims } from '../../runtime/resources.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { isPodActive } from '../../util/pod.ts';
import { applyPreDownload } from '../imagejobs/predownload.ts';
import type { CloneSetPlan } from './plan.ts';
import { podName, type Pod } from './pods.ts';
import { computeStatus } from './status.ts';
import type { PodDeletion } from './scale.ts';
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

/** CloneSet's event notes (upstream wording). */
const notes: WorkloadEventNotes = {
  created: (pod) => `succeed to create pod ${pod}`,
  createFailed: (pod, _cs, err) => `failed to create pod: ${err}, pod: ${pod}`,
  deleted: (pod) => `succeed to delete pod ${pod}`,
  deleteFailed: (pod, _cs, err) => `failed to delete pod ${pod}: ${err}`,
  inPlaceFailed: (u, err) => `failed to update pod ${u.pod} in-place(revision ${u.revision}): ${err}`,
};

export interface Observed {
  /** All pods owned by the CloneSet (as the plan saw them). */
  pods: readonly Pod[];
  pvcs: readonly PersistentVolumeClaim[];
}

export interface ExecuteResult {
  /** ms */
  requeueAfterMs?: number;
  /** Error of the Scale phase (FailedScale), already recorded as an event. */
  scaleError?: string;
  /** Error of the Update phase (FailedUpdate), already recorded as an event. */
  updateError?: string;
}

// ---------------------------------------------------------------------------------------------

export class CloneSetExecutor {
  private readonly writer: WorkloadWriter<CloneSet>;

  constructor(private readonly deps: ExecutorDeps) {
    this.writer = new WorkloadWriter({ type: CloneSets, notes, expectClaims: true, pubGuarded: true }, deps);
  }

  private event(cs: Stored<CloneSet>, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.writer.event(cs, type, reason, note);
  }

  /** Applies the plan; throws on failures that should be retried with backoff. */
  async execute(cs: Stored<CloneSet>, plan: CloneSetPlan, observed: Observed): Promise<ExecuteResult> {
    const ns = cs.metadata?.namespace ?? '';
    const result: ExecuteResult = {};
    let heldByBudget = 0;

    // 1. revisions
    if (plan.newRevision) {
      const outcome = await this.writer.createRevision(cs, plan.newRevision);
      if (outcome === 'collision') return { requeueAfterMs: COLLISION_REQUEUE_MS };
      if (outcome === 'namespaceTerminating') return {};
    }
    if (plan.revisionUpdate) await this.writer.renumberRevision(ns, plan.revisionUpdate);

    // 1b. image pre-download: best effort, as upstream; a failure must not hold the rollout
    if (plan.preDownload) {
      await applyPreDownload(
        { client: this.deps.client, log: this.deps.log, resourceVersions: this.deps.expectations.resourceVersions },
        cs,
        plan.preDownload,
        (type, reason, note) => this.event(cs, type, reason, note),
      );
    }

    // 2. PVCs of gone pods
    const podByName = new Map(observed.pods.map((p) => [podName(p), p]));
    for (const { pvc, pod } of plan.pvcReown) {
      const owner = podByName.get(pod);
      if (!owner?.metadata.uid) continue;
      const ref = { apiVersion: 'v1', kind: 'Pod', name: pod, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
      await ignoreNotFound(
        this.deps.client.patch(
          PersistentVolumeClaims,
          pvc,
          { metadata: { ownerReferences: [ref] } },
          { namespace: ns, patchType: PatchType.Merge },
        ),
      );
    }
    for (const pvc of plan.pvcDeletes) {
      const uid = observed.pvcs.find((p) => p.metadata?.name === pvc)?.metadata?.uid;
      await ignoreNotFound(
        this.deps.client.delete(PersistentVolumeClaims, pvc, { namespace: ns, preconditions: uid ? { uid } : undefined }),
      );
    }

    // 3. pod writes (lifecycle, in-place refreshes, label patches, in-place updates)
    try {
      heldByBudget = await this.writePods(cs, plan, podByName);
    } catch (err) {
      if (isConflict(err)) {
        this.deps.log.info({ err: errMessage(err) }, 'pod changed while being updated; requeueing');
        return { requeueAfterMs: CONFLICT_REQUEUE_MS };
      }
      result.updateError = errMessage(err);
      this.deps.log.error({ err }, 'failed to update pods');
    }

    // 4. creations and deletions
    try {
      if (plan.createPods.length) await this.writer.createPods(cs, plan.createPods, slowStartBatches(plan.createPods.length));
      if (plan.deletePods.length) await this.deletePods(cs, plan.deletePods, podByName, observed.pvcs);
    } catch (err) {
      result.scaleError = errMessage(err);
    }

    // 5. events of the plan (ScaleUpLimited, SuccessfulUpdatePodInPlace, …)
    for (const e of plan.events) this.event(cs, e.type, e.reason, e.message);

    // 6. status, podsToDelete, history
    if (result.scaleError || result.updateError) {
      await this.writeFailedStatus(cs, plan, observed, result);
      throw new Error(result.scaleError ?? result.updateError);
    }
    let resourceVersion = cs.metadata?.resourceVersion;
    if (plan.statusChanged) {
      const w = await writeStatus(
        this.deps.client,
        CloneSets,
        cs as Stored<CloneSet>,
        plan.status,
        this.deps.expectations.resourceVersions,
      );
      if (w.ended) return w.ended;
      resourceVersion = w.written?.metadata.resourceVersion;
    }
    if (plan.podsToDelete) {
      try {
        const patched = await this.deps.client.patch<Stored<CloneSet>>(
          CloneSets,
          cs.metadata?.name ?? '',
          {
            metadata: { resourceVersion },
            spec: { scaleStrategy: { podsToDelete: plan.podsToDelete.length ? plan.podsToDelete : null } },
          },
          { namespace: ns, patchType: PatchType.Merge },
        );
        this.deps.expectations.resourceVersions.expect(patched);
      } catch (err) {
        if (isConflict(err)) return { requeueAfterMs: CONFLICT_REQUEUE_MS };
        if (!isNotFound(err)) throw err;
      }
    }
    for (const name of plan.revisionsToDelete) {
      await ignoreNotFound(this.deps.client.delete(ControllerRevisions, name, { namespace: ns }));
    }
    const requeues = [plan.requeueAfterMs, heldByBudget ? PUB_BLOCKED_REQUEUE_MS : undefined];
    return { requeueAfterMs: requeues.filter((r) => r !== undefined).sort((a, b) => a - b)[0] };
  }

  /** The round failed half-way: record FailedScale / FailedUpdate on the status, best effort. */
  private async writeFailedStatus(cs: Stored<CloneSet>, plan: CloneSetPlan, observed: Observed, result: ExecuteResult): Promise<void> {
    const { status, changed } = computeStatus({
      cloneSet: cs,
      pods: observed.pods.filter(isPodActive),
      currentRevision: plan.currentRevision,
      updateRevision: plan.updateRevision,
      collisionCount: plan.collisionCount,
      nowMs: this.deps.now(),
      scaleError: result.scaleError,
      updateError: result.updateError,
    });
    if (!changed) return;
    try {
      await this.deps.client.updateStatus(CloneSets, { ...cs, status });
    } catch (err) {
      this.deps.log.info({ err: errMessage(err) }, 'could not record the failure on the status');
    }
  }

  /** Returns how many in-place updates a PodUnavailableBudget held back. */
  private async writePods(cs: Stored<CloneSet>, plan: CloneSetPlan, pods: Map<string, Pod>): Promise<number> {
    const ns = cs.metadata?.namespace ?? '';
    const rest = await this.writer.writeLifecycleWithConditions(ns, plan.lifecycleTransitions, plan.refreshes, pods);
    await this.writer.applyLifecycleTransitions(ns, rest.transitions, pods);
    await this.writer.refreshPods(ns, rest.refreshes, pods);
    await this.writer.patchLabels(ns, plan.labelPatches);
    return this.writer.updateInPlace(cs, plan.inPlaceUpdates, pods);
  }

  /** In slow-start batches, each pod followed by the claims that go with it. */
  private async deletePods(
    cs: Stored<CloneSet>,
    deletions: readonly PodDeletion[],
    pods: Map<string, Pod>,
    pvcs: readonly PersistentVolumeClaim[],
  ): Promise<void> {
    const ns = cs.metadata?.namespace ?? '';
    const claimsOf = new Map(deletions.map((d) => [d.pod, d.pvcs]));
    await this.writer.deletePods(
      cs,
      deletions.map((d) => d.pod),
      slowStartBatches(deletions.length),
      (name) => pods.get(name)?.metadata.uid,
      async (name) => {
        for (const pvc of claimsOf.get(name) ?? []) {
          const pvcUid = pvcs.find((p) => p.metadata?.name === pvc)?.metadata?.uid;
          await ignoreNotFound(
            this.deps.client.delete(PersistentVolumeClaims, pvc, { namespace: ns, preconditions: pvcUid ? { uid: pvcUid } : undefined }),
          );
        }
      },
    );
  }
}
