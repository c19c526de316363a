// Applies a ResourceDistribution plan (plan.ts) through the API: creates, updates and deletes the
// copies in slow-start batches (1, 2, 4, … at a time, as upstream's syncItSlowly), turns write
// failures into per-namespace failures, writes the status they add up to, and fails the round (so
// it is retried with backoff) when a create, update or delete failed. A lost write race (409, or a
// 404 on update) is no failure: the round is looked at again shortly, from the newer cache.
import type { KubeClient } from '../../runtime/client.ts';
import { isConflict, isNotFound } from '../../runtime/errors.ts';
import { ConfigMaps, ResourceDistributions, Secrets, type ResourceType } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import type { Clock } from '../../util/clock.ts';
import {
  distributionStatus,
  type DistributedKind,
  type DistributionPlan,
  type NamespaceFailure,
  type ResourceDistribution,
} from './plan.ts';
import { errMessage } from '../../util/errors.ts';

export interface ResourceDistributionExecutorDeps {
  client: Pick<KubeClient, 'create' | 'update' | 'delete' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  clock: Clock;
}

/** Runs fn on every item, 1 then 2, 4, … at a time. */
async function slowStart<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let done = 0;
  for (let batch = 1; done < items.length; batch *= 2) {
    await Promise.all(items.slice(done, done + batch).map(fn));
    done += batch;
  }
}

function resourceTypeOf(kind: DistributedKind): ResourceType {
  return kind === 'Secret' ? Secrets : ConfigMaps;
}

const message = (err: unknown) => errMessage(err);

export class ResourceDistributionExecutor {
  constructor(private readonly deps: ResourceDistributionExecutorDeps) {}

  async execute(key: string, rd: ResourceDistribution, plan: DistributionPlan): Promise<ReconcileResult> {
    const { client, scaleExpectations, resourceVersions, recorder } = this.deps;
    const type = resourceTypeOf(plan.kind);
    if (plan.invalid) {
      recorder.event(rd, 'Warning', 'InvalidResource', 'Distribute', plan.invalid);
      return {};
    }
    for (const pattern of plan.badPatterns) {
      recorder.event(
        rd,
        'Warning',
        'InvalidPattern',
        'Distribute',
        `namespace pattern ${JSON.stringify(pattern)} is not a regular expression; it matches nothing`,
      );
    }
    const failures: NamespaceFailure[] = [...plan.failures];
    let raced = false;

    await slowStart(plan.create, async (copy) => {
      const namespace = copy.metadata.namespace ?? '';
      scaleExpectations.expectScale(key, 'create', namespace);
      try {
        await client.create(type, copy);
      } catch (err) {
        scaleExpectations.observeScale(key, 'create', namespace);
        failures.push({ type: 'CreateResourceFailed', namespace, message: message(err) });
      }
    });
    await slowStart(plan.update, async (copy) => {
      const namespace = copy.metadata.namespace ?? '';
      try {
        resourceVersions.expect(await client.update(type, copy));
      } catch (err) {
        if (isConflict(err) || isNotFound(err)) raced = true;
        else failures.push({ type: 'UpdateResourceFailed', namespace, message: message(err) });
      }
    });
    await slowStart(plan.delete, async (copy) => {
      const namespace = copy.metadata.namespace ?? '';
      scaleExpectations.expectScale(key, 'delete', namespace);
      try {
        await client.delete(type, copy.metadata.name ?? '', { namespace, preconditions: { uid: copy.metadata.uid } });
      } catch (err) {
        // Already gone (its delete event may have come and gone): nothing more to wait for.
        scaleExpectations.observeScale(key, 'delete', namespace);
        if (isNotFound(err)) return;
        if (isConflict(err)) raced = true;
        else failures.push({ type: 'DeleteResourceFailed', namespace, message: message(err) });
      }
    });
    if (plan.create.length || plan.update.length || plan.delete.length) {
      this.deps.log.debug(
        {
          resourceDistribution: rd.metadata.name,
          created: plan.create.length,
          updated: plan.update.length,
          deleted: plan.delete.length,
          failed: failures.length,
        },
        'distributed resource',
      );
    }

    failures.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
    const status = distributionStatus(rd, plan.matched.length, failures, this.deps.clock.now());
    const written = await writeStatus(client, ResourceDistributions, rd, status);
    if (written.ended) return written.ended;
    const writeFailures = failures.filter((f) => f.type !== 'ConflictOccurred' && f.type !== 'NamespaceNotExists');
    if (writeFailures.length) {
      throw new Error(writeFailures.map((f) => `${f.type} in namespace ${f.namespace}: ${f.message}`).join('; '));
    }
    return raced ? { requeueAfterMs: CONFLICT_REQUEUE_MS } : {};
  }
}
