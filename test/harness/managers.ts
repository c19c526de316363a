// Several kruise-manager processes on one cluster, for the fail-over tests and bench/chaos.ts:
// starting them, finding the leader, and a client loop that uses the Kruise API the way a user
// does (create, get, patch, a v1alpha1 read through conversion, delete) and counts failures.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterState } from '../../src/cluster/local-cluster.ts';
import { freePorts, startProcess, tail, type Started } from '../../src/cluster/processes.ts';
import { PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject, Lease } from '../../src/apis/core-objects.ts';
import { Leases, type ResourceType } from '../../src/runtime/resources.ts';
import { kruiseArgs, servingFlags } from './kruise-cli.ts';

export interface ManagerProcess {
  id: string;
  proc: Started;
  webhookPort: number;
  /** Its `/healthz` and `/readyz`, on 127.0.0.1. */
  healthPort: number;
}

/** Starts `kruise start` against the cluster as `id` (its own webhook, metrics and probe ports). */
export async function startManagerProcess(state: ClusterState, id: string, extraArgs: string[] = []): Promise<ManagerProcess> {
  const [webhookPort, metricsPort, healthPort] = (await freePorts(3)) as [number, number, number];
  const proc = startProcess(
    id,
    process.execPath,
    kruiseArgs(
      'start',
      '--kubeconfig',
      state.kubeconfig,
      '--identity',
      id,
      ...servingFlags(webhookPort, `127.0.0.1:${metricsPort}`, `127.0.0.1:${healthPort}`),
      ...extraArgs,
    ),
    path.join(state.runDir, 'logs', `${id}.log`),
  );
  return { id, proc, webhookPort, healthPort };
}

/** The holder of the manager's Lease, or undefined. */
export async function leaseHolder(client: KubeClient): Promise<string | undefined> {
  const lease = await client.get<Lease>(Leases, 'kruise-manager', { namespace: 'kruise-system' }).catch(() => undefined);
  return lease?.spec?.holderIdentity || undefined;
}

/** Waits until `m` holds the Lease (start-up of a manager is slow on a loaded machine: 90 s). */
export async function waitLeader(client: KubeClient, m: ManagerProcess, timeoutMs = 90_000): Promise<number> {
  const started = Date.now();
  while ((await leaseHolder(client)) !== m.id) {
    if (m.proc.exited) throw new Error(`${m.id} exited ${JSON.stringify(m.proc.exited)}: ${tail(m.proc.logFile, 20)}`);
    if (Date.now() - started > timeoutMs) throw new Error(`${m.id} did not lead within ${timeoutMs / 1000}s: ${tail(m.proc.logFile, 20)}`);
    await sleep(100);
  }
  return Date.now() - started;
}

const cloneSets = (version: string): ResourceType => ({
  group: 'apps.kruise.io',
  version,
  resource: 'clonesets',
  kind: 'CloneSet',
  namespaced: true,
});

export interface ClientLoopResult {
  operations: number;
  failures: number;
  /** The first failures' messages, with the time since the loop started. */
  errors: string[];
}

/**
 * Every `periodMs` until stopped: creates a CloneSet (0 replicas), reads it, patches it, reads it as
 * v1alpha1 (conversion webhook) and deletes it (a round whose create failed stops there); every
 * call is one operation, counted failed when the API server refuses it (the client retries nothing but a 429 with Retry-After).
 */
export function clientLoop(client: KubeClient, namespace: string, periodMs = 200): { stop(): Promise<ClientLoopResult> } {
  const result: ClientLoopResult = { operations: 0, failures: 0, errors: [] };
  const began = Date.now();
  let running = true;
  const op = async (what: string, fn: () => Promise<unknown>): Promise<boolean> => {
    result.operations++;
    try {
      await fn();
      return true;
    } catch (err) {
      result.failures++;
      if (result.errors.length < 20) result.errors.push(`${((Date.now() - began) / 1000).toFixed(1)}s ${what}: ${(err as Error).message}`);
      return false;
    }
  };
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const next = Date.now() + periodMs;
      const name = `loop-${i}`;
      const obj = {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'CloneSet',
        metadata: { name, namespace },
        spec: {
          replicas: 0,
          selector: { matchLabels: { loop: name } },
          template: { metadata: { labels: { loop: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      };
      // The other calls of a round whose create failed would fail only for want of the object.
      if (await op('create', () => client.create(cloneSets('v1beta1'), obj as KubeObject, { namespace }))) {
        await op('get', () => client.get(cloneSets('v1beta1'), name, { namespace }));
        await op('patch', () =>
          client.patch(
            cloneSets('v1beta1'),
            name,
            { metadata: { labels: { patched: 'true' } } },
            { namespace, patchType: PatchType.Merge },
          ),
        );
        await op('get v1alpha1', () => client.get(cloneSets('v1alpha1'), name, { namespace }));
        await op('delete', () => client.delete(cloneSets('v1beta1'), name, { namespace }));
      }
      await sleep(Math.max(0, next - Date.now()));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return result;
    },
  };
}
