// Every failure a user can meet, measured (issue #34), on a dedicated local cluster with several API
// servers behind one address (each with --goaway-chance=0.02) and two managers, a CloneSet of N pods
// (default 500) rolling out through every phase, and a client loop doing create / get / merge-patch /
// v1alpha1 get / delete of CloneSets every 200 ms (test/harness/managers.ts; retrying a 429 or 5xx
// with Retry-After as kubectl does), in a namespace of its own per phase:
//   apiservers  restart each API server in turn
//   outage      no API server reachable for 25 s (the load balancer stopped), then etcd restarted
//   failover    the leader SIGKILLed or SIGSTOPped (25 s, then SIGCONT), alternately, 5 times
//   fuzz        10,000 fuzzed objects of every kind through the API server (test/harness/apiserver-fuzz.ts)
// Printed per phase: rollout time, failed client calls, most live pods (limit N) and most unavailable
// (limit maxUnavailable), manager exits, error lines the managers logged, watch relists; for the
// outage the managers' readiness; for fail-over take-over times and progress gaps. Before and after
// everything: the counts of pods, PVCs (an Advanced StatefulSet with claims rides along),
// ControllerRevisions (no two of one owner with one revision number) and Kruise objects.
// Usage: ./run.sh bench chaos [--replicas 500] [--apiservers 3] [--nodes 5] [--phases apiservers,outage,failover,fuzz]
//        [--outage-seconds 25] [--failovers 5] [--stop-seconds 25] [--fuzz 10000] [--keep-logs DIR]
import { cpSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, restartComponent, type Component } from '../src/cluster/local-cluster.ts';
import { stopProcesses, tail } from '../src/cluster/processes.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile } from '../src/runtime/client.ts';
import type { KubeObject } from '../src/apis/core-objects.ts';
import { AdvancedStatefulSets, ControllerRevisions, Namespaces } from '../src/runtime/resources.ts';
import { fuzzThroughApiServer } from '../test/harness/apiserver-fuzz.ts';
import {
  countDifferences,
  settledCounts,
  progressGap,
  RollingCloneSet,
  sampleRollout,
  watchReadiness,
  type RolloutSamples,
} from '../test/harness/chaos.ts';
import { clientLoop, leaseHolder, startManagerProcess, waitLeader, type ManagerProcess } from '../test/harness/managers.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    replicas: { type: 'string', default: '500' },
    apiservers: { type: 'string', default: '3' },
    nodes: { type: 'string', default: '5' },
    phases: { type: 'string', default: 'apiservers,outage,failover,fuzz' },
    'outage-seconds': { type: 'string', default: '25' },
    failovers: { type: 'string', default: '5' },
    'stop-seconds': { type: 'string', default: '25' },
    fuzz: { type: 'string', default: '10000' },
    'keep-logs': { type: 'string' },
  },
});
const replicas = Number(values.replicas);
const apiServers = Number(values.apiservers);
const selected = new Set(values.phases.split(','));
let phases = 0;
const name = `bench-chaos-${process.pid}`;
const ns = 'default';
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

const began = Date.now();
const { state } = await up({ name, nodes: Number(values.nodes), apiServers, log: () => undefined });
log(`cluster up: ${apiServers} API server(s), ${values.nodes} nodes (${((Date.now() - began) / 1000).toFixed(0)} s)`);
const client = fromKubeconfigFile(state.kubeconfig, { qps: 200, burst: 400, maxRetries: 0 });
// The client loop's calls retry as kubectl's (client-go) do: a 429 or 5xx with Retry-After.
const kubectlLike = fromKubeconfigFile(state.kubeconfig, { qps: 200, burst: 400 });
const managers: ManagerProcess[] = [];
let generation = 0;
const cs = new RollingCloneSet(client, ns, 'chaos', replicas, Math.max(1, Math.floor(replicas / 10)));
let rolls = 0;

async function newManager(): Promise<ManagerProcess> {
  const m = await startManagerProcess(state, `manager-${++generation}`);
  managers.push(m);
  for (const deadline = Date.now() + 180_000; !/attempting to acquire leader lease/.test(tail(m.proc.logFile, 400)); await sleep(200)) {
    if (m.proc.exited || Date.now() > deadline) throw new Error(`${m.id} did not start: ${tail(m.proc.logFile, 20)}`);
  }
  return m;
}

async function roll(): Promise<void> {
  await cs.roll();
  rolls++;
}

/** Where each manager's log stood, to read what a phase added. */
function logMarks(): Map<ManagerProcess, number> {
  return new Map(managers.map((m) => [m, statSync(m.proc.logFile).size]));
}

/** Error lines (pino level ≥ 50) and watch relists the managers logged since `marks`. */
function logSince(marks: Map<ManagerProcess, number>): { errors: number; relists: number; firstErrors: string[] } {
  let errors = 0;
  let relists = 0;
  const firstErrors: string[] = [];
  for (const m of managers) {
    const text = readFileSync(m.proc.logFile)
      .subarray(marks.get(m) ?? 0)
      .toString('utf8');
    for (const line of text.split('\n')) {
      if (line.includes('resourceVersion expired, relisting')) relists++;
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (level && Number(level) >= 50) {
        errors++;
        if (firstErrors.length < 5) firstErrors.push(`${m.id}: ${line.slice(0, 300)}`);
      }
    }
  }
  return { errors, relists, firstErrors };
}

const exits = () => managers.filter((m) => m.proc.exited).length;

function rolloutLine(s: RolloutSamples): string {
  return `pods: most live ${s.maxLive} (limit ${replicas}), most unavailable ${s.maxUnavailable} (maxUnavailable ${cs.maxUnavailable}), ${s.samples} samples`;
}

interface PhaseResult {
  lines: string[];
  /** Lines that need the whole phase's samples (progress gaps). */
  afterwards?: (samples: RolloutSamples) => string[];
}

/** Runs one phase with the client loop, the rollout sampler and the log marks around it. */
async function phase(title: string, body: () => Promise<PhaseResult>): Promise<void> {
  log(`phase ${title}: starting`);
  const marks = logMarks();
  const exitsBefore = exits();
  // A namespace per phase: a delete refused during an outage leaves a CloneSet the next loop's create would meet.
  const loopNamespace = `loop-${++phases}`;
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: loopNamespace } });
  const loop = clientLoop(kubectlLike, loopNamespace);
  const sampler = sampleRollout(cs);
  const started = Date.now();
  const { lines, afterwards } = await body();
  const rollout = await cs.waitRolledOut(900_000);
  const samples = await sampler.stop();
  const result = await loop.stop();
  const logged = logSince(marks);
  log(
    `phase ${title}: done in ${((Date.now() - started) / 1000).toFixed(0)} s (rollout finished ${rollout.toFixed(0)} s after the events); ` +
      `client calls ${result.operations}, failed ${result.failures}; ${rolloutLine(samples)}; ` +
      `manager exits ${exits() - exitsBefore}; manager error lines ${logged.errors}; watch relists ${logged.relists}`,
  );
  for (const l of [...lines, ...(afterwards?.(samples) ?? [])]) log(`  ${l}`);
  for (const e of result.errors) log(`  client failure: ${e}`);
  for (const e of logged.firstErrors) log(`  manager error: ${e}`);
}

/** No owner with two ControllerRevisions of one revision number. */
async function duplicateRevisions(): Promise<number> {
  const list = await client.listAll<KubeObject & { revision?: number }>(ControllerRevisions);
  const seen = new Set<string>();
  let dup = 0;
  for (const r of list.items) {
    const key = `${r.metadata.ownerReferences?.[0]?.uid}/${r.revision}`;
    if (seen.has(key)) dup++;
    seen.add(key);
  }
  return dup;
}

try {
  await installCRDs(client);
  const first = await newManager();
  await waitLeader(client, first);
  await newManager();
  // An Advanced StatefulSet with claims rides along: its pods and PVCs must come through untouched.
  await client.create(
    AdvancedStatefulSets,
    {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'StatefulSet',
      metadata: { name: 'store', namespace: ns },
      spec: {
        replicas: 3,
        serviceName: 'store',
        selector: { matchLabels: { app: 'store' } },
        template: { metadata: { labels: { app: 'store' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
        ],
      },
    } as KubeObject,
    { namespace: ns },
  );
  await cs.create();
  const ready = await cs.waitRolledOut(900_000);
  log(`${replicas} pods ready in ${ready.toFixed(0)} s`);
  await sleep(5_000);
  const before = await settledCounts(client);
  log(`counts before: ${JSON.stringify(before)}`);

  if (selected.has('apiservers')) {
    await phase(`apiservers (restart each of ${apiServers} in turn mid-rollout)`, async () => {
      await roll();
      const lines: string[] = [];
      const names: Component[] = ['kube-apiserver', 'kube-apiserver-2', 'kube-apiserver-3'].slice(0, apiServers) as Component[];
      for (const c of names) {
        await sleep(3_000);
        const at = Date.now();
        await restartComponent(name, c);
        lines.push(`${c} restarted, ready again after ${((Date.now() - at) / 1000).toFixed(1)} s`);
        if (await cs.rolledOut()) await roll();
      }
      return { lines };
    });
  }

  if (selected.has('outage')) {
    await phase(`outage (no API server for ${values['outage-seconds']} s, then etcd restarted)`, async () => {
      await roll();
      await sleep(3_000);
      const readiness = managers.filter((m) => !m.proc.exited).map((m) => ({ m, w: watchReadiness(m) }));
      const at = Date.now();
      // With several API servers the outage is their one address going away; with one, the API server.
      await restartComponent(name, apiServers > 1 ? 'apiserver-lb' : 'kube-apiserver', {
        downForMs: Number(values['outage-seconds']) * 1000,
      });
      const outage = (Date.now() - at) / 1000;
      const lines = [`API server unreachable for ${outage.toFixed(1)} s`];
      for (const { m, w } of readiness) {
        const r = await w.stop();
        lines.push(
          `${m.id}: not ready seen during the outage: ${r.notReadySeen}; ready again after: ${r.readyAtEnd}; exited: ${!!m.proc.exited}`,
        );
      }
      if (await cs.rolledOut()) await roll();
      await sleep(3_000);
      const etcdAt = Date.now();
      await restartComponent(name, 'etcd');
      lines.push(`etcd restarted, API server ready again after ${((Date.now() - etcdAt) / 1000).toFixed(1)} s`);
      return { lines };
    });
  }

  if (selected.has('failover')) {
    await phase(`failover (${values.failovers} leader failures, SIGKILL and SIGSTOP alternately, 2 replicas)`, async () => {
      await roll();
      const events: Array<{ kind: string; at: number; takeover: number }> = [];
      for (let i = 0; i < Number(values.failovers); i++) {
        await sleep(3_000);
        if (await cs.rolledOut()) await roll();
        const holder = await leaseHolder(client);
        const victim = managers.find((m) => m.id === holder && !m.proc.exited)!;
        const kind = i % 2 === 0 ? 'SIGKILL' : 'SIGSTOP';
        const at = Date.now();
        process.kill(victim.proc.pid, kind);
        for (;;) {
          const h = await leaseHolder(client);
          if (h && h !== victim.id) break;
          if (Date.now() - at > 120_000) throw new Error('no take-over within 120 s');
          await sleep(100);
        }
        events.push({ kind, at, takeover: (Date.now() - at) / 1000 });
        if (kind === 'SIGKILL') {
          await newManager();
        } else {
          await sleep(Math.max(0, at + Number(values['stop-seconds']) * 1000 - Date.now()));
          process.kill(victim.proc.pid, 'SIGCONT');
          await sleep(10_000);
          if (victim.proc.exited) await newManager();
        }
      }
      return {
        lines: [],
        // Progress gap: from the event to the next growth of updatedReadyReplicas.
        afterwards: (samples) =>
          events.map((e) => {
            const gap = progressGap(samples, e.at);
            return `${e.kind}: take-over after ${e.takeover.toFixed(1)} s; progress gap ${gap === undefined ? 'n/a (rollout done before)' : `${gap.toFixed(1)} s`}`;
          }),
      };
    });
  }

  if (selected.has('fuzz')) {
    await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fuzz' } });
    const at = Date.now();
    const f = await fuzzThroughApiServer({ kubeconfig: state.kubeconfig, namespace: 'fuzz', count: Number(values.fuzz), seed: 20261206 });
    log(
      `phase fuzz: ${f.sent} objects in ${((Date.now() - at) / 1000).toFixed(0)} s: admitted ${f.admitted}, refused ${f.refused} ` +
        `(${f.webhookRefusals} by a webhook, ${f.refusalsNamingAField} naming a field); 5xx ${f.serverErrors.length}; ` +
        `webhook refusals not naming the wrong field ${f.unnamed.length}`,
    );
    for (const c of [...f.serverErrors, ...f.unnamed].slice(0, 10)) log(`  ${c.case} → ${c.code} ${c.message}`);
  }

  await sleep(5_000);
  const after = await settledCounts(client);
  log(`counts after: ${JSON.stringify(after)}`);
  const expected = { ...before, ControllerRevision: (before.ControllerRevision ?? 0) + rolls };
  const diff = countDifferences(expected, after);
  log(
    `data safety: ${diff.length ? `differences from expected (ControllerRevisions +${rolls} rollouts): ${diff.join(', ')}` : `as expected (ControllerRevisions +${rolls}, one per rollout; everything else unchanged)`}; ` +
      `duplicate ControllerRevisions ${await duplicateRevisions()}; manager exits in all ${exits()}`,
  );
} finally {
  await stopProcesses(
    managers.map((m) => m.proc.pid),
    5000,
  );
  await client.close();
  await kubectlLike.close();
  if (values['keep-logs']) cpSync(path.join(state.runDir, 'logs'), values['keep-logs'], { recursive: true });
  await down(name, { quiet: true, purge: true });
}
