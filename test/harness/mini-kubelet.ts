// Just enough kubelet to run pods on the test containerd through CRI, so daemon code meets the
// containers, labels and restart counts a real node has: a host-network sandbox per pod, its
// containers created with the kubelet's CRI labels and attempt = restartCount, exited containers
// restarted as attempt+1 (restartPolicy, fixed small backoff), hostPath volumes as bind mounts,
// preStop exec hooks on kill, and pod status written to the API server like the kubelet's.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CriClient,
  isCriNotFound,
  type ContainerConfig,
  type ContainerStatus,
  type PodSandboxConfig,
} from '../../src/daemon/cri/client.ts';
import { KubeletLabels, nanosToMs } from '../../src/daemon/runtime/cri-runtime.ts';
import { PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { isAlreadyExists, isNotFound } from '../../src/runtime/errors.ts';
import { Leases, Nodes, Pods } from '../../src/runtime/resources.ts';

export interface PodContainer {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: Array<{ name: string; value?: string }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

/** The part of a core/v1 Pod the mini kubelet reads. */
export interface Pod extends KubeObject {
  spec: {
    nodeName?: string;
    containers: PodContainer[];
    volumes?: Array<{ name: string; hostPath?: { path: string } }>;
    restartPolicy?: 'Always' | 'OnFailure' | 'Never';
    terminationGracePeriodSeconds?: number;
  };
  status?: Record<string, unknown>;
}

export interface ContainerStatusReport {
  name: string;
  containerID: string;
  image: string;
  imageID: string;
  restartCount: number;
  ready: boolean;
  started: boolean;
  state: Record<string, Record<string, unknown>>;
  lastState: Record<string, Record<string, unknown>>;
}

export interface MiniKubeletOptions {
  /** CRI endpoint of the runtime, e.g. ContainerdEnv.endpoint. */
  endpoint: string;
  /** Writes pod status and the node's heartbeat when given. */
  client?: KubeClient;
  nodeName?: string;
  /** Where sandbox log dirs go (containerd writes container logs there). */
  logRoot: string;
  /** Delay before restarting an exited container (the kubelet's starts at 10 s; tests want less). */
  restartBackoffMs?: number;
  syncIntervalMs?: number;
  log?: (line: string) => void;
}

interface RunningPod {
  pod: Pod;
  sandboxId: string;
  sandboxConfig: PodSandboxConfig;
}

const NODE_MODES = { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } as const;

export class MiniKubelet {
  readonly nodeName: string;
  private readonly pods = new Map<string, RunningPod>();
  private readonly backoffMs: number;
  private readonly intervalMs: number;
  private readonly log: (line: string) => void;
  private loop?: Promise<void>;
  private stopping = false;

  private constructor(
    private readonly cri: CriClient,
    private readonly runtimeName: string,
    private readonly opts: MiniKubeletOptions,
  ) {
    this.nodeName = opts.nodeName ?? 'mini-kubelet';
    this.backoffMs = opts.restartBackoffMs ?? 500;
    this.intervalMs = opts.syncIntervalMs ?? 250;
    this.log = opts.log ?? (() => undefined);
  }

  static async create(opts: MiniKubeletOptions): Promise<MiniKubelet> {
    const { client, version } = await CriClient.connect({ endpoint: opts.endpoint });
    return new MiniKubelet(client, version.runtimeName, opts);
  }

  /**
   * Creates this node in the API server (tainted so the scheduler leaves it alone; test pods set
   * spec.nodeName) and keeps its Lease fresh while the sync loop runs, so the node lifecycle
   * controller does not evict what runs here.
   */
  async registerNode(): Promise<void> {
    const client = this.requireClient();
    const node = {
      metadata: {
        name: this.nodeName,
        labels: { 'kubernetes.io/hostname': this.nodeName, 'kubernetes.io/os': 'linux', type: 'mini-kubelet' },
      },
      spec: { taints: [{ key: 'kruise-ts.io/mini-kubelet', effect: 'NoSchedule' }] },
    };
    await client.create(Nodes, node).catch((err) => {
      if (!isAlreadyExists(err)) throw err;
    });
    await this.heartbeat();
  }

  /** Creates the pod's sandbox and containers and starts them (images pulled when missing). */
  async runPod(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid;
    if (!uid) throw new Error(`pod ${pod.metadata.namespace}/${pod.metadata.name} has no uid: create it in the API server first`);
    const logDirectory = path.join(this.opts.logRoot, `${pod.metadata.namespace}_${pod.metadata.name}_${uid}`);
    mkdirSync(logDirectory, { recursive: true });
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: pod.metadata.name!, uid, namespace: pod.metadata.namespace!, attempt: 0 },
      logDirectory,
      labels: {
        ...pod.metadata.labels,
        [KubeletLabels.podName]: pod.metadata.name!,
        [KubeletLabels.podNamespace]: pod.metadata.namespace!,
        [KubeletLabels.podUID]: uid,
      },
      annotations: { ...pod.metadata.annotations },
      linux: { securityContext: { namespaceOptions: NODE_MODES } },
    };
    const sandboxId = await this.cri.runPodSandbox(sandboxConfig);
    const running: RunningPod = { pod, sandboxId, sandboxConfig };
    this.pods.set(uid, running);
    for (const c of pod.spec.containers) await this.startContainer(running, c, 0);
    this.log(`pod ${pod.metadata.namespace}/${pod.metadata.name} running in sandbox ${sandboxId.slice(0, 12)}`);
  }

  private async startContainer(running: RunningPod, c: PodContainer, attempt: number): Promise<string> {
    if (!(await this.cri.imageStatus(c.image))) await this.cri.pullImage(c.image);
    const { pod } = running;
    const config: ContainerConfig = {
      metadata: { name: c.name, attempt },
      image: { image: c.image },
      command: c.command,
      args: c.args,
      workingDir: c.workingDir,
      envs: (c.env ?? []).map((e) => ({ key: e.name, value: e.value ?? '' })),
      // Only hostPath volumes are mounted; the rest (e.g. the service account token volume the API
      // server adds) have no content here, and the test images never read them.
      mounts: (c.volumeMounts ?? []).flatMap((m) => {
        const hostPath = pod.spec.volumes?.find((v) => v.name === m.name)?.hostPath?.path;
        if (!hostPath) return [];
        mkdirSync(hostPath, { recursive: true });
        return [{ containerPath: m.mountPath, hostPath, readonly: !!m.readOnly }];
      }),
      labels: {
        [KubeletLabels.containerName]: c.name,
        [KubeletLabels.podName]: pod.metadata.name!,
        [KubeletLabels.podNamespace]: pod.metadata.namespace!,
        [KubeletLabels.podUID]: pod.metadata.uid!,
      },
      annotations: {
        'io.kubernetes.container.restartCount': String(attempt),
        'io.kubernetes.pod.terminationGracePeriod': String(pod.spec.terminationGracePeriodSeconds ?? 30),
      },
      logPath: path.join(c.name, `${attempt}.log`),
      linux: { securityContext: { namespaceOptions: NODE_MODES } },
    };
    const id = await this.cri.createContainer(running.sandboxId, config, running.sandboxConfig);
    await this.cri.startContainer(id);
    return id;
  }

  /** The latest and the previous attempt of each container of the pod, as CRI reports them. */
  private async attempts(running: RunningPod): Promise<Map<string, ContainerStatus[]>> {
    const listed = await this.cri.listContainers({ podSandboxId: running.sandboxId });
    const byName = new Map<string, ContainerStatus[]>();
    for (const c of listed) {
      const status = await this.cri.containerStatus(c.id).catch((err) => {
        if (isCriNotFound(err)) return undefined;
        throw err;
      });
      if (!status) continue;
      const name = c.labels[KubeletLabels.containerName] ?? c.metadata.name;
      byName.set(
        name,
        [...(byName.get(name) ?? []), status].sort((a, b) => b.metadata.attempt - a.metadata.attempt),
      );
    }
    return byName;
  }

  /** One pass over every pod: restart what exited (after the backoff), then report status. */
  async sync(): Promise<void> {
    for (const running of this.pods.values()) {
      const byName = await this.attempts(running);
      const policy = running.pod.spec.restartPolicy ?? 'Always';
      for (const c of running.pod.spec.containers) {
        const [latest, ...older] = byName.get(c.name) ?? [];
        if (!latest || latest.state !== 'CONTAINER_EXITED') continue;
        if (policy === 'Never' || (policy === 'OnFailure' && latest.exitCode === 0)) continue;
        if (Date.now() < (nanosToMs(latest.finishedAt) ?? 0) + this.backoffMs) continue;
        await this.startContainer(running, c, latest.metadata.attempt + 1);
        this.log(`restarted ${running.pod.metadata.name}/${c.name} as attempt ${latest.metadata.attempt + 1}`);
        // Like the kubelet, keep one dead attempt (for lastState and logs) and drop older ones.
        for (const old of older) await this.cri.removeContainer(old.id).catch(() => undefined);
      }
      if (this.opts.client) await this.reportStatus(running);
    }
  }

  /** The pod's status.containerStatuses as the kubelet would write them. */
  async containerStatuses(pod: Pod): Promise<ContainerStatusReport[]> {
    const running = this.pods.get(pod.metadata.uid!);
    if (!running) throw new Error(`pod ${pod.metadata.name} is not running on ${this.nodeName}`);
    const byName = await this.attempts(running);
    return running.pod.spec.containers.flatMap((c) => {
      const [latest, previous] = byName.get(c.name) ?? [];
      if (!latest) return [];
      const isRunning = latest.state === 'CONTAINER_RUNNING';
      return [
        {
          name: c.name,
          containerID: `${this.runtimeName}://${latest.id}`,
          image: c.image,
          imageID: latest.imageRef,
          restartCount: latest.metadata.attempt,
          ready: isRunning,
          started: isRunning,
          state: stateOf(latest, this.runtimeName),
          lastState: previous ? stateOf(previous, this.runtimeName) : {},
        },
      ];
    });
  }

  private async reportStatus(running: RunningPod): Promise<void> {
    const client = this.requireClient();
    const statuses = await this.containerStatuses(running.pod);
    const ready = statuses.length === running.pod.spec.containers.length && statuses.every((s) => s.ready);
    const condition = (type: string, status: boolean) => ({
      type,
      status: status ? 'True' : 'False',
      lastProbeTime: null,
      lastTransitionTime: new Date().toISOString(),
    });
    const status = {
      phase: 'Running',
      hostIP: '127.0.0.1',
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      containerStatuses: statuses,
      conditions: [
        condition('PodScheduled', true),
        condition('Initialized', true),
        condition('ContainersReady', ready),
        condition('Ready', ready),
      ],
    };
    // Compared with what the server has, not with our last write: on the local cluster KWOK also
    // writes the status of pods bound to nodes it heartbeats (pod-start stage), and ours must win.
    // Transition times change on every call, so they are left out of the comparison. Like the
    // kubelet, it owns only its condition types: others (a PodProbeMarker's, readiness gates) are
    // controllers' and are kept, the write being conditional on the version they were read in.
    type Conditions = Array<{ type: string; status: string }>;
    const own = new Set(status.conditions.map((c) => c.type));
    const comparable = (st: { phase?: unknown; containerStatuses?: unknown; conditions?: Conditions }) =>
      JSON.stringify([
        st.phase,
        st.containerStatuses,
        (st.conditions ?? [])
          .filter((c) => own.has(c.type))
          .map((c) => `${c.type}=${c.status}`)
          .sort(),
      ]);
    const current = await client.get<Pod>(Pods, running.pod.metadata.name!, { namespace: running.pod.metadata.namespace });
    const currentStatus = (current.status ?? {}) as Parameters<typeof comparable>[0];
    if (comparable(currentStatus) === comparable(status)) return;
    const others = (currentStatus.conditions ?? []).filter((c) => !own.has(c.type));
    await client.patchStatus(
      Pods,
      running.pod.metadata.name!,
      {
        metadata: { resourceVersion: current.metadata.resourceVersion },
        status: { ...status, conditions: [...status.conditions, ...others], startTime: running.pod.metadata.creationTimestamp },
      },
      {
        namespace: running.pod.metadata.namespace,
        patchType: PatchType.Merge,
      },
    );
  }

  /**
   * What the kubelet does when a pod is deleted: preStop exec hooks, then every container stopped
   * with the grace period, then the sandbox stopped and removed.
   */
  async killPod(pod: Pod, gracePeriodSeconds = pod.spec.terminationGracePeriodSeconds ?? 30): Promise<void> {
    const running = this.pods.get(pod.metadata.uid!);
    if (!running) return;
    this.pods.delete(pod.metadata.uid!);
    const byName = await this.attempts(running);
    await Promise.all(
      running.pod.spec.containers.map(async (c) => {
        const latest = byName.get(c.name)?.[0];
        if (!latest || latest.state !== 'CONTAINER_RUNNING') return;
        const hook = c.lifecycle?.preStop?.exec?.command;
        if (hook)
          await this.cri.execSync(latest.id, hook, gracePeriodSeconds).catch((err) => this.log(`preStop of ${c.name}: ${err.message}`));
        await this.cri.stopContainer(latest.id, gracePeriodSeconds);
      }),
    );
    await this.cri.stopPodSandbox(running.sandboxId);
    await this.cri.removePodSandbox(running.sandboxId);
  }

  /** Syncs every syncIntervalMs until stop(); errors are logged, as the kubelet's sync loop does. */
  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = (async () => {
      let lastBeat = Date.now();
      while (!this.stopping) {
        try {
          await this.sync();
          if (this.opts.client && Date.now() - lastBeat > 10_000) {
            await this.heartbeat();
            lastBeat = Date.now();
          }
        } catch (err) {
          this.log(`sync: ${err instanceof Error ? err.message : String(err)}`);
        }
        await sleep(this.intervalMs);
      }
    })();
  }

  /** Ends the sync loop and kills every pod it runs (grace period 0 unless given). */
  async stop(opts: { gracePeriodSeconds?: number } = {}): Promise<void> {
    this.stopping = true;
    await this.loop;
    this.loop = undefined;
    for (const running of [...this.pods.values()]) await this.killPod(running.pod, opts.gracePeriodSeconds ?? 0).catch(() => undefined);
    this.cri.close();
  }

  private async heartbeat(): Promise<void> {
    const client = this.requireClient();
    const now = new Date().toISOString();
    // A transition time that moved on every heartbeat would make the node look freshly Ready
    // forever (the manager creates a NodeImage only after the node has been Ready for a while).
    const node = await client.get<
      KubeObject & { status?: { conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> } }
    >(Nodes, this.nodeName);
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    const since = ready?.status === 'True' && ready.lastTransitionTime ? ready.lastTransitionTime : now;
    await client.patchStatus(
      Nodes,
      this.nodeName,
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'mini kubelet is posting ready status',
              lastHeartbeatTime: now,
              lastTransitionTime: since,
            },
          ],
          allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
          capacity: { cpu: '2', memory: '4Gi', pods: '110' },
          addresses: [
            { type: 'InternalIP', address: '127.0.0.1' },
            { type: 'Hostname', address: this.nodeName },
          ],
        },
      },
      { patchType: PatchType.Merge },
    );
    const lease = {
      metadata: { name: this.nodeName, namespace: 'kube-node-lease' },
      spec: { holderIdentity: this.nodeName, leaseDurationSeconds: 40, renewTime: now.replace(/Z$/, '000Z') },
    }; // MicroTime
    try {
      const current = await client.get<KubeObject & { spec: Record<string, unknown> }>(Leases, this.nodeName, {
        namespace: 'kube-node-lease',
      });
      await client.update(Leases, { ...current, spec: { ...current.spec, ...lease.spec } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await client.create(Leases, lease);
    }
  }

  private requireClient(): KubeClient {
    if (!this.opts.client) throw new Error('the mini kubelet was created without a KubeClient');
    return this.opts.client;
  }
}

/** Waits until a container of the pod satisfies check (the sync loop must be running). */
export async function waitForContainer(
  kubelet: MiniKubelet,
  pod: Pod,
  name: string,
  check: (s: ContainerStatusReport) => boolean,
  timeoutMs = 30_000,
): Promise<ContainerStatusReport> {
  const deadline = Date.now() + timeoutMs;
  let last: ContainerStatusReport | undefined;
  for (;;) {
    last = (await kubelet.containerStatuses(pod)).find((s) => s.name === name);
    if (last && check(last)) return last;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for container ${name} of ${pod.metadata.name} (last: ${JSON.stringify(last)})`,
      );
    await sleep(200);
  }
}

function stateOf(s: ContainerStatus, runtimeName: string): Record<string, Record<string, unknown>> {
  const iso = (ns: string) => {
    const ms = nanosToMs(ns);
    return ms === undefined ? undefined : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  };
  switch (s.state) {
    case 'CONTAINER_RUNNING':
      return { running: { startedAt: iso(s.startedAt) } };
    case 'CONTAINER_EXITED':
      return {
        terminated: {
          exitCode: s.exitCode,
          reason: s.reason || (s.exitCode === 0 ? 'Completed' : 'Error'),
          startedAt: iso(s.startedAt),
          finishedAt: iso(s.finishedAt),
          containerID: `${runtimeName}://${s.id}`,
        },
      };
    default:
      return { waiting: { reason: 'ContainerCreating' } };
  }
}
