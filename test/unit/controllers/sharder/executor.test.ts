// The sharder's executor: a workload is assigned with every child it controls relabelled first,
// including one the API server has and the sharder's cache has not seen yet (the old shard created
// it just before it let go), and only then the workload.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../../src/apis/core-objects.ts';
import { SharderExecutor, type SharderClient } from '../../../../src/controllers/sharder/executor.ts';
import { ResourceVersionExpectations } from '../../../../src/runtime/expectations.ts';
import { CloneSets, ControllerRevisions, Pods, type ResourceType } from '../../../../src/runtime/resources.ts';
import { shardLabels } from '../../../../src/util/shard-ring.ts';

const labels = shardLabels('kruise-manager');

const cloneSet: KubeObject = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'ns', uid: 'cs-uid', resourceVersion: '50' },
  spec: { selector: { matchLabels: { app: 'web' } } },
} as KubeObject;

/** The sharder's executor over `client`, moving pods and revisions. */
const executorFor = (client: SharderClient, resourceVersions = new ResourceVersionExpectations()) =>
  new SharderExecutor({
    client,
    labels,
    childTypes: new Map([
      ['pods', Pods],
      ['controllerrevisions', ControllerRevisions],
    ]),
    resourceVersions,
  });

const child = (name: string, shard: string | undefined, ownerUid = 'cs-uid'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'ns',
    labels: { app: 'web', ...(shard ? { [labels.shard]: shard } : {}) },
    ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: ownerUid, controller: true }],
  },
});

function fakeClient(onServer: Record<string, KubeObject[]>) {
  const writes: string[] = [];
  const lists: string[] = [];
  let rv = 100;
  const client = {
    async list(type: ResourceType, opts: { namespace?: string; labelSelector?: string }) {
      lists.push(`${type.resource} ${opts.namespace} ${opts.labelSelector}`);
      return { items: onServer[type.resource] ?? [], metadata: {} };
    },
    async patch(type: ResourceType, name: string, body: { metadata: { labels?: Record<string, unknown> } }) {
      writes.push(`${type.resource}/${name} ${JSON.stringify(body.metadata.labels)}`);
      return { metadata: { name, uid: type === CloneSets ? 'cs-uid' : `${name}-uid`, resourceVersion: String(++rv) } };
    },
    async update() {
      throw new Error('unexpected');
    },
    async delete() {
      throw new Error('unexpected');
    },
  } as unknown as SharderClient;
  return { client, writes, lists };
}

describe('SharderExecutor', () => {
  it('assigning relabels the children the API server has beyond the cache, then the workload', async () => {
    const { client, writes, lists } = fakeClient({
      pods: [child('web-cached', 'old'), child('web-new', 'old'), child('web-there', 'new'), child('other', 'old', 'another-uid')],
      controllerrevisions: [child('web-rev', 'old')],
    });
    const executor = executorFor(client);
    await executor.execute(CloneSets, cloneSet, {
      action: 'assign',
      shard: 'new',
      // The cache knew one pod only.
      children: [{ resource: 'pods', name: 'web-cached', shard: 'old' }],
    });
    assert.deepEqual(lists, ['pods ns app=web', 'controllerrevisions ns app=web']);
    const label = JSON.stringify({ [labels.shard]: 'new' });
    assert.deepEqual(writes.slice(0, -1).sort(), [
      `controllerrevisions/web-rev ${label}`,
      `pods/web-cached ${label}`,
      `pods/web-new ${label}`,
    ]);
    assert.match(writes.at(-1)!, /^clonesets\/web /);
  });

  it('expects its workload write: the workload as cached before it is not acted on until the cache shows it', async () => {
    const { client } = fakeClient({ pods: [child('web-a', 'old')] });
    const resourceVersions = new ResourceVersionExpectations();
    await executorFor(client, resourceVersions).execute(CloneSets, cloneSet, { action: 'assign', shard: 'new', children: [] });
    // The relabelled pod queues the workload again before its own update arrives: the cached one is stale.
    assert.equal(resourceVersions.isSatisfied(cloneSet).satisfied, false);
    assert.equal(resourceVersions.isSatisfied({ metadata: { ...cloneSet.metadata, resourceVersion: '102' } }).satisfied, true);
  });

  it('lists and relabels the children of a workload at once, not one round trip after another', async () => {
    // Every call waits until all of its kind are in flight: one after another, they never all are.
    const barrier = (n: number) => {
      let arrived = 0;
      let open!: () => void;
      const all = new Promise<void>((resolve) => (open = resolve));
      return async () => {
        if (++arrived === n) open();
        await Promise.race([all, new Promise((_, reject) => setTimeout(() => reject(new Error('not in flight together')), 1_000))]);
      };
    };
    const listed = barrier(2);
    const patched = barrier(3);
    let rv = 100;
    const client = {
      async list(type: ResourceType) {
        await listed();
        return {
          items: type.resource === 'pods' ? [child('web-a', 'old'), child('web-b', 'old')] : [child('web-rev', 'old')],
          metadata: {},
        };
      },
      async patch(type: ResourceType, name: string) {
        if (type.resource !== 'clonesets') await patched();
        return { metadata: { name, resourceVersion: String(++rv) } };
      },
    } as unknown as SharderClient;
    const executor = executorFor(client);
    await executor.execute(CloneSets, cloneSet, { action: 'assign', shard: 'new', children: [] });
  });
});
