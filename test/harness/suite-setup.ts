// The integration suite's shared environment, run in its own process by test/global-setup.ts:
//   suite-setup.ts up       → starts (or reuses) the test cluster, installs the CRDs, starts one
//                             Kruise TS manager and one simulated kruise-daemon (serving every KWOK
//                             node) against it, and prints {startedCluster, managerPid, daemonPid}
//   suite-setup.ts down <startedCluster> <managerPid> [daemonPid]
// The manager and the daemon are detached processes logging to the cluster's
// logs/kruise-manager.log and logs/kruise-daemon.log.
import { findWebhookProxy, formatHostPort } from '../../src/runtime/webhook/endpoint.ts';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, readState } from '../../src/cluster/local-cluster.ts';
import { freePorts, processesMentioning, startProcess, stopProcesses, tail } from '../../src/cluster/processes.ts';
import { fromKubeconfigFile } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { CustomResourceDefinitions, ValidatingWebhookConfigurations } from '../../src/runtime/resources.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { SUITE_API_VERSIONS, SUITE_FEATURE_GATES, TEST_CLUSTER, suiteManagerMetricsFile } from './cluster.ts';
import { simulatedDaemonPids, startSimulatedDaemon } from './simulated-daemon.ts';
import { defaultedByWebhook } from './webhook-ready.ts';
import { KRUISE_CLI, kruiseArgs, servingFlags } from './kruise-cli.ts';

const MANAGER_MARKER = KRUISE_CLI;

async function setUp(): Promise<{ startedCluster: boolean; managerPid: number; daemonPid: number }> {
  const { state, reused } = await up({ name: TEST_CLUSTER, nodes: 3 });
  // A manager left behind by an interrupted run would hold the lease, a daemon would act twice:
  // stop them first.
  const stale = processesMentioning(state.kubeconfig).filter((pid) => processesMentioning(MANAGER_MARKER).includes(pid));
  await stopProcesses([...stale, ...simulatedDaemonPids(state.kubeconfig)], 5000);

  const client = fromKubeconfigFile(state.kubeconfig);
  try {
    await installCRDs(client, { set: SUITE_API_VERSIONS });
    const logFile = path.join(state.runDir, 'logs', 'kruise-manager.log');
    const [webhookPort, metricsPort] = await freePorts(2);
    // Where the suite's manager serves /metrics, for the tests that scrape it (monitoring.test.ts).
    writeFileSync(suiteManagerMetricsFile(state.runDir), `127.0.0.1:${metricsPort}`);
    const manager = startProcess(
      'kruise-manager',
      process.execPath,
      kruiseArgs(
        'start',
        '--kubeconfig',
        state.kubeconfig,
        ...servingFlags(webhookPort, `127.0.0.1:${metricsPort}`),
        '--feature-gates',
        SUITE_FEATURE_GATES,
        '--api-versions',
        SUITE_API_VERSIONS,
      ),
      logFile,
      { ...process.env, KRUISE_LOG_LEVEL: process.env.KRUISE_LOG_LEVEL ?? 'info' },
    );

    // Ready when this manager leads and has pointed the webhook configuration and CRD conversion at
    // the cluster's webhook proxy, or without one at its own port (a configuration left by an
    // earlier manager names another port), and the API server's webhook calls reach it.
    const proxy = await findWebhookProxy(client);
    const base = `https://${proxy ? formatHostPort(proxy) : `127.0.0.1:${webhookPort}`}/`;
    const ours = (url?: string) => !!url?.startsWith(base);
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (manager.exited)
        throw new Error(
          `the kruise manager exited (${JSON.stringify(manager.exited)}) during test setup; last lines of ${logFile}:\n${tail(logFile, 30)}`,
        );
      const ready = await Promise.all([
        client.get<KubeObject & { webhooks?: Array<{ clientConfig?: { url?: string; caBundle?: string } }> }>(
          ValidatingWebhookConfigurations,
          'kruise-validating-webhook-configuration',
        ),
        client.get<KubeObject & { spec: { conversion?: { webhook?: { clientConfig?: { url?: string } } } } }>(
          CustomResourceDefinitions,
          'clonesets.apps.kruise.io',
        ),
      ]).then(
        ([vwc, crd]) =>
          !!vwc.webhooks?.[0]?.clientConfig?.caBundle &&
          ours(vwc.webhooks[0].clientConfig.url) &&
          ours(crd.spec.conversion?.webhook?.clientConfig?.url),
        () => false,
      );
      if (ready && (await defaultedByWebhook(client))) break;
      if (Date.now() > deadline) {
        await stopProcesses([manager.pid], 2000);
        throw new Error(`the kruise manager did not become ready within 90s; last lines of ${logFile}:\n${tail(logFile, 30)}`);
      }
      await sleep(250);
    }
    const daemon = await startSimulatedDaemon(state.kubeconfig, path.join(state.runDir, 'logs', 'kruise-daemon.log'));
    return { startedCluster: !reused, managerPid: manager.pid, daemonPid: daemon };
  } finally {
    await client.close();
  }
}

async function tearDown(startedCluster: boolean, managerPid: number, daemonPid: number): Promise<void> {
  const kubeconfig = readState(TEST_CLUSTER)?.kubeconfig;
  await stopProcesses([...new Set([...(daemonPid ? [daemonPid] : []), ...(kubeconfig ? simulatedDaemonPids(kubeconfig) : [])])], 10_000);
  if (managerPid) await stopProcesses([managerPid], 10_000);
  if (startedCluster && process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(TEST_CLUSTER, { quiet: true });
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === 'up') process.stdout.write(JSON.stringify(await setUp()) + '\n');
  else if (command === 'down') await tearDown(rest[0] === 'true', Number(rest[1] ?? 0), Number(rest[2] ?? 0));
  else throw new Error(`usage: suite-setup.ts up | down <startedCluster> <managerPid> [daemonPid]`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
