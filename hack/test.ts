// The whole test suite: `./run.sh test [unit|integration] [file filters...]`.
// `--coverage` adds Node's built-in coverage report of src/ (per file: lines, branches, functions).
// Builds the control-plane binaries if they are missing (cached across runs), then runs node:test
// over the unit and integration tests with one shared local cluster (test/global-setup.ts). When
// something fails it prints the tail of each cluster component's log.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, globSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBinaries, repoRoot } from '../src/cluster/binaries.ts';
import { componentLogs } from '../test/harness/cluster.ts';

const args = process.argv.slice(2).filter((a) => a !== '--coverage');
const coverage = process.argv.includes('--coverage');
const suite = args[0] === 'unit' || args[0] === 'integration' ? args.shift()! : 'all';
const filters = args;

const patterns = suite === 'all' ? ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'] : [`test/${suite}/**/*.test.ts`];
let files = patterns.flatMap((p) => globSync(p, { cwd: repoRoot })).sort();
// apiserver-outage takes 110–160 s on 2 busy cores (a 25 s outage, then the reflectors' backoff and
// the rollout), over the ~90 s a suite file may cost. resourcedistribution-peer starts upstream's
// manager on a cluster of its own to measure what
// test/unit/controllers/resourcedistribution-hash.test.ts holds.
const ON_REQUEST = ['test/integration/apiserver-outage.test.ts', 'test/integration/resourcedistribution-peer.test.ts'];
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
else files = files.filter((f) => !ON_REQUEST.includes(f));
if (!files.length) {
  process.stderr.write(`no test files match ${JSON.stringify(filters)}\n`);
  process.exit(1);
}
// Files that bring up a cluster of their own (real-node: a cluster with a real kubelet; the kubectl
// differential: one cluster switched between the two managers; sharding: a cluster with an audit
// log and four managers; sharding-takeover: the upstream manager's, then two sharded ones) need no
// shared suite cluster when they run alone.
const OWN_CLUSTER = [
  'test/integration/real-node.test.ts',
  'test/integration/kubectl-differential.test.ts',
  'test/integration/sharding.test.ts',
  'test/integration/sharding-takeover.test.ts',
];
const needsCluster = files.some((f) => f.startsWith('test/integration/') && !OWN_CLUSTER.includes(f));

const began = Date.now();
if (needsCluster) await ensureBinaries();
// Tests that run a real containerd (and a local registry) or a real kubelet node need the Debian
// packages of a node runtime on the machine.
if (files.some((f) => f.startsWith('test/integration/') && /containerd|real-node/.test(path.basename(f)))) {
  const install = spawnSync(path.join(repoRoot, 'hack/install-node-runtime.sh'), { stdio: 'inherit' });
  if (install.status !== 0) process.exit(1); // the script said what is missing
}
// The monitoring tests run Prometheus and promtool (Debian's `prometheus` package).
if (files.some((f) => /monitoring/.test(path.basename(f)))) {
  const install = spawnSync(path.join(repoRoot, 'hack/install-prometheus.sh'), { stdio: 'inherit' });
  if (install.status !== 0) process.exit(1); // the script said what is missing
}

// The dashboard's browser test drives Debian's chromium (headless).
if (files.some((f) => f.startsWith('test/integration/') && /dashboard/.test(path.basename(f)))) {
  const install = spawnSync(path.join(repoRoot, 'hack/install-chromium.sh'), { stdio: 'inherit' });
  if (install.status !== 0) process.exit(1); // the script said what is missing
}

// The completion test runs the scripts in real shells; fish is a Debian package. A machine that
// cannot install it still runs the suite: that test then skips, saying fish is missing.
if (files.some((f) => /completion-shells/.test(path.basename(f)))) {
  const install = spawnSync(path.join(repoRoot, 'hack/install-fish.sh'), { stdio: 'inherit' });
  if (install.status !== 0) process.stderr.write('warning: fish could not be installed; the fish completion test will skip\n');
}

// Failures are also collected apart (hack/failures-reporter.ts) and printed last, below the logs.
const failuresDir = mkdtempSync(path.join(os.tmpdir(), 'kruise-ts-failures-'));
const failuresFile = path.join(failuresDir, 'failures.txt');
const nodeArgs = [
  '--import',
  'tsx',
  '--test',
  `--test-concurrency=${process.env.KRUISE_TS_TEST_CONCURRENCY ?? 2}`,
  '--test-timeout=600000',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=./hack/failures-reporter.ts',
  `--test-reporter-destination=${failuresFile}`,
  ...(coverage ? ['--experimental-test-coverage', '--test-coverage-include=src/**'] : []),
  ...(needsCluster ? ['--test-global-setup=test/global-setup.ts'] : []),
  ...files,
];
const child = spawn(process.execPath, nodeArgs, {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { ...process.env, KRUISE_CACHE_MUTATION_DETECTOR: 'true', ...(needsCluster ? {} : { KRUISE_TS_SKIP_CLUSTER: '1' }) },
});
const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
if (code !== 0 && needsCluster) {
  process.stderr.write(`\nSome tests failed. Last lines of the local cluster's component logs:\n${componentLogs()}\n`);
}
const failures = existsSync(failuresFile) ? readFileSync(failuresFile, 'utf8') : '';
rmSync(failuresDir, { recursive: true, force: true });
if (failures) process.stderr.write(`\nFailed tests:\n${failures}`);
process.stderr.write(
  `test run took ${((Date.now() - began) / 1000).toFixed(0)}s (${files.length} files, ${path.basename(process.execPath)} ${process.version})\n`,
);
process.exit(code);
