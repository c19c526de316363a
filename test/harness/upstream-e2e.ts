// Running OpenKruise v1.8.2's own e2e suite (hack/kruise-e2e, `hack/build-binaries.sh --e2e`) against
// a local cluster: upstream's e2e set-up and one run of the suite's binary with a Ginkgo focus,
// reporting per spec through Ginkgo v1's JUnit report. Used by bench/upstream-e2e.ts (whole groups,
// either manager) and test/integration/upstream-e2e-smoke.test.ts (a CI-sized focus). Test-only.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { LOCAL_VOLUME_PROVISIONER } from '../../src/cluster/names.ts';
import { kubectl, kubectlCacheDir, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { lastAttempts, parseJUnit, selected, type E2EGroup, type SpecResult } from './upstream-e2e-report.ts';

/** Upstream's e2e feature gates (its CI's config/manager and tools/hack/run-kruise-e2e-test.sh). */
export const E2E_FEATURE_GATES = 'AllAlpha=true,AllBeta=true,EnableExternalCerts=false';

/**
 * What upstream's CI installs beside the manager: the kruise-system namespace, the module's
 * test/kruise-e2e-config.yaml (the custom-workload whitelist ConfigMap and an RBAC binding) for
 * the groups that have it (`e2eConfig`), and
 * the StorageClasses of tools/hack/csi-driver-host-path that the Advanced StatefulSet storage
 * specs name, served here by the local cluster's provisioner instead of the CSI hostpath driver.
 */
export async function applyE2ESetup(
  state: Pick<ClusterState, 'kubectl' | 'kubeconfig'>,
  moduleDir: string,
  opts: Pick<E2EGroup, 'e2eConfig'>,
): Promise<void> {
  await kubectl(state, ['create', 'namespace', 'kruise-system']).catch((e: Error) => {
    if (!/AlreadyExists/.test(e.message)) throw e;
  });
  if (opts.e2eConfig) await kubectl(state, ['apply', '-f', path.join(moduleDir, 'test/kruise-e2e-config.yaml')]);
  const classes = ['allow-expansion-sc.yaml', 'disallow-expansion-sc.yaml'].map((f) => {
    const sc = YAML.parse(readFileSync(path.join(moduleDir, 'tools/hack/csi-driver-host-path', f), 'utf8')) as { provisioner: string };
    return { ...sc, provisioner: LOCAL_VOLUME_PROVISIONER };
  });
  await kubectl(state, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: classes }));
}

export interface SuiteRun {
  /** The go test binary built by hack/build-binaries.sh --e2e. */
  binary: string;
  cluster: Pick<ClusterState, 'kubectl' | 'kubeconfig'>;
  focus: string;
  skip?: string;
  /** go test -timeout, e.g. "60m". */
  timeout: string;
  /** Runs a failing spec up to this many times before it counts as failed (Ginkgo's flakeAttempts). */
  flakeAttempts?: number;
  /** Where the JUnit report and the suite's output go. */
  dir: string;
  /** Also copy the suite's output here (e.g. process.stdout). */
  echo?: NodeJS.WritableStream;
}

export interface SuiteResult {
  exitCode: number;
  /** The specs of the focus (the report also lists every other spec, as skipped). */
  specs: Array<{ name: string; result: SpecResult }>;
  /** Specs that failed an attempt before passing (only with flakeAttempts). */
  flaked: string[];
  logFile: string;
}

/** One run of the suite's binary on a focus (specs in random order, one at a time). */
export async function runKruiseE2E(run: SuiteRun): Promise<SuiteResult> {
  const junit = path.join(run.dir, 'junit.xml');
  const logFile = path.join(run.dir, 'e2e.log');
  const args = [
    `-test.timeout=${run.timeout}`,
    '-ginkgo.v',
    '-ginkgo.noColor',
    `-ginkgo.reportFile=${junit}`,
    `-ginkgo.focus=${run.focus}`,
    ...(run.skip ? [`-ginkgo.skip=${run.skip}`] : []),
    ...(run.flakeAttempts ? [`-ginkgo.flakeAttempts=${run.flakeAttempts}`] : []),
  ];
  const out = createWriteStream(logFile);
  const child = spawn(run.binary, args, {
    cwd: run.dir,
    // The framework runs kubectl from PATH for a few specs.
    env: {
      ...process.env,
      KUBECONFIG: run.cluster.kubeconfig,
      KUBECACHEDIR: kubectlCacheDir(run.cluster),
      PATH: `${path.dirname(run.cluster.kubectl)}:${process.env.PATH}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.pipe(out, { end: false });
    if (run.echo) stream.pipe(run.echo, { end: false });
  }
  const exitCode: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  await new Promise((resolve) => out.end(resolve));
  const { specs, flaked } = lastAttempts(existsSync(junit) ? parseJUnit(readFileSync(junit, 'utf8')) : []);
  const inFocus = (name: string) => selected(name, { focus: run.focus, skip: run.skip ?? '' });
  return { exitCode, specs: specs.filter((s) => inFocus(s.name)), flaked: flaked.filter(inFocus), logFile };
}
