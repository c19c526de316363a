// A private containerd with the CRI plugin, plus a local OCI registry holding two tiny images
// built from Debian's busybox-static, for tests that run the daemon against a real runtime.
//
// Everything lives under one temp dir: containerd's root/state/sockets/config and the registry's
// storage, so it never meets a system containerd. The images (busybox:1.0 and the sandbox's pause
// image) are built once with umoci into ~/.cache/kruise-ts/test-images and pushed with skopeo on
// each start. containerd pulls from the registry over plain HTTP through a hosts.toml
// (`config_path`, containerd >= 1.5; Debian 12 ships 1.6). Pods run on the host network, so no
// CNI plugin is needed. Needs root (containerd and runc do) and hack/install-node-runtime.sh.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts, processesMentioning, startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { CriClient, type VersionInfo } from '../../src/daemon/cri/client.ts';
import { cachedImageLayout, overlaySupported, run, unmountUnder, writeContainerdConfig } from '../../src/cluster/node-runtime.ts';

const TOOLS = ['containerd', 'containerd-shim-runc-v2', 'runc', 'docker-registry', 'skopeo', 'umoci', 'busybox'];

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

    const layout = cachedImageLayout(log);
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
    const config = writeContainerdConfig({
      dir,
      socket,
      registry,
      pauseImage: images.pause,
      snapshotter,
      // Pods run on the host network: no CNI plugin is called.
      cniBinDir: path.join(dir, 'cni', 'bin'),
      cniConfDir: path.join(dir, 'cni', 'net.d'),
    });
    const containerd = startProcess('containerd', 'containerd', ['--config', config], path.join(dir, 'containerd.log'));
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
  unmountUnder(dir);
  rmSync(dir, { recursive: true, force: true });
}

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(path.join(d, cmd)));
}
