// A typed, promise-based client for the CRI v1 API (runtime.v1) over a unix socket, and how the
// daemon finds the node's runtime. Messages use proto-loader's camelCase field names; int64/uint64
// arrive as decimal strings because CRI timestamps are nanoseconds since the epoch, beyond
// Number.MAX_SAFE_INTEGER.
import { statSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { RuntimeUnavailableError } from '../runtime/types.ts';
import { errMessage } from '../../util/errors.ts';

/**
 * Where CRI runtimes put their socket, probed in order when no endpoint is given: containerd,
 * CRI-O, k3s/rke2's embedded containerd, cri-dockerd — first under /hostvarrun, where the chart
 * mounts the host's /var/run (as upstream's does), then on the host itself. /var/run is usually a
 * symlink to /run, but not in every container image the daemon runs from, so both spellings are tried.
 */
export const DEFAULT_RUNTIME_ENDPOINTS = [
  'unix:///hostvarrun/containerd/containerd.sock',
  'unix:///hostvarrun/containerd.sock',
  'unix:///hostvarrun/crio/crio.sock',
  'unix:///hostvarrun/crio.sock',
  'unix:///hostvarrun/k3s/containerd/containerd.sock',
  'unix:///hostvarrun/cri-dockerd.sock',
  'unix:///run/containerd/containerd.sock',
  'unix:///var/run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///var/run/crio/crio.sock',
  'unix:///run/k3s/containerd/containerd.sock',
  'unix:///var/run/k3s/containerd/containerd.sock',
  'unix:///run/cri-dockerd.sock',
  'unix:///var/run/cri-dockerd.sock',
] as const;

// --- messages (only the fields we use) ----------------------------------------------------------

export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
type Labels = Record<string, string>;
/** int64/uint64 as proto-loader decodes them (see the file comment). */
export type Int64 = string;

export interface VersionInfo {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
  targetId?: string;
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  propagation?: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
}

export interface ImageSpec {
  image: string;
  annotations?: Labels;
  userSpecifiedImage?: string;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt?: number;
}

export interface PodSandboxConfig {
  metadata?: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: { servers?: string[]; searches?: string[]; options?: string[] };
  labels?: Labels;
  annotations?: Labels;
  linux?: {
    cgroupParent?: string;
    securityContext?: { namespaceOptions?: NamespaceOption; readonlyRootfs?: boolean; privileged?: boolean };
    sysctls?: Labels;
  };
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: Int64;
  labels: Labels;
  annotations: Labels;
  runtimeHandler: string;
}

export interface PodSandboxStatus extends PodSandbox {
  network?: { ip: string };
}

export interface ContainerConfig {
  metadata: { name: string; attempt?: number };
  image: ImageSpec;
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: Array<{ key: string; value: string }>;
  mounts?: Mount[];
  labels?: Labels;
  annotations?: Labels;
  logPath?: string;
  linux?: {
    securityContext?: { privileged?: boolean; namespaceOptions?: NamespaceOption; runAsUser?: { value: number }; readonlyRootfs?: boolean };
  };
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: { name: string; attempt: number };
  image?: ImageSpec;
  imageRef: string;
  state: ContainerState;
  createdAt: Int64;
  labels: Labels;
  annotations: Labels;
}

export interface ContainerStatus {
  id: string;
  metadata: { name: string; attempt: number };
  state: ContainerState;
  createdAt: Int64;
  startedAt: Int64;
  finishedAt: Int64;
  exitCode: number;
  image?: ImageSpec;
  imageRef: string;
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
  mounts: Mount[];
  logPath: string;
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: Int64;
  username: string;
  pinned: boolean;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

// --- errors -------------------------------------------------------------------------------------

/** A CRI call the runtime answered with an error; message carries the runtime's own reason. */
export class CriError extends Error {
  constructor(
    readonly rpc: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(`CRI ${rpc}: ${details || grpc.status[code]}`);
    this.name = 'CriError';
  }
}

export function isCriNotFound(err: unknown): boolean {
  return err instanceof CriError && err.code === grpc.status.NOT_FOUND;
}

// --- loading the services -----------------------------------------------------------------------

const PROTO_PATH = path.join(import.meta.dirname, 'api.proto');
// Longs as strings: see the file comment. Enums as their names, so states read like the API docs.
const LOADER_OPTIONS: protoLoader.Options = { longs: String, enums: String, defaults: true, arrays: true, objects: true };

interface CriServices {
  RuntimeService: grpc.ServiceClientConstructor;
  ImageService: grpc.ServiceClientConstructor;
}

let services: CriServices | undefined;

/** The runtime.v1 service definitions (also what a fake server in tests implements). */
export function criServices(): CriServices {
  if (!services) {
    // The service definitions are built at run time from the .proto: their shape is CriServices by construction.
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS)) as unknown as { runtime: { v1: CriServices } };
    services = pkg.runtime.v1;
  }
  return services;
}

// containerd and CRI-O answer up to 16 MiB (the kubelet's limit too); grpc-js stops at 4 MiB by
// default, which a node with many images exceeds in ListImages.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 2 * 60_000; // the kubelet's default --runtime-request-timeout
const PROBE_TIMEOUT_MS = 3_000;

/** `unix:///run/x.sock`, `unix:/run/x.sock` and `/run/x.sock` all name the same socket. */
export function normalizeEndpoint(endpoint: string): { target: string; socketPath: string } {
  const socketPath = endpoint.startsWith('unix://')
    ? endpoint.slice('unix://'.length)
    : endpoint.startsWith('unix:')
      ? endpoint.slice('unix:'.length)
      : endpoint;
  if (!socketPath.startsWith('/')) {
    throw new RuntimeUnavailableError(
      `runtime endpoint ${endpoint}: only unix sockets with an absolute path are supported (unix:///path/to/socket)`,
    );
  }
  return { target: `unix://${socketPath}`, socketPath };
}

export interface CallOptions {
  /** Milliseconds before the call fails with DEADLINE_EXCEEDED; default 2 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Unary = (
  req: object,
  meta: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res: unknown) => void,
) => grpc.ClientUnaryCall;

export class CriClient {
  private readonly runtime: grpc.Client;
  private readonly images: grpc.Client;

  private constructor(
    readonly endpoint: string,
    private readonly defaultTimeoutMs: number,
  ) {
    const { target } = normalizeEndpoint(endpoint);
    const { RuntimeService, ImageService } = criServices();
    const channelOptions = { 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES, 'grpc.max_send_message_length': MAX_MESSAGE_BYTES };
    this.runtime = new RuntimeService(target, grpc.credentials.createInsecure(), channelOptions);
    // One channel for both services: the same socket, and grpc-js shares subchannels anyway.
    this.images = new ImageService(target, grpc.credentials.createInsecure(), {
      ...channelOptions,
      channelOverride: this.runtime.getChannel(),
    });
  }

  /**
   * Connects to the given endpoint, or to the first of candidates that answers Version for
   * runtime.v1. Throws RuntimeUnavailableError naming every endpoint tried and why it failed.
   */
  static async connect(
    opts: { endpoint?: string; candidates?: readonly string[]; timeoutMs?: number } = {},
  ): Promise<{ client: CriClient; version: VersionInfo }> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (opts.endpoint) {
      const client = new CriClient(opts.endpoint, timeoutMs);
      try {
        return { client, version: await client.checkV1() };
      } catch (err) {
        client.close();
        if (err instanceof RuntimeUnavailableError) throw err;
        throw new RuntimeUnavailableError(`container runtime at ${opts.endpoint} is not reachable: ${reason(err)}`);
      }
    }
    const candidates = opts.candidates ?? DEFAULT_RUNTIME_ENDPOINTS;
    const failures: string[] = [];
    let oldApi: RuntimeUnavailableError | undefined;
    for (const endpoint of candidates) {
      const { socketPath } = normalizeEndpoint(endpoint);
      if (!isSocket(socketPath)) {
        failures.push(`${socketPath} (no socket)`);
        continue;
      }
      const client = new CriClient(endpoint, timeoutMs);
      try {
        return { client, version: await client.checkV1(PROBE_TIMEOUT_MS) };
      } catch (err) {
        client.close();
        if (err instanceof RuntimeUnavailableError) oldApi ??= err;
        failures.push(`${socketPath} (${reason(err)})`);
      }
    }
    // A runtime that answered but speaks an old API is the more useful thing to report.
    if (oldApi) throw oldApi;
    throw new RuntimeUnavailableError(`no CRI v1 container runtime found; pass --runtime-endpoint. Tried: ${failures.join(', ')}`);
  }

  /** Version, failing with RuntimeUnavailableError when the runtime serves only CRI v1alpha2. */
  private async checkV1(timeoutMs?: number): Promise<VersionInfo> {
    try {
      return await this.version({ timeoutMs });
    } catch (err) {
      if (err instanceof CriError && err.code === grpc.status.UNIMPLEMENTED) {
        throw new RuntimeUnavailableError(
          `container runtime at ${this.endpoint} speaks only CRI v1alpha2 (runtime.v1.RuntimeService is unimplemented); ` +
            `CRI v1 is required, e.g. containerd >= 1.6, CRI-O >= 1.23, or cri-dockerd >= 0.2.5`,
        );
      }
      throw err;
    }
  }

  close(): void {
    this.images.close();
    this.runtime.close();
  }

  // --- RuntimeService ---------------------------------------------------------------------------

  version(opts?: CallOptions): Promise<VersionInfo> {
    return this.call(this.runtime, 'Version', { version: 'v1' }, opts);
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = '', opts?: CallOptions): Promise<string> {
    return (await this.call<{ podSandboxId: string }>(this.runtime, 'RunPodSandbox', { config, runtimeHandler }, opts)).podSandboxId;
  }

  async stopPodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.call(this.runtime, 'StopPodSandbox', { podSandboxId }, opts);
  }

  async removePodSandbox(podSandboxId: string, opts?: CallOptions): Promise<void> {
    await this.call(this.runtime, 'RemovePodSandbox', { podSandboxId }, opts);
  }

  async podSandboxStatus(podSandboxId: string, opts?: CallOptions): Promise<PodSandboxStatus> {
    return (await this.call<{ status: PodSandboxStatus }>(this.runtime, 'PodSandboxStatus', { podSandboxId }, opts)).status;
  }

  async listPodSandbox(
    filter: { id?: string; state?: PodSandboxState; labelSelector?: Labels } = {},
    opts?: CallOptions,
  ): Promise<PodSandbox[]> {
    const req = { filter: { id: filter.id, state: filter.state && { state: filter.state }, labelSelector: filter.labelSelector } };
    return (await this.call<{ items: PodSandbox[] }>(this.runtime, 'ListPodSandbox', req, opts)).items;
  }

  async createContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
    opts?: CallOptions,
  ): Promise<string> {
    return (await this.call<{ containerId: string }>(this.runtime, 'CreateContainer', { podSandboxId, config, sandboxConfig }, opts))
      .containerId;
  }

  async startContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.call(this.runtime, 'StartContainer', { containerId }, opts);
  }

  /** SIGTERM (or the image's stop signal), SIGKILL after timeoutSeconds; the call lasts that long. */
  async stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    await this.call(
      this.runtime,
      'StopContainer',
      { containerId, timeout: timeoutSeconds },
      withGrace(opts, this.defaultTimeoutMs, timeoutSeconds),
    );
  }

  async removeContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.call(this.runtime, 'RemoveContainer', { containerId }, opts);
  }

  async listContainers(
    filter: { id?: string; state?: ContainerState; podSandboxId?: string; labelSelector?: Labels } = {},
    opts?: CallOptions,
  ): Promise<Container[]> {
    const req = {
      filter: {
        id: filter.id,
        state: filter.state && { state: filter.state },
        podSandboxId: filter.podSandboxId,
        labelSelector: filter.labelSelector,
      },
    };
    return (await this.call<{ containers: Container[] }>(this.runtime, 'ListContainers', req, opts)).containers;
  }

  async containerStatus(containerId: string, opts?: CallOptions): Promise<ContainerStatus> {
    return (await this.call<{ status: ContainerStatus }>(this.runtime, 'ContainerStatus', { containerId }, opts)).status;
  }

  /**
   * ContainerStatus with the runtime's verbose `info` map (runtime-specific JSON strings; containerd
   * and CRI-O put the container's config and OCI spec under `info`).
   */
  async containerStatusVerbose(
    containerId: string,
    opts?: CallOptions,
  ): Promise<{ status: ContainerStatus; info: Record<string, string> }> {
    const res = await this.call<{ status: ContainerStatus; info?: Record<string, string> }>(
      this.runtime,
      'ContainerStatus',
      { containerId, verbose: true },
      opts,
    );
    return { status: res.status, info: res.info ?? {} };
  }

  /** timeoutSeconds 0 lets the command run until the call's own deadline. */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CallOptions): Promise<ExecSyncResponse> {
    return this.call(
      this.runtime,
      'ExecSync',
      { containerId, cmd, timeout: timeoutSeconds },
      withGrace(opts, this.defaultTimeoutMs, timeoutSeconds),
    );
  }

  // --- ImageService -----------------------------------------------------------------------------

  async listImages(opts?: CallOptions): Promise<Image[]> {
    return (await this.call<{ images: Image[] }>(this.images, 'ListImages', {}, opts)).images;
  }

  /** The image, or undefined when the runtime does not have it (CRI answers with no image). */
  async imageStatus(image: string, opts?: CallOptions): Promise<Image | undefined> {
    const res = await this.call<{ image: Image | null }>(this.images, 'ImageStatus', { image: { image } }, opts);
    return res.image ?? undefined;
  }

  /**
   * Pulls image; resolves to the image ref the runtime stored it under. Pulls have no deadline
   * unless one is given (the kubelet does the same: large images take as long as they take).
   */
  async pullImage(image: string, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, opts: CallOptions = {}): Promise<string> {
    const req = { image: { image }, auth, sandboxConfig };
    return (
      await this.call<{ imageRef: string }>(this.images, 'PullImage', req, { timeoutMs: opts.timeoutMs ?? Infinity, signal: opts.signal })
    ).imageRef;
  }

  async removeImage(image: string, opts?: CallOptions): Promise<void> {
    await this.call(this.images, 'RemoveImage', { image: { image } }, opts);
  }

  private call<T>(client: grpc.Client, rpc: string, req: object, opts: CallOptions = {}): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    // Methods of a dynamically loaded gRPC client exist by name only at run time.
    const method = (client as unknown as Record<string, Unary>)[rpc]!.bind(client);
    return new Promise<T>((resolve, reject) => {
      if (opts.signal?.aborted) return reject(abortError(rpc, opts.signal));
      const callOpts: grpc.CallOptions = Number.isFinite(timeoutMs) ? { deadline: Date.now() + timeoutMs } : {};
      const call = method(req, new grpc.Metadata(), callOpts, (err, res) => {
        opts.signal?.removeEventListener('abort', onAbort);
        if (!err) return resolve(res as T);
        if (err.code === grpc.status.CANCELLED && opts.signal?.aborted) return reject(abortError(rpc, opts.signal));
        reject(new CriError(rpc, err.code, err.details));
      });
      const onAbort = () => call.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Calls that wait timeoutSeconds inside the runtime need that much on top of the usual deadline. */
function withGrace(opts: CallOptions | undefined, defaultTimeoutMs: number, timeoutSeconds: number): CallOptions {
  return { ...opts, timeoutMs: opts?.timeoutMs ?? defaultTimeoutMs + timeoutSeconds * 1000 };
}

function abortError(rpc: string, signal: AbortSignal): Error {
  const cause = signal.reason instanceof Error ? signal.reason.message : 'aborted';
  return new CriError(rpc, grpc.status.CANCELLED, cause);
}

function isSocket(p: string): boolean {
  try {
    return statSync(p).isSocket();
  } catch {
    return false;
  }
}

function reason(err: unknown): string {
  const text = err instanceof CriError ? err.details || grpc.status[err.code] : errMessage(err);
  // grpc-js ends connection failures with an empty "Resolution note: " that says nothing.
  return text.replace(/\.?\s*Resolution note:\s*$/, '');
}
