// The daemon's prober (spec §15/§21, upstream pkg/daemon/podprobe): for the NodePodProbe of each
// node it serves, one worker per listed probe runs it every periodSeconds against the pod's
// container — exec through the node's ContainerRuntime (CRI ExecSync on a real node; the simulated
// runtime answers from a pod annotation, docs/daemon-runtime.md), tcpSocket/httpGet against the
// pod IP — and reports results past their thresholds. The NodePodProbe status is rewritten only
// when a reported result changes it (state, message, or a lastProbeTime older than 10 minutes).
import type { Timer } from '../../util/clock.ts';
import { NodePodProbes } from '../../runtime/resources.ts';
import { Controller, type ReconcileResult } from '../../runtime/controller.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import { writeStatus } from '../../runtime/writes.ts';
import { isDeepStrictEqual } from 'node:util';
import type { DaemonContext, SubController } from '../context.ts';
import {
  countResult,
  nextStatus,
  probeTargets,
  probeTiming,
  resultChanged,
  targetKey,
  type ProbeResult,
  type ProbeTarget,
  type ResultRun,
  type StoredNPP,
} from './plan.ts';
import { runProbe } from './prober.ts';

export const EVENT_PROBE_SUCCEEDED = 'KruiseProbeSucceeded';
export const EVENT_PROBE_FAILED = 'KruiseProbeFailed';

const CACHE_WAIT_MS = 500;

export interface PodProbeOptions {
  /** 0 ≤ x < 1; spreads the first runs of a daemon that just started over a period. */
  random?: () => number;
}

export function podProbeController(ctx: DaemonContext, opts: PodProbeOptions = {}): SubController {
  const { client, scope, clock, recorder } = ctx;
  const log = ctx.logger.child({ controller: 'podprobe' });
  const random = opts.random ?? Math.random;
  const startedAt = clock.now();
  const informer = ctx.informers.informerFor<StoredNPP>(NodePodProbes, scope.nodeNamedSelector);
  const resourceVersions = new ResourceVersionExpectations();
  const workers = new Map<string, ProbeWorker>();
  const results = new Map<string, ProbeResult>();
  let running = false;

  const statusWriter = new Controller({
    name: 'podprobe',
    clock,
    logger: log,
    reconcile: (node) => writeNodeStatus(node),
  });

  async function writeNodeStatus(node: string): Promise<ReconcileResult> {
    const npp = informer.lister.get(node);
    if (!npp || !scope.owns(node)) return {};
    const wait = expectationGate([resourceVersions.check(npp, 'NodePodProbe resourceVersion', CACHE_WAIT_MS)], log);
    if (wait !== undefined) return { requeueAfterMs: wait };
    const mine = [...results.values()].filter((r) => r.target.node === node);
    const w = await writeStatus(client, NodePodProbes, npp, nextStatus(npp, mine, clock.now()), resourceVersions);
    if (w.written) log.info({ nodePodProbe: node }, 'NodePodProbe status updated');
    return w.ended ?? {};
  }

  /** The state the node's NodePodProbe status holds for the target, if any. */
  function storedState(t: ProbeTarget): string | undefined {
    const ps = informer.lister.get(t.node)?.status?.podProbeStatuses?.find((s) => s.uid === t.podUID);
    return ps?.probeStates?.find((s) => s.name === t.probeName)?.state;
  }

  function report(target: ProbeTarget, state: ProbeResult['state'], message: string): void {
    const key = targetKey(target);
    const prev = results.get(key);
    const next: ProbeResult = { target, state, message, probedAt: clock.now() };
    if (!resultChanged(prev, next)) return;
    results.set(key, next);
    if (state !== 'Unknown' && prev?.state !== state) {
      const pod = { apiVersion: 'v1', kind: 'Pod', namespace: target.podNamespace, name: target.podName, uid: target.podUID };
      recorder.event(
        pod,
        'Normal',
        state === 'Succeeded' ? EVENT_PROBE_SUCCEEDED : EVENT_PROBE_FAILED,
        'Probe',
        message || `${target.probeName} ${state}`,
      );
    }
    statusWriter.queue.add(target.node);
  }

  class ProbeWorker {
    private run: ResultRun = { count: 0 };
    private containerID?: string;
    private timer?: Timer;
    private stopped = false;

    constructor(public target: ProbeTarget) {}

    start(): void {
      const { periodMs } = probeTiming(this.target.probe);
      // A daemon that just (re)started would fire every probe at once: spread them over a period.
      const delay = clock.now() - startedAt < periodMs ? Math.floor(random() * periodMs) : 0;
      this.schedule(delay);
    }

    update(target: ProbeTarget): void {
      const { exec, tcpSocket, httpGet } = target.probe;
      const old = this.target.probe;
      this.target = target;
      // A new handler's results start over (upstream resets the state to Unknown).
      if (!isDeepStrictEqual({ exec, tcpSocket, httpGet }, { exec: old.exec, tcpSocket: old.tcpSocket, httpGet: old.httpGet })) {
        this.run = { count: 0 };
        if (this.containerID) report(target, 'Unknown', '');
      }
    }

    stop(): void {
      this.stopped = true;
      this.timer?.cancel();
      results.delete(targetKey(this.target));
    }

    private schedule(ms: number): void {
      if (this.stopped) return;
      this.timer = clock.setTimer(ms, () => {
        this.probeOnce()
          .catch((err) =>
            log.warn({ err, probe: this.target.probeName, pod: `${this.target.podNamespace}/${this.target.podName}` }, 'probe run failed'),
          )
          .finally(() => this.schedule(probeTiming(this.target.probe).periodMs));
      });
    }

    private async probeOnce(): Promise<void> {
      const t = this.target;
      const runtime = scope.runtimeFor(t.node);
      if (!runtime) return;
      const containers = await runtime.podContainers({ uid: t.podUID, namespace: t.podNamespace, name: t.podName });
      const c = containers.find((x) => x.name === t.containerName);
      if (!c || this.stopped) return;
      if (c.containerID !== this.containerID) {
        // A new container's state starts over at Unknown (upstream). On first sight after a daemon
        // restart the state already stored stands until this worker's first result instead, so a
        // restarted daemon does not flip every probed pod's marks and conditions for a period.
        const firstSight = this.containerID === undefined;
        this.containerID = c.containerID;
        this.run = { count: 0 };
        if (!firstSight || !storedState(t)) report(t, 'Unknown', '');
      }
      if (c.state !== 'running') {
        report(t, 'Failed', `Container(${t.containerName}) is Non-running`);
        return;
      }
      const timing = probeTiming(t.probe);
      if (c.startedAt !== undefined && clock.now() - c.startedAt < timing.initialDelayMs) return;
      const outcome = await runProbe({ probe: t.probe, containerID: c.containerID, podIP: t.podIP, runtime });
      if (this.stopped || this.target !== t) return;
      const counted = countResult(this.run, outcome.state, t.probe);
      this.run = counted.run;
      if (counted.report) report(t, outcome.state, outcome.message);
    }
  }

  /** Starts, updates and stops workers to match the node's NodePodProbe. */
  function syncWorkers(node: string): void {
    if (!running) return;
    const npp = informer.lister.get(node);
    const targets = npp && !npp.metadata.deletionTimestamp && scope.owns(node) ? probeTargets(npp) : new Map<string, ProbeTarget>();
    for (const [key, w] of workers) {
      if (w.target.node !== node || targets.has(key)) continue;
      w.stop();
      workers.delete(key);
      log.info({ pod: `${w.target.podNamespace}/${w.target.podName}`, probe: w.target.probeName }, 'stopped probe worker');
    }
    for (const [key, t] of targets) {
      const w = workers.get(key);
      if (w) {
        if (!isDeepStrictEqual(w.target.probe, t.probe)) w.update(t);
        continue;
      }
      const nw = new ProbeWorker(t);
      workers.set(key, nw);
      nw.start();
      log.info({ pod: `${t.podNamespace}/${t.podName}`, container: t.containerName, probe: t.probeName }, 'started probe worker');
    }
    statusWriter.queue.add(node);
  }

  informer.addEventHandler({
    onAdd: (npp) => {
      resourceVersions.observe(npp);
      syncWorkers(npp.metadata.name!);
    },
    onUpdate: (old, cur) => {
      resourceVersions.observe(cur);
      if (!isDeepStrictEqual(old.spec, cur.spec)) syncWorkers(cur.metadata.name!);
    },
    onDelete: (obj) => {
      const npp = unwrapDeleted(obj);
      resourceVersions.delete(npp);
      syncWorkers(npp.metadata.name!);
    },
  });
  scope.onNodeChange((node) => syncWorkers(node));

  return {
    name: 'podprobe',
    start: () => {
      running = true;
      for (const npp of informer.lister.list()) syncWorkers(npp.metadata.name!);
      statusWriter.start();
    },
    stop: async () => {
      running = false;
      for (const w of workers.values()) w.stop();
      workers.clear();
      await statusWriter.stop();
    },
  };
}
