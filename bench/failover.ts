// Fail-over of kruise-manager without an API outage (issue #11), on a dedicated local cluster:
// two managers behind the webhook proxy, a CloneSet of N pods (default 200) rolling out, and a
// client loop doing create/get/patch/v1alpha1-get/delete of CloneSets every 200 ms, counting
// failures. Scenario `kill`: the leader is SIGKILLed K times (default 5), each killed manager
// replaced by a new one; scenario `stop`: the leader is SIGSTOPped for S seconds (default 25),
// then SIGCONTed. Printed per scenario: take-over times (kill/stop → the other holds the Lease),
// failed client calls, configuration/CRD writes after the first take-over, and the pods: at most
// N at any sample (no extra), exactly N Ready on the final revision at the end (none missing).
// Usage: ./run.sh bench failover [--replicas 200] [--kills 5] [--stop-seconds 25] [--scenario kill|stop|both]
//        [--keep-logs DIR]
import { cpSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down } from '../src/cluster/local-cluster.ts';
import { stopProcesses, tail } from '../src/cluster/processes.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { PatchType, fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { CloneSets, CustomResourceDefinitions, Namespaces, Pods, ValidatingWebhookConfigurations } from '../src/runtime/resources.ts';
import { clientLoop, leaseHolder, startManagerProcess, waitLeader, type ManagerProcess } from '../test/harness/managers.ts';

const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '200' },
    kills: { type: 'string', default: '5' },
    'stop-seconds': { type: 'string', default: '25' },
    scenario: { type: 'string', default: 'both' },
    nodes: { type: 'string', default: '5' },
    /** Copy the cluster's and managers' logs here before tearing the cluster down. */
    'keep-logs': { type: 'string' },
  },
});
const replicas = Number(values.replicas);
const name = `bench-failover-${process.pid}`;
const ns = 'default';
const { state } = await up({ name, nodes: Number(values.nodes), log: () => undefined });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 200, burst: 400, maxRetries: 0 });
const managers: ManagerProcess[] = [];
let generation = 0;
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

type CS = KubeObject & {
  metadata: { generation?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReadyReplicas?: number; readyReplicas?: number };
};

/** Starts a manager and waits until it serves behind the proxy and contends for the Lease. */
async function newManager(): Promise<ManagerProcess> {
  const m = await startManagerProcess(state, `manager-${++generation}`);
  managers.push(m);
  for (const deadline = Date.now() + 180_000; !/attempting to acquire leader lease/.test(tail(m.proc.logFile, 400)); await sleep(200)) {
    if (m.proc.exited || Date.now() > deadline) throw new Error(`${m.id} did not start: ${tail(m.proc.logFile, 20)}`);
  }
  return m;
}

/** Pods of the bench CloneSet (not terminating) and how many run the given image. */
async function pods(image: string): Promise<{ total: number; onImage: number }> {
  const list = await client.list<KubeObject & { spec: { containers: Array<{ image: string }> } }>(Pods, {
    namespace: ns,
    labelSelector: 'app=failover',
  });
  const live = list.items.filter((p) => !p.metadata.deletionTimestamp);
  return { total: live.length, onImage: live.filter((p) => p.spec.containers[0]?.image === image).length };
}

async function rolledOut(): Promise<boolean> {
  const cs = await client.get<CS>(CloneSets, 'failover', { namespace: ns });
  const s = cs.status ?? {};
  return s.observedGeneration === cs.metadata.generation && s.updatedReadyReplicas === replicas && s.replicas === replicas;
}

async function waitRolledOut(timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await rolledOut().catch(() => false)); await sleep(500)) {
    if (Date.now() > deadline) throw new Error('rollout did not finish');
  }
}

/** Samples the live pod count every 500 ms; returns the maximum seen. */
function samplePods(image: () => string): { stop(): Promise<number> } {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const p = await pods(image()).catch(() => undefined);
      if (p) max = Math.max(max, p.total);
      await sleep(500);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return max;
    },
  };
}

async function resourceVersions(): Promise<string> {
  const vwc = await client.get(ValidatingWebhookConfigurations, 'kruise-validating-webhook-configuration');
  const crd = await client.get(CustomResourceDefinitions, 'clonesets.apps.kruise.io');
  return `${vwc.metadata.resourceVersion}/${crd.metadata.resourceVersion}`;
}

async function otherLeads(victim: ManagerProcess, since: number): Promise<number> {
  for (;;) {
    const holder = await leaseHolder(client);
    if (holder && holder !== victim.id) return (Date.now() - since) / 1000;
    if (Date.now() - since > 120_000) throw new Error('no take-over within 120 s');
    await sleep(100);
  }
}

let image = 'nginx:1';
async function rollTo(next: string): Promise<void> {
  image = next;
  await client.patch(
    CloneSets,
    'failover',
    { spec: { template: { spec: { containers: [{ name: 'c', image }] } } } },
    { namespace: ns, patchType: PatchType.Merge },
  );
}

async function scenario(kind: 'kill' | 'stop'): Promise<void> {
  log(`scenario ${kind}: rollout of ${replicas} pods starting`);
  const versions = await resourceVersions();
  const loop = clientLoop(client, 'loop');
  const sampler = samplePods(() => image);
  let rolls = 0;
  await rollTo(`nginx:${kind}-${++rolls}`);
  const takeovers: number[] = [];
  const events = kind === 'kill' ? Number(values.kills) : 1;
  for (let i = 0; i < events; i++) {
    await sleep(3_000);
    const holder = await leaseHolder(client);
    const victim = managers.find((m) => m.id === holder && !m.proc.exited)!;
    // Keep a rollout in progress at every event.
    if (await rolledOut()) await rollTo(`nginx:${kind}-${++rolls}`);
    const at = Date.now();
    if (kind === 'kill') {
      process.kill(victim.proc.pid, 'SIGKILL');
      takeovers.push(await otherLeads(victim, at));
      log(`SIGKILL ${victim.id}: take-over after ${takeovers.at(-1)!.toFixed(1)}s`);
      await newManager();
    } else {
      process.kill(victim.proc.pid, 'SIGSTOP');
      takeovers.push(await otherLeads(victim, at));
      log(`SIGSTOP ${victim.id}: take-over after ${takeovers.at(-1)!.toFixed(1)}s`);
      const resumeAt = at + Number(values['stop-seconds']) * 1000;
      await sleep(Math.max(0, resumeAt - Date.now()));
      const before = await resourceVersions();
      process.kill(victim.proc.pid, 'SIGCONT');
      log(`SIGCONT ${victim.id} after ${((Date.now() - at) / 1000).toFixed(1)}s`);
      await sleep(10_000);
      const after = await resourceVersions();
      log(
        `stale leader after SIGCONT: configuration/CRD writes ${before === after ? 'none' : `${before} → ${after}`}; ${victim.proc.exited ? 'it exited' : 'it runs on'}`,
      );
      if (victim.proc.exited) await newManager();
    }
  }
  await waitRolledOut(300_000);
  const maxPods = await sampler.stop();
  const result = await loop.stop();
  const final = await pods(image);
  log(
    `scenario ${kind}: take-over ${takeovers.map((t) => t.toFixed(1)).join(', ')} s; ` +
      `client calls ${result.operations}, failed ${result.failures}; ` +
      `pods max ${maxPods} (limit ${replicas}), final ${final.total} of which ${final.onImage} on ${image}; ` +
      `configuration/CRD resourceVersions ${versions === (await resourceVersions()) ? 'unchanged' : 'changed'}`,
  );
  for (const e of result.errors) log(`  failure: ${e}`);
}

try {
  await installCRDs(client);
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'loop' } });
  const first = await newManager();
  await waitLeader(client, first);
  await newManager();
  await sleep(5_000);
  await client.create(
    CloneSets,
    {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'failover', namespace: ns },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'failover' } },
        template: { metadata: { labels: { app: 'failover' } }, spec: { containers: [{ name: 'c', image }] } },
        updateStrategy: { rollingUpdate: { podUpdatePolicy: 'ReCreate', maxUnavailable: '10%' } },
      },
    } as KubeObject,
    { namespace: ns },
  );
  await waitRolledOut(300_000);
  log(`${replicas} pods ready`);
  if (values.scenario !== 'stop') await scenario('kill');
  if (values.scenario !== 'kill') await scenario('stop');
} finally {
  await stopProcesses(
    managers.map((m) => m.proc.pid),
    5000,
  );
  await client.close();
  if (values['keep-logs']) cpSync(path.join(state.runDir, 'logs'), values['keep-logs'], { recursive: true });
  await down(name, { quiet: true, purge: true });
}
