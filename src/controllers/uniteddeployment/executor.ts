// Applies one UnitedDeployment plan (plan.ts) through the API, in upstream's order: the revision,
// then (unless the allocators refused the topology) the reserved-pod labels, the subset workloads
// (duplicates and removed subsets deleted, new subsets created, changed ones updated), then the
// status. Subset workloads are created and deleted as scale expectations under the UD's key, named
// client-side (`<ud>-<subset>-` + 5 random characters, generateName kept) so that a create is
// expected by name before it is sent; every write's result is a resourceVersion expectation.

import { randomBytes } from 'node:crypto';
import type { UnitedDeployment } from '../../apis/apps/uniteddeployment.ts';
import { SUBSET_NAME_LABEL, UNITED_DEPLOYMENT_RESERVED_POD_LABEL } from '../../apis/constants.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import {
  AdvancedStatefulSets,
  CloneSets,
  ControllerRevisions,
  Deployments,
  Pods,
  StatefulSets,
  UnitedDeployments,
  type ResourceType,
} from '../../runtime/resources.ts';
import { ignoreNotFound, isNotFound } from '../../runtime/errors.ts';
import type { Stored } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { Logger } from '../../runtime/log.ts';
import { applyWrites, CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { errMessage } from '../../util/errors.ts';
import type { WorkloadExpectations } from '../workload.ts';
import { createRevision, keyOf } from '../workload-writes.ts';
import type { UnitedDeploymentPlan } from './plan.ts';
import type { SubsetKind, SubsetWorkload } from './subset.ts';
import { RAND_ALPHABET } from '../../util/rand.ts';

export const WORKLOAD_RESOURCE: Record<SubsetKind, ResourceType> = {
  StatefulSet: StatefulSets,
  AdvancedStatefulSet: AdvancedStatefulSets,
  CloneSet: CloneSets,
  Deployment: Deployments,
};

/** A name as the API server's generateName makes it: the prefix and 5 characters of its alphabet. */
export function generatedName(prefix: string, random: () => Buffer = () => randomBytes(5)): string {
  return prefix + [...random()].map((b) => RAND_ALPHABET[b % RAND_ALPHABET.length]).join('');
}

export type UnitedDeploymentClient = Pick<KubeClient, 'create' | 'get' | 'update' | 'patch' | 'delete' | 'updateStatus' | 'servedVersion'>;

export interface ExecutorDeps {
  client: UnitedDeploymentClient;
  recorder: EventRecorder;
  log: Logger;
  /** Subset workloads (as `scale`) and revisions created / deleted, and our writes, per UD key. */
  expectations: WorkloadExpectations;
}

export class UnitedDeploymentExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  /** Applies the plan; a 409 or 404 is left to the caller's applyWrites, other failures are thrown. */
  /** Writes the plan; a conflict or a vanished object ends the round as the shared write step says. */
  execute(ud: Stored<UnitedDeployment>, kind: SubsetKind, plan: UnitedDeploymentPlan): Promise<ReconcileResult> {
    return applyWrites(() => this.write(ud, kind, plan));
  }

  private async write(ud: Stored<UnitedDeployment>, kind: SubsetKind, plan: UnitedDeploymentPlan): Promise<ReconcileResult> {
    const ns = ud.metadata.namespace ?? '';
    const { client, expectations } = this.deps;

    // 1. revisions
    if (plan.newRevision) {
      const outcome = await createRevision(this.deps, UnitedDeployments, ud, plan.newRevision);
      if (outcome === 'collision') return { requeueAfterMs: CONFLICT_REQUEUE_MS };
      if (outcome === 'namespaceTerminating') return {};
    }
    if (plan.revisionUpdate) {
      const { name, revision } = plan.revisionUpdate;
      expectations.resourceVersions.expect(
        await client.patch(ControllerRevisions, name, { revision }, { namespace: ns, patchType: PatchType.Merge }),
      );
    }

    if (plan.allocationError) {
      this.deps.recorder.event(
        ud,
        'Warning',
        'Failed SpecifySubsetReplicas',
        'Allocate',
        `Specified subset replicas is ineffective: ${plan.allocationError}`,
      );
      return {};
    }

    // 2. reserved pods (reservation strategy)
    for (const { pod, value } of plan.reservedLabels) {
      const labelled = client.patch(
        Pods,
        pod,
        { metadata: { labels: { [UNITED_DEPLOYMENT_RESERVED_POD_LABEL]: value } } },
        { namespace: ns, patchType: PatchType.StrategicMerge },
      );
      const written = await ignoreNotFound(labelled);
      if (written) expectations.resourceVersions.expect(written);
    }

    // 3. subset workloads
    await this.deleteSubsets(ud, kind, plan.deletes);
    await this.createSubsets(ud, kind, plan.creates);
    await this.updateSubsets(ud, kind, plan.updates);

    // 4. status
    const status = await writeStatus(client, UnitedDeployments, ud, plan.status, expectations.resourceVersions);
    if (status.ended) return status.ended;
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {};
  }

  /** Duplicates and removed subsets, each with its uid as precondition; one event for them all. */
  private async deleteSubsets(ud: Stored<UnitedDeployment>, kind: SubsetKind, deletes: readonly SubsetWorkload[]): Promise<void> {
    const key = keyOf(ud);
    const scale = this.deps.expectations.scale;
    for (const w of deletes) {
      const name = w.metadata.name ?? '';
      scale.expectScale(key, 'delete', name);
      try {
        await this.deps.client.delete(WORKLOAD_RESOURCE[kind], name, {
          namespace: ud.metadata.namespace,
          preconditions: { uid: w.metadata.uid },
        });
      } catch (err) {
        scale.observeScale(key, 'delete', name);
        if (!isNotFound(err)) throw err;
      }
    }
    if (deletes.length > 0) this.event(ud, 'Normal', 'SuccessfulUpdateSubset', `Delete ${deletes.length} Subset (${kind})`);
  }

  private async createSubsets(ud: Stored<UnitedDeployment>, kind: SubsetKind, creates: readonly SubsetWorkload[]): Promise<void> {
    const key = keyOf(ud);
    const { scale, resourceVersions } = this.deps.expectations;
    for (const w of creates) {
      const name = generatedName(w.metadata.generateName ?? '');
      scale.expectScale(key, 'create', name);
      try {
        resourceVersions.expect(await this.deps.client.create(WORKLOAD_RESOURCE[kind], { ...w, metadata: { ...w.metadata, name } }));
      } catch (err) {
        scale.observeScale(key, 'create', name);
        const subset = w.metadata.labels?.[SUBSET_NAME_LABEL];
        this.event(ud, 'Warning', 'FailedUpdateSubset', `fail to create Subset (${kind}) ${subset}: ${errMessage(err)}`);
        throw err;
      }
    }
    if (creates.length > 0) this.event(ud, 'Normal', 'SuccessfulUpdateSubset', `Create ${creates.length} Subset (${kind})`);
  }

  private async updateSubsets(ud: Stored<UnitedDeployment>, kind: SubsetKind, updates: readonly SubsetWorkload[]): Promise<void> {
    for (const w of updates) {
      try {
        this.deps.expectations.resourceVersions.expect(await this.deps.client.update(WORKLOAD_RESOURCE[kind], w));
      } catch (err) {
        this.event(
          ud,
          'Warning',
          'FailedUpdateSubset',
          `Error updating PodSet (${kind}) ${w.metadata.name} when updating: ${errMessage(err)}`,
        );
        throw err;
      }
    }
  }

  private event(ud: Stored<UnitedDeployment>, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.deps.recorder.event(ud, type, reason, 'Reconcile', note);
  }
}
