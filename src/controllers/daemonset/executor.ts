// Applies one Advanced DaemonSet plan (plan.ts) through the API: revisions first, then pod writes
// (in-place refreshes, PreparingDelete, in-place updates), creations in slow-start batches and
// deletions, events, status and history. Every create and delete is a scale expectation recorded
// before the call; every pod write a resourceVersion expectation, so the next reconcile never
// acts on a cache that has not seen our own writes.

import type { DaemonSet } from '../../apis/apps/daemonset.ts';
import type { PodCondition } from '../../apis/core-objects.ts';
import {
  ControllerRevisions,
  AdvancedDaemonSets,
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isNamespaceTerminating,
  isNotFound,
  PatchType,
  Pods,
  type KubeClient,
  type Stored,
} from '../../runtime/client.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { equalRevision, type ControllerRevision } from '../../util/revision-data.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { applyPreDownload } from '../imagejobs/predownload.ts';
import { changedConditions, podUpdatePatch, slowStartBatches } from '../podwrites.ts';
import type { DaemonSetPlan } from './plan.ts';

export type ExecutorClient = Pick<KubeClient, 'create' | 'get' | 'patch' | 'delete' | 'updateStatus'>;

export interface ExecutorDeps {
  client: ExecutorClient;
  recorder: EventRecorder;
  /** Pods created / deleted, per DaemonSet key. */
  scaleExpectations: ScaleExpectations;
  /** ControllerRevisions created, per DaemonSet key. */
  revisionExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  log: Logger;
  /** Steps up the failed-pod backoff of a node. */
  failedPodDeleted(ds: DaemonSet, node: string): void;
}

/** A revision name taken by a different revision: status.collisionCount was bumped. */
const COLLISION_REQUEUE_MS = 100;

export const keyOf = (ds: DaemonSet) => `${ds.metadata?.namespace ?? ''}/${ds.metadata?.name ?? ''}`;
const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class DaemonSetExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  private event(ds: Stored<DaemonSet>, type: 'Normal' | 'Warning', reason: string, note: string, action = reason): void {
    this.deps.recorder.event(ds, type, reason, action, note);
  }

  async execute(ds: Stored<DaemonSet>, plan: DaemonSetPlan, pods: readonly Pod[]): Promise<ReconcileResult> {
    const key = keyOf(ds);
    const ns = ds.metadata.namespace ?? '';

    if (plan.newRevision) {
      const outcome = await this.createRevision(ds, plan.newRevision);
      if (outcome === 'collision') return { requeueAfter: COLLISION_REQUEUE_MS };
      if (outcome === 'namespaceTerminating') return {};
    }
    if (plan.revisionBump) {
      const updated = await this.deps.client.patch<ControllerRevision>(
        ControllerRevisions,
        plan.revisionBump.name,
        { revision: plan.revisionBump.revision },
        { namespace: ns, patchType: PatchType.Merge },
      );
      this.deps.resourceVersions.expect(updated);
    }

    // Best effort, as upstream: a failed pre-download never holds the rollout.
    if (plan.preDownload) {
      await applyPreDownload(
        { client: this.deps.client, log: this.deps.log, resourceVersions: this.deps.resourceVersions },
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
      if (isConflict(err)) return { requeueAfter: CONFLICT_REQUEUE_MS };
      errors.push(errMessage(err));
    }
    try {
      if (plan.createPods.length) await this.createPods(ds, key, plan.createPods);
    } catch (err) {
      errors.push(errMessage(err));
    }
    try {
      if (plan.deletePods.length) await this.deletePods(ds, key, plan.deletePods, podByName);
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
    return { requeueAfter: plan.requeueAfterMs };
  }

  private async createRevision(ds: Stored<DaemonSet>, rev: ControllerRevision): Promise<'created' | 'collision' | 'namespaceTerminating'> {
    const key = keyOf(ds);
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
    // Already there: ours with equal data means the cache lags; anything else is a hash collision.
    const live = await this.deps.client.get<ControllerRevision>(ControllerRevisions, name, { namespace: ds.metadata.namespace });
    const ours = live.metadata.ownerReferences?.some((r) => r.controller && r.uid === ds.metadata.uid);
    if (ours && equalRevision(live, rev)) return 'created';
    this.deps.revisionExpectations.observeScale(key, 'create', name);
    const collisionCount = (ds.status?.collisionCount ?? 0) + 1;
    this.deps.log.info({ revision: name, collisionCount }, 'controller revision name collision');
    await this.deps.client.updateStatus(AdvancedDaemonSets, { ...ds, status: { ...ds.status!, collisionCount } });
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
    return this.patchPod(ns, pod.metadata.name ?? '', { status: { conditions: changed } }, true);
  }

  private async writePods(ds: Stored<DaemonSet>, plan: DaemonSetPlan, pods: Map<string, Pod>): Promise<void> {
    const ns = ds.metadata.namespace ?? '';
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
      if (t.stateChanged) await ignoreNotFound(this.patchPod(ns, t.pod, { metadata: { labels: t.labels, annotations: t.annotations } }));
      if (t.readinessCondition) await ignoreNotFound(this.patchConditions(ns, pod, [t.readinessCondition]));
      if (t.stateChanged) this.event(ds, 'Normal', 'PreDelete', `pod ${t.pod} is moved to PreparingDelete by the preDelete hook`);
    }
    for (const u of plan.inPlaceUpdates) {
      const pod = pods.get(u.pod);
      if (!pod) continue;
      try {
        // InPlaceUpdateReady=False first, so the pod leaves endpoints before its containers restart.
        const afterConditions = await this.patchConditions(ns, pod, u.conditions);
        const patch = podUpdatePatch(pod, u.updatedPod, afterConditions?.metadata.resourceVersion ?? pod.metadata.resourceVersion);
        if (patch) await this.patchPod(ns, u.pod, patch);
        this.event(ds, 'Normal', 'SuccessfulUpdatePodInPlace', `successfully update pod ${u.pod} in-place`);
      } catch (err) {
        if (isNotFound(err)) continue;
        if (!isConflict(err))
          this.event(ds, 'Warning', 'FailedUpdatePodInPlace', `failed to update pod ${u.pod} in-place: ${errMessage(err)}`);
        throw err;
      }
    }
  }

  /** Slow-start batches; a failing batch stops the rest (their expectations are withdrawn). */
  private async createPods(ds: Stored<DaemonSet>, key: string, creations: readonly Pod[]): Promise<void> {
    const ns = ds.metadata.namespace ?? '';
    let next = 0;
    let failures: unknown[] = [];
    for (const size of slowStartBatches(creations.length)) {
      const batch = creations.slice(next, next + size);
      next += size;
      for (const p of batch) this.deps.scaleExpectations.expectScale(key, 'create', p.metadata.name ?? '');
      const results = await Promise.allSettled(batch.map((p) => this.createOne(ds, key, ns, p)));
      failures = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
      if (failures.length) break;
    }
    if (!failures.length) return;
    for (const p of creations.slice(next)) this.deps.scaleExpectations.observeScale(key, 'create', p.metadata.name ?? '');
    // A namespace being deleted refuses pods for good; its deletion takes the DaemonSet too.
    if (failures.some(isNamespaceTerminating)) return;
    throw failures[0];
  }

  private async createOne(ds: Stored<DaemonSet>, key: string, ns: string, pod: Pod): Promise<void> {
    const name = pod.metadata.name ?? '';
    try {
      await this.deps.client.create(Pods, pod, { namespace: ns });
    } catch (err) {
      if (isNamespaceTerminating(err)) throw err;
      this.deps.scaleExpectations.observeScale(key, 'create', name);
      this.event(ds, 'Warning', 'FailedCreate', `Error creating: ${errMessage(err)}`, 'Create');
      throw err;
    }
    this.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${name}`, 'Create');
  }

  private async deletePods(ds: Stored<DaemonSet>, key: string, names: readonly string[], pods: Map<string, Pod>): Promise<void> {
    const ns = ds.metadata.namespace ?? '';
    const results = await Promise.allSettled(
      names.map(async (name) => {
        const uid = pods.get(name)?.metadata.uid;
        this.deps.scaleExpectations.expectScale(key, 'delete', name);
        try {
          await this.deps.client.delete(Pods, name, { namespace: ns, preconditions: uid ? { uid } : undefined });
        } catch (err) {
          this.deps.scaleExpectations.observeScale(key, 'delete', name);
          if (isNotFound(err)) return;
          this.event(ds, 'Warning', 'FailedDelete', `Error deleting: ${errMessage(err)}`, 'Delete');
          throw err;
        }
        this.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`, 'Delete');
      }),
    );
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) throw failed.reason;
  }
}
