// Applies a ContainerRecreateRequest plan (plan.ts) through the API, in plan order. Every write to
// the CRR carries the resourceVersion of the previous one, and every pod condition write the pod's,
// so a daemon or another holder of a not-ready key writing at the same time makes us start over
// (409) instead of being overwritten.

import { CRR_ACTIVE_LABEL, FINALIZER_CRR_UNREADY_ACQUIRED } from '../../apis/constants.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isNotFound } from '../../runtime/errors.ts';
import { ContainerRecreateRequests, Pods } from '../../runtime/resources.ts';
import type { Logger } from '../../runtime/log.ts';
import { applyWrites } from '../../runtime/writes.ts';
import type { Pod, PodCondition } from '../../apis/core-objects.ts';
import type { CRR, CRRAction, CRRPlan } from './plan.ts';
import { metaTime } from '../../util/clock.ts';

export type ExecutorClient = Pick<KubeClient, 'patch' | 'delete'>;

export class CRRExecutor {
  constructor(private readonly deps: { client: ExecutorClient; log: Logger; now: () => number }) {}

  /** Applies the plan; returns when to look again (ms) or undefined. */
  async execute(crr: CRR, pod: Pod | undefined, plan: CRRPlan): Promise<number | undefined> {
    let rv = crr.metadata.resourceVersion;
    const ns = crr.metadata.namespace ?? '';
    const name = crr.metadata.name ?? '';
    const patchCRR = async (body: Record<string, unknown>, subresource?: string) => {
      const metadata = { ...(body.metadata as object | undefined), ...(rv ? { resourceVersion: rv } : {}) };
      const out = await this.deps.client.patch<CRR>(
        ContainerRecreateRequests,
        name,
        { ...body, metadata },
        {
          namespace: ns,
          patchType: PatchType.Merge,
          ...(subresource ? { subresource } : {}),
        },
      );
      rv = out.metadata.resourceVersion;
    };
    const finalizers = (add: boolean) => {
      const rest = (crr.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_CRR_UNREADY_ACQUIRED);
      return add ? [...rest, FINALIZER_CRR_UNREADY_ACQUIRED] : rest;
    };

    const ended = await applyWrites(async () => {
      for (const action of plan.actions) {
        await this.apply(action, { crr, pod, patchCRR, finalizers, ns, name });
        this.deps.log.debug({ crr: `${ns}/${name}`, action: action.kind }, 'applied');
        if (action.kind === 'delete') return {};
      }
      return { requeueAfterMs: plan.requeueAfterMs !== undefined && plan.requeueAfterMs > 0 ? plan.requeueAfterMs : undefined };
    });
    return ended.requeueAfterMs;
  }

  private async apply(
    action: CRRAction,
    c: {
      crr: CRR;
      pod: Pod | undefined;
      patchCRR: (body: Record<string, unknown>, subresource?: string) => Promise<void>;
      finalizers: (add: boolean) => string[];
      ns: string;
      name: string;
    },
  ): Promise<void> {
    switch (action.kind) {
      case 'releasePodNotReady':
        // A pod deleted meanwhile holds no key any more: the finalizer must still go.
        if (action.podCondition && c.pod)
          await this.patchPodCondition(c.pod, action.podCondition).catch((err) => {
            if (!isNotFound(err)) throw err;
          });
        await c.patchCRR({ metadata: { finalizers: c.finalizers(false) } });
        return;
      case 'removeActiveLabel':
        await c.patchCRR({ metadata: { labels: { [CRR_ACTIVE_LABEL]: null } } });
        return;
      case 'delete':
        await this.deps.client.delete(ContainerRecreateRequests, c.name, {
          namespace: c.ns,
          ...(c.crr.metadata.uid ? { preconditions: { uid: c.crr.metadata.uid } } : {}),
        });
        return;
      case 'complete':
        await c.patchCRR(
          {
            status: {
              phase: 'Completed',
              completionTime: metaTime(this.deps.now()),
              message: action.message,
            },
          },
          'status',
        );
        return;
      case 'syncSnapshot':
        await c.patchCRR({ status: { containerStatusSnapshot: action.snapshot } }, 'status');
        return;
      case 'acquirePodNotReady':
        if (action.addFinalizer) await c.patchCRR({ metadata: { finalizers: c.finalizers(true) } });
        if (action.podCondition && c.pod) await this.patchPodCondition(c.pod, action.podCondition);
        return;
      case 'setPreRecreateGrace':
        await c.patchCRR({ status: { conditions: action.conditions } }, 'status');
        return;
    }
  }

  private async patchPodCondition(pod: Pod, condition: PodCondition): Promise<void> {
    await this.deps.client.patch(
      Pods,
      pod.metadata.name ?? '',
      {
        metadata: pod.metadata.resourceVersion ? { resourceVersion: pod.metadata.resourceVersion } : {},
        status: { conditions: [condition] },
      },
      { namespace: pod.metadata.namespace, patchType: PatchType.StrategicMerge, subresource: 'status' },
    );
  }
}
