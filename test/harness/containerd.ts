// A private containerd with the CRI plugin, plus a local OCI registry holding two tiny images
// built from Debian's busybox-static, for tests that run the daemon against a real runtime.
//
// Everything lives under one temp dir: containerd's root/state/sockets/config and the registry's
// storage, so it never meets a system containerd. The images (busybox:1.0 and the sandbox's pause
// image) are built once with umoci into ~/.cache/kruise-ts/test-images and pushed with skopeo on
// each start. containerd pulls from the registry over plain HTTP through a hosts.toml
// (`config_path`, containerd >= 1.5; Debian 12 ships 1.6). Pods run on the host network, so no
// CNI plugin is needed. Needs root (containerd and runc do) and hack/install-node-runtime.sh.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  copyFileSync,
  chmodSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts, processesMentioning, startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { CriClient, type VersionInfo } from '../../src/daemon/cri/client.ts';

const TOOLS = ['containerd', 'containerd-shim-runc-v2', 'runc', 'docker-registry', 'skopeo', 'umoci', 'busybox'];
/** Bump when the image recipe below changes, so cached builds are redone. */
const IMAGE_RECIPE = 1;
// The sandbox's only process: sleeps until SIGTERM, then exits 0 (busybox sh as PID 1 gets the
// default-ignored TERM only through an explicit trap).
const PAUSE_SCRIPT = 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done';

export interface ContainerdEnv {
  /** The temp dir holding everything; removed by stop(). */
  dir: string;
  /** CRI endpoint, `unix:///…/containerd.sock`. */
  endpoint: string;
  /** `127.0.0.1:PORT` of the local registry. */
  registry: string;
  /** Full references in the local registry. */
  images: { busybox: string; pause: string };
  snapshotter: 'overlayfs' | 'native';
  version: VersionInfo;
  /** A dir for hostPath volumes and files tests want to look at. */
  hostDir: string;
  /** Last lines of containerd's and the registry's logs, for failure messages. */
  logs(lines?: number): string;
  /** Removes every pod, stops both processes and deletes the temp dir (unmounting leftovers). */
  stop(): Promise<void>;
}

/** Why a real containerd cannot run here, or undefined when it can. */
export function containerdUnavailableReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'containerd tests need root (containerd and runc manage mounts, namespaces and cgroups)';
  const missing = TOOLS.filter((t) => !onPath(t));
  if (missing.length) return `missing ${missing.join(', ')}: run hack/install-node-runtime.sh`;
  return undefined;
}

export async function startContainerd(opts: { log?: (line: string) => void } = {}): Promise<ContainerdEnv> {
  const reason = containerdUnavailableReason();
  if (reason) throw new Error(reason);
  const log = opts.log ?? (() => undefined);
  const dir = mkdtempSync(path.join(tmpdir(), 'kruise-ctd-'));
  const processes: Started[] = [];
  const logsOf = (lines = 30) => processes.map((p) => `--- ${p.name} ---\n${tail(p.logFile, lines)}`).join('\n');
  try {
    const [port] = await freePorts(1);
    const registry = `127.0.0.1:${port}`;
    processes.push(startRegistry(dir, registry));

    const layout = await cachedImageLayout(log);
    await waitForRegistry(registry, processes[0]!);
    const images = { busybox: `${registry}/busybox:1.0`, pause: `${registry}/pause:1.0` };
    for (const [tag, ref] of [
      ['busybox', images.busybox],
      ['pause', images.pause],
    ] as const) {
      run('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', `oci:${layout}:${tag}`, `docker://${ref}`]);
    }

    const snapshotter = overlaySupported(dir) ? 'overlayfs' : 'native';
    const socket = path.join(dir, 'containerd.sock');
    writeContainerdConfig(dir, { socket, registry, pauseImage: images.pause, snapshotter });
    const containerd = startProcess(
      'containerd',
      'containerd',
      ['--config', path.join(dir, 'config.toml')],
      path.join(dir, 'containerd.log'),
    );
    processes.push(containerd);
    const endpoint = `unix://${socket}`;
    const version = await waitForCri(endpoint, containerd);
    log(`containerd ${version.runtimeVersion} (CRI ${version.runtimeApiVersion}, ${snapshotter}) at ${endpoint}, registry ${registry}`);

    const hostDir = path.join(dir, 'host');
    mkdirSync(hostDir, { recursive: true });
    return {
      dir,
      endpoint,
      registry,
      images,
      snapshotter,
      version,
      hostDir,
      logs: logsOf,
      stop: () => teardown(dir, endpoint, processes),
    };
  } catch (err) {
    const logs = logsOf();
    await teardown(dir, undefined, processes);
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`, { cause: err });
  }
}

function startRegistry(dir: string, addr: string): Started {
  const config = path.join(dir, 'registry.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${path.join(dir, 'registry')}`,
      'http:',
      `  addr: ${addr}`,
      '',
    ].join('\n'),
  );
  return startProcess('registry', 'docker-registry', ['serve', config], path.join(dir, 'registry.log'));
}

async function waitForRegistry(addr: string, registry: Started): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (registry.exited) throw new Error(`the registry exited (${JSON.stringify(registry.exited)})`);
    const ok = await fetch(`http://${addr}/v2/`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the registry at ${addr} did not answer within 15s`);
    await sleep(100);
  }
}

/**
 * An OCI layout with `busybox` (busybox-static and its applet links, cmd sh) and `pause` (the same
 * rootfs, entrypoint PAUSE_SCRIPT), built once per busybox binary and recipe.
 */
async function cachedImageLayout(log: (line: string) => void): Promise<string> {
  const busybox = realPath('busybox');
  const key = createHash('sha256').update(readFileSync(busybox)).update(`recipe ${IMAGE_RECIPE}`).digest('hex').slice(0, 16);
  const cacheDir = path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'kruise-ts', 'test-images');
  const layout = path.join(cacheDir, key);
  if (existsSync(path.join(layout, 'index.json'))) return layout;

  const began = Date.now();
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(path.join(cacheDir, 'build-'));
  try {
    const oci = path.join(work, 'oci');
    const bundle = path.join(work, 'bundle');
    run('umoci', ['init', '--layout', oci]);
    run('umoci', ['new', '--image', `${oci}:busybox`]);
    run('umoci', ['unpack', '--image', `${oci}:busybox`, bundle]);
    const rootfs = path.join(bundle, 'rootfs');
    for (const d of ['bin', 'tmp', 'etc', 'proc', 'sys', 'dev']) mkdirSync(path.join(rootfs, d), { recursive: true });
    chmodSync(path.join(rootfs, 'tmp'), 0o1777);
    copyFileSync(busybox, path.join(rootfs, 'bin', 'busybox'));
    chmodSync(path.join(rootfs, 'bin', 'busybox'), 0o755);
    for (const applet of run('busybox', ['--list'])
      .split('\n')
      .filter((a) => a && a !== 'busybox')) {
      symlinkSync('busybox', path.join(rootfs, 'bin', applet));
    }
    writeFileSync(path.join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
    writeFileSync(path.join(rootfs, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
    run('umoci', ['repack', '--image', `${oci}:busybox`, bundle]);
    run('umoci', ['config', '--image', `${oci}:busybox`, '--config.env', 'PATH=/bin', '--config.cmd', 'sh']);
    run('umoci', [
      'config',
      '--image',
      `${oci}:busybox`,
      '--tag',
      'pause',
      '--clear=config.cmd',
      '--config.entrypoint',
      'sh',
      '--config.entrypoint',
      '-c',
      '--config.entrypoint',
      PAUSE_SCRIPT,
    ]);
    run('umoci', ['gc', '--layout', oci]);
    // Rename last, so a cache entry is either whole or absent.
    renameSync(oci, layout);
    log(`built test images in ${((Date.now() - began) / 1000).toFixed(1)}s (cached in ${layout})`);
    return layout;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Whether this kernel and filesystem take an overlay mount (containerd's overlayfs snapshotter). */
function overlaySupported(dir: string): boolean {
  const base = path.join(dir, 'overlay-check');
  const [lower, upper, work, merged] = ['lower', 'upper', 'work', 'merged'].map((d) => path.join(base, d));
  for (const d of [lower!, upper!, work!, merged!]) mkdirSync(d, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${upper},workdir=${work}`, merged!], {
      stdio: 'ignore',
    });
    execFileSync('umount', [merged!], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

function writeContainerdConfig(dir: string, o: { socket: string; registry: string; pauseImage: string; snapshotter: string }): void {
  const certsDir = path.join(dir, 'certs.d');
  mkdirSync(path.join(certsDir, o.registry), { recursive: true });
  writeFileSync(
    path.join(certsDir, o.registry, 'hosts.toml'),
    [`server = "http://${o.registry}"`, `[host."http://${o.registry}"]`, '  capabilities = ["pull", "resolve"]', ''].join('\n'),
  );
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  writeFileSync(
    path.join(dir, 'config.toml'),
    [
      'version = 2',
      `root = "${path.join(dir, 'root')}"`,
      `state = "${path.join(dir, 'state')}"`,
      // Snapshotters that need other tools or filesystems only log errors here; tracing is unused.
      'disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]',
      '[grpc]',
      `  address = "${o.socket}"`,
      '[ttrpc]',
      `  address = "${o.socket}.ttrpc"`,
      // No debug or metrics listeners: they would be shared addresses.
      '[debug]',
      '  address = ""',
      '  level = "info"',
      '[metrics]',
      '  address = ""',
      '[plugins."io.containerd.internal.v1.opt"]',
      `  path = "${path.join(dir, 'opt')}"`,
      `[${cri}]`,
      `  sandbox_image = "${o.pauseImage}"`,
      // A system containerd holds the default streaming port 10010; exec here is ExecSync only.
      '  stream_server_address = "127.0.0.1"',
      '  stream_server_port = "0"',
      '  enable_selinux = false',
      '  disable_apparmor = true',
      '  restrict_oom_score_adj = true',
      `[${cri}.containerd]`,
      `  snapshotter = "${o.snapshotter}"`,
      '  default_runtime_name = "runc"',
      `[${cri}.containerd.runtimes.runc]`,
      '  runtime_type = "io.containerd.runc.v2"',
      `[${cri}.containerd.runtimes.runc.options]`,
      // cgroupfs: there is no systemd to delegate cgroups to in this environment.
      '  SystemdCgroup = false',
      `[${cri}.cni]`,
      `  bin_dir = "${path.join(dir, 'cni', 'bin')}"`,
      `  conf_dir = "${path.join(dir, 'cni', 'net.d')}"`,
      `[${cri}.registry]`,
      `  config_path = "${certsDir}"`,
      '',
    ].join('\n'),
  );
}

async function waitForCri(endpoint: string, containerd: Started): Promise<VersionInfo> {
  const deadline = Date.now() + 30_000;
  let last: string;
  for (;;) {
    if (containerd.exited) throw new Error(`containerd exited during start-up (${JSON.stringify(containerd.exited)})`);
    try {
      const { client, version } = await CriClient.connect({ endpoint, timeoutMs: 2000 });
      client.close();
      return version;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) throw new Error(`containerd's CRI did not answer within 30s: ${last}`);
    await sleep(200);
  }
}

async function teardown(dir: string, endpoint: string | undefined, processes: Started[]): Promise<void> {
  // Containers outlive containerd (each has its own shim), so remove the pods through CRI first.
  if (endpoint && processes.some((p) => !p.exited)) {
    let client: CriClient | undefined;
    try {
      ({ client } = await CriClient.connect({ endpoint, timeoutMs: 30_000 }));
      for (const sandbox of await client.listPodSandbox()) {
        await client.stopPodSandbox(sandbox.id).catch(() => undefined);
        await client.removePodSandbox(sandbox.id).catch(() => undefined);
      }
    } catch {
      // containerd is already unusable: the shim sweep below still cleans up
    } finally {
      client?.close();
    }
  }
  await stopProcesses(
    processes.map((p) => p.pid),
    10_000,
  );
  // Shims whose pods could not be removed carry our socket path in their command line.
  await stopProcesses(processesMentioning(dir), 5_000);
  for (const mountPoint of mountsUnder(dir).reverse()) {
    try {
      execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
    } catch {
      // already gone with its parent
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
    .map((m) => m.replace(/\\040/g, ' '));
}

function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(path.join(d, cmd)));
}

function realPath(cmd: string): string {
  const dir = (process.env.PATH ?? '').split(':').find((d) => d && existsSync(path.join(d, cmd)));
  if (!dir) throw new Error(`${cmd} not found on PATH`);
  return path.join(dir, cmd);
}
