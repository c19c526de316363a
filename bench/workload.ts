// What the workload benchmarks (cloneset, statefulset, daemonset, pod-webhook) share: a Kruise TS
// manager child process on the benchmark's cluster, the wait for its defaulting webhook, and timed
// phases whose wall time, manager CPU seconds and API writes per pod are printed as one table.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubectl, type ClusterState } from '../src/cluster/local-cluster.ts';
import { startProcess, tail, type Started } from '../src/cluster/processes.ts';
import { repoRoot } from '../src/cluster/binaries.ts';
import { writes, type Writes } from './measure.ts';
import type { ConfigMap } from '../src/apis/core-objects.ts';
import type { KubeClient } from '../src/runtime/client.ts';
import { isNotFound } from '../src/runtime/errors.ts';
import { ConfigMaps } from '../src/runtime/resources.ts';
import { WEBHOOK_PROXY_CONFIGMAP } from '../src/runtime/webhook/endpoint.ts';

/**
 * The production Node flags (config/node/flags, as bin/kruise reads them) with `extra` in place of
 * those of the same name, and added.
 */
export function nodeFlagsWith(extra: readonly string[]): string[] {
  const flagName = (flag: string) => flag.split('=')[0];
  const production = readFileSync(path.join(repoRoot, 'config/node/flags'), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((flag) => flag && !extra.some((x) => flagName(x) === flagName(flag)));
  return [...production, ...extra];
}

/**
 * A manager without metrics or probes, logging warnings to the cluster's log dir: the production
 * entry point (the compiled dist/ as bin/kruise builds and runs it, with the production Node flags
 * and `nodeFlags`, e.g. --trace-gc). Without leader election unless `opts.args` say otherwise
 * (they replace `--enable-leader-election=false`); `opts.name` names the process and its log.
 */
export function startBenchManager(
  state: ClusterState,
  webhookPort = 0,
  nodeFlags: readonly string[] = [],
  opts: { name?: string; args?: readonly string[]; metricsPort?: number } = {},
): Started {
  const name = opts.name ?? 'kruise-manager';
  const logFile = path.join(state.runDir, 'logs', `${name}.log`);
  execFileSync(path.join(repoRoot, 'hack/build.sh'), ['--if-stale'], { stdio: 'inherit' });
  return startProcess(
    name,
    path.join(repoRoot, 'node_modules/.bin/node'),
    [
      ...nodeFlagsWith(nodeFlags),
      path.join(repoRoot, 'dist/cli/kruise.js'),
      'start',
      '--kubeconfig',
      state.kubeconfig,
      '--webhook-port',
      String(webhookPort),
      ...(opts.args ?? ['--enable-leader-election=false']),
      '--metrics-addr',
      opts.metricsPort === undefined ? '0' : `127.0.0.1:${opts.metricsPort}`,
      '--health-probe-addr',
      '0',
    ],
    logFile,
    { ...process.env, KRUISE_LOG_LEVEL: 'warn' },
  );
}

/**
 * Takes the local cluster's webhook-proxy announcement away until `restore()`. A manager started in
 * the meantime (url mode) finds no proxy and names its own port, so the API server calls it
 * directly — as it calls upstream's test peer, and as a Service reaches a pod in a real cluster —
 * instead of through one more TLS hop and Node process on the same cores.
 */
export async function withoutWebhookProxy(client: KubeClient): Promise<{ restore(): Promise<void> }> {
  const { name, namespace } = WEBHOOK_PROXY_CONFIGMAP;
  const announced = await client.get<ConfigMap>(ConfigMaps, name, { namespace }).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  if (!announced) return { restore: async () => undefined };
  await client.delete(ConfigMaps, name, { namespace });
  return {
    restore: async () => {
      await client.create<ConfigMap>(ConfigMaps, { metadata: { name, namespace }, data: announced.data });
    },
  };
}

/** What the defaulting checks read of a dry-run answer. */
interface DryRunWorkload {
  spec: { burstReplicas?: number; template: { spec: { containers: Array<{ imagePullPolicy?: string }> } } };
}

/**
 * Waits until the API server runs the manager's defaulting webhook on `manifest` (a server-side dry
 * run comes back defaulted): a workload created before would get an undefaulted first revision, and
 * its rollouts would differ in more than the measured change.
 */
export async function waitForDefaulting(
  state: ClusterState,
  manifest: string,
  defaulted: (obj: DryRunWorkload) => boolean,
  manager: () => Started | undefined,
): Promise<void> {
  for (;;) {
    try {
      if (defaulted(JSON.parse(await kubectl(state, ['apply', '--dry-run=server', '-o', 'json', '-f', '-'], manifest)))) return;
    } catch {
      const m = manager();
      if (m?.exited) throw new Error(`manager exited: ${tail(m.logFile, 20)}`);
    }
    await sleep(250);
  }
}

// events.k8s.io events come from the manager (aggregated) and the scheduler (one "Scheduled" per pod).
const EVENTS = /^(POST|PATCH) events\.k8s\.io\/events$/;
// pods/status PATCH and pods DELETE are shared with KWOK (pod status, final removal after termination).
const SHARED = /^PATCH pods\/status$|^DELETE pods$/;

interface PhaseRow {
  phase: string;
  seconds: number;
  cpu: number;
  manager: number;
  shared: number;
  events: number;
  detail: Map<string, number>;
  note?: string;
}

/**
 * Timed phases. apiserver_request_total has no client label, so writes are attributed by what they
 * touch: `managerOnly` matches the resources only the manager writes.
 */
export class Phases {
  readonly rows: PhaseRow[] = [];

  constructor(
    private readonly state: ClusterState,
    private readonly managerOnly: RegExp,
    private readonly managerCpu: () => number,
  ) {}

  /** Applies `change`, then waits for `settled`; `during` runs in between and may return a note. */
  async run(label: string, change: () => Promise<unknown>, settled: () => Promise<void>, during?: () => Promise<string>): Promise<void> {
    const before = await writes(this.state);
    const cpu0 = this.managerCpu();
    const t0 = performance.now();
    await change();
    const note = during ? await during() : undefined;
    await settled();
    const seconds = (performance.now() - t0) / 1000;
    const cpu = this.managerCpu() - cpu0;
    this.rows.push({ phase: label, seconds, cpu, ...this.delta(before, await writes(this.state)), note });
    process.stderr.write(`${label}: ${seconds.toFixed(1)} s\n`);
  }

  private delta(before: Writes, after: Writes) {
    const d = new Map<string, number>();
    for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) d.set(k, v - (before.get(k) ?? 0));
    const sum = (re: RegExp) => [...d].filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0);
    return { manager: sum(this.managerOnly), shared: sum(SHARED), events: sum(EVENTS), detail: d };
  }

  /** The Markdown table docs/benchmarks.md quotes, per pod, then each phase's writes in detail. */
  print(title: string, pods: number, rssMiB: number): void {
    const load = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    console.log(`\n${title} (${process.version}, load average ${load})\n`);
    console.log(
      '| phase | wall s | manager CPU s | manager writes/pod | pods/status PATCH + pods DELETE /pod (manager + KWOK) | events/pod (manager + scheduler) |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const r of this.rows) {
      console.log(
        `| ${r.phase} | ${r.seconds.toFixed(1)} | ${r.cpu.toFixed(1)} | ${(r.manager / pods).toFixed(2)} | ${(r.shared / pods).toFixed(2)} | ${(r.events / pods).toFixed(2)} |`,
      );
    }
    console.log(`\nmanager RSS at the end: ${rssMiB.toFixed(0)} MiB`);
    for (const r of this.rows) {
      if (r.note) console.log(`\n${r.phase}: ${r.note}`);
      const detail = [...r.detail]
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join(', ');
      console.log(`\n${r.phase} writes: ${detail}`);
    }
  }
}
