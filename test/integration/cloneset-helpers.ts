// Shared by the CloneSet integration tests: manifests and polling on CloneSets and their pods.
import type { KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { Pods, CloneSets } from '../../src/runtime/resources.ts';
import type { Pod } from '../../src/controllers/cloneset/pods.ts';
import { waitFor } from '../harness/cluster.ts';

export interface TestCloneSet extends KubeObject {
  spec: Record<string, any>;
  status: {
    observedGeneration?: number;
    replicas: number;
    readyReplicas: number;
    availableReplicas: number;
    updatedReplicas: number;
    updatedReadyReplicas: number;
    updatedAvailableReplicas?: number;
    expectedUpdatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    collisionCount?: number;
  };
}

export interface ManifestOptions {
  replicas?: number;
  image?: string;
  podUpdatePolicy?: 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly';
  partition?: number | string;
  maxUnavailable?: number | string;
  maxSurge?: number | string;
}

export function cloneSetManifest(name: string, o: ManifestOptions = {}) {
  const rollingUpdate: Record<string, unknown> = {};
  if (o.podUpdatePolicy) rollingUpdate.podUpdatePolicy = o.podUpdatePolicy;
  if (o.partition !== undefined) rollingUpdate.partition = o.partition;
  if (o.maxUnavailable !== undefined) rollingUpdate.maxUnavailable = o.maxUnavailable;
  if (o.maxSurge !== undefined) rollingUpdate.maxSurge = o.maxSurge;
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas: o.replicas ?? 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image: o.image ?? 'nginx:1.0' }] },
      },
      ...(Object.keys(rollingUpdate).length ? { updateStrategy: { rollingUpdate } } : {}),
    },
  };
}

/** Active (not terminating) pods of the CloneSet, by name. */
export async function podsOf(client: KubeClient, ns: string, name: string): Promise<Pod[]> {
  const list = await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${name}` });
  return list.items.filter((p) => !p.metadata.deletionTimestamp).sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
}

export const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * Waits until the CloneSet observed its spec and has exactly `replicas` pods, all ready and updated
 * (or `updated` of them at the update revision), with status agreeing.
 */
export async function waitSettled(
  client: KubeClient,
  ns: string,
  name: string,
  replicas: number,
  opts: { updated?: number; timeoutMs?: number } = {},
): Promise<TestCloneSet> {
  const updated = opts.updated ?? replicas;
  return waitFor(
    `CloneSet ${name} settled at ${replicas} replicas (${updated} updated)`,
    async () => {
      const cs = await client.get<TestCloneSet>(CloneSets, name, { namespace: ns });
      const s = cs.status;
      if (!s || s.observedGeneration !== cs.metadata.generation)
        throw new Error(`generation ${cs.metadata.generation}, status ${JSON.stringify(s)}`);
      const pods = await podsOf(client, ns, name);
      const ok =
        s.replicas === replicas &&
        s.readyReplicas === replicas &&
        s.availableReplicas === replicas &&
        s.updatedReplicas === updated &&
        s.updatedReadyReplicas === updated &&
        pods.length === replicas &&
        pods.every(isReady);
      if (!ok) throw new Error(`status ${JSON.stringify(s)}, ${pods.length} pods, ${pods.filter(isReady).length} ready`);
      return cs;
    },
    opts.timeoutMs ?? 45_000,
    250,
  );
}
