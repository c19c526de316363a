// `kruise daemon --simulated` for a test cluster: the suite's shared one (suite-setup.ts) and the
// clusters tests bring up themselves (OwnCluster). The simulated runtime holds containers at their
// launch-priority barrier until the key exists, so a cluster whose pods use launch priority needs it.
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts, processesMentioning, startProcess, stopProcesses, tail } from '../../src/cluster/processes.ts';
import { kruiseArgs } from './kruise-cli.ts';

const SUITE_DAEMON_FEATURE_GATES = process.env.KRUISE_TS_TEST_DAEMON_FEATURE_GATES ?? '';

/**
 * Starts `kruise daemon --simulated` and waits until its /healthz answers (caches synced).
 * `featureGates` replaces the suite's (KRUISE_TS_TEST_DAEMON_FEATURE_GATES); `KruiseDaemon=false`
 * leaves only the kubelet's part (the launch barrier).
 */
export async function startSimulatedDaemon(
  kubeconfig: string,
  logFile: string,
  featureGates = SUITE_DAEMON_FEATURE_GATES,
): Promise<number> {
  const [port] = await freePorts(1);
  const daemon = startProcess(
    'kruise-daemon',
    process.execPath,
    kruiseArgs('daemon', '--simulated', '--kubeconfig', kubeconfig, '--addr', `127.0.0.1:${port}`, '--feature-gates', featureGates),
    logFile,
    { ...process.env, KRUISE_LOG_LEVEL: process.env.KRUISE_LOG_LEVEL ?? 'info' },
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (daemon.exited)
      throw new Error(
        `the kruise daemon exited (${JSON.stringify(daemon.exited)}) during test setup; last lines of ${logFile}:\n${tail(logFile, 30)}`,
      );
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return daemon.pid;
    if (Date.now() > deadline) {
      await stopProcesses([daemon.pid], 2000);
      throw new Error(`the kruise daemon did not become healthy within 60s; last lines of ${logFile}:\n${tail(logFile, 30)}`);
    }
    await sleep(250);
  }
}

/** Simulated daemons of this cluster: the suite's, and any a test restarted in its place. */
export function simulatedDaemonPids(kubeconfig: string): number[] {
  const daemons = processesMentioning('--simulated');
  return processesMentioning(kubeconfig).filter((pid) => daemons.includes(pid));
}
