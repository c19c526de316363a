// Applies one CloneSet plan (plan.ts) through the API, in the plan's write order: revisions, PVC
// clean-up, pod writes, creations and deletions, events, then status, spec and history. Scale
// expectations are recorded before every create and delete; every pod write is remembered as a
// resourceVersion expectation so the next reconcile does not act on a stale cache.

import type { CloneSet } from '../../apis/apps/cloneset.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import {
  ControllerRevisions,
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isNamespaceTerminating,
  CloneSets,
  isNotFound,
  PatchType,
  PersistentVolumeClaims,
  Pods,
  type KubeClient,
  type Stored,
} from '../../runtime/client.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import type { PodCondition } from '../../apis/core-objects.ts';
import { isPodActive } from '../../util/pod.ts';
import { equalRevision, type ControllerRevision } from '../../util/revision-data.ts';
import { applyPreDownload } from '../imagejobs/predownload.ts';
import type { CloneSetPlan } from './plan.ts';
import { podName, type Pod } from './pods.ts';
import { computeStatus } from './status.ts';
import type { PodCreation, PodDeletion } from './scale.ts';
import { changedConditions, podUpdatePatch, pubAllowsInPlaceUpdate, PUB_BLOCKED_REQUEUE_MS, slowStartBatches } from '../podwrites.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';

export type ExecutorClient = Pick<KubeClient, 'create' | 'get' | 'patch' | 'delete' | 'updateStatus'>;

export interface ExecutorDeps {
  client: ExecutorClient;
  recorder: EventRecorder;
  /** Pods and PVCs created / deleted, per CloneSet key. */
  scaleExpectations: ScaleExpectations;
  /** ControllerRevisions created, per CloneSet key (so a lagging cache does not create them twice). */
  revisionExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  log: Logger;
  now: () => number;
  /** PodUnavailableBudget consulted before each in-place update (gate PodUnavailableBudgetUpdateGate). */
  pubBudget?: PubBudgetGuard;
  features?: Pick<FeatureGates, 'PodUnavailableBudgetUpdateGate'>;
}

export interface Observed {
  /** All pods owned by the CloneSet (as the plan saw them). */
  pods: readonly Pod[];
  pvcs: readonly PersistentVolumeClaim[];
}

export interface ExecuteResult {
  /** ms */
  requeueAfter?: number;
  /** Error of the Scale phase (FailedScale), already recorded as an event. */
  scaleError?: string;
  /** Error of the Update phase (FailedUpdate), already recorded as an event. */
  updateError?: string;
}

/** A revision name taken by a different revision: status.collisionCount was bumped. */
const COLLISION_REQUEUE_MS = 100;

export const keyOf = (cs: CloneSet) => `${cs.metadata?.namespace ?? ''}/${cs.metadata?.name ?? ''}`;
const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

// ---------------------------------------------------------------------------------------------

export class CloneSetExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  private event(cs: Stored<CloneSet>, type: 'Normal' | 'Warning', reason: string, note: string, action = reason): void {
    this.deps.recorder.event(cs, type, reason, action, note);
  }

  /** Applies the plan; throws on failures that should be retried with backoff. */
  async execute(cs: Stored<CloneSet>, plan: CloneSetPlan, observed: Observed): Promise<ExecuteResult> {
    const key = keyOf(cs);
    const ns = cs.metadata?.namespace ?? '';
    const result: ExecuteResult = {};

    // 1. revisions
    if (plan.newRevision) {
      const outcome = await this.createRevision(cs, plan.newRevision);
      if (outcome === 'collision') return { requeueAfter: COLLISION_REQUEUE_MS };
      if (outcome === 'namespaceTerminating') return this.namespaceTerminating(ns);
    }
    if (plan.revisionUpdate) {
      const { name, revision, annotations } = plan.revisionUpdate;
      const updated = await this.deps.client.patch<ControllerRevision>(
        ControllerRevisions,
        name,
        { metadata: { annotations }, revision },
        { namespace: ns, patchType: PatchType.Merge },
      );
      this.deps.resourceVersions.expect(updated);
    }

    // 1b. image pre-download: best effort, as upstream; a failure must not hold the rollout
    if (plan.preDownload) {
      await applyPreDownload(
        { client: this.deps.client, log: this.deps.log, resourceVersions: this.deps.resourceVersions },
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
    let heldByBudget = 0;
    try {
      heldByBudget = await this.writePods(cs, plan, podByName);
    } catch (err) {
      if (isConflict(err)) {
        this.deps.log.info({ err: errMessage(err) }, 'pod changed while being updated; requeueing');
        return { requeueAfter: CONFLICT_REQUEUE_MS };
      }
      result.updateError = errMessage(err);
      this.deps.log.error({ err }, 'failed to update pods');
    }

    // 4. creations and deletions
    try {
      if (plan.createPods.length) await this.createPods(cs, key, plan.createPods);
      if (plan.deletePods.length) await this.deletePods(cs, key, plan.deletePods, podByName, observed.pvcs);
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
      const w = await writeStatus(this.deps.client, CloneSets, cs as Stored<CloneSet>, plan.status, this.deps.resourceVersions);
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
        this.deps.resourceVersions.expect(patched);
      } catch (err) {
        if (isConflict(err)) return { requeueAfter: CONFLICT_REQUEUE_MS };
        if (!isNotFound(err)) throw err;
      }
    }
    for (const name of plan.revisionsToDelete) {
      await ignoreNotFound(this.deps.client.delete(ControllerRevisions, name, { namespace: ns }));
    }
    const requeues = [
      plan.requeueAfter !== undefined ? plan.requeueAfter * 1000 : undefined,
      heldByBudget ? PUB_BLOCKED_REQUEUE_MS : undefined,
    ];
    const soonest = requeues.filter((r) => r !== undefined).sort((a, b) => a - b)[0];
    return { requeueAfter: soonest };
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

  /**
   * 'created', 'collision' when the name belongs to a different revision (collisionCount bumped), or
   * 'namespaceTerminating' when the namespace refuses new objects (the revision stays expected).
   */
  private async createRevision(cs: Stored<CloneSet>, rev: ControllerRevision): Promise<'created' | 'collision' | 'namespaceTerminating'> {
    const key = keyOf(cs);
    const name = rev.metadata.name ?? '';
    this.deps.revisionExpectations.expectScale(key, 'create', name);
    try {
      const created = await this.deps.client.create<ControllerRevision>(ControllerRevisions, rev as ControllerRevision);
      this.deps.resourceVersions.expect(created);
      return 'created';
    } catch (err) {
      if (isNamespaceTerminating(err)) return 'namespaceTerminating';
      if (!isAlreadyExists(err)) {
        this.deps.revisionExpectations.observeScale(key, 'create', name);
        throw err;
      }
    }
    // Already there: ours with equal data means our cache lags; anything else is a hash collision.
    const live = await this.deps.client.get<ControllerRevision>(ControllerRevisions, name, { namespace: cs.metadata?.namespace });
    const ours = live.metadata.ownerReferences?.some((r) => r.controller && r.uid === cs.metadata?.uid);
    if (ours && equalRevision(live, rev)) return 'created';
    this.deps.revisionExpectations.observeScale(key, 'create', name);
    const collisionCount = (cs.status?.collisionCount ?? 0) + 1;
    this.deps.log.info({ revision: name, collisionCount }, 'controller revision name collision');
    await this.deps.client.updateStatus(CloneSets, { ...cs, status: { ...cs.status, collisionCount } });
    return 'collision';
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
  private async writePods(cs: Stored<CloneSet>, plan: CloneSetPlan, pods: Map<string, Pod>): Promise<number> {
    let held = 0;
    const ns = cs.metadata?.namespace ?? '';
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
    for (const r of plan.refreshes) {
      const pod = pods.get(r.pod);
      if (!pod) continue;
      if (r.conditions) await ignoreNotFound(this.patchConditions(ns, pod, r.conditions));
      if (r.updatedPod) {
        const patch = podUpdatePatch(pod, r.updatedPod, pod.metadata.resourceVersion);
        if (patch) await ignoreNotFound(this.patchPod(ns, r.pod, patch));
      }
    }
    for (const l of plan.labelPatches) {
      await ignoreNotFound(this.patchPod(ns, l.pod, { metadata: { labels: l.labels } }));
    }
    for (const u of plan.inPlaceUpdates) {
      const pod = pods.get(u.pod);
      if (!pod) continue;
      if (!(await pubAllowsInPlaceUpdate(pod, this.deps.pubBudget, this.deps.features ?? { PodUnavailableBudgetUpdateGate: false }))) {
        held++;
        continue;
      }
      try {
        // InPlaceUpdateReady=False goes first so the pod leaves endpoints before its containers restart.
        const afterConditions = await this.patchConditions(ns, pod, u.conditions);
        const rv = afterConditions?.metadata.resourceVersion ?? pod.metadata.resourceVersion;
        const patch = podUpdatePatch(pod, u.updatedPod, rv);
        if (patch) await this.patchPod(ns, u.pod, patch);
      } catch (err) {
        if (isNotFound(err)) continue;
        if (!isConflict(err))
          this.event(
            cs,
            'Warning',
            'FailedUpdatePodInPlace',
            `failed to update pod ${u.pod} in-place(revision ${u.revision}): ${errMessage(err)}`,
          );
        throw err;
      }
    }
    return held;
  }

  /** Slow-start batches; a failing batch stops the rest (their expectations are withdrawn). */
  private async createPods(cs: Stored<CloneSet>, key: string, creations: readonly PodCreation[]): Promise<void> {
    const ns = cs.metadata?.namespace ?? '';
    let next = 0;
    let failures: unknown[] = [];
    for (const size of slowStartBatches(creations.length)) {
      const batch = creations.slice(next, next + size);
      next += size;
      for (const c of batch) {
        this.deps.scaleExpectations.expectScale(key, 'create', podName(c.pod));
        for (const pvc of c.pvcs) this.deps.scaleExpectations.expectScale(key, 'create', pvc.metadata?.name ?? '');
      }
      const results = await Promise.allSettled(batch.map((c) => this.createOne(cs, key, ns, c)));
      failures = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
      if (failures.length) break;
    }
    if (!failures.length) return;
    // Creations never attempted are not expected either.
    for (const c of creations.slice(next)) {
      this.deps.scaleExpectations.observeScale(key, 'create', podName(c.pod));
      for (const pvc of c.pvcs) this.deps.scaleExpectations.observeScale(key, 'create', pvc.metadata?.name ?? '');
    }
    if (failures.some(isNamespaceTerminating)) {
      this.namespaceTerminating(ns);
      return;
    }
    throw failures[0];
  }

  /**
   * As upstream's ReplicaSet controller: nothing can be created in a namespace being deleted, and
   * its deletion takes this CloneSet too. The refused creations stay expected, so reconciles wait
   * for the expectation timeout instead of retrying into the refusal, each with an error.
   */
  private namespaceTerminating(ns: string): ExecuteResult {
    this.deps.log.info({ namespace: ns }, 'namespace is being terminated; not creating pods or revisions');
    return {};
  }

  private async createOne(cs: Stored<CloneSet>, key: string, ns: string, c: PodCreation): Promise<void> {
    const name = podName(c.pod);
    const unexpect = (n: string) => this.deps.scaleExpectations.observeScale(key, 'create', n);
    try {
      for (const pvc of c.pvcs) {
        const pvcName = pvc.metadata?.name ?? '';
        try {
          await this.deps.client.create(PersistentVolumeClaims, pvc as Stored<PersistentVolumeClaim>, { namespace: ns });
        } catch (err) {
          unexpect(pvcName);
          if (!isAlreadyExists(err)) throw err;
        }
      }
      await this.deps.client.create(Pods, c.pod as Pod, { namespace: ns });
    } catch (err) {
      // Refused for a namespace being deleted: stays expected and unreported (namespaceTerminating).
      if (isNamespaceTerminating(err)) throw err;
      unexpect(name);
      for (const pvc of c.pvcs) unexpect(pvc.metadata?.name ?? '');
      this.event(cs, 'Warning', 'FailedCreate', `failed to create pod: ${errMessage(err)}, pod: ${name}`, 'Create');
      throw err;
    }
    this.event(cs, 'Normal', 'SuccessfulCreate', `succeed to create pod ${name}`, 'Create');
  }

  private async deletePods(
    cs: Stored<CloneSet>,
    key: string,
    deletions: readonly PodDeletion[],
    pods: Map<string, Pod>,
    pvcs: readonly PersistentVolumeClaim[],
  ): Promise<void> {
    const ns = cs.metadata?.namespace ?? '';
    for (const d of deletions) {
      const uid = pods.get(d.pod)?.metadata.uid;
      this.deps.scaleExpectations.expectScale(key, 'delete', d.pod);
      try {
        await this.deps.client.delete(Pods, d.pod, { namespace: ns, preconditions: uid ? { uid } : undefined });
      } catch (err) {
        this.deps.scaleExpectations.observeScale(key, 'delete', d.pod);
        if (isNotFound(err)) continue;
        this.event(cs, 'Warning', 'FailedDelete', `failed to delete pod ${d.pod}: ${errMessage(err)}`, 'Delete');
        throw err;
      }
      this.event(cs, 'Normal', 'SuccessfulDelete', `succeed to delete pod ${d.pod}`, 'Delete');
      for (const pvc of d.pvcs) {
        const pvcUid = pvcs.find((p) => p.metadata?.name === pvc)?.metadata?.uid;
        await ignoreNotFound(
          this.deps.client.delete(PersistentVolumeClaims, pvc, { namespace: ns, preconditions: pvcUid ? { uid: pvcUid } : undefined }),
        );
      }
    }
  }
}
