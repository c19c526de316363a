// Applies a NodeImage plan (plan.ts) through the API: create the NodeImage of a Ready node, delete
// the one of a gone node, store a cleaned-up spec, or store a status with lagging or overdue tags
// failed (with events for the jobs that own them). Every write's resourceVersion is expected in the
// cache; a write that loses a race with the daemon or an ImagePullJob ends the round (requeue).
import type { KubeClient } from '../../runtime/client.ts';
import { isAlreadyExists } from '../../runtime/errors.ts';
import { NodeImages } from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { Logger } from '../../runtime/log.ts';
import { applyWrites, writeStatus } from '../../runtime/writes.ts';
import type { NodeImage } from '../imagejobs/resources.ts';
import type { NodeImagePlan } from './plan.ts';

export type NodeImageClient = Pick<KubeClient, 'create' | 'update' | 'delete' | 'updateStatus'>;

export interface NodeImageExecutorDeps {
  client: NodeImageClient;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  /** Spread added to time-based re-checks. */
  jitter: () => number;
}

export class NodeImageExecutor {
  constructor(private readonly deps: NodeImageExecutorDeps) {}

  execute(name: string, nodeImage: NodeImage | undefined, plan: NodeImagePlan): Promise<ReconcileResult> {
    const { client, resourceVersions, log } = this.deps;
    return applyWrites(async () => {
      switch (plan.action) {
        case 'none':
          return { requeueAfterMs: this.spread(plan.requeueAfterMs) };
        case 'create': {
          const obj: NodeImage = {
            apiVersion: 'apps.kruise.io/v1beta1',
            kind: 'NodeImage',
            metadata: { name, labels: plan.labels },
            spec: {},
          };
          try {
            resourceVersions.expect(await client.create<NodeImage>(NodeImages, obj));
            log.info({ nodeImage: name }, 'created NodeImage');
          } catch (err) {
            if (!isAlreadyExists(err)) throw err;
          }
          return {};
        }
        case 'delete':
          await client.delete(NodeImages, name, { preconditions: { uid: nodeImage!.metadata.uid } });
          log.info({ nodeImage: name }, 'deleted NodeImage of a gone Node');
          return {};
        case 'updateSpec': {
          const updated: NodeImage = {
            ...nodeImage!,
            metadata: { ...nodeImage!.metadata, labels: plan.labels },
            spec: { ...nodeImage!.spec, images: plan.images },
          };
          resourceVersions.expect(await client.update<NodeImage>(NodeImages, updated));
          log.info({ nodeImage: name, changes: plan.messages }, 'updated NodeImage spec');
          return {};
        }
        case 'updateStatus': {
          const w = await writeStatus(client, NodeImages, nodeImage!, plan.status, resourceVersions);
          if (w.ended) return w.ended;
          for (const f of plan.failures) {
            const note = `Failed to pull image ${f.fullName} on node ${name} for ${f.message}`;
            for (const owner of f.owners ?? []) this.deps.recorder.event(owner, 'Warning', 'PullImageFailed', 'PullImage', note);
            this.deps.recorder.event(nodeImage!, 'Warning', 'PullImageFailed', 'PullImage', note);
          }
          return { requeueAfterMs: this.spread(plan.requeueAfterMs) };
        }
      }
    });
  }

  private spread(ms: number | undefined): number | undefined {
    return ms === undefined ? undefined : ms + this.deps.jitter();
  }
}
