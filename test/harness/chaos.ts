// The pieces of the chaos runs (issue #34), shared by bench/chaos.ts (the whole set, minutes) and
// test/integration/chaos-smoke.test.ts (a short case in the suite): a cluster with several API servers
// and two managers, a CloneSet rolling out, what is sampled while it does (live pods, unavailable
// pods against maxUnavailable, update progress, manager restarts, readiness), and the counts of
// pods, PVCs, ControllerRevisions and Kruise objects taken before and after.

import { setTimeout as sleep } from 'node:timers/promises';
import { kinds } from '../../src/apis/registry.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { PatchType, type KubeClient } from '../../src/runtime/client.ts';
import { CloneSets, ControllerRevisions, PersistentVolumeClaims, Pods, type ResourceType } from '../../src/runtime/resources.ts';
import type { ManagerProcess } from './managers.ts';

/** Namespaces whose objects come and go by design: the client loops' (`loop`, `loop-<n>`). */
const isChurnNamespace = (ns: string | undefined) => ns === 'loop' || !!ns?.startsWith('loop-');

/** Every Kruise kind at v1alpha1 (the version every install serves), plus the built-ins counted. */
function countedTypes(): Array<{ label: string; type: ResourceType }> {
  const kruise = kinds
    .filter((k) => k.versions.some((v) => v.name === 'v1alpha1'))
    .map((k) => ({
      label: k.kind,
      type: { group: k.group, version: 'v1alpha1', resource: k.plural, kind: k.kind, namespaced: k.scope === 'Namespaced' },
    }));
  return [
    { label: 'Pod', type: Pods },
    { label: 'PersistentVolumeClaim', type: PersistentVolumeClaims },
    { label: 'ControllerRevision', type: ControllerRevisions },
    ...kruise,
  ];
}

/** How many objects of each counted kind exist (not terminating, outside the churn namespaces). */
export async function countObjects(client: KubeClient): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const { label, type } of countedTypes()) {
    const list = await client.listAll<KubeObject>(type).catch(() => undefined);
    if (!list) continue; // a kind this cluster does not serve
    out[label] = list.items.filter((o) => !o.metadata.deletionTimestamp && !isChurnNamespace(o.metadata.namespace)).length;
  }
  return out;
}

/**
 * The counts once they stop moving (two reads 2 s apart agree; at most 60 s): the manager creates
 * per-node objects (NodeImage, NodePodProbe) on its own schedule after it starts.
 */
export async function settledCounts(client: KubeClient): Promise<Record<string, number>> {
  let last = await countObjects(client);
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    await sleep(2_000);
    const now = await countObjects(client);
    if (countDifferences(last, now).length === 0) return now;
    last = now;
  }
  return last;
}

/** The kinds whose counts differ, "Kind before → after". */
export function countDifferences(before: Record<string, number>, after: Record<string, number>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((k) => (before[k] ?? 0) !== (after[k] ?? 0))
    .map((k) => `${k} ${before[k] ?? 0} → ${after[k] ?? 0}`);
}

type CS = KubeObject & {
  metadata: { generation?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    updatedReadyReplicas?: number;
    readyReplicas?: number;
  };
};
type PodObj = KubeObject & {
  spec: { containers: Array<{ image: string }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
};

/** One CloneSet rolling out (ReCreate, maxUnavailable as given), and what its rollouts look like. */
export class RollingCloneSet {
  image = 'nginx:1';
  private rolls = 0;

  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
    readonly name: string,
    readonly replicas: number,
    readonly maxUnavailable: number,
  ) {}

  async create(): Promise<void> {
    await this.client.create(
      CloneSets,
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: this.name, namespace: this.namespace },
        spec: {
          replicas: this.replicas,
          // Kept, so that the ControllerRevisions after a run are those before plus one per rollout.
          revisionHistoryLimit: 1000,
          selector: { matchLabels: { app: this.name } },
          template: { metadata: { labels: { app: this.name } }, spec: { containers: [{ name: 'c', image: this.image }] } },
          updateStrategy: { type: 'ReCreate', maxUnavailable: this.maxUnavailable },
        },
      } as KubeObject,
      { namespace: this.namespace },
    );
  }

  /** Starts a rollout to a new image (its pods take `startDelay` to start, so a rollout spans events). */
  async roll(startDelay = '1s'): Promise<void> {
    this.image = `nginx:${++this.rolls}`;
    await this.client.patch(
      CloneSets,
      this.name,
      {
        spec: {
          template: {
            metadata: { annotations: { 'sim.kruise-ts.io/start-delay': startDelay } },
            spec: { containers: [{ name: 'c', image: this.image }] },
          },
        },
      },
      { namespace: this.namespace, patchType: PatchType.Merge },
    );
  }

  async status(): Promise<CS> {
    return this.client.get<CS>(CloneSets, this.name, { namespace: this.namespace });
  }

  async rolledOut(): Promise<boolean> {
    const cs = await this.status();
    const s = cs.status ?? {};
    return s.observedGeneration === cs.metadata.generation && s.updatedReadyReplicas === this.replicas && s.replicas === this.replicas;
  }

  async waitRolledOut(timeoutMs: number): Promise<number> {
    const began = Date.now();
    while (!(await this.rolledOut().catch(() => false))) {
      if (Date.now() - began > timeoutMs)
        throw new Error(`${this.name}: rollout to ${this.image} not finished within ${timeoutMs / 1000}s`);
      await sleep(500);
    }
    return (Date.now() - began) / 1000;
  }

  /** Live (not terminating) pods, Ready ones, and those on the current image. */
  async pods(): Promise<{ live: number; ready: number; onImage: number }> {
    const list = await this.client.list<PodObj>(Pods, { namespace: this.namespace, labelSelector: `app=${this.name}` });
    const live = list.items.filter((p) => !p.metadata.deletionTimestamp);
    return {
      live: live.length,
      ready: live.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length,
      onImage: live.filter((p) => p.spec.containers[0]?.image === this.image).length,
    };
  }
}

export interface RolloutSamples {
  samples: number;
  /** The most live pods seen at once (more than replicas: an extra pod). */
  maxLive: number;
  /**
   * The most pods unavailable at once (replicas − Ready, counted while no pod of the set is being
   * created for a scale-up: ReCreate deletes up to maxUnavailable and creates them again).
   */
  maxUnavailable: number;
  /** Times (ms since epoch) at which updatedReadyReplicas was seen to grow. */
  progress: number[];
  /** Samples that failed (API server away): not counted above. */
  failed: number;
}

/** Samples the CloneSet every periodMs until stopped. */
export function sampleRollout(cs: RollingCloneSet, periodMs = 1_000): { stop(): Promise<RolloutSamples> } {
  const out: RolloutSamples = { samples: 0, maxLive: 0, maxUnavailable: 0, progress: [], failed: 0 };
  let running = true;
  let lastUpdated = -1;
  const loop = (async () => {
    while (running) {
      try {
        const [pods, status] = await Promise.all([cs.pods(), cs.status()]);
        out.samples++;
        out.maxLive = Math.max(out.maxLive, pods.live);
        out.maxUnavailable = Math.max(out.maxUnavailable, cs.replicas - pods.ready);
        const updated = status.status?.updatedReadyReplicas ?? 0;
        if (lastUpdated >= 0 && updated > lastUpdated) out.progress.push(Date.now());
        lastUpdated = updated;
      } catch {
        out.failed++;
      }
      await sleep(periodMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return out;
    },
  };
}

/** Seconds from `at` to the first update progress after it (undefined: none seen). */
export function progressGap(samples: RolloutSamples, at: number): number | undefined {
  const next = samples.progress.find((t) => t > at);
  return next === undefined ? undefined : (next - at) / 1000;
}

/** Polls a manager's /readyz every periodMs: whether it was seen not ready, and ready again at the end. */
export function watchReadiness(m: ManagerProcess, periodMs = 500): { stop(): Promise<{ notReadySeen: boolean; readyAtEnd: boolean }> } {
  let running = true;
  let notReadySeen = false;
  const ready = async () =>
    fetch(`http://127.0.0.1:${m.healthPort}/readyz`, { signal: AbortSignal.timeout(3_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
  const loop = (async () => {
    while (running) {
      if (!(await ready())) notReadySeen = true;
      await sleep(periodMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const deadline = Date.now() + 30_000;
      let readyAtEnd = await ready();
      while (!readyAtEnd && Date.now() < deadline) {
        await sleep(500);
        readyAtEnd = await ready();
      }
      return { notReadySeen, readyAtEnd };
    },
  };
}
