// Executor of NodeImage pulls: one queue key per node, one worker per image tag version. Workers
// report into memory and wake the node's key; the reconcile turns worker state into NodeImage
// status (plan.ts) and writes it through the status subresource.
import type { ImageTagStatus, NodeImage as NodeImageApi } from '../../apis/apps/nodeimage.ts';
import type { Secret, Stored } from '../../apis/core-objects.ts';
import { PatchType } from '../../runtime/client.ts';
import { isNotFound } from '../../runtime/errors.ts';
import { Secrets, NodeImages } from '../../runtime/resources.ts';
import { Controller } from '../../runtime/controller.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { metaTime, type Clock } from '../../util/clock.ts';
import type { DaemonContext, SubController } from '../context.ts';
import type { ContainerRuntime, PullAuth } from '../runtime/types.ts';
import { authsForImage, registryOf, type SecretLike } from './auth.ts';
import type { CredentialProviders } from './credential-provider.ts';
import { backoffMs, buildStatus, desiredTasks, planWorkers, statusMergePatch, type PullTask } from './plan.ts';
import { errMessage } from '../../util/errors.ts';

type NodeImage = Stored<NodeImageApi>;

/** Bounds concurrent pulls (--max-workers-for-pull-image); a negative limit means unbounded. */
export class PullSlots {
  private active = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(private readonly limit: number) {}

  async acquire(signal: AbortSignal): Promise<() => void> {
    if (this.limit >= 0 && this.active >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiters.indexOf(wake);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason);
        };
        this.waiters.push(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiters.shift()?.();
    };
  }
}

export interface WorkerDeps {
  runtime: ContainerRuntime;
  clock: Clock;
  slots: PullSlots;
  auths: (task: PullTask) => Promise<PullAuth[]>;
  log: Logger;
}

/**
 * Pulls one tag: at most 1 + backoffLimit attempts, each bounded by timeoutSeconds, with
 * exponential backoff between them. Reports every change through report(); resolves when the tag
 * is Succeeded or Failed, or when signal aborts (the tag left the spec or the daemon stops).
 */
export async function runPullWorker(
  task: PullTask,
  deps: WorkerDeps,
  signal: AbortSignal,
  report: (s: ImageTagStatus) => void,
): Promise<void> {
  const { runtime, clock } = deps;
  const iso = () => metaTime(clock.now());
  let status: ImageTagStatus = { tag: task.tag, phase: 'Waiting', version: task.version };
  const set = (s: Partial<ImageTagStatus>) => {
    status = { ...status, ...s };
    report(status);
  };
  let release: (() => void) | undefined;
  try {
    release = await deps.slots.acquire(signal);
    set({ phase: 'Pulling', progress: 0, startTime: iso() });
    if (task.ifNotPresent) {
      const present = await runtime.imageStatus(task.ref);
      if (present) {
        set({ phase: 'Succeeded', progress: 100, imageID: present.id, completionTime: iso(), message: 'image already present' });
        return;
      }
    }
    const auths = await deps.auths(task);
    let lastError = '';
    for (let attempt = 0; attempt <= task.backoffLimit; attempt++) {
      if (attempt > 0) {
        await clock.sleep(backoffMs(attempt - 1), signal);
        set({ progress: 0, message: `retrying (${attempt}/${task.backoffLimit}) after: ${lastError}` });
      }
      const attemptAbort = new AbortController();
      const onAbort = () => attemptAbort.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let timedOut = false;
      const timer = clock.setTimer(task.timeoutSeconds * 1000, () => {
        timedOut = true;
        attemptAbort.abort(new Error('timeout'));
      });
      try {
        const { imageRef } = await runtime.pullImage({
          image: task.ref,
          auths: auths.length ? auths : undefined,
          sandboxConfig: task.sandboxConfig,
          signal: attemptAbort.signal,
          onProgress: (p) => {
            if (Number.isFinite(p) && Math.floor(p) !== status.progress) set({ progress: Math.max(0, Math.min(100, Math.floor(p))) });
          },
        });
        set({ phase: 'Succeeded', progress: 100, imageID: imageRef, completionTime: iso(), message: undefined });
        return;
      } catch (err) {
        if (signal.aborted) return;
        lastError = timedOut ? `pulling image timed out after ${task.timeoutSeconds}s` : errMessage(err);
        deps.log.warn({ image: task.ref, attempt, err: lastError }, 'image pull attempt failed');
      } finally {
        timer.cancel();
        signal.removeEventListener('abort', onAbort);
      }
    }
    set({ phase: 'Failed', completionTime: iso(), message: lastError });
  } catch (err) {
    if (signal.aborted) return;
    // Anything unexpected (a runtime that cannot be asked about images, say) fails the tag; the
    // worker never takes the daemon down.
    set({ phase: 'Failed', completionTime: iso(), message: errMessage(err) });
  } finally {
    release?.();
  }
}

interface Worker {
  version: number;
  status: ImageTagStatus;
  abort: AbortController;
}

export function imagePullerController(
  ctx: DaemonContext,
  opts: { maxWorkers: number; credentialProviders?: CredentialProviders },
): SubController {
  const { client, scope, clock } = ctx;
  const log = ctx.logger.child({ controller: 'imagepuller' });
  const informer = ctx.informers.informerFor<NodeImage>(NodeImages, scope.nodeNamedSelector);
  const workers = new Map<string, Map<string, Worker>>();
  const slots = new Map<string, PullSlots>();

  const controller = new Controller({
    name: 'imagepuller',
    clock,
    logger: log,
    maxConcurrentReconciles: 2,
    reconcile: (key) => reconcile(key),
  });
  const enqueue = (ni: NodeImage) => {
    if (scope.owns(ni.metadata.name)) controller.queue.add(ni.metadata.name!);
  };
  informer.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_o, ni) => enqueue(ni),
    onDelete: (obj) => enqueue(unwrapDeleted(obj)),
  });
  scope.onNodeChange((node) => controller.queue.add(node));

  async function readAuths(task: PullTask): Promise<PullAuth[]> {
    const secrets: SecretLike[] = [];
    for (const ref of task.pullSecrets) {
      try {
        secrets.push(await client.get<Secret>(Secrets, ref.name, { namespace: ref.namespace }));
      } catch (err) {
        // A missing secret means an anonymous attempt, which is what the registry will judge.
        log.warn({ secret: `${ref.namespace}/${ref.name}`, err: (err as Error).message }, 'cannot read pull secret');
      }
    }
    // The secrets' credentials first, then the plugins' (upstream's keyring order).
    const fromPlugins = opts.credentialProviders ? await opts.credentialProviders.authsFor(registryOf(task.ref)) : [];
    return [...authsForImage(task.ref, secrets), ...fromPlugins];
  }

  function stopAll(node: string): void {
    for (const w of workers.get(node)?.values() ?? []) w.abort.abort();
    workers.delete(node);
  }

  async function reconcile(node: string): Promise<void> {
    const ni = informer.lister.get(node);
    const runtime = scope.owns(node) ? scope.runtimeFor(node) : undefined;
    if (!ni || !runtime) {
      stopAll(node);
      return;
    }
    const nodeWorkers = workers.get(node) ?? new Map<string, Worker>();
    workers.set(node, nodeWorkers);
    const tasks = desiredTasks(ni.spec);
    const plan = planWorkers(tasks, ni.status, new Map([...nodeWorkers].map(([k, w]) => [k, w.version])));
    for (const key of plan.stop) {
      nodeWorkers.get(key)?.abort.abort();
      nodeWorkers.delete(key);
    }
    let nodeSlots = slots.get(node);
    if (!nodeSlots) slots.set(node, (nodeSlots = new PullSlots(opts.maxWorkers)));
    for (const task of plan.start) {
      const w: Worker = {
        version: task.version,
        status: { tag: task.tag, phase: 'Waiting', version: task.version },
        abort: new AbortController(),
      };
      nodeWorkers.set(task.key, w);
      log.info({ node, image: task.ref, version: task.version }, 'starting image pull');
      void runPullWorker(task, { runtime, clock, slots: nodeSlots, auths: readAuths, log }, w.abort.signal, (s) => {
        if (nodeWorkers.get(task.key) !== w) return;
        w.status = s;
        controller.queue.add(node);
      });
    }
    const next = buildStatus(tasks, new Map([...nodeWorkers].map(([k, w]) => [k, w.status])), ni.status, metaTime(clock.now()));
    const patch = statusMergePatch(ni.status, next);
    if (!patch) return;
    try {
      await client.patchStatus(NodeImages, node, patch, { patchType: PatchType.Merge });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  return {
    name: 'imagepuller',
    start: () => controller.start(),
    stop: async () => {
      for (const node of [...workers.keys()]) stopAll(node);
      await controller.stop();
    },
  };
}
