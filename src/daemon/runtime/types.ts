// What the daemon needs from a node's container runtime. Two implementations: CriRuntime speaks
// CRI v1 over gRPC to containerd/CRI-O on a real node; SimulatedRuntime stands in on KWOK nodes,
// where no containers exist and pod status is the only "runtime state" there is.
//
// The daemon's sub-controllers (CRR execution, image puller, container meta) are written against
// this interface only, so the same decision code runs on containerd in tests and on the local
// cluster.

/** A container as the runtime reports it, in the kubelet's terms (attempt = restartCount). */
export interface RuntimeContainer {
  /** Runtime-prefixed id as the kubelet writes it into pod status, e.g. `containerd://<id>`. */
  containerID: string;
  /** Container name in the pod spec (CRI label `io.kubernetes.container.name`). */
  name: string;
  /** The kubelet's restart counter for this container (CRI metadata attempt). */
  restartCount: number;
  state: 'created' | 'running' | 'exited' | 'unknown';
  /** Epoch ms; absent until started / finished. */
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  image?: string;
  imageRef?: string;
  /**
   * The environment the container was started with (CRI ContainerStatus verbose info
   * `config.envs`), when the runtime can tell. The daemon compares the values taken from pod
   * labels/annotations with the pod's current metadata (env from metadata, spec §18.2).
   */
  env?: Record<string, string>;
  /**
   * The kubelet's hash of the container spec it started this container from (CRI annotation
   * `io.kubernetes.container.hash`); OpenKruise's kruise-daemon reports it as `plainHash`.
   */
  specHash?: number;
  /** The same without resources (`io.kubernetes.container.hashWithoutResources`; kubelets with InPlacePodVerticalScaling). */
  specHashWithoutResources?: number;
}

/** The pod the kubelet created the sandbox for (CRI labels `io.kubernetes.pod.*`). */
export interface PodRef {
  uid: string;
  namespace: string;
  name: string;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Registry credentials for one pull, as CRI AuthConfig. */
export interface PullAuth {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface PullImageRequest {
  /** Full reference, e.g. `127.0.0.1:5000/busybox:1.0`. */
  image: string;
  /** Tried in order; no entry means an anonymous pull. */
  auths?: PullAuth[];
  /** Passed to CRI PullImage as the pod sandbox config's labels/annotations. */
  sandboxConfig?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  signal?: AbortSignal;
  /** 0–100 while pulling, when the runtime can tell. */
  onProgress?: (percent: number) => void;
}

export interface RuntimeImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
}

export interface RuntimeVersion {
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface ContainerRuntime {
  /** Identifies the runtime (`containerd`, `simulated`, …) in logs and errors. */
  readonly name: string;
  version(): Promise<RuntimeVersion>;
  /** All containers of a pod, latest attempt per container name only. */
  podContainers(pod: PodRef): Promise<RuntimeContainer[]>;
  /** Runs a command in a running container (preStop exec hooks). */
  execSync(containerID: string, command: string[], timeoutSeconds: number): Promise<ExecResult>;
  /** Stops a container: SIGTERM, then SIGKILL after timeoutSeconds. */
  stopContainer(containerID: string, timeoutSeconds: number): Promise<void>;
  /** Pulls an image; resolves to the image ref (id) the runtime stored it under. */
  pullImage(req: PullImageRequest): Promise<{ imageRef: string }>;
  /** The stored image for a reference, or undefined when it is not present. */
  imageStatus(image: string): Promise<RuntimeImage | undefined>;
  listImages(): Promise<RuntimeImage[]>;
  close(): Promise<void>;
}

/** A runtime that cannot be reached or does not speak CRI v1; the message says which and where. */
export class RuntimeUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuntimeUnavailableError';
  }
}
