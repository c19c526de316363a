// Applies one SidecarSet plan (plan.ts) through the API, in upstream's order: the revision (in the
// manager's namespace), the status, then the pods — hot-upgrade resets, in-place upgrades (each
// after the pod's PodUnavailableBudget allows it), SidecarSetUpgradable conditions. A created
// revision is expected under the SidecarSet's key until the cache shows it; every pod write's
// result is a resourceVersion expectation, so the next round waits for the cache to hold it.

import type { Pod, PodCondition } from '../../apis/core-objects.ts';
import { CONDITION_SIDECARSET_UPGRADABLE, SIDECARSET_CUSTOM_VERSION_LABEL } from '../../apis/constants.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { ControllerRevisions, Pods, SidecarSets } from '../../runtime/resources.ts';
import { ignoreNotFound } from '../../runtime/errors.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { Logger } from '../../runtime/log.ts';
import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';
import { applyWrites, CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { errMessage } from '../../util/errors.ts';
import type { StoredSidecarSet } from '../../util/sidecarset.ts';
import { pubAllowsInPlaceUpdate, PUB_BLOCKED_REQUEUE_MS } from '../workload-writes.ts';
import type { WorkloadExpectations } from '../workload.ts';
import { createRevision } from '../workload-writes.ts';
import type { SidecarSetPlan } from './plan.ts';
import type { RevisionPlan } from './revisions.ts';

export interface ExecutorDeps {
  client: Pick<KubeClient, 'create' | 'get' | 'update' | 'updateStatus' | 'patch' | 'delete'>;
  recorder: EventRecorder;
  log: Logger;
  /** Revisions created, and our pod writes, per SidecarSet key. */
  expectations: WorkloadExpectations;
  /** Where revisions live (the manager's namespace). */
  revisionNamespace: string;
  /** PodUnavailableBudget consulted before each in-place upgrade (gate PodUnavailableBudgetUpdateGate). */
  pubBudget?: PubBudgetGuard;
  features?: Pick<FeatureGates, 'PodUnavailableBudgetUpdateGate'>;
}

export class SidecarSetExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  /** Applies the plan; a 409 or 404 is left to the caller's applyWrites, other failures are thrown. */
  /** Writes the plan; a conflict or a vanished object ends the round as the shared write step says. */
  execute(s: StoredSidecarSet, plan: SidecarSetPlan): Promise<ReconcileResult> {
    return applyWrites(() => this.write(s, plan));
  }

  private async write(s: StoredSidecarSet, plan: SidecarSetPlan): Promise<ReconcileResult> {
    const ended = await this.writeRevisions(s, plan.revision);
    if (ended) return ended;
    const status = await writeStatus(this.deps.client, SidecarSets, s, plan.status);
    if (status.ended) return status.ended;

    if (plan.notUpgradable) {
      this.deps.recorder.event(
        s,
        'Normal',
        'NotUpgradablePods',
        'Upgrade',
        `SidecarSet in-place update detected ${plan.notUpgradable} not upgradable pod(s) in this round, will skip them.`,
      );
    }
    await this.resetHotUpgrades(plan.resets);
    const heldByBudget = await this.upgrade(plan.upgrades);
    for (const { pod, conditions } of plan.conditions) await this.patchUpgradableCondition(pod, conditions);
    // Pods being upgraded report back through their events; pods a budget held back are looked at again.
    return heldByBudget ? { requeueAfterMs: PUB_BLOCKED_REQUEUE_MS } : {};
  }

  /** The revision of the current spec, its number and label, and the history trimmed; a result ends the round. */
  private async writeRevisions(s: StoredSidecarSet, r: RevisionPlan): Promise<ReconcileResult | undefined> {
    const { client } = this.deps;
    const namespace = this.deps.revisionNamespace;
    if (r.create) {
      const outcome = await createRevision(this.deps, SidecarSets, s, r.create);
      if (outcome === 'collision') return { requeueAfterMs: CONFLICT_REQUEUE_MS };
      if (outcome === 'namespaceTerminating') return {};
    }
    if (r.renumber) {
      const { name, revision } = r.renumber;
      await client.patch(ControllerRevisions, name, { revision }, { namespace, patchType: PatchType.Merge });
    }
    if (r.customVersionLabel) {
      const labels = { [SIDECARSET_CUSTOM_VERSION_LABEL]: r.customVersionLabel };
      await client.patch(ControllerRevisions, r.latestName, { metadata: { labels } }, { namespace, patchType: PatchType.Merge });
    }
    for (const name of r.delete) await ignoreNotFound(client.delete(ControllerRevisions, name, { namespace }));
    return undefined;
  }

  /** Finished hot upgrades switch containers, each reported on its pod. */
  private async resetHotUpgrades(resets: SidecarSetPlan['resets']): Promise<void> {
    for (const { pod, updated } of resets) {
      try {
        await this.updatePod(updated);
      } catch (err) {
        const message = `reset sidecar container image empty failed: ${errMessage(err)}`;
        this.deps.recorder.event(pod, 'Warning', 'ResetContainerFailed', 'Reset', message);
        throw err;
      }
      this.deps.recorder.event(pod, 'Normal', 'ResetContainerSucceed', 'Reset', 'reset sidecar container image empty successfully');
    }
  }

  /** In-place upgrades the pods' budgets allow; returns how many a budget held back. */
  private async upgrade(upgrades: SidecarSetPlan['upgrades']): Promise<number> {
    let held = 0;
    const features = this.deps.features ?? { PodUnavailableBudgetUpdateGate: false };
    for (const { pod, updated } of upgrades) {
      if (await pubAllowsInPlaceUpdate(pod, this.deps.pubBudget, features)) await this.updatePod(updated);
      else held++;
    }
    return held;
  }

  private async updatePod(pod: Pod): Promise<void> {
    this.deps.expectations.resourceVersions.expect(await this.deps.client.update<Pod>(Pods, pod, { namespace: pod.metadata.namespace }));
  }

  private async patchUpgradableCondition(pod: Pod, conditions: readonly PodCondition[]): Promise<void> {
    const patch = { status: { conditions: conditions.filter((c) => c.type === CONDITION_SIDECARSET_UPGRADABLE) } };
    const written = await this.deps.client.patch<Pod>(Pods, pod.metadata.name ?? '', patch, {
      namespace: pod.metadata.namespace,
      patchType: PatchType.StrategicMerge,
      subresource: 'status',
    });
    this.deps.expectations.resourceVersions.expect(written);
  }
}
