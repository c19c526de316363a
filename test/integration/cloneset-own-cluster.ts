// For CloneSet tests that need a cluster and a manager of their own (feature gates, SIGKILLs): the
// suite's shared manager would otherwise reconcile beside ours, or run the wrong gates. The
// manager is a child process (`kruise start`) we can kill and restart.
import path from 'node:path';
import { up, down, kubectl as clusterKubectl, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { isAlive, startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { APIVersionSet } from '../../src/apis/registry.ts';
import { SUITE_API_VERSIONS, waitFor } from '../harness/cluster.ts';
import { defaultedByWebhook } from '../harness/webhook-ready.ts';
import { startSimulatedDaemon } from '../harness/simulated-daemon.ts';
import { kruiseArgs, servingFlags } from '../harness/kruise-cli.ts';

export class OwnCluster {
  state!: ClusterState;
  client!: KubeClient;
  manager: Started | undefined;
  private daemonPid: number | undefined;
  private startedCluster = false;

  /**
   * `apiVersions`: the CRDs installed and the manager's `--api-versions`; the suite's (v1beta1) unless
   * a test is about the default, OpenKruise v1.8.2's.
   */
  constructor(
    readonly name: string,
    private readonly nodes: number,
    readonly managerArgs: string[] = [],
    readonly apiVersions: APIVersionSet = SUITE_API_VERSIONS,
  ) {}

  async up(): Promise<void> {
    const r = await up({ name: this.name, nodes: this.nodes, log: () => undefined });
    this.state = r.state;
    this.startedCluster = !r.reused;
    this.client = fromKubeconfigFile(this.state.kubeconfig, { qps: 500, burst: 1000 });
    await installCRDs(this.client, { set: this.apiVersions });
  }

  kubectl(args: string[], input?: string): Promise<string> {
    return clusterKubectl(this.state, args, input);
  }

  /** Starts the manager and waits until the API server reaches its CloneSet webhooks. */
  async startManager(): Promise<Started> {
    const logFile = path.join(this.state.runDir, 'logs', 'kruise-manager.log');
    const m = startProcess(
      'kruise-manager',
      process.execPath,
      kruiseArgs(
        'start',
        '--kubeconfig',
        this.state.kubeconfig,
        '--enable-leader-election=false',
        '--api-versions',
        this.apiVersions,
        ...servingFlags(0, '0', '0'),
        ...this.managerArgs,
      ),
      logFile,
      { ...process.env, KRUISE_LOG_LEVEL: 'info' },
    );
    this.manager = m;
    await waitFor(
      'the manager to serve the CloneSet webhooks',
      async () => {
        if (m.exited) throw new Error(`manager exited: ${tail(m.logFile, 20)}`);
        return defaultedByWebhook(this.client);
      },
      60_000,
      250,
    );
    return m;
  }

  /** A simulated kruise-daemon for the cluster's KWOK nodes (launch-priority barriers, CRRs…). */
  async startDaemon(): Promise<void> {
    this.daemonPid = await startSimulatedDaemon(this.state.kubeconfig, path.join(this.state.runDir, 'logs', 'kruise-daemon.log'));
  }

  async killManager(): Promise<void> {
    const m = this.manager;
    if (!m) return;
    process.kill(-m.pid, 'SIGKILL');
    await waitFor('the manager to die', async () => !isAlive(m.pid) || m.exited !== undefined, 5000, 20);
    this.manager = undefined;
  }

  async down(): Promise<void> {
    if (this.manager && isAlive(this.manager.pid)) await stopProcesses([this.manager.pid], 5000);
    if (this.daemonPid && isAlive(this.daemonPid)) await stopProcesses([this.daemonPid], 5000);
    await this.client?.close();
    if (this.startedCluster && process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(this.name, { quiet: true });
  }
}
