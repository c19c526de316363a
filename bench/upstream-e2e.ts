// OpenKruise v1.8.2's own e2e suite (github.com/openkruise/kruise/test/e2e, built by
// hack/build-binaries.sh --e2e) against the local cluster, with either manager: Kruise TS
// (`--manager ts`) or upstream's kruise-manager v1.8.2 (`--manager go`). Each focus group runs on a
// fresh cluster of its own with 6 KWOK nodes, as upstream's CI gives each job a fresh kind cluster,
// with upstream's e2e set-up: feature gates AllAlpha=true,AllBeta=true,EnableExternalCerts=false,
// the module's test/kruise-e2e-config.yaml, and its two test StorageClasses (on the local cluster's
// provisioner). Per-spec results come from Ginkgo v1's JUnit report (-ginkgo.reportFile); they are
// merged into docs/upstream-e2e-results.json and rendered into docs/upstream-e2e.md.
//
// Usage: ./run.sh bench upstream-e2e --manager ts|go [--group cloneset|…|all]
//        [--focus REGEX (with --group GROUP: that group's set-up)] [--skip REGEX] [--cluster NAME] [--nodes 6] [--timeout 60m] [--keep-cluster]
//        [--no-doc] [--verbose]
//        ./run.sh bench upstream-e2e --render     (re-render the doc from the results file)
// A run's files (the suite's output, the JUnit report, the manager's log) stay in
// ~/.cache/kruise-ts/upstream-e2e/<manager>-<group>-<time>/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureKruiseE2E, repoRoot } from '../src/cluster/binaries.ts';
import { down, up, type ClusterState } from '../src/cluster/local-cluster.ts';
import { freePorts, startProcess, stopProcesses, tail } from '../src/cluster/processes.ts';
import { fromKubeconfigFile, type KubeClient } from '../src/runtime/client.ts';
import { NodeImages, NodePodProbes, Nodes } from '../src/runtime/resources.ts';
import { kruiseArgs, servingFlags } from '../test/harness/kruise-cli.ts';
import { startUpstreamPeer } from '../test/harness/upstream-peer.ts';
import { applyE2ESetup, E2E_FEATURE_GATES, runKruiseE2E } from '../test/harness/upstream-e2e.ts';
import { E2E_GROUPS, groupOfSpec, renderDoc, type E2EResults, type SpecResult } from '../test/harness/upstream-e2e-report.ts';
import { dryRunCloneSetProbe } from '../test/harness/webhook-ready.ts';

const RESULTS = path.join(repoRoot, 'docs/upstream-e2e-results.json');
const DOC = path.join(repoRoot, 'docs/upstream-e2e.md');

const { values } = benchArgs(import.meta.url, {
  options: {
    manager: { type: 'string' },
    group: { type: 'string', default: 'all' },
    focus: { type: 'string' },
    skip: { type: 'string' },
    cluster: { type: 'string' },
    nodes: { type: 'string', default: '6' },
    timeout: { type: 'string' },
    'keep-cluster': { type: 'boolean', default: false },
    'no-doc': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    render: { type: 'boolean', default: false },
  },
});

const log = (line: string) => process.stderr.write(`[upstream-e2e ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function loadResults(): E2EResults {
  return existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as E2EResults) : { runs: [], specs: {} };
}

function saveResults(results: E2EResults): void {
  writeFileSync(RESULTS, JSON.stringify(results, null, 2) + '\n');
  writeFileSync(DOC, renderDoc(readFileSync(DOC, 'utf8'), results));
}

if (values.render) {
  saveResults(loadResults());
  process.exit(0);
}

const manager = values.manager as 'ts' | 'go';
if (manager !== 'ts' && manager !== 'go') throw new Error('--manager ts|go is required');
const groupNamed = (name: string) => {
  const found = E2E_GROUPS.find((x) => x.name === name);
  if (!found) throw new Error(`--group: one of ${E2E_GROUPS.map((x) => x.name).join(', ')}, all; not ${name}`);
  return found;
};
// A custom focus runs with the set-up of the group --group names (all groups but SidecarSet's apply
// the e2e config), so a spec of a group can be run again on its own as the group runs it.
const groups =
  values.focus !== undefined
    ? [
        {
          name: 'custom',
          title: 'custom focus',
          focus: values.focus,
          skip: values.skip ?? '',
          timeout: values.timeout ?? '60m',
          e2eConfig: values.group === 'all' || groupNamed(values.group).e2eConfig,
        },
      ]
    : values.group === 'all'
      ? E2E_GROUPS
      : values.group.split(',').map(groupNamed);
const clusterName = values.cluster ?? `e2e${manager}`;
const nodes = Number(values.nodes);
const e2e = ensureKruiseE2E(log);
const commit = (() => {
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'config'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  return dirty ? `${head}+dirty` : head;
})();

// Ctrl-C (or a kill) stops the manager and the cluster too: `kruise start --cluster-name` does not
// name the run dir, so the next run's `down` would not find a manager left behind.
let cleanUp: (() => Promise<void>) | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the manager and the cluster`);
    void (cleanUp?.() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

for (const group of groups) {
  const began = Date.now();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const runDir = path.join(os.homedir(), '.cache', 'kruise-ts', 'upstream-e2e', `${manager}-${group.name}-${stamp}`);
  mkdirSync(runDir, { recursive: true });
  log(`${group.name}: fresh cluster "${clusterName}" (${nodes} nodes), manager ${manager}; files in ${runDir}`);
  await down(clusterName, { quiet: true });
  const { state } = await up({ name: clusterName, nodes });
  let started: StartedManager | undefined;
  cleanUp = async () => {
    await started?.stopManager();
    if (!values['keep-cluster']) await down(clusterName, { quiet: true });
  };
  try {
    await applyE2ESetup(state, e2e.moduleDir, { e2eConfig: group.e2eConfig });
    started = manager === 'go' ? await startGo(state) : await startTs(state, runDir);
    const { managerAlive, managerLog } = started;
    await waitForControllers(state);
    log(`${group.name}: manager ready after ${((Date.now() - began) / 1000).toFixed(0)} s; running the suite`);
    const progress = setInterval(() => {
      const last = tail(path.join(runDir, 'e2e.log'), 200)
        .split('\n')
        .reverse()
        .find((l) => /^\[(apps|policy)\]/.test(l.trim()));
      if (last) log(`… ${last.trim().slice(0, 150)}`);
    }, 60_000);
    const { exitCode: exit, specs: ran } = await runKruiseE2E({
      binary: e2e.binary,
      cluster: state,
      focus: group.focus,
      skip: group.skip,
      timeout: group.timeout,
      dir: runDir,
      echo: values.verbose ? process.stdout : undefined,
    }).finally(() => clearInterval(progress));
    const restarted = !managerAlive();
    const counts = countOf(ran);
    log(
      `${group.name}: suite exit ${exit} after ${((Date.now() - began) / 60000).toFixed(1)} min: ` +
        `${counts.pass} passed, ${counts.fail} failed, ${counts.skip} skipped` +
        (restarted ? `; the manager DIED during the run (${managerLog})` : ''),
    );
    if (!values['no-doc'] && ran.length) {
      const results = loadResults();
      const run = {
        id: `${manager}-${group.name}-${stamp}`,
        manager,
        group: group.name,
        date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
        commit,
        command:
          `./run.sh bench upstream-e2e --manager ${manager} ` +
          (group.name === 'custom' ? `--focus '${group.focus}'` + (group.skip ? ` --skip '${group.skip}'` : '') : `--group ${group.name}`),
        minutes: Math.round((Date.now() - began) / 6000) / 10,
        ...counts,
        managerDied: restarted,
      };
      results.runs = [...results.runs.filter((r) => !(r.manager === manager && r.command === run.command)), run];
      for (const spec of ran) {
        const key = spec.name;
        results.specs[key] = {
          ...results.specs[key],
          group: group.name === 'custom' ? groupOfSpec(key) : group.name,
          [manager]: spec.result,
        };
      }
      saveResults(results);
      log(`${group.name}: results written to ${path.relative(repoRoot, DOC)}`);
    }
  } finally {
    await cleanUp();
    cleanUp = undefined;
  }
}

function countOf(specs: Array<{ result: SpecResult }>) {
  return {
    pass: specs.filter((s) => s.result.status === 'pass').length,
    fail: specs.filter((s) => s.result.status === 'fail').length,
    skip: specs.filter((s) => s.result.status === 'skip').length,
  };
}

/**
 * Waits until the manager's controllers run: readiness (the webhooks serve) comes seconds before
 * them, and the suite's first spec would see a cluster not yet reconciled — the PodProbeMarker spec
 * that lists a NodePodProbe per node failed when it ran first, and "create two jobs to pull a same
 * image" counted 4 NodeImages of 6 in its BeforeEach. Every node's NodePodProbe and NodeImage (their
 * controllers create them at start, under both managers) is the sign.
 */
async function waitForControllers(state: ClusterState): Promise<void> {
  const client = fromKubeconfigFile(state.kubeconfig);
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const nodes = (await client.list(Nodes)).items.length;
      const probes = (await client.list(NodePodProbes)).items.length;
      const images = (await client.list(NodeImages)).items.length;
      if (probes >= nodes && images >= nodes) return;
      if (Date.now() > deadline) {
        log(`the manager created ${probes} NodePodProbes and ${images} NodeImages of ${nodes} within 120 s; running the suite anyway`);
        return;
      }
      await sleep(1000);
    }
  } finally {
    await client.close();
  }
}

interface StartedManager {
  stopManager(): Promise<void>;
  managerAlive(): boolean;
  managerLog: string;
}

async function startGo(state: ClusterState): Promise<StartedManager> {
  const peer = await startUpstreamPeer({ cluster: state.name, featureGates: E2E_FEATURE_GATES });
  const alive = () => {
    try {
      process.kill(peer.pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return { stopManager: peer.stopManager, managerAlive: alive, managerLog: peer.logFile };
}

/**
 * `kruise start` on the cluster as its embedded one (`--cluster-name`): it installs the CRDs and
 * runs the simulated kruise-daemon for the KWOK nodes, as `./run.sh start` does for a user.
 */
async function startTs(state: ClusterState, runDir: string): Promise<StartedManager> {
  const [webhookPort, metricsPort, healthPort] = (await freePorts(3)) as [number, number, number];
  const logFile = path.join(runDir, 'kruise-manager.log');
  const env = { ...process.env };
  delete env.KUBECONFIG;
  const proc = startProcess(
    'kruise-manager',
    process.execPath,
    kruiseArgs(
      'start',
      '--cluster-name',
      state.name,
      '--feature-gates',
      E2E_FEATURE_GATES,
      ...servingFlags(webhookPort, `127.0.0.1:${metricsPort}`, `127.0.0.1:${healthPort}`),
    ),
    logFile,
    env,
  );
  const client = fromKubeconfigFile(state.kubeconfig);
  try {
    const deadline = Date.now() + 300_000;
    for (;;) {
      if (proc.exited) throw new Error(`kruise start exited (${JSON.stringify(proc.exited)}):\n${tail(logFile, 30)}`);
      const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready && (await cloneSetDefaulted(client))) break;
      if (Date.now() > deadline) throw new Error(`Kruise TS not ready within 300 s:\n${tail(logFile, 30)}`);
      await sleep(500);
    }
  } catch (err) {
    // A manager left running would serve the next run's cluster of the same name as well.
    await stopProcesses([proc.pid], 15_000);
    throw err;
  } finally {
    await client.close();
  }
  return { stopManager: () => stopProcesses([proc.pid], 15_000), managerAlive: () => !proc.exited, managerLog: logFile };
}

/**
 * Whether the API server calls the manager's CloneSet defaulting webhook yet (a dry-run create comes
 * back with an update strategy). Not test/harness/webhook-ready.ts's imagePullPolicy probe: with
 * AllAlpha the alpha gate TemplateNoDefaults leaves the pod template undefaulted, as upstream does.
 */
async function cloneSetDefaulted(client: KubeClient): Promise<boolean> {
  return !!(await dryRunCloneSetProbe(client))?.spec.updateStrategy?.type;
}
