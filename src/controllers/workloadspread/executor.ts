// Applies one WorkloadSpread plan (plan.ts) through the API, in upstream's order: the plan's events,
// pod-deletion-cost (and late-match) patches, the status (compare-and-swap: the pod webhook writes
// the same status, so a lost race requeues and nothing is deleted), then the deletion of pods stuck
// unschedulable. Each patched pod and the written status are expected in the cache, and each
// deletion is a scale expectation, before the next round plans from them.

import type { Pod } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { kruiseResource, Pods } from '../../runtime/resources.ts';
import { ignoreNotFound } from '../../runtime/errors.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import { applyWrites, writeStatus } from '../../runtime/writes.ts';
import { matchedWorkloadSpreadOf, type SpreadView } from '../../util/workloadspread.ts';
import type { SpreadPlan } from './plan.ts';

export const WorkloadSpreads = kruiseResource('WorkloadSpread');

export type StoredWS = SpreadView & KubeObject & { metadata: KubeObject['metadata'] & { name: string; namespace: string } };

export interface SpreadExecutorDeps {
  client: Pick<KubeClient, 'updateStatus' | 'patch' | 'delete'>;
  recorder: EventRecorder;
  scale: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
}

export class WorkloadSpreadExecutor {
  constructor(private readonly deps: SpreadExecutorDeps) {}

  /** `pods`: the pods the plan saw (to name a failed deletion's subset). */
  async execute(key: string, ws: StoredWS, plan: SpreadPlan, pods: readonly Pod[]): Promise<ReconcileResult> {
    const { client, recorder, scale, resourceVersions } = this.deps;
    const { namespace, name } = ws.metadata;
    for (const e of plan.events) recorder.event(ws, e.type, e.reason, 'Reconcile', e.message);
    return applyWrites(async () => {
      for (const p of plan.podPatches) {
        const patched = await ignoreNotFound(
          client.patch<Pod>(Pods, p.name, { metadata: p.metadata }, { namespace, patchType: PatchType.StrategicMerge }),
        );
        if (patched) resourceVersions.expect(patched);
      }
      const { ended } = await writeStatus(client, WorkloadSpreads, ws, plan.status, resourceVersions);
      if (ended) return ended;
      for (const podName of plan.podsToDelete) {
        scale.expectScale(key, 'delete', podName);
        try {
          const gone = await ignoreNotFound(client.delete(Pods, podName, { namespace }));
          if (gone === undefined) scale.observeScale(key, 'delete', podName);
        } catch (err) {
          scale.observeScale(key, 'delete', podName);
          recorder.event(
            ws,
            'Warning',
            'DeletePodFailed',
            'Delete',
            `Failed to delete unschedulabe Pod ${namespace}/${podName} in Subset ${subsetOf(pods, podName)} of WorkloadSpread ${namespace}/${name}`,
          );
          throw err;
        }
      }
      return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {};
    });
  }
}

const subsetOf = (pods: readonly Pod[], name: string) =>
  matchedWorkloadSpreadOf(pods.find((p) => p.metadata.name === name) ?? { metadata: {} })?.subset ?? '';
