// Applies one Advanced StatefulSet plan (plan.ts) through the API: revisions, PVC ownerRefs and
// missing claims, pod writes (lifecycle, in-place refreshes, identity labels, in-place updates),
// creations (OrderedReady one at a time, Parallel in slow-start batches) and deletions, events,
// then status and history. Creations and deletions are recorded as scale expectations first; every
// pod write is remembered as a resourceVersion expectation so the next round waits for the cache.

import type { StatefulSet } from '../../apis/apps/statefulset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import type { PodCondition } from '../../apis/core-objects.ts';
import {
  AdvancedStatefulSets,
  ControllerRevisions,
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isNamespaceTerminating,
  isNotFound,
  PatchType,
  PersistentVolumeClaims,
  Pods,
  type KubeClient,
  type Stored,
} from '../../runtime/client.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { metaTime } from '../../util/clock.ts';
import { equalRevision, type ControllerRevision } from '../../util/revision-data.ts';
import { podName, type Pod } from './pods.ts';
import type { PodCreation, StatefulSetPlan } from './plan.ts';
import { changedConditions, podUpdatePatch, pubAllowsInPlaceUpdate, PUB_BLOCKED_REQUEUE_MS, slowStartBatches } from '../podwrites.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';

export type ExecutorClient = Pick<KubeClient, 'create' | 'get' | 'patch' | 'delete' | 'updateStatus'>;

export interface ExecutorDeps {
  client: ExecutorClient;
  recorder: EventRecorder;
  /** Pods and PVCs created / deleted, per set key. */
  scaleExpectations: ScaleExpectations;
  /** ControllerRevisions created, per set key. */
  revisionExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  log: Logger;
  now: () => number;
  /** PodUnavailableBudget consulted before each in-place update (gate PodUnavailableBudgetUpdateGate). */
  pubBudget?: PubBudgetGuard;
  features?: Pick<FeatureGates, 'PodUnavailableBudgetUpdateGate'>;
}

export const keyOf = (set: StatefulSet) => `${set.metadata?.namespace ?? ''}/${set.metadata?.name ?? ''}`;
const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class StatefulSetExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  private event(set: Stored<StatefulSet>, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.deps.recorder.event(set, type, reason, reason, note);
  }

  async execute(set: Stored<StatefulSet>, plan: StatefulSetPlan, pods: readonly Pod[]): Promise<ReconcileResult> {
    const key = keyOf(set);
    const ns = set.metadata.namespace ?? '';
    const podByName = new Map(pods.map((p) => [podName(p), p]));

    // 1. revisions
    if (plan.newRevision) {
      const outcome = await this.createRevision(set, plan.newRevision);
      if (outcome === 'collision') return { requeueAfter: 100 };
      if (outcome === 'namespaceTerminating') return {};
    }
    if (plan.revisionUpdate) {
      const updated = await this.deps.client.patch<ControllerRevision>(
        ControllerRevisions,
        plan.revisionUpdate.name,
        { revision: plan.revisionUpdate.revision },
        { namespace: ns, patchType: PatchType.Merge },
      );
      this.deps.resourceVersions.expect(updated);
    }

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
      if (isConflict(err)) return { requeueAfter: CONFLICT_REQUEUE_MS };
      failure = { type: 'FailedUpdatePod', message: errMessage(err) };
    }

    // 4. creations and deletions
    if (!failure) {
      try {
        await this.createPods(set, key, plan.createPods, plan.monotonic);
        await this.deletePods(set, key, plan.deletePods, podByName);
      } catch (err) {
        if (isNamespaceTerminating(err)) return {};
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
        const w = await writeStatus(this.deps.client, AdvancedStatefulSets, set, status, this.deps.resourceVersions);
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
    const requeues = [
      plan.requeueAfter !== undefined ? plan.requeueAfter * 1000 : undefined,
      heldByBudget ? PUB_BLOCKED_REQUEUE_MS : undefined,
    ];
    return { requeueAfter: requeues.filter((r) => r !== undefined).sort((a, b) => a - b)[0] };
  }

  private async createRevision(
    set: Stored<StatefulSet>,
    rev: ControllerRevision,
  ): Promise<'created' | 'collision' | 'namespaceTerminating'> {
    const key = keyOf(set);
    const name = rev.metadata.name ?? '';
    this.deps.revisionExpectations.expectScale(key, 'create', name);
    try {
      const created = await this.deps.client.create<ControllerRevision>(ControllerRevisions, rev);
      this.deps.resourceVersions.expect(created);
      return 'created';
    } catch (err) {
      if (isNamespaceTerminating(err)) return 'namespaceTerminating';
      if (!isAlreadyExists(err)) {
        this.deps.revisionExpectations.observeScale(key, 'create', name);
        throw err;
      }
    }
    const live = await this.deps.client.get<ControllerRevision>(ControllerRevisions, name, { namespace: set.metadata.namespace });
    const ours = live.metadata.ownerReferences?.some((r) => r.controller && r.uid === set.metadata.uid);
    if (ours && equalRevision(live, rev)) return 'created';
    this.deps.revisionExpectations.observeScale(key, 'create', name);
    const collisionCount = (set.status?.collisionCount ?? 0) + 1;
    await this.deps.client.updateStatus(AdvancedStatefulSets, { ...set, status: { ...set.status!, collisionCount } });
    return 'collision';
  }

  private async createClaim(ns: string, pvc: PersistentVolumeClaim): Promise<void> {
    try {
      await this.deps.client.create(PersistentVolumeClaims, pvc as Stored<PersistentVolumeClaim>, { namespace: ns });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  private async patchPod(ns: string, name: string, patch: unknown, status = false): Promise<Pod> {
    const pod = await this.deps.client.patch<Pod>(Pods, name, patch, {
      namespace: ns,
      patchType: PatchType.StrategicMerge,
      ...(status ? { subresource: 'status' } : {}),
    });
    this.deps.resourceVersions.expect(pod);
    return pod;
  }

  private async patchConditions(ns: string, pod: Pod, conditions: readonly PodCondition[] | undefined): Promise<Pod | undefined> {
    const changed = changedConditions(pod, conditions ?? []);
    if (changed.length === 0) return undefined;
    return this.patchPod(ns, podName(pod), { status: { conditions: changed } }, true);
  }

  /** Returns how many in-place updates a PodUnavailableBudget held back. */
  private async writePods(set: Stored<StatefulSet>, plan: StatefulSetPlan, pods: Map<string, Pod>): Promise<number> {
    const ns = set.metadata.namespace ?? '';
    let held = 0;
    for (const r of plan.refreshes) {
      const pod = pods.get(r.pod);
      if (!pod) continue;
      if (r.conditions) await ignoreNotFound(this.patchConditions(ns, pod, r.conditions));
      if (r.updatedPod) {
        const patch = podUpdatePatch(pod, r.updatedPod, pod.metadata.resourceVersion);
        if (patch) await ignoreNotFound(this.patchPod(ns, r.pod, patch));
      }
    }
    for (const t of plan.lifecycleTransitions) {
      const pod = pods.get(t.pod);
      if (!pod) continue;
      if (t.stateChanged || Object.keys(t.labels).length || t.addFinalizers.length) {
        const metadata: Record<string, unknown> = { labels: t.labels, annotations: t.annotations };
        if (t.addFinalizers.length) metadata.finalizers = t.addFinalizers;
        await ignoreNotFound(this.patchPod(ns, t.pod, { metadata }));
      }
      if (t.readinessCondition) await ignoreNotFound(this.patchConditions(ns, pod, [t.readinessCondition]));
    }
    for (const l of plan.labelPatches) await ignoreNotFound(this.patchPod(ns, l.pod, { metadata: { labels: l.labels } }));
    for (const u of plan.inPlaceUpdates) {
      const pod = pods.get(u.pod);
      if (!pod) continue;
      if (!(await pubAllowsInPlaceUpdate(pod, this.deps.pubBudget, this.deps.features ?? { PodUnavailableBudgetUpdateGate: false }))) {
        held++;
        continue;
      }
      try {
        // InPlaceUpdateReady=False first, so the pod leaves endpoints before its containers restart.
        const afterConditions = await this.patchConditions(ns, pod, u.conditions);
        const patch = podUpdatePatch(pod, u.updatedPod, afterConditions?.metadata.resourceVersion ?? pod.metadata.resourceVersion);
        if (patch) await this.patchPod(ns, u.pod, patch);
      } catch (err) {
        if (isNotFound(err)) continue;
        if (!isConflict(err))
          this.event(
            set,
            'Warning',
            'FailedUpdatePodInPlace',
            `failed to update pod ${u.pod} in-place(revision ${u.revision}): ${errMessage(err)}`,
          );
        throw err;
      }
    }
    return held;
  }

  private async createPods(set: Stored<StatefulSet>, key: string, creations: readonly PodCreation[], monotonic: boolean): Promise<void> {
    const batches = monotonic ? creations.map(() => 1) : slowStartBatches(creations.length);
    let next = 0;
    for (const size of batches) {
      const batch = creations.slice(next, next + size);
      next += size;
      for (const c of batch) this.deps.scaleExpectations.expectScale(key, 'create', podName(c.pod));
      const results = await Promise.allSettled(batch.map((c) => this.createOne(set, key, c)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        for (const c of creations.slice(next)) this.deps.scaleExpectations.observeScale(key, 'create', podName(c.pod));
        throw failed.reason;
      }
    }
  }

  private async createOne(set: Stored<StatefulSet>, key: string, c: PodCreation): Promise<void> {
    const ns = set.metadata.namespace ?? '';
    const name = podName(c.pod);
    try {
      for (const pvc of c.pvcs) await this.createClaim(ns, pvc);
      await this.deps.client.create(Pods, c.pod as Stored<Pod>, { namespace: ns });
    } catch (err) {
      if (isNamespaceTerminating(err)) throw err;
      this.deps.scaleExpectations.observeScale(key, 'create', name);
      this.event(set, 'Warning', 'FailedCreate', `create Pod ${name} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`);
      throw err;
    }
    this.event(set, 'Normal', 'SuccessfulCreate', `create Pod ${name} in StatefulSet ${set.metadata.name} successful`);
  }

  private async deletePods(set: Stored<StatefulSet>, key: string, names: readonly string[], pods: Map<string, Pod>): Promise<void> {
    const ns = set.metadata.namespace ?? '';
    for (const name of names) {
      const uid = pods.get(name)?.metadata.uid;
      this.deps.scaleExpectations.expectScale(key, 'delete', name);
      try {
        await this.deps.client.delete(Pods, name, { namespace: ns, preconditions: uid ? { uid } : undefined });
      } catch (err) {
        this.deps.scaleExpectations.observeScale(key, 'delete', name);
        if (isNotFound(err)) continue;
        this.event(
          set,
          'Warning',
          'FailedDelete',
          `delete Pod ${name} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`,
        );
        throw err;
      }
      this.event(set, 'Normal', 'SuccessfulDelete', `delete Pod ${name} in StatefulSet ${set.metadata.name} successful`);
    }
  }
}
