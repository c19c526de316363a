// The small images real nodes and the containerd tests run, built without a registry or a
// container engine: Debian's busybox-static in an OCI layout made with umoci, cached per busybox
// binary and recipe in ~/.cache/kruise-ts/test-images. Tags of the layout:
//   busybox    busybox-static and its applet links, cmd sh
//   busybox-2  the same rootfs with another config (env IMAGE_VERSION=2): a second image with its
//              own digest, for in-place image updates
//   pause      the same rootfs, entrypoint PAUSE_SCRIPT: the pod sandbox image
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** Bump when the recipe below changes, so cached builds are redone. */
const IMAGE_RECIPE = 2;
// The sandbox's only process: sleeps until SIGTERM, then exits 0 (busybox sh as PID 1 gets the
// default-ignored TERM only through an explicit trap).
const PAUSE_SCRIPT = 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done';

export type LayoutTag = 'busybox' | 'busybox-2' | 'pause';

/** The references real nodes know the layout's images by (imported, never pulled). */
export const LOCAL_IMAGES: Record<LayoutTag, string> = {
  busybox: 'kruise-ts.local/busybox:1.0',
  'busybox-2': 'kruise-ts.local/busybox:2.0',
  pause: 'kruise-ts.local/pause:1.0',
};

/** The OCI layout holding the images, built first when it is not cached. */
export function cachedImageLayout(log: (line: string) => void = () => undefined): string {
  const busybox = commandPath('busybox');
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
    run('umoci', ['config', '--image', `${oci}:busybox`, '--tag', 'busybox-2', '--config.env', 'IMAGE_VERSION=2']);
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
    log(`built the busybox and pause images in ${((Date.now() - began) / 1000).toFixed(1)}s (cached in ${layout})`);
    return layout;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Imports images into a containerd's CRI namespace (`k8s.io`) under the given references, through a
 * docker-archive written by skopeo (what `ctr images import` reads).
 */
export function importImages(
  socket: string,
  snapshotter: string,
  images: Array<{ source: string; reference: string }>,
  workDir: string,
): void {
  mkdirSync(workDir, { recursive: true });
  for (const [i, { source, reference }] of images.entries()) {
    const archive = path.join(workDir, `image-${i}.tar`);
    rmSync(archive, { force: true });
    run('skopeo', ['copy', '--quiet', source, `docker-archive:${archive}:${reference}`]);
    run('ctr', ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', '--snapshotter', snapshotter, archive]);
    rmSync(archive, { force: true });
  }
}

export function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

export function commandPath(cmd: string): string {
  const dir = (process.env.PATH ?? '').split(':').find((d) => d && existsSync(path.join(d, cmd)));
  if (!dir) throw new Error(`${cmd} not found on PATH`);
  return path.join(dir, cmd);
}

/** Whether this kernel and filesystem take an overlay mount (containerd's overlayfs snapshotter). */
export function overlaySupported(dir: string): boolean {
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

export interface ContainerdConfig {
  /** Holds root/, state/, opt/ and config.toml. */
  dir: string;
  socket: string;
  pauseImage: string;
  snapshotter: string;
  cniBinDir: string;
  cniConfDir: string;
  /** `host:port` of a plain-HTTP registry to pull from, when there is one. */
  registry?: string;
}

/**
 * Writes config.toml for a private containerd with the CRI plugin: its own root, state and socket,
 * so it never meets a system containerd. Returns the config file's path.
 */
export function writeContainerdConfig(o: ContainerdConfig): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  const registryLines: string[] = [];
  if (o.registry) {
    const certsDir = path.join(o.dir, 'certs.d');
    mkdirSync(path.join(certsDir, o.registry), { recursive: true });
    writeFileSync(
      path.join(certsDir, o.registry, 'hosts.toml'),
      [`server = "http://${o.registry}"`, `[host."http://${o.registry}"]`, '  capabilities = ["pull", "resolve"]', ''].join('\n'),
    );
    registryLines.push(`[${cri}.registry]`, `  config_path = "${certsDir}"`);
  }
  const file = path.join(o.dir, 'config.toml');
  writeFileSync(
    file,
    [
      'version = 2',
      `root = "${path.join(o.dir, 'root')}"`,
      `state = "${path.join(o.dir, 'state')}"`,
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
      `  path = "${path.join(o.dir, 'opt')}"`,
      `[${cri}]`,
      `  sandbox_image = "${o.pauseImage}"`,
      // A system containerd holds the default streaming port 10010: take a free one on loopback.
      '  stream_server_address = "127.0.0.1"',
      '  stream_server_port = "0"',
      '  enable_selinux = false',
      '  disable_apparmor = true',
      // Without it every sandbox fails ("can't get final child's PID from pipe: EOF"): root on
      // these machines cannot lower oom_score_adj to what the kubelet asks for.
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
      `  bin_dir = "${o.cniBinDir}"`,
      `  conf_dir = "${o.cniConfDir}"`,
      ...registryLines,
      '',
    ].join('\n'),
  );
  return file;
}

/** The mount points at or below dir, outermost first. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
    .map((m) => m.replace(/\\040/g, ' '));
}

/** Lazily unmounts everything at or below dir, innermost first. */
export function unmountUnder(dir: string): void {
  for (const mountPoint of mountsUnder(dir).reverse()) {
    try {
      execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
    } catch {
      // already gone with its parent
    }
  }
}
