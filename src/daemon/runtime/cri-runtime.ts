// ContainerRuntime over CRI v1: what the kruise-daemon uses on a real node (containerd, CRI-O).
// Containers are found the way the kubelet labels them, and reported in the kubelet's terms
// (attempt = restartCount, `<runtime>://<id>` container IDs), so what the daemon sees matches the
// pod status the kubelet writes.
import {
  CriClient,
  isCriNotFound,
  type Container,
  type ContainerState,
  type Image,
  type Int64,
  type PodSandboxConfig,
  type VersionInfo,
} from '../cri/client.ts';
import type { ContainerRuntime, ExecResult, PodRef, PullImageRequest, RuntimeContainer, RuntimeImage, RuntimeVersion } from './types.ts';

/** CRI labels the kubelet sets on every sandbox and container it creates. */
export const KubeletLabels = {
  podUID: 'io.kubernetes.pod.uid',
  podName: 'io.kubernetes.pod.name',
  podNamespace: 'io.kubernetes.pod.namespace',
  containerName: 'io.kubernetes.container.name',
} as const;

/** CRI annotations holding the kubelet's hashes of the spec it started the container from (hex). */
const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
const CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION = 'io.kubernetes.container.hashWithoutResources';

const hexAnnotation = (c: Container, key: string) => {
  const n = Number.parseInt(c.annotations?.[key] ?? '', 16);
  return Number.isSafeInteger(n) ? n : undefined;
};

export interface CriRuntimeOptions {
  /** `unix:///path` or a socket path; when absent the usual sockets are probed. */
  endpoint?: string;
  /** Sockets to probe instead of DEFAULT_RUNTIME_ENDPOINTS (e.g. under a host /var/run mount). */
  candidates?: readonly string[];
  /** Deadline of ordinary calls in ms (default 2 minutes). */
  timeoutMs?: number;
}

export class CriRuntime implements ContainerRuntime {
  readonly name: string;

  constructor(
    private readonly client: CriClient,
    private readonly info: VersionInfo,
  ) {
    this.name = info.runtimeName;
  }

  /** Finds and checks the runtime; throws RuntimeUnavailableError when none speaks CRI v1. */
  static async connect(opts: CriRuntimeOptions = {}): Promise<CriRuntime> {
    const { client, version } = await CriClient.connect(opts);
    return new CriRuntime(client, version);
  }

  get endpoint(): string {
    return this.client.endpoint;
  }

  async version(): Promise<RuntimeVersion> {
    const v = await this.client.version();
    return { runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion, runtimeApiVersion: v.runtimeApiVersion };
  }

  async podContainers(pod: PodRef): Promise<RuntimeContainer[]> {
    const sandboxes = await this.client.listPodSandbox({ labelSelector: { [KubeletLabels.podUID]: pod.uid } });
    const perSandbox = await Promise.all(sandboxes.map((s) => this.client.listContainers({ podSandboxId: s.id })));
    const latest = new Map<string, Container>();
    for (const c of perSandbox.flat()) {
      const name = c.labels[KubeletLabels.containerName] ?? c.metadata.name;
      const seen = latest.get(name);
      // A recreated sandbox starts its containers over at a higher attempt; the newer one wins a tie.
      if (
        !seen ||
        c.metadata.attempt > seen.metadata.attempt ||
        (c.metadata.attempt === seen.metadata.attempt && BigInt(c.createdAt) > BigInt(seen.createdAt))
      ) {
        latest.set(name, c);
      }
    }
    const result = await Promise.all([...latest].map(([name, c]) => this.describe(name, c)));
    return result.sort((a, b) => a.name.localeCompare(b.name));
  }

  private async describe(name: string, c: Container): Promise<RuntimeContainer> {
    const specHash = hexAnnotation(c, CONTAINER_HASH_ANNOTATION);
    const specHashWithoutResources = hexAnnotation(c, CONTAINER_HASH_WITHOUT_RESOURCES_ANNOTATION);
    const base: RuntimeContainer = {
      containerID: this.containerID(c.id),
      name,
      restartCount: c.metadata.attempt,
      state: stateOf(c.state),
      image: c.image?.image || undefined,
      imageRef: c.imageRef || undefined,
      ...(specHash !== undefined && { specHash }),
      ...(specHashWithoutResources !== undefined && { specHashWithoutResources }),
    };
    try {
      // Verbose: the env the container was started with is only in the runtime's info map.
      const { status: s, info } = await this.client.containerStatusVerbose(c.id);
      const env = envFromVerboseInfo(info);
      return {
        ...base,
        state: stateOf(s.state),
        startedAt: nanosToMs(s.startedAt),
        finishedAt: nanosToMs(s.finishedAt),
        exitCode: s.state === 'CONTAINER_EXITED' ? s.exitCode : undefined,
        image: s.image?.image || base.image,
        imageRef: s.imageRef || base.imageRef,
        ...(env && { env }),
      };
    } catch (err) {
      // Removed between the list and the status call (the kubelet garbage-collects dead
      // containers): the listing is all there is to report.
      if (isCriNotFound(err)) return base;
      throw err;
    }
  }

  async execSync(containerID: string, command: string[], timeoutSeconds: number): Promise<ExecResult> {
    const res = await this.client.execSync(bareID(containerID), command, timeoutSeconds);
    return { exitCode: res.exitCode, stdout: res.stdout.toString('utf8'), stderr: res.stderr.toString('utf8') };
  }

  async stopContainer(containerID: string, timeoutSeconds: number): Promise<void> {
    await this.client.stopContainer(bareID(containerID), timeoutSeconds);
  }

  /**
   * Tries each credential in order (anonymous when there is none) and fails with the last error.
   * CRI PullImage is a single unary call with no progress messages, so progress can only be 0 when
   * the pull starts and 100 when the runtime has the image.
   */
  async pullImage(req: PullImageRequest): Promise<{ imageRef: string }> {
    const sandboxConfig: PodSandboxConfig | undefined = req.sandboxConfig && {
      labels: req.sandboxConfig.labels ?? {},
      annotations: req.sandboxConfig.annotations ?? {},
    };
    const auths = req.auths?.length ? req.auths : [undefined];
    req.onProgress?.(0);
    let lastError: unknown;
    for (const auth of auths) {
      try {
        const imageRef = await this.client.pullImage(req.image, auth, sandboxConfig, { signal: req.signal });
        req.onProgress?.(100);
        return { imageRef };
      } catch (err) {
        if (req.signal?.aborted) throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  async imageStatus(image: string): Promise<RuntimeImage | undefined> {
    const img = await this.client.imageStatus(image);
    return img && toRuntimeImage(img);
  }

  async listImages(): Promise<RuntimeImage[]> {
    return (await this.client.listImages()).map(toRuntimeImage);
  }

  async close(): Promise<void> {
    this.client.close();
  }

  /** The ID as the kubelet writes it into pod status: `<runtime name>://<id>`. */
  containerID(id: string): string {
    return `${this.info.runtimeName}://${id}`;
  }
}

/** Accepts both the pod-status form (`containerd://abc`) and the bare runtime ID. */
export function bareID(containerID: string): string {
  const i = containerID.indexOf('://');
  return i >= 0 ? containerID.slice(i + 3) : containerID;
}

function stateOf(state: ContainerState): RuntimeContainer['state'] {
  switch (state) {
    case 'CONTAINER_CREATED':
      return 'created';
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    default:
      return 'unknown';
  }
}

/**
 * The container's environment from ContainerStatus verbose info, or undefined when the runtime does
 * not tell. `info.info` is a JSON document: containerd carries the CRI ContainerConfig the kubelet
 * sent (`config.envs`, exactly the env the kubelet resolved, fieldRef values included); CRI-O has
 * only the OCI spec (`runtimeSpec.process.env`, `K=V` strings, image env merged in), which still
 * holds every variable the kubelet set. Later entries win, as the kubelet's own dedup does.
 */
export function envFromVerboseInfo(info: Record<string, string>): Record<string, string> | undefined {
  const raw = info.info;
  if (!raw) return undefined;
  let doc: { config?: { envs?: Array<{ key?: string; value?: string }> }; runtimeSpec?: { process?: { env?: string[] } } };
  try {
    doc = JSON.parse(raw);
  } catch {
    return undefined; // not the JSON either runtime writes: nothing to rely on
  }
  const envs = doc?.config?.envs;
  if (Array.isArray(envs)) {
    const env: Record<string, string> = {};
    for (const e of envs) if (e?.key) env[e.key] = e.value ?? '';
    return env;
  }
  const spec = doc?.runtimeSpec?.process?.env;
  if (Array.isArray(spec)) {
    const env: Record<string, string> = {};
    for (const kv of spec) {
      const i = typeof kv === 'string' ? kv.indexOf('=') : -1;
      if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return env;
  }
  return undefined;
}

/** CRI times are nanoseconds since the epoch, 0 meaning "not yet". */
export function nanosToMs(ns: Int64): number | undefined {
  const ms = Number(BigInt(ns || '0') / 1_000_000n);
  return ms > 0 ? ms : undefined;
}

function toRuntimeImage(img: Image): RuntimeImage {
  return { id: img.id, repoTags: img.repoTags, repoDigests: img.repoDigests, size: Number(img.size) };
}
