// Integration-test access to the shared local cluster (started by test/global-setup.ts): kubectl,
// per-test namespaces, and polling with a useful failure message.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readState, runDirOf, kubectl as clusterKubectl, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { tail } from '../../src/cluster/processes.ts';

export const TEST_CLUSTER = process.env.KRUISE_TS_TEST_CLUSTER ?? 'test';

// The node-side features, ResourceDistribution, the PodUnavailableBudget update gate, deletion
// protection and PodProbeMarker on serverless are off by default upstream; the suite exercises them, so its manager runs with them on (KRUISE_TS_TEST_FEATURE_GATES replaces the list). With
// ResourceDistributionGate off, ResourceDistributions are refused (403) as upstream does.
export const SUITE_FEATURE_GATES =
  process.env.KRUISE_TS_TEST_FEATURE_GATES ??
  'ImagePullJobGate=true,SidecarTerminator=true,ResourceDistributionGate=true,PodUnavailableBudgetUpdateGate=true,ResourcesDeletionProtection=true,EnablePodProbeMarkerOnServerless=true';

// The shared cluster serves the v1beta1 API versions (an explicit choice, `--api-versions v1beta1`): its
// tests exercise both versions and the conversion webhook. The default, OpenKruise v1.8.2's versions,
// is what every cluster of its own gets (OwnCluster, the drop-in and e2e clusters; api-versions.test.ts).
export const SUITE_API_VERSIONS = 'v1beta1';

export function testCluster(): ClusterState {
  const state = readState(TEST_CLUSTER);
  if (!state) {
    throw new Error(
      `the test cluster "${TEST_CLUSTER}" is not running: run the suite with ./run.sh test (its global setup starts it), or start it with ./run.sh cluster up --name ${TEST_CLUSTER}`,
    );
  }
  return state;
}

/** The file in which the suite setup records where its manager serves /metrics. */
export const suiteManagerMetricsFile = (runDir: string): string => path.join(runDir, 'kruise-manager-metrics-addr');

/** `host:port` of the suite manager's metrics endpoint. */
export function suiteManagerMetricsAddr(): string {
  return readFileSync(suiteManagerMetricsFile(testCluster().runDir), 'utf8').trim();
}

export function kubectl(args: string[], input?: string): Promise<string> {
  return clusterKubectl(testCluster(), args, input);
}

export async function kubectlJson<T = any>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
}

export async function apply(manifest: object | string, namespace?: string): Promise<void> {
  const input = typeof manifest === 'string' ? manifest : JSON.stringify(manifest);
  await kubectl([...(namespace ? ['-n', namespace] : []), 'apply', '-f', '-'], input);
}

/** Polls check until it returns a truthy value; on timeout fails with what and the last observation. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err instanceof Error ? err.message : err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what} (last: ${JSON.stringify(last)})`);
    await sleep(intervalMs);
  }
}

/** A fresh namespace, ready for pods (its default ServiceAccount exists). Pair with deleteNamespace. */
export async function createNamespace(prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`.toLowerCase();
  await kubectl(['create', 'namespace', name]);
  await waitFor(`default ServiceAccount in ${name}`, () => kubectl(['-n', name, 'get', 'serviceaccount', 'default', '-o', 'name']));
  return name;
}

export async function deleteNamespace(name: string): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--wait=false']).catch(() => undefined);
}

/** The last lines of each component's log, for a failing test to print: the manager's warnings
 * and errors (its info lines at shutdown say nothing), a few lines of the others. */
export function componentLogs(lines = 8): string {
  const logs = path.join(runDirOf(TEST_CLUSTER), 'logs');
  const parts = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'].map(
    (c) => `--- ${c} ---\n${tail(path.join(logs, `${c}.log`), lines)}`,
  );
  const managerProblems = tail(path.join(logs, 'kruise-manager.log'), 5 * lines, (l) => /"level":"(warn|error|fatal)"/.test(l));
  return [...parts, `--- kruise-manager (warnings and errors) ---\n${managerProblems}`].join('\n');
}
