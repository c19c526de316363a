// SimulatedRuntime: the ContainerRuntime of KWOK nodes, where no containers exist and pod status
// is the only runtime state there is. It plays the kubelet's part for what the daemon asks of a
// runtime — see docs/daemon-runtime.md ("Simulated mode"):
//
// * containers are read from pod status (containerID, restartCount, state);
// * stopping a container does what the kubelet does after the kill: the pod status shows the
//   container restarted from the current spec (restartCount+1, a new containerID, the spec's
//   image and resources, running since now, lastState terminated). KWOK's stages leave such a status alone (no
//   stage matches a running pod whose images agree with its spec and whose Ready is consistent);
// * exec exits with the code the pod annotation sim.kruise-ts.io/exec-exit-codes gives the command
//   (0 when unlisted) and leaves an Event on the pod the first time a command runs in a container,
//   so a preStop hook is seen to have run and an exec probe's result is up to the test;
// * a stop fails for containers named in the pod annotation sim.kruise-ts.io/kill-error;
// * images are pulled after a short delay with progress and remembered per node (in memory);
//   references that cannot exist fail like a registry would (pullFailure);
// * the env a container started with is pinned in the pod annotation
//   sim.kruise-ts.io/container-env, so it survives daemon restarts (container meta compares it
//   with the pod's current labels/annotations).
import { createHash } from 'node:crypto';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import { isConflict, isNotFound } from '../../runtime/errors.ts';
import { Pods } from '../../runtime/resources.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { Logger } from '../../runtime/log.ts';
import { metaTime, type Clock } from '../../util/clock.ts';
import type { ContainerStatus, Pod } from '../../apis/core-objects.ts';
import type {
  ContainerRuntime,
  ExecResult,
  PodRef,
  PullImageRequest,
  RuntimeContainer,
  RuntimeImage,
  RuntimeVersion,
} from '../runtime/types.ts';
import { isJsonObject } from '../../apis/json.ts';

export const SIM_CONTAINER_ENV_ANNOTATION = 'sim.kruise-ts.io/container-env';
/** Comma-separated container names whose stop fails, as a wedged runtime's would (for failure paths). */
export const SIM_KILL_ERROR_ANNOTATION = 'sim.kruise-ts.io/kill-error';
/**
 * JSON object: command (its arguments joined by single spaces) → exit code of that command in any
 * container of the pod, e.g. `{"test -f ready": 1}`. Commands not listed exit 0. This is how a test
 * decides what an exec probe (or a preStop hook) finds on a node that has no containers.
 */
export const SIM_EXEC_EXIT_CODES_ANNOTATION = 'sim.kruise-ts.io/exec-exit-codes';

/** The exit code the pod's annotation gives a command (0 when unlisted or unreadable). */
export function simulatedExitCode(pod: Pod, command: readonly string[]): number {
  try {
    const codes: unknown = JSON.parse(pod.metadata.annotations?.[SIM_EXEC_EXIT_CODES_ANNOTATION] ?? '{}');
    const code = codes && typeof codes === 'object' ? (codes as Record<string, unknown>)[command.join(' ')] : undefined;
    return typeof code === 'number' && Number.isInteger(code) ? code : 0;
  } catch {
    return 0;
  }
}

/**
 * How long a simulated exec runs: `sleep N` (also inside `sh -c "…"`) takes N seconds, as the
 * KWOK stages read a postStart hook (config/kwok/stages.yaml), so a preStop `sleep 8` holds the
 * container's stop 8 s as on a real node; anything else returns at once. Capped at the exec's
 * timeout when it has one.
 */
export function simulatedExecSeconds(command: readonly string[], timeoutSeconds: number): number {
  const seconds = Number(/(?:^|[\s;&|(])sleep +([0-9]+)(?![0-9.])/.exec(command.join(' '))?.[1] ?? 0);
  return timeoutSeconds > 0 ? Math.min(seconds, timeoutSeconds) : seconds;
}

type PodContainer = NonNullable<Pod['spec']>['containers'][number];
/** Container name → the container it was recorded for and the env it started with. */
export type EnvRecord = Record<string, { containerID: string; env: Record<string, string> }>;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The id KWOK's stages give attempt `restarts` of a container (config/kwok/stages.yaml). */
export function simulatedContainerID(podUID: string, name: string, restarts: number): string {
  return `containerd://${sha256(`${podUID}/${name}/${restarts}`)}`;
}

/** The imageID KWOK's stages give a container running `image` (config/kwok/stages.yaml). */
export function simulatedImageID(image: string): string {
  return `${image.replace(/:[^:/]+$/, '')}@sha256:${sha256(image)}`;
}

const META_FIELD = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** Whether a container's env can change with pod metadata (and so must be pinned). */
export function readsMetadata(c: PodContainer): boolean {
  return (c.env ?? []).some((e) => META_FIELD.test(e?.valueFrom?.fieldRef?.fieldPath ?? ''));
}

/** The env the kubelet would give the container now: literal values and downward-API metadata. */
export function resolveEnv(c: PodContainer, pod: Pod): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (!e || typeof e.name !== 'string') continue;
    if (typeof e.value === 'string') {
      env[e.name] = e.value;
      continue;
    }
    const fp = e.valueFrom?.fieldRef?.fieldPath ?? '';
    const m = META_FIELD.exec(fp);
    if (m) env[e.name] = (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]] ?? '';
    else if (fp === 'metadata.name') env[e.name] = pod.metadata.name ?? '';
    else if (fp === 'metadata.namespace') env[e.name] = pod.metadata.namespace ?? '';
    else if (fp === 'metadata.uid') env[e.name] = pod.metadata.uid ?? '';
  }
  return env;
}

export function parseEnvRecord(pod: Pod): EnvRecord {
  try {
    const v = JSON.parse(pod.metadata.annotations?.[SIM_CONTAINER_ENV_ANNOTATION] ?? '{}');
    return isJsonObject(v) ? (v as EnvRecord) : {};
  } catch {
    return {};
  }
}

const epoch = (t: string | undefined) => {
  const n = Date.parse(t ?? '');
  return Number.isNaN(n) ? undefined : n;
};

/**
 * The pod's containers as a runtime reports them, plus the env pins still to record (containers
 * reading metadata that the record does not know yet: they started with today's metadata).
 */
export function podContainersFromStatus(pod: Pod): { containers: RuntimeContainer[]; pins: EnvRecord } {
  const record = parseEnvRecord(pod);
  const pins: EnvRecord = {};
  const containers: RuntimeContainer[] = [];
  for (const s of pod.status?.containerStatuses ?? []) {
    if (!s || typeof s.name !== 'string' || !s.containerID) continue;
    const spec = pod.spec?.containers?.find((c) => c.name === s.name);
    const running = s.state?.running;
    const terminated = s.state?.terminated;
    let env: Record<string, string> | undefined;
    if (spec) {
      const known = record[s.name];
      if (known?.containerID === s.containerID && known.env && typeof known.env === 'object') env = known.env;
      else {
        env = resolveEnv(spec, pod);
        if (readsMetadata(spec)) pins[s.name] = { containerID: s.containerID, env };
      }
    }
    containers.push({
      containerID: s.containerID,
      name: s.name,
      restartCount: s.restartCount ?? 0,
      state: running ? 'running' : terminated ? 'exited' : s.state?.waiting ? 'created' : 'unknown',
      startedAt: epoch(running?.startedAt ?? terminated?.startedAt),
      finishedAt: epoch(terminated?.finishedAt),
      exitCode: terminated?.exitCode,
      image: s.image,
      imageRef: s.imageID,
      env,
    });
  }
  return { containers, pins };
}

/** Pod status after the kubelet restarted the container: undefined when it is not (or no longer) there. */
/** What the kubelet does once a container it was told to stop has exited. */
export interface StopOutcome {
  statuses: ContainerStatus[];
  /** The stopped container's new status (restarted under restartPolicy Always, else terminated). */
  container: ContainerStatus;
  restarted: boolean;
  /** Pod phase when the pod became terminal (every container exited). */
  phase?: 'Succeeded' | 'Failed';
  /** New pod conditions: not Ready when the pod became terminal or a restarted container's postStart hook runs. */
  conditions?: NonNullable<NonNullable<Pod['status']>['conditions']>;
}

function notReady(pod: Pod, reason: string, now: string): NonNullable<StopOutcome['conditions']> {
  return (pod.status?.conditions ?? []).map((c) =>
    c.type === 'Ready' || c.type === 'ContainersReady' ? { ...c, status: 'False', reason, lastTransitionTime: now } : c,
  );
}

/**
 * The pod status after `containerID` was stopped (SIGTERM honoured: exit 0), as the kubelet writes
 * it: under restartPolicy Always (the default) the container is started again as a new container
 * with restartCount+1; under Never / OnFailure an exit 0 is final, and once every container has
 * exited the pod is Succeeded (all 0) or Failed, not Ready. A restarted container with a postStart
 * hook is not ready, nor is the pod, until the hook has run (KWOK's stage pod-poststart, as after an
 * image change: config/kwok/stages.yaml), so what waits for it (the next in-place update batch)
 * waits as on a real node. undefined when the id is unknown.
 */
export function stoppedStatuses(pod: Pod, containerID: string, now: string): StopOutcome | undefined {
  const statuses = pod.status?.containerStatuses ?? [];
  const i = statuses.findIndex((s) => s?.containerID === containerID);
  if (i < 0) return undefined;
  const old = statuses[i];
  const exited = { exitCode: 0, reason: 'Completed', containerID, startedAt: old.state?.running?.startedAt, finishedAt: now };
  if ((pod.spec?.restartPolicy ?? 'Always') !== 'Always') {
    const container: ContainerStatus = { ...old, ready: false, started: false, state: { terminated: exited } };
    const next = statuses.map((s, j) => (j === i ? container : s));
    const outcome: StopOutcome = { statuses: next, container, restarted: false };
    if (next.every((s) => s.state?.terminated)) {
      outcome.phase = next.every((s) => (s.state?.terminated?.exitCode ?? 0) === 0) ? 'Succeeded' : 'Failed';
      outcome.conditions = notReady(pod, 'PodCompleted', now);
    }
    return outcome;
  }
  const restarts = (old.restartCount ?? 0) + 1;
  // The kubelet creates the new container from the pod's spec as it is now: an image or resources
  // changed in place come with this restart (they do not cost a second one).
  const spec = pod.spec?.containers?.find((c) => c.name === old.name);
  const image = spec?.image ?? old.image;
  const hooked = !!spec?.lifecycle?.postStart;
  const container: ContainerStatus = {
    ...old,
    ...(image && image !== old.image ? { image, imageID: simulatedImageID(image) } : {}),
    ...(spec?.resources && Object.keys(spec.resources).length
      ? {
          resources: spec.resources,
          ...(spec.resources.requests
            ? { allocatedResources: Object.fromEntries(Object.entries(spec.resources.requests).map(([k, v]) => [k, String(v)])) }
            : {}),
        }
      : {}),
    containerID: simulatedContainerID(pod.metadata.uid ?? '', old.name, restarts),
    restartCount: restarts,
    ready: !hooked,
    started: true,
    state: { running: { startedAt: now } },
    lastState: { terminated: exited },
  };
  return {
    statuses: statuses.map((s, j) => (j === i ? container : s)),
    container,
    restarted: true,
    ...(hooked ? { conditions: notReady(pod, 'ContainersNotReady', now) } : {}),
  };
}

/**
 * Why a pull of ref must fail, in a registry's words, or undefined. References that cannot exist:
 * a registry host under the reserved `.invalid` TLD (RFC 2606: never resolves) or named `invalid.…`
 * (Kubernetes' e2e images' `invalid.registry.k8s.io`, which resolves nowhere either), and the tag
 * `doesnotexist` (the manifest is unknown).
 */
export function pullFailure(ref: string): string | undefined {
  const slash = ref.indexOf('/');
  const host = slash > 0 ? ref.slice(0, slash).replace(/:\d+$/, '') : '';
  if (host.endsWith('.invalid') || host.startsWith('invalid.')) {
    return `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": failed to do request: Head "https://${ref.slice(0, slash)}/v2/": dial tcp: lookup ${host}: no such host`;
  }
  const tag = /:([^:/@]+)$/.exec(ref)?.[1];
  if (tag === 'doesnotexist') return `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`;
  return undefined;
}

export interface SimulatedOptions {
  client: Pick<KubeClient, 'get' | 'patch' | 'patchStatus'>;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  /** Where a container id was last seen (the pod informer); ids seen by this process are remembered too. */
  podOfContainer: (containerID: string) => PodRef | undefined;
  /** How long a successful pull takes; default 1 s. */
  pullDelayMs?: number;
}

/** Shared by the runtimes of every simulated node: API access and where containers live. */
export class SimulatedNodes {
  private readonly runtimes = new Map<string, SimulatedRuntime>();
  private readonly seen = new Map<string, PodRef>();
  constructor(readonly opts: SimulatedOptions) {}

  runtimeFor(node: string): SimulatedRuntime {
    let r = this.runtimes.get(node);
    if (!r) this.runtimes.set(node, (r = new SimulatedRuntime(node, this)));
    return r;
  }

  forget(node: string): void {
    this.runtimes.delete(node);
  }

  remember(containerID: string, pod: PodRef): void {
    this.seen.set(containerID, pod);
  }

  podOf(containerID: string): PodRef | undefined {
    return this.seen.get(containerID) ?? this.opts.podOfContainer(containerID);
  }
}

const MAX_CONFLICT_RETRIES = 5;

export class SimulatedRuntime implements ContainerRuntime {
  readonly name = 'simulated';
  private readonly images = new Map<string, RuntimeImage>();
  /** Container id + command of every exec already recorded as an Event. */
  private readonly execsSeen = new Set<string>();

  constructor(
    readonly node: string,
    private readonly nodes: SimulatedNodes,
  ) {}

  private get o(): SimulatedOptions {
    return this.nodes.opts;
  }

  async version(): Promise<RuntimeVersion> {
    return { runtimeName: 'simulated', runtimeVersion: '1.0.0', runtimeApiVersion: 'v1' };
  }

  private async getPod(ref: PodRef): Promise<Pod | undefined> {
    try {
      const pod = await this.o.client.get<Pod>(Pods, ref.name, { namespace: ref.namespace });
      return !ref.uid || pod.metadata.uid === ref.uid ? pod : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async pin(pod: Pod, pins: EnvRecord): Promise<void> {
    if (Object.keys(pins).length === 0) return;
    // Entries of containers that no longer exist are dropped as the record is rewritten.
    const names = new Set((pod.spec?.containers ?? []).map((c) => c.name));
    const record = Object.fromEntries(Object.entries({ ...parseEnvRecord(pod), ...pins }).filter(([n]) => names.has(n)));
    await this.o.client.patch(
      Pods,
      pod.metadata.name!,
      { metadata: { annotations: { [SIM_CONTAINER_ENV_ANNOTATION]: JSON.stringify(record) } } },
      { namespace: pod.metadata.namespace, patchType: PatchType.Merge },
    );
  }

  // Live reads, not the informer cache: the daemon decides kills from this view, and a cache that
  // has not caught up with our own last stop would make it kill the same container twice.
  async podContainers(ref: PodRef): Promise<RuntimeContainer[]> {
    const pod = await this.getPod(ref);
    if (!pod || pod.spec?.nodeName !== this.node) return [];
    const { containers, pins } = podContainersFromStatus(pod);
    await this.pin(pod, pins);
    for (const c of containers)
      this.nodes.remember(c.containerID, { uid: pod.metadata.uid!, namespace: pod.metadata.namespace!, name: pod.metadata.name! });
    return containers;
  }

  async execSync(containerID: string, command: string[], timeoutSeconds: number): Promise<ExecResult> {
    const ref = this.nodes.podOf(containerID);
    if (!ref) throw new Error(`container "${containerID}" not found`);
    const pod = await this.getPod(ref);
    const name = pod?.status?.containerStatuses?.find((s) => s.containerID === containerID)?.name;
    if (!pod || !name) throw new Error(`container "${containerID}" not found`);
    const exitCode = simulatedExitCode(pod, command);
    // Probes run the same command every period: the first run in a container is recorded, not each.
    const seen = `${containerID}\u0000${command.join('\u0000')}`;
    if (!this.execsSeen.has(seen)) {
      this.execsSeen.add(seen);
      this.o.logger.info({ pod: `${ref.namespace}/${ref.name}`, container: name, command, timeoutSeconds, exitCode }, 'simulated exec');
      this.o.recorder.event(
        pod,
        'Normal',
        'SimulatedExec',
        'Exec',
        `Simulated exec in container ${name}: ${JSON.stringify(command)}`.slice(0, 1024),
      );
    }
    const seconds = simulatedExecSeconds(command, timeoutSeconds);
    if (seconds > 0) await this.o.clock.sleep(seconds * 1000);
    return { exitCode, stdout: '', stderr: exitCode === 0 ? '' : `simulated exit code ${exitCode} (${SIM_EXEC_EXIT_CODES_ANNOTATION})` };
  }

  async stopContainer(containerID: string, timeoutSeconds: number): Promise<void> {
    const ref = this.nodes.podOf(containerID);
    // Unknown to this node: like CRI StopContainer on a removed container, nothing to do.
    if (!ref) return;
    let pinned = false;
    for (let attempt = 0; ; attempt++) {
      const pod = await this.getPod(ref);
      if (!pod) return;
      const next = stoppedStatuses(pod, containerID, metaTime(this.o.clock.now()));
      if (!next) return;
      const failing = (pod.metadata.annotations?.[SIM_KILL_ERROR_ANNOTATION] ?? '').split(',').map((x) => x.trim());
      if (failing.includes(next.container.name)) {
        throw new Error(
          `rpc error: code = Unknown desc = failed to kill container "${containerID}": simulated failure (${SIM_KILL_ERROR_ANNOTATION})`,
        );
      }
      const spec = pod.spec?.containers?.find((c) => c.name === next.container.name);
      try {
        if (next.restarted && !pinned && spec && readsMetadata(spec)) {
          // The new container's env is recorded before it appears, so no reader sees it unpinned;
          // the pin changed the pod, so the status is computed from a fresh read.
          await this.pin(pod, { [spec.name]: { containerID: next.container.containerID!, env: resolveEnv(spec, pod) } });
          pinned = true;
          continue;
        }
        // resourceVersion makes the write conditional: when KWOK or anyone else wrote in between,
        // the restart is recomputed from what they wrote rather than overwriting it.
        await this.o.client.patchStatus(
          Pods,
          ref.name,
          {
            metadata: { resourceVersion: pod.metadata.resourceVersion },
            status: {
              containerStatuses: next.statuses,
              ...(next.phase ? { phase: next.phase } : {}),
              ...(next.conditions ? { conditions: next.conditions } : {}),
            },
          },
          { namespace: ref.namespace, patchType: PatchType.Merge },
        );
        this.nodes.remember(next.container.containerID!, ref);
        this.o.logger.info(
          {
            pod: `${ref.namespace}/${ref.name}`,
            container: next.container.name,
            timeoutSeconds,
            restarted: next.restarted,
            newContainerID: next.container.containerID,
            phase: next.phase,
          },
          'simulated container stop',
        );
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      }
    }
  }

  async pullImage(req: PullImageRequest): Promise<{ imageRef: string }> {
    const total = this.o.pullDelayMs ?? 1000;
    const failure = pullFailure(req.image);
    const steps = 4;
    for (let i = 0; i < steps; i++) {
      if (failure && i === 1) throw new Error(failure);
      req.onProgress?.((i * 100) / steps);
      await this.o.clock.sleep(total / steps, req.signal);
    }
    const id = `sha256:${sha256(req.image)}`;
    const at = req.image.lastIndexOf('@');
    this.images.set(req.image, {
      id,
      size: 1 << 20,
      repoTags: at < 0 ? [req.image] : [],
      repoDigests: at < 0 ? [] : [req.image],
    });
    req.onProgress?.(100);
    return { imageRef: id };
  }

  async imageStatus(image: string): Promise<RuntimeImage | undefined> {
    return this.images.get(image);
  }

  async listImages(): Promise<RuntimeImage[]> {
    return [...this.images.values()];
  }

  async close(): Promise<void> {
    this.images.clear();
  }
}
