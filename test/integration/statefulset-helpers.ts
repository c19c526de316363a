// Shared by the Advanced StatefulSet integration tests: manifests and polling.
import type { KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { AdvancedStatefulSets, Pods } from '../../src/runtime/resources.ts';
import type { Pod } from '../../src/controllers/statefulset/pods.ts';
import { waitFor } from '../harness/cluster.ts';

export interface TestStatefulSet extends KubeObject {
  spec: Record<string, any>;
  status?: {
    observedGeneration?: number;
    replicas: number;
    readyReplicas: number;
    availableReplicas: number;
    currentReplicas: number;
    updatedReplicas: number;
    updatedReadyReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
}

export function stsManifest(name: string, spec: Record<string, unknown> = {}, image = 'nginx:1.0') {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas: 1,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [{ name: 'main', image }] },
      },
      ...spec,
    },
  };
}

export const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
export const ordinal = (p: Pod) => Number((p.metadata.name ?? '').split('-').pop());

/** All pods of the set (terminating included), by ordinal. */
export async function allPods(client: KubeClient, ns: string, name: string): Promise<Pod[]> {
  const list = await client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${name}` });
  return list.items.sort((a, b) => ordinal(a) - ordinal(b));
}

export async function podsOf(client: KubeClient, ns: string, name: string): Promise<Pod[]> {
  return (await allPods(client, ns, name)).filter((p) => !p.metadata.deletionTimestamp);
}

/** Waits until the set has exactly these ordinals, all Ready, with status agreeing (and `updated` at the update revision). */
export async function waitOrdinals(
  client: KubeClient,
  ns: string,
  name: string,
  ordinals: number[],
  opts: { updated?: number; timeoutMs?: number } = {},
): Promise<TestStatefulSet> {
  return waitFor(
    `StatefulSet ${name} settled with pods ${ordinals.join(',')}`,
    async () => {
      const set = await client.get<TestStatefulSet>(AdvancedStatefulSets, name, { namespace: ns });
      const s = set.status;
      const pods = await allPods(client, ns, name);
      const ok =
        !!s &&
        s.observedGeneration === set.metadata.generation &&
        s.replicas === ordinals.length &&
        s.readyReplicas === ordinals.length &&
        s.updatedReplicas === (opts.updated ?? ordinals.length) &&
        JSON.stringify(pods.map(ordinal)) === JSON.stringify(ordinals) &&
        pods.every((p) => isReady(p) && !p.metadata.deletionTimestamp);
      if (!ok) throw new Error(`status ${JSON.stringify(s)}, pods ${pods.map((p) => `${p.metadata.name}:${isReady(p)}`).join(' ')}`);
      return set;
    },
    opts.timeoutMs ?? 60_000,
    250,
  );
}
