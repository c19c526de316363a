// Applies PersistentPodState plans (plan.ts) through the API: the recorded pod states (status),
// and the create/update/delete of a PersistentPodState generated from a workload's annotations.
import type { KubeClient } from '../../runtime/client.ts';
import { isAlreadyExists, isNotFound } from '../../runtime/errors.ts';
import { PersistentPodStates } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { applyWrites, writeStatus } from '../../runtime/writes.ts';
import type { StoredPersistentPodState } from '../../util/persistentpodstate.ts';
import type { GeneratedStatePlan, PersistentPodStateStatus } from './plan.ts';

export interface PersistentPodStateExecutorDeps {
  client: Pick<KubeClient, 'create' | 'update' | 'delete' | 'updateStatus'>;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
}

export class PersistentPodStateExecutor {
  constructor(private readonly deps: PersistentPodStateExecutorDeps) {}

  async writeStates(pps: StoredPersistentPodState, status: PersistentPodStateStatus | undefined): Promise<ReconcileResult> {
    const w = await writeStatus(this.deps.client, PersistentPodStates, pps, status, this.deps.resourceVersions);
    return w.ended ?? {};
  }

  async applyGenerated(plan: GeneratedStatePlan): Promise<ReconcileResult> {
    const { client, log, resourceVersions } = this.deps;
    return applyWrites(async () => {
      if (plan.create) {
        try {
          await client.create(PersistentPodStates, plan.create);
          log.info({ persistentPodState: plan.create.metadata.name }, 'generated PersistentPodState');
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      }
      if (plan.update) resourceVersions.expect(await client.update(PersistentPodStates, plan.update));
      if (plan.delete) {
        const { name = '', namespace, uid } = plan.delete.metadata;
        try {
          await client.delete(PersistentPodStates, name, { namespace, preconditions: { uid } });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      return {};
    });
  }
}
