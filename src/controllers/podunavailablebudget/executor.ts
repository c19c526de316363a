// Applies one PodUnavailableBudget plan (plan.ts) through the API: the related-pub annotation on the
// pods that lack it (each patched pod expected in the cache before the next round), the plan's
// events, then the status, written with the resourceVersion it was computed from and remembered by
// the process's PubBudgetGuard so the pod webhook's next admission starts from it.

import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { Pods, PodUnavailableBudgets } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { PubBudgetGuard } from '../../runtime/pub-budget.ts';
import { writeRaceResult, writeStatus } from '../../runtime/writes.ts';
import { relatedPubAnnotations, type StoredPub } from '../../util/pub.ts';
import type { PubPlan } from './plan.ts';

export interface PubExecutorDeps {
  client: Pick<KubeClient, 'updateStatus' | 'patch'>;
  recorder: EventRecorder;
  resourceVersions: ResourceVersionExpectations;
  guard?: PubBudgetGuard;
}

export class PubExecutor {
  constructor(private readonly deps: PubExecutorDeps) {}

  async execute(key: string, pub: StoredPub, plan: PubPlan): Promise<ReconcileResult> {
    const { client, recorder, resourceVersions, guard } = this.deps;
    const { namespace, name = '' } = pub.metadata;
    for (const pod of plan.annotate) {
      const patch = { metadata: { annotations: relatedPubAnnotations(name) } };
      try {
        resourceVersions.expect(await client.patch(Pods, pod, patch, { namespace, patchType: PatchType.Merge }));
      } catch (err) {
        // A pod that changed or went meanwhile is looked at again by its next event.
        if (!writeRaceResult(err)) throw err;
      }
    }
    for (const e of plan.events) recorder.event(e.pod ?? pub, e.type, e.reason, 'Sync', e.message);
    const { written, ended } = await writeStatus(client, PodUnavailableBudgets, pub, plan.status?.status);
    if (ended) return ended;
    if (written) guard?.remember(key, written);
    return plan.status?.requeueAfterMs !== undefined ? { requeueAfterMs: plan.status.requeueAfterMs } : {};
  }
}
