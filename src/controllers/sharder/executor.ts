// The sharder's writes: label patches on workloads and their children, and the shard Leases it
// takes over or deletes. Workload patches and Lease writes are compare-and-swaps on the
// resourceVersion the plan was made from, so a plan made on a cache behind the sharder's own last
// write (or behind a shard's acknowledgement) is refused (409) and made again; children's patches
// only set a label, the same whatever the cache said.

import type { KubeObject, Lease } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isNotFound } from '../../runtime/errors.ts';
import { Leases, type ResourceType } from '../../runtime/resources.ts';
import type { ShardLabels } from '../../util/shard-ring.ts';
import { childResourceVersions, type ShardChild, type SharderDecision } from './plan.ts';

export type SharderClient = Pick<KubeClient, 'patch' | 'update' | 'delete'>;

export interface SharderExecutorDeps {
  client: SharderClient;
  labels: ShardLabels;
  /** The resource types of the children, by resource name. */
  childTypes: ReadonlyMap<string, ResourceType>;
}

export class SharderExecutor {
  constructor(private readonly deps: SharderExecutorDeps) {}

  /** Carries out a decision for one workload: children first, then the workload. */
  async execute(type: ResourceType, workload: KubeObject, decision: SharderDecision): Promise<void> {
    const { labels } = this.deps;
    switch (decision.action) {
      case 'none':
        return;
      case 'drain':
        return this.patchWorkload(type, workload, { labels: { [labels.drain]: 'true' } });
      case 'label-children':
        await this.labelChildren(workload, decision.children, decision.shard);
        return;
      case 'undrain':
        await this.labelChildren(workload, decision.children, decision.shard);
        return this.patchWorkload(type, workload, { labels: { [labels.drain]: null } });
      case 'assign': {
        const written = await this.labelChildren(workload, decision.children, decision.shard);
        const versions = childResourceVersions(written);
        return this.patchWorkload(type, workload, {
          labels: { [labels.shard]: decision.shard, [labels.drain]: null },
          annotations: { [labels.children]: Object.keys(versions).length ? JSON.stringify(versions) : null },
        });
      }
    }
  }

  /** Takes an expired shard Lease over: the shard, if it renews meanwhile, wins the compare-and-swap and stays. */
  async takeOver(lease: Lease, sharderIdentity: string): Promise<void> {
    await this.deps.client.update<Lease>(Leases, { ...lease, spec: { ...lease.spec, holderIdentity: sharderIdentity } });
  }

  async remove(lease: Lease): Promise<void> {
    try {
      await this.deps.client.delete(Leases, lease.metadata.name ?? '', {
        namespace: lease.metadata.namespace,
        preconditions: { resourceVersion: lease.metadata.resourceVersion },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private async labelChildren(
    workload: KubeObject,
    children: readonly ShardChild[],
    shard: string,
  ): Promise<Array<{ resource: string; resourceVersion: string }>> {
    const written: Array<{ resource: string; resourceVersion: string }> = [];
    for (const child of children) {
      const type = this.deps.childTypes.get(child.resource);
      if (!type) continue;
      try {
        const patched = await this.deps.client.patch<KubeObject>(
          type,
          child.name,
          { metadata: { labels: { [this.deps.labels.shard]: shard } } },
          { namespace: workload.metadata.namespace, patchType: PatchType.Merge },
        );
        written.push({ resource: child.resource, resourceVersion: patched.metadata.resourceVersion ?? '' });
      } catch (err) {
        // Gone meanwhile: nothing to move.
        if (!isNotFound(err)) throw err;
      }
    }
    return written;
  }

  private async patchWorkload(
    type: ResourceType,
    workload: KubeObject,
    metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> },
  ): Promise<void> {
    await this.deps.client.patch(
      type,
      workload.metadata.name ?? '',
      { metadata: { ...metadata, resourceVersion: workload.metadata.resourceVersion } },
      { namespace: workload.metadata.namespace, patchType: PatchType.Merge },
    );
  }
}
