// The sharder's writes: label patches on workloads and their children, and the shard Leases it
// takes over or deletes. Workload patches and Lease writes are compare-and-swaps on the
// resourceVersion the plan was made from, so a plan made on a cache behind the sharder's own last
// write (or behind a shard's acknowledgement) is refused (409) and made again; children's patches
// only set a label, the same whatever the cache said. Each workload write is expected
// (ResourceVersionExpectations): its relabelled children reach the sharder's caches before the
// workload's own update often enough, and each queues the workload again; planned on the workload as
// cached then, the same assignment was made twice and refused (409), slowing moves.
//
// Before a workload is assigned, its children are also read from the API server: the old shard may
// have created a pod just before it let go (or died), and the sharder's pod watch need not have
// delivered it yet when the workload's own watch delivered the hand-back — the caches of different
// resources are not in step. Left with the old label, such a pod would be invisible to the new
// shard, which would create a replacement (an extra pod).

import type { KubeObject, Lease } from '../../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isNotFound } from '../../runtime/errors.ts';
import type { ResourceVersionExpectations } from '../../runtime/expectations.ts';
import { Leases, type ResourceType } from '../../runtime/resources.ts';
import { labelSelectorToString } from '../../util/labelselector.ts';
import type { ShardLabels } from '../../util/shard-ring.ts';
import { childResourceVersions, type ShardChild, type SharderDecision } from './plan.ts';

export type SharderClient = Pick<KubeClient, 'patch' | 'update' | 'delete' | 'list'>;

export interface SharderExecutorDeps {
  client: SharderClient;
  labels: ShardLabels;
  /** The resource types of the children, by resource name. */
  childTypes: ReadonlyMap<string, ResourceType>;
  /** The workloads' versions the sharder wrote, until its cache shows them. */
  resourceVersions: ResourceVersionExpectations;
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
        const children = await this.withUncachedChildren(workload, decision.children, decision.shard);
        const written = await this.labelChildren(workload, children, decision.shard);
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

  /**
   * The children to relabel: those of the plan (from the caches) and those the API server has that
   * are not yet labelled `shard` — a consistent list by the workload's selector labels (which its
   * pods, PVCs and revisions all carry), kept if the workload is their controller.
   */
  private async withUncachedChildren(workload: KubeObject, cached: readonly ShardChild[], shard: string): Promise<ShardChild[]> {
    const uid = workload.metadata.uid;
    const matchLabels = (workload as { spec?: { selector?: { matchLabels?: Record<string, string> } } }).spec?.selector?.matchLabels;
    const labelSelector = labelSelectorToString({ matchLabels: matchLabels ?? {} });
    const children = [...cached];
    const known = new Set(cached.map((c) => `${c.resource}/${c.name}`));
    const lists = await Promise.all(
      [...this.deps.childTypes].map(async ([resource, type]) => ({
        resource,
        list: await this.deps.client.list<KubeObject>(type, { namespace: workload.metadata.namespace, labelSelector }),
      })),
    );
    for (const { resource, list } of lists) {
      for (const obj of list.items) {
        const name = obj.metadata.name ?? '';
        const own = obj.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid);
        const label = obj.metadata.labels?.[this.deps.labels.shard];
        if (own && label !== shard && !known.has(`${resource}/${name}`)) children.push({ resource, name, shard: label });
      }
    }
    return children;
  }

  /**
   * Patches the children's labels all at once (the client's rate limit paces them): one after
   * another, a move of a dozen small CloneSets took seconds of round trips on a loaded machine.
   */
  private async labelChildren(
    workload: KubeObject,
    children: readonly ShardChild[],
    shard: string,
  ): Promise<Array<{ resource: string; resourceVersion: string }>> {
    const results = await Promise.allSettled(
      children.map(async (child) => {
        const type = this.deps.childTypes.get(child.resource);
        if (!type) return undefined;
        try {
          const patched = await this.deps.client.patch<KubeObject>(
            type,
            child.name,
            { metadata: { labels: { [this.deps.labels.shard]: shard } } },
            { namespace: workload.metadata.namespace, patchType: PatchType.Merge },
          );
          return { resource: child.resource, resourceVersion: patched.metadata.resourceVersion ?? '' };
        } catch (err) {
          // Gone meanwhile: nothing to move.
          if (isNotFound(err)) return undefined;
          throw err;
        }
      }),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  }

  private async patchWorkload(
    type: ResourceType,
    workload: KubeObject,
    metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> },
  ): Promise<void> {
    const patched = await this.deps.client.patch<KubeObject>(
      type,
      workload.metadata.name ?? '',
      { metadata: { ...metadata, resourceVersion: workload.metadata.resourceVersion } },
      { namespace: workload.metadata.namespace, patchType: PatchType.Merge },
    );
    this.deps.resourceVersions.expect(patched);
  }
}
