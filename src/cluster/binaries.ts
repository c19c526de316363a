// Locates the Go-built control-plane binaries in the cache outside the clone, building them (once
// per version) through hack/build-binaries.sh when they are missing.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const buildScript = path.join(repoRoot, 'hack/build-binaries.sh');

export interface Binaries {
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubectl: string;
  etcd: string;
  kwok: string;
  /** Directory holding kubectl and the other Kubernetes binaries (for PATH). */
  kubernetesDir: string;
}

function parse(out: string): Binaries {
  const dirs = Object.fromEntries(
    out
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.split('=', 2) as [string, string]),
  );
  const k = dirs.kubernetes!;
  return {
    kubeApiserver: path.join(k, 'kube-apiserver'),
    kubeControllerManager: path.join(k, 'kube-controller-manager'),
    kubeScheduler: path.join(k, 'kube-scheduler'),
    kubectl: path.join(k, 'kubectl'),
    etcd: path.join(dirs.etcd!, 'etcd'),
    kwok: path.join(dirs.kwok!, 'kwok'),
    kubernetesDir: k,
  };
}

/** The cached binaries, or null when some are not built yet. */
export function cachedBinaries(): Binaries | null {
  const r = spawnSync('bash', [buildScript, '--print'], { encoding: 'utf8' });
  return r.status === 0 ? parse(r.stdout) : null;
}

/** The binaries, building the missing ones first (progress goes to stderr). */
export async function ensureBinaries(): Promise<Binaries> {
  const cached = cachedBinaries();
  if (cached) return cached;
  process.stderr.write('Building the local control plane from the Go module proxy (first run only; cached in ~/.cache/kruise-ts)\n');
  const child = spawn('bash', [buildScript], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  if (code === 127)
    throw new Error('the Go toolchain is not installed; it is needed once to build kube-apiserver, etcd and kwok (see the message above)');
  if (code !== 0) throw new Error(`building the control-plane binaries failed (exit ${code}); see the build output above`);
  return parse(out);
}

/** OpenKruise's kruise-manager built from hack/kruise-peer, and its module source (CRDs, webhook manifests). */
export interface UpstreamPeer {
  version: string;
  kruiseManager: string;
  /** The read-only module directory in the Go module cache. */
  moduleDir: string;
}

/**
 * The upstream peer of differential tests, building it first when missing (minutes, once per
 * version). Test-only: nothing in the product calls this.
 */
export async function ensureUpstreamPeer(): Promise<UpstreamPeer> {
  let r = spawnSync('bash', [buildScript, '--peer', '--print'], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(
      'Building the upstream kruise-manager peer from the Go module proxy (first run only; cached in ~/.cache/kruise-ts)\n',
    );
    r = spawnSync('bash', [buildScript, '--peer'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status === 127) throw new Error('the Go toolchain is not installed; it is needed once to build the upstream kruise-manager peer');
    if (r.status !== 0) throw new Error(`building the upstream kruise-manager peer failed (exit ${r.status}); see the build output above`);
  }
  const dir = r.stdout.trim().split('=', 2)[1]!;
  const version = path.basename(dir).replace(/^kruise-/, '');
  const dl = spawnSync('go', ['mod', 'download', '-json', `github.com/openkruise/kruise@${version}`], {
    cwd: path.join(repoRoot, 'hack/kruise-peer'),
    encoding: 'utf8',
  });
  if (dl.status !== 0) throw new Error(`go mod download github.com/openkruise/kruise@${version} failed: ${dl.stderr || dl.stdout}`);
  return { version, kruiseManager: path.join(dir, 'kruise-manager'), moduleDir: (JSON.parse(dl.stdout) as { Dir: string }).Dir };
}

/** The kubelet of the control plane's Kubernetes version (real nodes), building it first when missing. */
export function ensureKubelet(log: (line: string) => void): string {
  let r = spawnSync('bash', [buildScript, '--kubelet', '--print'], { encoding: 'utf8' });
  if (r.status !== 0) {
    log('Building the kubelet from the Go module proxy (first real node only; cached in ~/.cache/kruise-ts)');
    r = spawnSync('bash', [buildScript, '--kubelet'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status === 127) throw new Error('the Go toolchain is not installed; it is needed once to build the kubelet for real nodes');
    if (r.status !== 0) throw new Error(`building the kubelet failed (exit ${r.status}); see the build output above`);
  }
  const dir = r.stdout.trim().split('\n').pop()!.split('=', 2)[1]!;
  return path.join(dir, 'kubelet');
}

/** The Helm CLI (charts/kruise-ts: lint, template, install), building it first when missing. */
export function ensureHelm(log: (line: string) => void): string {
  let r = spawnSync('bash', [buildScript, '--helm', '--print'], { encoding: 'utf8' });
  if (r.status !== 0) {
    log('Building helm from the Go module proxy (once; cached in ~/.cache/kruise-ts)');
    r = spawnSync('bash', [buildScript, '--helm'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status === 127) throw new Error('the Go toolchain is not installed; it is needed once to build helm');
    if (r.status !== 0) throw new Error(`building helm failed (exit ${r.status}); see the build output above`);
  }
  const dir = /^helm=(.*)$/m.exec(r.stdout)![1]!;
  return path.join(dir, 'helm');
}

/** OpenKruise's own e2e suite (hack/kruise-e2e) as one test binary, and the module it comes from. */
export interface KruiseE2E {
  version: string;
  /** `go test -c` output: run it with Ginkgo v1 flags (-ginkgo.focus, -ginkgo.reportFile, …). */
  binary: string;
  /** The read-only module directory in the Go module cache (test/kruise-e2e-config.yaml, tools/hack/…). */
  moduleDir: string;
}

/**
 * The upstream e2e suite, building it first when missing (minutes, once per version; the Go build
 * cache makes a rebuild after the peer or the suite itself quick). Test-only: nothing in the product calls this.
 */
export function ensureKruiseE2E(log: (line: string) => void): KruiseE2E {
  let r = spawnSync('bash', [buildScript, '--e2e', '--print'], { encoding: 'utf8' });
  if (r.status !== 0) {
    log("Building OpenKruise's e2e suite from the Go module proxy (first run only; cached in ~/.cache/kruise-ts)");
    r = spawnSync('bash', [buildScript, '--e2e'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status === 127) throw new Error("the Go toolchain is not installed; it is needed once to build OpenKruise's e2e suite");
    if (r.status !== 0) throw new Error(`building OpenKruise's e2e suite failed (exit ${r.status}); see the build output above`);
  }
  const dir = /^e2e=(.*)$/m.exec(r.stdout)![1]!;
  const version = path.basename(dir).replace(/^kruise-e2e-/, '');
  const dl = spawnSync('go', ['mod', 'download', '-json', `github.com/openkruise/kruise@${version}`], {
    cwd: path.join(repoRoot, 'hack/kruise-e2e'),
    encoding: 'utf8',
  });
  if (dl.status !== 0) throw new Error(`go mod download github.com/openkruise/kruise@${version} failed: ${dl.stderr || dl.stdout}`);
  return { version, binary: path.join(dir, 'e2e.test'), moduleDir: (JSON.parse(dl.stdout) as { Dir: string }).Dir };
}
