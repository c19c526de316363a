// Real nodes beside the KWOK ones: a kubelet (built from the same k8s.io/kubernetes module as the
// control plane) per node, each with a containerd of its own (private root/state/socket), a CNI
// bridge, a node IP on an interface of the cluster's own (never loopback), a `system:node:<name>` client
// certificate and the locally built busybox/pause images imported (no registry is reachable).
// Linux and root only. Everything lives under <run dir>/nodes/<name>/, so `down` finds the
// processes by that path; interfaces are named after the cluster, so `down` finds them too.
// See docs/local-cluster.md#real-nodes for every setting and why it is there.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import { issueCert, loadCA } from '../util/pki.ts';
import { repoRoot } from './binaries.ts';
import {
  cachedImageLayout,
  commandPath,
  importImages,
  LOCAL_IMAGES,
  overlaySupported,
  unmountUnder,
  writeContainerdConfig,
} from './node-runtime.ts';
import { freePorts, isAlive, processesMentioning, startProcess, stopProcesses, tail, type Started } from './processes.ts';

/** At most this many real nodes per cluster: each takes a /26 of the cluster's pod range. */
export const MAX_REAL_NODES = 4;
const CNI_PLUGIN_DIR = '/usr/lib/cni';
const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'];

/** command → the Debian package providing it. */
const REQUIRED_COMMANDS: Record<string, string> = {
  containerd: 'containerd',
  'containerd-shim-runc-v2': 'containerd',
  ctr: 'containerd',
  runc: 'runc',
  skopeo: 'skopeo',
  umoci: 'umoci',
  busybox: 'busybox-static',
  ip: 'iproute2',
  iptables: 'iptables',
  mount: 'mount',
};

export interface RealNodeState {
  name: string;
  /** Its address on the cluster's node-IP interface: what the API server dials the kubelet at. */
  ip: string;
  /** The CNI bridge's pod subnet. */
  podCidr: string;
  bridge: string;
  dir: string;
  /** containerd's socket path (the CRI endpoint is unix://<socket>). */
  socket: string;
  snapshotter: string;
  kubeletPort: number;
  pids: { containerd?: number; kubelet?: number };
}

/** What the cluster knows about itself that real nodes need. */
export interface ClusterRef {
  name: string;
  runDir: string;
  server: string;
  kubeconfig: string;
  kubectl: string;
}

/** Why real nodes cannot run here (one message naming everything missing), or undefined when they can. */
export function realNodesUnavailableReason(): string | undefined {
  const problems: string[] = [];
  if (process.platform !== 'linux') return `real nodes need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) problems.push('root (containerd, runc, mounts and network interfaces)');
  const packages = new Set<string>();
  for (const [cmd, pkg] of Object.entries(REQUIRED_COMMANDS)) if (!onPath(cmd)) packages.add(pkg);
  if (onPath('busybox') && !isStatic(commandPath('busybox'))) packages.add('busybox-static');
  if (CNI_PLUGINS.some((p) => !existsSync(path.join(CNI_PLUGIN_DIR, p)))) packages.add('containernetworking-plugins');
  if (packages.size) problems.push(`the Debian packages ${[...packages].sort().join(', ')} (hack/install-node-runtime.sh installs them)`);
  return problems.length ? `real nodes need ${problems.join('; ')}` : undefined;
}

/** The cluster's address slot (0–255): its node IPs and pod subnets derive from it. */
function slotOf(cluster: string): number {
  return createHash('sha256').update(cluster).digest()[0]!;
}

function idOf(cluster: string): string {
  return createHash('sha256').update(cluster).digest('hex').slice(0, 8);
}

/** The `kubernetes` Service: the first address of the API server's --service-cluster-ip-range. */
export const KUBERNETES_SERVICE = { ip: '10.96.0.1', port: 443 } as const;

/** Every pod address of the cluster's real nodes (each node takes a /26 of it). */
export const realPodRangeOf = (cluster: string) => `10.246.${slotOf(cluster)}.0/24`;

/** The interface carrying the cluster's node IPs (names are at most 15 characters). */
export const nodeIpInterfaceOf = (cluster: string) => `ktn${idOf(cluster)}`;
const bridgeOf = (cluster: string, index: number) => `ktb${idOf(cluster)}${index}`;
export const realNodeName = (index: number) => `real-${index}`;

/** The addresses of real node `index` of a cluster. */
export function realNodeAddresses(cluster: string, index: number): { ip: string; podCidr: string; gateway: string } {
  const slot = slotOf(cluster);
  return {
    ip: `10.245.${slot}.${index + 1}`,
    podCidr: `10.246.${slot}.${index * 64}/26`,
    gateway: `10.246.${slot}.${index * 64 + 1}`,
  };
}

/**
 * Starts real nodes `from` … `to - 1` of a running cluster and waits until they are Ready. The
 * returned states are recorded in the cluster's state.json by the caller.
 */
export async function startRealNodes(
  cluster: ClusterRef,
  kubelet: string,
  from: number,
  to: number,
  log: (line: string) => void,
): Promise<RealNodeState[]> {
  if (to > MAX_REAL_NODES) throw new Error(`at most ${MAX_REAL_NODES} real nodes per cluster (asked for ${to})`);
  const reason = realNodesUnavailableReason();
  if (reason) throw new Error(reason);
  const began = Date.now();
  const layout = cachedImageLayout(log);
  ensureNodeIpInterface(cluster.name);
  ensureKubernetesServiceRoute(cluster);
  const nodes: RealNodeState[] = [];
  const started: Started[] = [];
  try {
    for (let i = from; i < to; i++) nodes.push(await startRealNode(cluster, kubelet, layout, i, started));
    for (const node of nodes) await waitNodeReady(cluster, node, started);
  } catch (err) {
    await stopProcesses(
      started.map((s) => s.pid),
      5000,
    );
    throw err;
  }
  log(`cluster "${cluster.name}": ${nodes.length} real node(s) Ready in ${((Date.now() - began) / 1000).toFixed(1)}s`);
  return nodes;
}

/**
 * In-cluster clients (client-go's, ours) dial the `kubernetes` Service at $KUBERNETES_SERVICE_HOST.
 * With no kube-proxy, one NAT rule does its job for the cluster's pods: connections from the real
 * nodes' pod range to 10.96.0.1:443 go to the API server on 127.0.0.1 (its serving certificate
 * already names 10.96.0.1). Scoped by source range, so several clusters' rules coexist; reaching a
 * loopback address from a bridge needs route_localnet on the pod bridges (see ensurePodBridge).
 */
function ensureKubernetesServiceRoute(cluster: ClusterRef): void {
  const rule = kubernetesServiceRule(cluster.name, Number(new URL(cluster.server).port));
  if (spawnSync('iptables', ['-t', 'nat', '-C', 'PREROUTING', ...rule], { stdio: 'ignore' }).status !== 0)
    sh('iptables', ['-t', 'nat', '-A', 'PREROUTING', ...rule]);
}

function kubernetesServiceRule(cluster: string, apiserverPort: number): string[] {
  return [
    '-s',
    realPodRangeOf(cluster),
    '-d',
    `${KUBERNETES_SERVICE.ip}/32`,
    '-p',
    'tcp',
    '--dport',
    String(KUBERNETES_SERVICE.port),
    '-m',
    'comment',
    '--comment',
    serviceRuleComment(cluster),
    '-j',
    'DNAT',
    '--to-destination',
    `127.0.0.1:${apiserverPort}`,
  ];
}

const serviceRuleComment = (cluster: string) => `kruise-ts:${cluster}`;

/** Deletes the cluster's NAT rules, found by their comment (so also after a crash lost the port). */
function removeKubernetesServiceRoute(cluster: string): void {
  const listed = spawnSync('iptables', ['-t', 'nat', '-S', 'PREROUTING'], { encoding: 'utf8' });
  if (listed.status !== 0) return;
  const comment = serviceRuleComment(cluster);
  for (const line of listed.stdout.split('\n')) {
    const args = line.split(/\s+/).map((a) => a.replace(/^"|"$/g, ''));
    if (args[0] !== '-A' || !args.includes(comment)) continue;
    spawnSync('iptables', ['-t', 'nat', '-D', ...args.slice(1)], { stdio: 'ignore' });
  }
}

/**
 * The node's pod bridge, made before CNI's bridge plugin (which adopts an existing bridge of its
 * name) so that route_localnet can be set on it: the kernel otherwise drops packets from the pods
 * that the `kubernetes` Service rule sends to 127.0.0.1.
 */
function ensurePodBridge(bridge: string): void {
  if (spawnSync('ip', ['link', 'show', bridge], { stdio: 'ignore' }).status !== 0) sh('ip', ['link', 'add', bridge, 'type', 'bridge']);
  writeFileSync(`/proc/sys/net/ipv4/conf/${bridge}/route_localnet`, '1');
  sh('ip', ['link', 'set', bridge, 'up']);
}

function ensureNodeIpInterface(cluster: string): void {
  const iface = nodeIpInterfaceOf(cluster);
  if (spawnSync('ip', ['link', 'show', iface], { stdio: 'ignore' }).status !== 0) {
    // An empty bridge rather than a `dummy` link: this VM kind's kernel has no dummy module, and the
    // bridge module is there (CNI needs it anyway).
    sh('ip', ['link', 'add', iface, 'type', 'bridge']);
  }
  sh('ip', ['link', 'set', iface, 'up']);
}

/** Where the cgroup v1 controllers are mounted (`/sys/fs/cgroup/<controller>`). */
const CGROUP_MOUNTS = '/sys/fs/cgroup';
const cgroupParentOf = (cluster: string) => `/kruise-ts/${cluster}`;

/**
 * The node's cgroup root, `/kruise-ts/<cluster>/<node>`, made in every cgroup v1 hierarchy (the
 * kubelet requires it to exist); cpuset's cpus and mems are copied down each new level, as a
 * cpuset cgroup without them takes no task.
 */
function ensureCgroupRoot(cluster: string, node: string): string {
  const root = `${cgroupParentOf(cluster)}/${node}`;
  for (const controller of cgroupControllers()) {
    let dir = path.join(CGROUP_MOUNTS, controller);
    for (const level of root.split('/').filter(Boolean)) {
      const parent = dir;
      dir = path.join(dir, level);
      if (existsSync(dir)) continue;
      mkdirSync(dir);
      if (controller === 'cpuset')
        for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(path.join(dir, f), readFileSync(path.join(parent, f), 'utf8'));
    }
  }
  return root;
}

/** The mounted cgroup v1 hierarchies (not the unified v2 one). */
function cgroupControllers(): string[] {
  return existsSync(CGROUP_MOUNTS)
    ? readdirSync(CGROUP_MOUNTS).filter((c) => c !== 'unified' && existsSync(path.join(CGROUP_MOUNTS, c, 'cgroup.procs')))
    : [];
}

/** Removes the cluster's cgroups, deepest first; a cgroup with a task left stays (rmdir refuses it). */
function removeCgroups(cluster: string): void {
  for (const controller of cgroupControllers()) {
    const top = path.join(CGROUP_MOUNTS, controller, cgroupParentOf(cluster));
    if (!existsSync(top)) continue;
    const dirs = [
      top,
      ...readdirSync(top, { recursive: true, withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(e.parentPath, e.name)),
    ];
    for (const dir of dirs.sort((a, b) => b.length - a.length)) spawnSync('rmdir', [dir], { stdio: 'ignore' });
  }
}

async function startRealNode(
  cluster: ClusterRef,
  kubelet: string,
  layout: string,
  index: number,
  started: Started[],
): Promise<RealNodeState> {
  const name = realNodeName(index);
  const dir = path.join(cluster.runDir, 'nodes', name);
  const { ip, podCidr, gateway } = realNodeAddresses(cluster.name, index);
  const iface = nodeIpInterfaceOf(cluster.name);
  const owner = addressOwner(ip);
  if (owner && owner !== iface) throw new Error(`node IP ${ip} of ${name} is already on interface ${owner} (another cluster's real node?)`);
  if (!owner) sh('ip', ['addr', 'add', `${ip}/32`, 'dev', iface]);

  rmSync(dir, { recursive: true, force: true });
  for (const d of ['logs', 'pki', 'cni/net.d', 'cni/ipam', 'kubelet', 'pod-logs', 'containerd'])
    mkdirSync(path.join(dir, d), { recursive: true });
  const socket = path.join(dir, 'containerd', 'containerd.sock');
  const bridge = bridgeOf(cluster.name, index);
  ensurePodBridge(bridge);
  writeFileSync(
    path.join(dir, 'cni/net.d/10-kruise-ts.conflist'),
    JSON.stringify(
      {
        cniVersion: '0.4.0',
        name: `kruise-ts-${cluster.name}-${name}`,
        plugins: [
          {
            type: 'bridge',
            bridge,
            // The host is the pods' gateway, so the API server can dial pod IPs (webhooks, proxies).
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet: podCidr, gateway }]],
              routes: [{ dst: '0.0.0.0/0' }],
              dataDir: path.join(dir, 'cni/ipam'),
            },
          },
        ],
      },
      null,
      2,
    ),
  );
  const snapshotter = overlaySupported(path.join(dir, 'containerd')) ? 'overlayfs' : 'native';
  const config = writeContainerdConfig({
    dir: path.join(dir, 'containerd'),
    socket,
    pauseImage: LOCAL_IMAGES.pause,
    snapshotter,
    cniBinDir: CNI_PLUGIN_DIR,
    cniConfDir: path.join(dir, 'cni/net.d'),
  });
  const containerd = startProcess(`containerd ${name}`, 'containerd', ['--config', config], path.join(dir, 'logs/containerd.log'));
  started.push(containerd);
  await waitFor(
    `containerd of ${name}`,
    containerd,
    () => spawnSync('ctr', ['--address', socket, 'version'], { stdio: 'ignore' }).status === 0,
    30_000,
  );
  importImages(
    socket,
    snapshotter,
    (Object.keys(LOCAL_IMAGES) as Array<keyof typeof LOCAL_IMAGES>).map((tag) => ({
      source: `oci:${layout}:${tag}`,
      reference: LOCAL_IMAGES[tag],
    })),
    path.join(dir, 'images'),
  );
  if (kruiseImageReference()) importKruiseImage({ dir, socket, snapshotter });

  // A least-privilege identity: the Node authorizer lets system:node:<name> touch only its own
  // node, its pods and what they reference.
  const pki = path.join(cluster.runDir, 'pki');
  const ca = await loadCA(readFileSync(path.join(pki, 'ca.crt'), 'utf8'), readFileSync(path.join(pki, 'ca.key'), 'utf8'));
  const client = await issueCert(ca, { commonName: `system:node:${name}`, organizations: ['system:nodes'], client: true, server: false });
  const serving = await issueCert(ca, { commonName: name, dnsNames: [name], ipAddresses: [ip], server: true, client: false });
  const file = (f: string, content: string) => writeFileSync(path.join(dir, 'pki', f), content, { mode: 0o600 });
  file('client.crt', client.certPem);
  file('client.key', client.keyPem);
  file('serving.crt', serving.certPem);
  file('serving.key', serving.keyPem);
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': name,
      clusters: [{ name: 'local', cluster: { server: cluster.server, 'certificate-authority': path.join(pki, 'ca.crt') } }],
      users: [{ name, user: { 'client-certificate': path.join(dir, 'pki/client.crt'), 'client-key': path.join(dir, 'pki/client.key') } }],
      contexts: [{ name, context: { cluster: 'local', user: name } }],
    }),
    { mode: 0o600 },
  );

  const [kubeletPort, healthzPort] = await freePorts(2);
  const kubeletConfig = path.join(dir, 'kubelet.yaml');
  writeFileSync(
    kubeletConfig,
    YAML.stringify({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: ip,
      port: kubeletPort,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort,
      containerRuntimeEndpoint: `unix://${socket}`,
      tlsCertFile: path.join(dir, 'pki/serving.crt'),
      tlsPrivateKeyFile: path.join(dir, 'pki/serving.key'),
      // The API server authenticates with the cluster CA's admin certificate (kubectl logs/exec).
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: path.join(pki, 'ca.crt') } },
      authorization: { mode: 'Webhook' },
      // This VM kind: cgroup v1 (kubelet 1.36 refuses it unless told), no systemd, swap allowed, no
      // node-allocatable enforcement, and cAdvisor cannot stat the root disk.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      failSwapOn: false,
      // Pod and QoS cgroups: in-place pod resize needs them (without, the kubelet's resize reads a
      // pod cgroup that does not exist and panics). Under a root of the node's own, as each kubelet
      // deletes the pod cgroups it does not know beneath its root.
      cgroupsPerQOS: true,
      cgroupRoot: ensureCgroupRoot(cluster.name, name),
      enforceNodeAllocatable: [],
      localStorageCapacityIsolation: false,
      // Only memory pressure evicts: disk signals are unreliable here, and the imported images
      // cannot be pulled back, so image GC never runs.
      evictionHard: { 'memory.available': '1Mi' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      podLogsDir: path.join(dir, 'pod-logs'),
      resolvConf: '/etc/resolv.conf',
      maxPods: 60,
      serializeImagePulls: false,
      // Faster pod status and node heartbeats than the defaults, for tests.
      nodeStatusUpdateFrequency: '5s',
      syncFrequency: '10s',
    }),
  );
  const kubeletProcess = startProcess(
    `kubelet ${name}`,
    kubelet,
    [
      `--config=${kubeletConfig}`,
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${name}`,
      `--node-ip=${ip}`,
      `--root-dir=${path.join(dir, 'kubelet')}`,
      `--cert-dir=${path.join(dir, 'pki')}`,
      `--node-labels=type=real,topology.kubernetes.io/zone=zone-a,topology.kubernetes.io/region=local`,
      '--v=1',
    ],
    path.join(dir, 'logs/kubelet.log'),
  );
  started.push(kubeletProcess);
  return {
    name,
    ip,
    podCidr,
    bridge,
    dir,
    socket,
    snapshotter,
    kubeletPort,
    pids: { containerd: containerd.pid, kubelet: kubeletProcess.pid },
  };
}

async function waitNodeReady(cluster: ClusterRef, node: RealNodeState, started: Started[]): Promise<void> {
  const { kubectl, kubeconfig } = cluster;
  await waitFor(
    `node ${node.name} to become Ready`,
    undefined,
    () => {
      const dead = started.find((s) => s.exited);
      if (dead)
        throw new Error(
          `${dead.name} exited during start-up (${JSON.stringify(dead.exited)}); last lines of ${dead.logFile}:\n${tail(dead.logFile, 25)}`,
        );
      const r = spawnSync(
        kubectl,
        ['--kubeconfig', kubeconfig, 'get', 'node', node.name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
        {
          encoding: 'utf8',
        },
      );
      return r.stdout === 'True';
    },
    120_000,
    path.join(node.dir, 'logs/kubelet.log'),
  );
}

async function waitFor(what: string, proc: Started | undefined, check: () => boolean, timeoutMs: number, logFile?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc?.exited)
      throw new Error(
        `${proc.name} exited during start-up (${JSON.stringify(proc.exited)}); last lines of ${proc.logFile}:\n${tail(proc.logFile, 25)}`,
      );
    if (check()) return;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}` + (logFile ? `; last lines of ${logFile}:\n${tail(logFile, 25)}` : ''),
      );
    await sleep(250);
  }
}

/**
 * Removes every real node of a cluster, also after a crash lost the recorded state: kubelets first
 * (they would restart what is killed), then every container of each containerd, containerd and its
 * shims, the mounts under the run dir (rootfs, volumes, network namespaces), the bridges and the
 * node-IP interface.
 */
export async function stopRealNodes(cluster: Pick<ClusterRef, 'name' | 'runDir'>): Promise<void> {
  const nodesDir = path.join(cluster.runDir, 'nodes');
  const nodeDirs = existsSync(nodesDir) ? readdirSync(nodesDir).map((n) => path.join(nodesDir, n)) : [];
  const kubelets = nodeDirs.flatMap((d) => processesMentioning(path.join(d, 'kubelet.yaml')));
  await stopProcesses(kubelets, 10_000);
  const netnsPaths: string[] = [];
  for (const dir of nodeDirs) {
    const socket = path.join(dir, 'containerd', 'containerd.sock');
    if (existsSync(socket)) netnsPaths.push(...removeAllContainers(socket));
    await stopProcesses(processesMentioning(dir + path.sep), 10_000);
  }
  for (const netns of netnsPaths) {
    spawnSync('umount', ['-l', netns], { stdio: 'ignore' });
    rmSync(netns, { force: true });
  }
  unmountUnder(nodesDir);
  for (const link of linksOf(cluster.name)) spawnSync('ip', ['link', 'delete', link], { stdio: 'ignore' });
  if (nodeDirs.length) removeKubernetesServiceRoute(cluster.name);
  removeCgroups(cluster.name);
}

/** Kills and deletes every task and container in the CRI namespace; returns the sandboxes' network namespace paths. */
function removeAllContainers(socket: string): string[] {
  const ctr = (args: string[]) =>
    spawnSync('ctr', ['--address', socket, '--namespace', 'k8s.io', '--timeout', '10s', ...args], { encoding: 'utf8', timeout: 30_000 });
  const ids = ctr(['containers', 'ls', '-q']).stdout?.split('\n').filter(Boolean) ?? [];
  const netns: string[] = [];
  for (const id of ids) {
    try {
      const info = JSON.parse(ctr(['containers', 'info', id]).stdout) as {
        Spec?: { linux?: { namespaces?: Array<{ type: string; path?: string }> } };
      };
      const p = info.Spec?.linux?.namespaces?.find((n) => n.type === 'network')?.path;
      if (p && p.startsWith('/var/run/netns/')) netns.push(p);
    } catch {
      // no info: nothing to unmount for it
    }
    ctr(['tasks', 'kill', '--signal', 'SIGKILL', id]);
  }
  for (const id of ids) {
    ctr(['tasks', 'delete', '--force', id]);
    ctr(['containers', 'delete', id]);
  }
  return [...new Set(netns)];
}

/** The network interfaces a cluster's real nodes created (found by name, so also after a crash). */
function linksOf(cluster: string): string[] {
  const id = idOf(cluster);
  const out = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout ?? '';
  return out
    .split('\n')
    .map((l) => l.split(':')[1]?.trim().split('@')[0])
    .filter((n): n is string => !!n && (n === `ktn${id}` || (n.startsWith(`ktb${id}`) && n.length <= `ktb${id}`.length + 1)));
}

/** The interface holding ip, if any. */
function addressOwner(ip: string): string | undefined {
  const out = spawnSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' }).stdout ?? '';
  for (const line of out.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+([\d.]+)\//.exec(line);
    if (m && m[2] === ip) return m[1];
  }
  return undefined;
}

/** The OCI layout `./run.sh image` writes (hack/build-image.sh). */
export const KRUISE_IMAGE_LAYOUT = path.join(repoRoot, 'build', 'image');

/** `kruise-ts.local/kruise-ts:<version>` when `./run.sh image` has built the image, else undefined. */
export function kruiseImageReference(): string | undefined {
  const index = path.join(KRUISE_IMAGE_LAYOUT, 'index.json');
  if (!existsSync(index)) return undefined;
  const tags = (JSON.parse(readFileSync(index, 'utf8')) as { manifests: Array<{ annotations?: Record<string, string> }> }).manifests
    .map((m) => m.annotations?.['org.opencontainers.image.ref.name'])
    .filter((t): t is string => !!t && t !== 'latest');
  return tags[0] && `kruise-ts.local/kruise-ts:${tags[0]}`;
}

/** Imports the image `./run.sh image` built into a real node's containerd; returns its reference. */
export function importKruiseImage(node: Pick<RealNodeState, 'dir' | 'socket' | 'snapshotter'>): string {
  const reference = kruiseImageReference();
  if (!reference) throw new Error(`no Kruise TS image in ${KRUISE_IMAGE_LAYOUT}: build it with ./run.sh image`);
  const tag = reference.split(':').pop()!;
  importImages(node.socket, node.snapshotter, [{ source: `oci:${KRUISE_IMAGE_LAYOUT}:${tag}`, reference }], path.join(node.dir, 'images'));
  return reference;
}

/** Whether a recorded real node's processes are still running. */
export function realNodeAlive(node: RealNodeState): boolean {
  return [node.pids.containerd, node.pids.kubelet].every((p) => p !== undefined && isAlive(p));
}

function sh(cmd: string, args: string[]): void {
  try {
    execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.toString().trim() || e.message}`, { cause: err });
  }
}

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(path.join(d, cmd)));
}

/** A statically linked binary: `ldd` fails on it. */
function isStatic(binary: string): boolean {
  return spawnSync('ldd', [binary], { stdio: 'ignore' }).status !== 0;
}
