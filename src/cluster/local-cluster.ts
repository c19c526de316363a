// The embedded local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and the
// KWOK controller with simulated nodes, all on 127.0.0.1, built from upstream sources (see
// hack/build-binaries.sh). It is what `kruise start` runs against when no kubeconfig is given, and
// what the integration tests share.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, writeFileSync, readFileSync, existsSync, rmSync, readdirSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import { createCA, issueCert, generateKeyPairPem } from '../util/pki.ts';
import { ensureBinaries, ensureKubelet, repoRoot, type Binaries } from './binaries.ts';
import {
  MAX_REAL_NODES,
  realNodeAlive,
  realNodesUnavailableReason,
  startRealNodes,
  stopRealNodes,
  type RealNodeState,
} from './real-node.ts';
import { DEFAULT_CLUSTER, DEFAULT_STORAGE_CLASS } from './names.ts';
import { startProcess, stopProcesses, processesMentioning, freePorts, assertPortFree, isAlive, tail, type Started } from './processes.ts';

const execFileP = promisify(execFile);

export { DEFAULT_CLUSTER };
export const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const BASE_COMPONENTS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
  'webhook-proxy',
  'storage-provisioner',
] as const;
/** The further API servers and their load balancer of a cluster up with `apiServers` > 1. */
const HA_COMPONENTS = ['kube-apiserver-2', 'kube-apiserver-3', 'apiserver-lb'] as const;
const COMPONENTS = [...BASE_COMPONENTS, ...HA_COMPONENTS] as const;
export type Component = (typeof COMPONENTS)[number];
/** The API servers, first to last, of a cluster with up to MAX_API_SERVERS. */
const API_SERVERS = ['kube-apiserver', 'kube-apiserver-2', 'kube-apiserver-3'] as const satisfies readonly Component[];
export const MAX_API_SERVERS = API_SERVERS.length;
/**
 * With several API servers, each tells a client to move on (HTTP/2 GOAWAY) after this share of its
 * requests, as production control planes behind a load balancer are run, so clients spread out.
 */
export const HA_GOAWAY_CHANCE = 0.02;

export interface ClusterState {
  name: string;
  runDir: string;
  kubeconfig: string;
  server: string;
  /** `apiserver`: the address clients use (the load balancer's, with several API servers). */
  ports: Record<'etcdClient' | 'etcdPeer' | 'apiserver' | 'controllerManager' | 'scheduler' | 'kwok' | 'webhookProxy', number>;
  /** With several API servers: each one's own port, behind the load balancer at ports.apiserver. */
  apiServerPorts?: number[];
  pids: Partial<Record<Component, number>>;
  /** How each component was started, so one can be restarted alone (restartComponent). */
  commands: Partial<Record<Component, { bin: string; args: string[] }>>;
  nodes: number;
  /** Real kubelet nodes (`--real-nodes`), real-0 … */
  realNodes?: RealNodeState[];
  kubectl: string;
  startedAt: string;
}

export interface UpOptions {
  name?: string;
  nodes?: number;
  /** Real kubelet nodes beside the simulated ones (Linux, root; see real-node.ts). */
  realNodes?: number;
  /** kube-apiserver's port (the load balancer's, with several); a free one when unset. */
  port?: number;
  /**
   * API servers over the one etcd (1–3, default 1). More than one: each on its own port with
   * `--goaway-chance`, behind a TCP load balancer (src/cluster/apiserver-lb.ts) at the cluster's address.
   */
  apiServers?: number;
  /** Extra flags per component, appended to ours (e.g. feature gates for kube-apiserver). */
  extraArgs?: Partial<Record<Component, string[]>>;
  log?: (line: string) => void;
  /** Registers this process as a user of the cluster (until leave()), so no other user tears it down under it. */
  user?: number;
}

export function clustersRoot(): string {
  return process.env.KRUISE_TS_HOME
    ? path.join(process.env.KRUISE_TS_HOME, 'clusters')
    : path.join(os.homedir(), '.cache', 'kruise-ts', 'clusters');
}

/**
 * What every component's command line carries: a path inside the run dir. With the trailing
 * separator, cluster "test" does not claim the processes of cluster "test-embedded".
 */
const runDirMarker = (runDir: string) => runDir + path.sep;

export function runDirOf(name: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name))
    throw new Error(`cluster name "${name}" must be a DNS label (lower-case letters, digits, '-')`);
  return path.join(clustersRoot(), name);
}

function stateFile(runDir: string): string {
  return path.join(runDir, 'state.json');
}

// ---------------------------------------------------------------------------------------------
// Lock and users: `kruise start` brings a cluster up (or reuses it) and, when it started it, tears
// it down on exit. Two starts on one name must not interleave those steps: a start deciding to
// reuse a cluster whose tear-down is under way would find its files gone (ENOENT kubeconfig), and
// a tear-down would stop a cluster another start just took over. Every step runs under a lock file
// beside the run dir (which `up` recreates), and the processes using the cluster are recorded in
// it, so the last one to leave does the tear-down that was asked for.

function lockFile(name: string): string {
  return path.join(clustersRoot(), `${name}.lock`);
}

/** Runs fn holding the cluster's lock; a lock left by a process that is gone is taken over. */
async function withClusterLock<T>(name: string, fn: () => Promise<T>, log: (l: string) => void = () => {}): Promise<T> {
  const file = lockFile(name);
  mkdirSync(clustersRoot(), { recursive: true });
  let waitingFor: number | undefined;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder: number;
    try {
      holder = Number(readFileSync(file, 'utf8').trim());
    } catch {
      continue; // released while we looked
    }
    // 0: the holder has created the file and not yet written its pid.
    if (holder > 0 && !isAlive(holder)) {
      rmSync(file, { force: true });
      continue;
    }
    if (holder > 0 && holder !== waitingFor) {
      waitingFor = holder;
      log(`cluster "${name}": waiting for process ${holder} to finish starting or stopping it`);
    }
    await sleep(100);
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

const usersDir = (runDir: string) => path.join(runDir, 'users');
/** Present when a user that started the cluster left while others still used it. */
const tearDownMarker = (runDir: string) => path.join(runDir, 'tear-down-when-unused');

function addUser(runDir: string, pid: number): void {
  mkdirSync(usersDir(runDir), { recursive: true });
  writeFileSync(path.join(usersDir(runDir), String(pid)), '');
}

/** The users still alive (the records of dead ones are dropped). */
function liveUsers(runDir: string): number[] {
  if (!existsSync(usersDir(runDir))) return [];
  const out: number[] = [];
  for (const entry of readdirSync(usersDir(runDir))) {
    const pid = Number(entry);
    if (pid > 0 && isAlive(pid)) out.push(pid);
    else rmSync(path.join(usersDir(runDir), entry), { force: true });
  }
  return out;
}

/**
 * `pid` stops using the cluster. With tearDown (it started the cluster and nobody asked to keep
 * it), the cluster is torn down once no other user is left: now, or by the last one to leave.
 * Resolves to whether this call tore it down.
 */
export async function leave(name: string, pid: number, opts: { tearDown: boolean; log?: (l: string) => void }): Promise<boolean> {
  const runDir = runDirOf(name);
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  return withClusterLock(
    name,
    async () => {
      rmSync(path.join(usersDir(runDir), String(pid)), { force: true });
      if (!opts.tearDown && !existsSync(tearDownMarker(runDir))) return false;
      const others = liveUsers(runDir);
      if (others.length) {
        writeFileSync(tearDownMarker(runDir), '');
        log(`cluster "${name}": left running for process(es) ${others.join(', ')} still using it; the last to leave stops it`);
        return false;
      }
      await stopCluster(name, {});
      return true;
    },
    log,
  );
}

export function readState(name: string): ClusterState | null {
  const file = stateFile(runDirOf(name));
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  } catch {
    return null;
  }
}

/** GET a path on the API server with the admin credentials of the run dir. */
function apiGet(
  state: Pick<ClusterState, 'runDir' | 'ports'>,
  urlPath: string,
  timeoutMs = 2000,
  /** One API server's own port rather than the cluster's address. */
  port = state.ports.apiserver,
): Promise<{ status: number; body: string }> {
  const pki = path.join(state.runDir, 'pki');
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: 'GET',
        timeout: timeoutMs,
        ca: readFileSync(path.join(pki, 'ca.crt')),
        cert: readFileSync(path.join(pki, 'admin.crt')),
        key: readFileSync(path.join(pki, 'admin.key')),
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** The components a cluster runs: the base ones, and the HA ones it was started with. */
function componentsOf(state: ClusterState | null): Component[] {
  return COMPONENTS.filter((c) => (BASE_COMPONENTS as readonly Component[]).includes(c) || state?.commands[c]);
}

async function healthy(state: ClusterState): Promise<boolean> {
  if (!componentsOf(state).every((c) => state.pids[c] !== undefined && isAlive(state.pids[c]!))) return false;
  if (!(state.realNodes ?? []).every(realNodeAlive)) return false;
  try {
    return (await apiGet(state, '/readyz')).status === 200;
  } catch {
    return false;
  }
}

/**
 * kubectl's discovery and HTTP caches for this cluster (its `--cache-dir`, or KUBECACHEDIR for Go
 * tools that run kubectl's client options). kubectl keys its shared cache (~/.kube/cache) by host
 * and port only, so a cluster started on a port an earlier one had used read that one's API
 * versions for up to 6 hours (a CRD version it does not serve: "the server could not find the
 * requested resource"). The cluster's run directory goes with a fresh start, and the cache with it.
 */
export function kubectlCacheDir(state: Pick<ClusterState, 'kubeconfig'>): string {
  return path.join(path.dirname(state.kubeconfig), 'kubectl-cache');
}

/** kubectl's flags for this cluster: its kubeconfig and its own cache. */
export function kubectlFlags(state: Pick<ClusterState, 'kubeconfig'>): string[] {
  return ['--kubeconfig', state.kubeconfig, '--cache-dir', kubectlCacheDir(state)];
}

export async function kubectl(state: Pick<ClusterState, 'kubectl' | 'kubeconfig'>, args: string[], input?: string): Promise<string> {
  const child = execFileP(state.kubectl, [...kubectlFlags(state), ...args], { maxBuffer: 64 << 20 });
  if (input !== undefined) {
    child.child.stdin!.end(input);
  }
  return (await child).stdout;
}

async function writePki(runDir: string) {
  const dir = path.join(runDir, 'pki');
  mkdirSync(dir, { recursive: true });
  const ca = await createCA('kruise-ts-local-ca');
  const serving = await issueCert(ca, {
    commonName: 'kube-apiserver',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    ipAddresses: ['127.0.0.1', '::1', '10.96.0.1'],
    server: true,
  });
  const admin = await issueCert(ca, { commonName: 'kruise-ts-admin', organizations: ['system:masters'], server: false, client: true });
  const sa = await generateKeyPairPem();
  const files: Record<string, string> = {
    'ca.crt': ca.certPem,
    'ca.key': ca.keyPem,
    'apiserver.crt': serving.certPem,
    'apiserver.key': serving.keyPem,
    'admin.crt': admin.certPem,
    'admin.key': admin.keyPem,
    'sa.key': sa.privateKeyPem,
    'sa.pub': sa.publicKeyPem,
  };
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content, { mode: 0o600 });
  return { ca, admin };
}

function kubeconfigYaml(name: string, server: string, caPem: string, certPem: string, keyPem: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const ctx = `kruise-ts-${name}`;
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': ctx,
    clusters: [{ name: ctx, cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: ctx, user: { 'client-certificate-data': b64(certPem), 'client-key-data': b64(keyPem) } }],
    contexts: [{ name: ctx, context: { cluster: ctx, user: ctx } }],
  });
}

export class ClusterStartError extends Error {}

/**
 * Brings the named cluster up, or reuses it when it is already running and healthy. A stale run dir
 * (processes gone, or some still running from a crash) is cleaned first.
 */
export async function up(opts: UpOptions = {}): Promise<{ state: ClusterState; reused: boolean }> {
  const name = opts.name ?? DEFAULT_CLUSTER;
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  runDirOf(name); // a bad name fails before any lock is taken
  return withClusterLock(
    name,
    async () => {
      const result = await bringUp(name, opts, log);
      if (opts.user !== undefined) addUser(result.state.runDir, opts.user);
      return result;
    },
    log,
  );
}

async function bringUp(name: string, opts: UpOptions, log: (l: string) => void): Promise<{ state: ClusterState; reused: boolean }> {
  const nodes = opts.nodes ?? 3;
  const realNodes = opts.realNodes ?? 0;
  checkRealNodesPossible(realNodes);

  const existing = readState(name);
  if (existing && (await healthy(existing))) {
    await growNodes(existing, nodes, realNodes, log);
    log(`cluster "${name}" is already running (${existing.server}); reusing it`);
    return { state: existing, reused: true };
  }
  const runDir = runDirOf(name);
  if (existing || processesMentioning(runDirMarker(runDir)).length) {
    log(`cluster "${name}": cleaning up a stale run dir (${runDir})`);
    await stopCluster(name, { quiet: true });
  }

  const bins = await ensureBinaries();
  const began = Date.now();
  const apiServers = opts.apiServers ?? 1;
  if (!Number.isInteger(apiServers) || apiServers < 1 || apiServers > MAX_API_SERVERS) {
    throw new ClusterStartError(`1 to ${MAX_API_SERVERS} API servers (asked for ${apiServers})`);
  }
  const state = await prepareRunDir(name, nodes, bins, opts.port, apiServers);
  const start = startupOf(state, opts.extraArgs ?? {});
  try {
    log(`cluster "${name}": starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok in ${runDir}`);
    await startApiServer(state, bins, start);
    log(`cluster "${name}": API server ready after ${((Date.now() - began) / 1000).toFixed(1)}s`);
    startControllers(state, bins, start.launch);
    await ensureNodes(state, nodes, log);
    await waitControllersReady(state, start);
    await growNodes(state, nodes, realNodes, log);
  } catch (err) {
    await stopRealNodes(state);
    await stopProcesses(
      start.started.map((s) => s.pid),
      3000,
    );
    rmSync(stateFile(runDir), { force: true });
    throw err;
  }
  log(
    `cluster "${name}": up in ${((Date.now() - began) / 1000).toFixed(1)}s with ${nodes} nodes` +
      (realNodes ? ` and ${realNodes} real node(s)` : '') +
      `; KUBECONFIG=${state.kubeconfig}`,
  );
  return { state, reused: false };
}

/** Fails before anything starts when real nodes cannot run here (one message naming what is missing). */
function checkRealNodesPossible(realNodes: number): void {
  const problem =
    realNodes > MAX_REAL_NODES
      ? `at most ${MAX_REAL_NODES} real nodes per cluster (asked for ${realNodes})`
      : realNodes
        ? realNodesUnavailableReason()
        : undefined;
  if (problem) throw new ClusterStartError(problem);
}

/** Adds the simulated and real nodes a running cluster lacks (`up` with larger --nodes / --real-nodes). */
async function growNodes(state: ClusterState, nodes: number, realNodes: number, log: (l: string) => void): Promise<void> {
  if (nodes > state.nodes) {
    await ensureNodes(state, nodes, log);
    state.nodes = nodes;
    writeFileSync(stateFile(state.runDir), JSON.stringify(state, null, 2));
  }
  const have = state.realNodes?.length ?? 0;
  if (realNodes <= have) return;
  const kubelet = ensureKubelet(log);
  const added = await startRealNodes(state, kubelet, have, realNodes, log);
  state.realNodes = [...(state.realNodes ?? []), ...added];
  writeFileSync(stateFile(state.runDir), JSON.stringify(state, null, 2));
}

/** A fresh run dir: free ports, PKI, the admin kubeconfig; the state of a cluster with nothing started yet. */
async function prepareRunDir(
  name: string,
  nodes: number,
  bins: Binaries,
  port: number | undefined,
  apiServers: number,
): Promise<ClusterState> {
  const runDir = runDirOf(name);
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(path.join(runDir, 'logs'), { recursive: true });
  if (port !== undefined) await assertPortFree(port, 'kube-apiserver --port');
  const [etcdClient, etcdPeer, apiserverFree, controllerManager, scheduler, kwok, webhookProxy] = await freePorts(7);
  const ports = { etcdClient, etcdPeer, apiserver: port ?? apiserverFree, controllerManager, scheduler, kwok, webhookProxy };
  const apiServerPorts = apiServers > 1 ? await freePorts(apiServers) : undefined;
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const { ca, admin } = await writePki(runDir);
  const kubeconfig = path.join(runDir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml(name, server, ca.certPem, admin.certPem, admin.keyPem), { mode: 0o600 });
  return {
    name,
    runDir,
    kubeconfig,
    server,
    ports,
    ...(apiServerPorts && { apiServerPorts }),
    pids: {},
    commands: {},
    nodes,
    kubectl: bins.kubectl,
    startedAt: new Date().toISOString(),
  };
}

type Launch = (component: Component, bin: string, args: string[]) => Started;

/** How a start-up launches components (recorded in state.json) and waits, failing at once when one exits. */
interface Startup {
  started: Started[];
  launch: Launch;
  waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, component: Component): Promise<void>;
}

function startupOf(state: ClusterState, extraArgs: Partial<Record<Component, string[]>>): Startup {
  const started: Started[] = [];
  const logFile = (component: Component) => path.join(state.runDir, 'logs', `${component}.log`);
  const launch: Launch = (component, bin, args) => {
    const fullArgs = [...args, ...(extraArgs[component] ?? [])];
    const s = startProcess(component, bin, fullArgs, logFile(component));
    started.push(s);
    state.pids[component] = s.pid;
    state.commands[component] = { bin, args: fullArgs };
    writeFileSync(stateFile(state.runDir), JSON.stringify(state, null, 2));
    return s;
  };
  const failIfExited = () => {
    const dead = started.find((s) => s.exited);
    if (dead) {
      throw new ClusterStartError(
        `${dead.name} exited during start-up (code ${dead.exited!.code ?? dead.exited!.signal}); last lines of ${dead.logFile}:\n${tail(dead.logFile, 25)}`,
      );
    }
  };
  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs: number, component: Component) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      failIfExited();
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) {
        throw new ClusterStartError(
          `timed out after ${timeoutMs / 1000}s waiting for ${what}; last lines of ${logFile(component)}:\n${tail(logFile(component), 25)}`,
        );
      }
      await sleep(150);
    }
  };
  return { started, launch, waitFor };
}

async function startApiServer(state: ClusterState, bins: Binaries, start: Startup): Promise<void> {
  launchControlPlane(state, bins, start.launch);
  await start.waitFor('kube-apiserver /readyz', async () => (await apiGet(state, '/readyz')).status === 200, 90_000, 'kube-apiserver');
}

/** Everything that works through the API server: controller-manager, scheduler, KWOK and our two helpers. */
function startControllers(state: ClusterState, bins: Binaries, launch: Launch): void {
  const { runDir, kubeconfig, ports } = state;
  launch('kube-controller-manager', bins.kubeControllerManager, [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.controllerManager}`,
    `--cert-dir=${path.join(runDir, 'kcm-certs')}`,
    `--root-ca-file=${path.join(runDir, 'pki/ca.crt')}`,
    `--service-account-private-key-file=${path.join(runDir, 'pki/sa.key')}`,
    '--use-service-account-credentials=true',
    '--leader-elect=false',
    '--controllers=*',
    '--cluster-name=kruise-ts',
    '--concurrent-gc-syncs=20',
    '--kube-api-qps=200',
    '--kube-api-burst=400',
  ]);
  launch('kube-scheduler', bins.kubeScheduler, [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.scheduler}`,
    '--leader-elect=false',
    `--config=${writeSchedulerConfig(runDir, kubeconfig)}`,
  ]);
  launch('kwok', bins.kwok, [
    `--kubeconfig=${kubeconfig}`,
    `--config=${path.join(repoRoot, 'config/kwok/kwok.yaml')}`,
    `--config=${path.join(repoRoot, 'config/kwok/stages.yaml')}`,
    `--config=${path.join(repoRoot, 'config/kwok/exec.yaml')}`,
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--node-lease-duration-seconds=40',
    '--cidr=10.244.0.0/16',
    // The simulated nodes' kubelet API (exec, config/kwok/exec.yaml) is KWOK's own server: the
    // nodes report it as their address and kubelet port, so the API server dials it (over TLS,
    // KWOK's self-signed certificate; the API server checks no kubelet certificate here).
    '--node-ip=127.0.0.1',
    `--node-port=${ports.kwok}`,
    `--server-address=127.0.0.1:${ports.kwok}`,
  ]);
  // The stable address kruise-manager's webhooks are configured with (src/cluster/webhook-proxy.ts).
  launch('webhook-proxy', process.execPath, [
    '--import',
    tsxLoader,
    path.join(repoRoot, 'src/cluster/webhook-proxy-main.ts'),
    `--kubeconfig=${kubeconfig}`,
    `--port=${ports.webhookProxy}`,
  ]);
  // The default StorageClass and the provisioner that binds its claims (src/cluster/storage.ts).
  launch('storage-provisioner', process.execPath, [
    '--import',
    tsxLoader,
    path.join(repoRoot, 'src/cluster/storage-provisioner-main.ts'),
    `--kubeconfig=${kubeconfig}`,
    `--volume-root=${path.join(runDir, 'volumes')}`,
  ]);
}

async function waitControllersReady(state: ClusterState, start: Startup): Promise<void> {
  await start.waitFor(
    'the default ServiceAccount (kube-controller-manager)',
    async () => (await apiGet(state, '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
    60_000,
    'kube-controller-manager',
  );
  await start.waitFor('kube-scheduler /healthz', () => httpsHealthy(state.ports.scheduler), 60_000, 'kube-scheduler');
  await start.waitFor(
    'the webhook proxy to announce itself',
    async () => (await apiGet(state, '/api/v1/namespaces/kube-public/configmaps/kruise-ts-webhook-proxy')).status === 200,
    60_000,
    'webhook-proxy',
  );
  await start.waitFor(
    `the default StorageClass "${DEFAULT_STORAGE_CLASS}"`,
    async () => (await apiGet(state, `/apis/storage.k8s.io/v1/storageclasses/${DEFAULT_STORAGE_CLASS}`)).status === 200,
    60_000,
    'storage-provisioner',
  );
}

const tsxLoader = path.join(repoRoot, 'node_modules/tsx/dist/esm/index.mjs');

function launchControlPlane(state: ClusterState, bins: Binaries, launch: Launch) {
  const { runDir, ports } = state;
  launch('etcd', bins.etcd, [
    '--name=default',
    `--data-dir=${path.join(runDir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${ports.etcdClient}`,
    `--advertise-client-urls=http://127.0.0.1:${ports.etcdClient}`,
    `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
    `--initial-cluster=default=http://127.0.0.1:${ports.etcdPeer}`,
    // A throwaway local cluster: durability is not worth the fsync latency.
    '--unsafe-no-fsync=true',
    '--quota-backend-bytes=8589934592',
    '--log-level=warn',
  ]);
  const apiServerPorts = state.apiServerPorts ?? [ports.apiserver];
  apiServerPorts.forEach((port, i) => launch(API_SERVERS[i]!, bins.kubeApiserver, apiServerArgs(state, port)));
  if (state.apiServerPorts) {
    const config = path.join(runDir, 'apiserver-lb.json');
    writeFileSync(config, JSON.stringify({ port: ports.apiserver, backends: state.apiServerPorts }));
    launch('apiserver-lb', process.execPath, [
      '--import',
      tsxLoader,
      path.join(repoRoot, 'src/cluster/apiserver-lb-main.ts'),
      `--config=${config}`,
    ]);
  }
}

function apiServerArgs(state: ClusterState, port: number): string[] {
  const { runDir, ports } = state;
  const pki = (f: string) => path.join(runDir, 'pki', f);
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    '--endpoint-reconciler-type=none',
    '--authorization-mode=Node,RBAC',
    `--client-ca-file=${pki('ca.crt')}`,
    `--tls-cert-file=${pki('apiserver.crt')}`,
    `--tls-private-key-file=${pki('apiserver.key')}`,
    `--service-account-key-file=${pki('sa.pub')}`,
    `--service-account-signing-key-file=${pki('sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    '--service-cluster-ip-range=10.96.0.0/16',
    '--allow-privileged=true',
    `--cert-dir=${path.join(runDir, 'apiserver-certs')}`,
    // How the API server authenticates to real nodes' kubelets (logs, exec, port-forward).
    `--kubelet-client-certificate=${pki('admin.crt')}`,
    `--kubelet-client-key=${pki('admin.key')}`,
    // Node names do not resolve here; real nodes report their IP.
    '--kubelet-preferred-address-types=InternalIP,Hostname',
    // No kube-proxy: webhooks and conversion served through a Service (the Helm install) are
    // dialled at a ready endpoint's pod IP, which the host reaches over the real nodes' bridges.
    '--enable-aggregator-routing=true',
    // Raised so benchmarks and 1000-replica tests measure our code, not the default inflight caps.
    '--max-requests-inflight=1600',
    '--max-mutating-requests-inflight=800',
    ...(state.apiServerPorts ? [`--goaway-chance=${HA_GOAWAY_CHANCE}`] : []),
  ];
}

function writeSchedulerConfig(runDir: string, kubeconfig: string): string {
  const file = path.join(runDir, 'scheduler.yaml');
  writeFileSync(
    file,
    YAML.stringify({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      clientConnection: { kubeconfig, qps: 200, burst: 400 },
      leaderElection: { leaderElect: false },
    }),
  );
  return file;
}

function httpsHealthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

export function nodeManifest(i: number) {
  const name = `kwok-node-${i}`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/agent': '',
        type: 'kwok',
        'topology.kubernetes.io/region': 'local',
        'topology.kubernetes.io/zone': ZONES[i % ZONES.length]!,
      },
    },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
    },
  };
}

/** Creates the simulated nodes that are missing (kwok-node-0 … N-1) and waits until all are Ready. */
export async function ensureNodes(state: ClusterState, count: number, log: (l: string) => void): Promise<void> {
  const began = Date.now();
  const list = { apiVersion: 'v1', kind: 'List', items: Array.from({ length: count }, (_, i) => nodeManifest(i)) };
  await kubectl(state, ['apply', '--server-side', '--field-manager=kruise-ts-cluster', '-f', '-'], JSON.stringify(list));
  const deadline = Date.now() + 60_000 + count * 200;
  for (;;) {
    const out = JSON.parse(await kubectl(state, ['get', 'nodes', '-l', 'type=kwok', '-o', 'json']));
    const ready = (out.items as Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>).filter((n) =>
      n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    if (ready >= count) break;
    if (Date.now() > deadline) {
      throw new ClusterStartError(
        `only ${ready}/${count} nodes became Ready; last lines of the kwok log:\n${tail(path.join(state.runDir, 'logs/kwok.log'), 25)}`,
      );
    }
    await sleep(250);
  }
  log(`cluster "${state.name}": ${count} nodes Ready in ${((Date.now() - began) / 1000).toFixed(1)}s`);
}

export const CLUSTER_COMPONENTS: readonly Component[] = COMPONENTS;

export interface RestartOptions {
  /** SIGKILL instead of SIGTERM (a crash rather than a shutdown). */
  signal?: NodeJS.Signals;
  /** How long the component stays down before it starts again (an outage), in ms. */
  downForMs?: number;
  log?: (line: string) => void;
}

/**
 * Stops one component of a running cluster and starts it again with the same command line (for
 * tests of what survives an API server or etcd outage). Resolves once the API server is ready.
 */
export async function restartComponent(name: string, component: Component, opts: RestartOptions = {}): Promise<ClusterState> {
  const log = opts.log ?? (() => {});
  const state = readState(name);
  const command = state?.commands?.[component];
  if (!state || !command) throw new Error(`cluster "${name}" is not running (or was started before restarts were supported)`);
  const pid = state.pids[component];
  if (pid !== undefined && isAlive(pid)) {
    if (opts.signal === 'SIGKILL') process.kill(-pid, 'SIGKILL');
    await stopProcesses([pid]);
  }
  log(`cluster "${name}": ${component} stopped`);
  if (opts.downForMs) await sleep(opts.downForMs);
  const s = startProcess(component, command.bin, command.args, path.join(state.runDir, 'logs', `${component}.log`));
  state.pids[component] = s.pid;
  writeFileSync(stateFile(state.runDir), JSON.stringify(state, null, 2));
  // A restarted API server of several is ready when it is, not when the load balancer's next pick is.
  const apiServer = (API_SERVERS as readonly Component[]).indexOf(component);
  const readyzPort = state.apiServerPorts?.[apiServer] ?? state.ports.apiserver;
  const deadline = Date.now() + 60_000;
  while (
    !(await apiGet(state, '/readyz', 2000, readyzPort).then(
      (r) => r.status === 200,
      () => false,
    ))
  ) {
    if (s.exited) throw new ClusterStartError(`${component} exited after restart; last lines of ${s.logFile}:\n${tail(s.logFile, 25)}`);
    if (Date.now() > deadline) throw new ClusterStartError(`API server not ready 60s after restarting ${component}`);
    await sleep(150);
  }
  log(`cluster "${name}": ${component} running again (pid ${s.pid}); API server ready`);
  return state;
}

interface DownOptions {
  quiet?: boolean;
  /** Remove the logs too (throwaway clusters). */
  purge?: boolean;
}

/** Stops every process of the named cluster (recorded or found by run dir) and removes its state. */
export async function down(name: string, opts: DownOptions = {}): Promise<{ stopped: number }> {
  runDirOf(name);
  return withClusterLock(name, () => stopCluster(name, opts));
}

/** down() for a caller holding the lock. */
async function stopCluster(name: string, opts: DownOptions): Promise<{ stopped: number }> {
  const runDir = runDirOf(name);
  const state = readState(name);
  const mentioning = processesMentioning(runDirMarker(runDir));
  const recorded = Object.values(state?.pids ?? {}).filter((p) => isAlive(p) && mentioning.includes(p));
  const pids = [...new Set([...recorded, ...mentioning])];
  // Real nodes first: their kubelets would restart what is stopped, their containers outlive
  // containerd, and their mounts and interfaces are not processes.
  await stopRealNodes({ name, runDir });
  await stopProcesses(pids.filter(isAlive));
  if (opts.purge) {
    rmSync(runDir, { recursive: true, force: true });
  } else if (existsSync(runDir)) {
    // Keep the logs for a post-mortem; drop data, keys and state.
    for (const entry of readdirSync(runDir)) if (entry !== 'logs') rmSync(path.join(runDir, entry), { recursive: true, force: true });
  }
  if (!opts.quiet) process.stderr.write(`cluster "${name}": stopped ${pids.length} processes\n`);
  return { stopped: pids.length };
}

export interface StatusReport {
  name: string;
  running: boolean;
  server?: string;
  kubeconfig?: string;
  components: Array<{ name: Component; pid?: number; alive: boolean }>;
  apiserverReady: boolean;
  nodesReady?: number;
  realNodes: Array<{ name: string; ip: string; kubeletPort: number; alive: boolean }>;
}

export async function status(name: string): Promise<StatusReport> {
  const state = readState(name);
  const components = componentsOf(state).map((c) => ({
    name: c,
    pid: state?.pids[c],
    alive: state?.pids[c] !== undefined && isAlive(state.pids[c]!),
  }));
  let apiserverReady = false;
  let nodesReady: number | undefined;
  if (state) {
    apiserverReady = await apiGet(state, '/readyz').then(
      (r) => r.status === 200,
      () => false,
    );
    if (apiserverReady) {
      const nodes = JSON.parse((await apiGet(state, '/api/v1/nodes?labelSelector=type%3Dkwok')).body);
      nodesReady = (nodes.items as Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>).filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
    }
  }
  return {
    name,
    running: !!state && apiserverReady && components.every((c) => c.alive) && (state.realNodes ?? []).every(realNodeAlive),
    server: state?.server,
    kubeconfig: state?.kubeconfig,
    components,
    apiserverReady,
    nodesReady,
    realNodes: (state?.realNodes ?? []).map((n) => ({ name: n.name, ip: n.ip, kubeletPort: n.kubeletPort, alive: realNodeAlive(n) })),
  };
}

/** Shell lines that point kubectl (and Helm) at the cluster, with the cluster's own discovery cache. */
export function envLines(state: ClusterState): string[] {
  return [
    `export KUBECONFIG=${state.kubeconfig}`,
    `export KUBECACHEDIR=${kubectlCacheDir(state)}`,
    `export PATH=${path.dirname(state.kubectl)}:$PATH`,
  ];
}
