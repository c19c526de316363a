// The daemon prober's decisions (spec §15/§21, upstream pkg/daemon/podprobe), pure: which probe
// workers a NodePodProbe asks for, when a run of results is reported (success/failure
// thresholds), and the NodePodProbe status the reported results make.
import type { NodePodProbe, NodePodProbeStatus } from '../../apis/apps/nodepodprobe.ts';
import type { ProbeState } from '../../apis/apps/podprobemarker.ts';
import type { Probe } from '../../apis/core.ts';
import type { Stored } from '../../apis/core-objects.ts';
import { isDeepStrictEqual } from 'node:util';
import { metaTime } from '../../util/clock.ts';

export type StoredNPP = Stored<NodePodProbe>;
type PodProbeStatus = NonNullable<NodePodProbeStatus['podProbeStatuses']>[number];
type ProbeStateEntry = NonNullable<PodProbeStatus['probeStates']>[number];

/** Upstream's defaults and floors (kruise ContainerProbeSpec, kubelet prober). */
export const DEFAULT_PERIOD_SECONDS = 10;
export const DEFAULT_TIMEOUT_SECONDS = 1;
/** A result identical to the last one reported is reported again after this long (lastProbeTime). */
export const RESYNC_PROBE_MS = 600_000;
export const MAX_MESSAGE_LENGTH = 1024;

/** One probe of one container of one pod, as a worker runs it. */
export interface ProbeTarget {
  node: string;
  podNamespace: string;
  podName: string;
  podUID: string;
  podIP: string;
  containerName: string;
  /** `<marker>#<probe>`. */
  probeName: string;
  probe: Probe;
}

/** Workers are identified as upstream's probeKey: pod (ns, name, uid, IP), container, probe name. */
export function targetKey(t: Omit<ProbeTarget, 'probe'>): string {
  return [t.node, t.podNamespace, t.podName, t.podUID, t.podIP, t.containerName, t.probeName].join('\u0000');
}

/** Every probe the NodePodProbe lists, keyed by targetKey. */
export function probeTargets(npp: StoredNPP): Map<string, ProbeTarget> {
  const out = new Map<string, ProbeTarget>();
  const node = npp.metadata.name ?? '';
  for (const pp of npp.spec?.podProbes ?? []) {
    for (const p of pp.probes ?? []) {
      const t: ProbeTarget = {
        node,
        podNamespace: pp.namespace,
        podName: pp.name,
        podUID: pp.uid,
        podIP: pp.IP,
        containerName: p.containerName,
        probeName: p.name,
        probe: p.probe,
      };
      out.set(targetKey(t), t);
    }
  }
  return out;
}

/** Period, timeout, initial delay and thresholds with upstream's floors (period ≥ 1 s, initial delay ≥ 1 s, thresholds ≥ 1). */
export function probeTiming(p: Probe): {
  periodMs: number;
  timeoutSeconds: number;
  initialDelayMs: number;
  success: number;
  failure: number;
} {
  const period = p.periodSeconds && p.periodSeconds > 0 ? p.periodSeconds : DEFAULT_PERIOD_SECONDS;
  return {
    periodMs: Math.max(1, period) * 1000,
    timeoutSeconds: p.timeoutSeconds && p.timeoutSeconds > 0 ? p.timeoutSeconds : DEFAULT_TIMEOUT_SECONDS,
    initialDelayMs: Math.max(1, p.initialDelaySeconds ?? 0) * 1000,
    success: Math.max(1, p.successThreshold ?? 1),
    failure: Math.max(1, p.failureThreshold ?? 1),
  };
}

/** A worker's run of identical results. */
export interface ResultRun {
  last?: ProbeState;
  count: number;
}

/**
 * Counts a probe result into the run and says whether it is reported: a result is reported once
 * it has come `successThreshold` (Succeeded) or `failureThreshold` (Failed) times in a row.
 */
export function countResult(run: ResultRun, result: ProbeState, probe: Probe): { run: ResultRun; report: boolean } {
  const next: ResultRun = run.last === result ? { last: result, count: run.count + 1 } : { last: result, count: 1 };
  const t = probeTiming(probe);
  const needed = result === 'Succeeded' ? t.success : result === 'Failed' ? t.failure : 1;
  return { run: next, report: next.count >= needed };
}

/** A result as the worker reports it. */
export interface ProbeResult {
  target: ProbeTarget;
  state: ProbeState;
  message: string;
  /** Epoch ms. */
  probedAt: number;
}

/** Whether a new result replaces the stored one (state or message changed, or lastProbeTime is old). */
export function resultChanged(prev: ProbeResult | undefined, next: Pick<ProbeResult, 'state' | 'message' | 'probedAt'>): boolean {
  return !prev || prev.state !== next.state || prev.message !== next.message || next.probedAt - prev.probedAt >= RESYNC_PROBE_MS;
}

/**
 * Upstream syncUpdateNodePodProbeStatus: the status without states of probes the spec no longer
 * lists, with every current result written in (lastTransitionTime moves only when the state
 * changes). Undefined when that is the stored status.
 */
export function nextStatus(npp: StoredNPP, results: Iterable<ProbeResult>, nowMs: number): NodePodProbeStatus | undefined {
  const valid = new Set<string>();
  for (const pp of npp.spec?.podProbes ?? []) for (const p of pp.probes ?? []) valid.add(`${pp.uid}/${p.name}`);
  const statuses: PodProbeStatus[] = [];
  for (const ps of npp.status?.podProbeStatuses ?? []) {
    const probeStates = (ps.probeStates ?? []).filter((s) => valid.has(`${ps.uid}/${s.name}`));
    if (probeStates.length) statuses.push({ ...ps, probeStates: probeStates.map((s) => ({ ...s })) });
  }
  for (const r of results) {
    const t = r.target;
    if (!valid.has(`${t.podUID}/${t.probeName}`)) continue;
    let ps = statuses.find((s) => s.uid === t.podUID);
    if (!ps) statuses.push((ps = { namespace: t.podNamespace, name: t.podName, uid: t.podUID, probeStates: [] }));
    const states = (ps.probeStates ??= []);
    const entry: ProbeStateEntry = {
      name: t.probeName,
      state: r.state,
      lastProbeTime: metaTime(r.probedAt),
      lastTransitionTime: metaTime(nowMs),
      ...(r.message ? { message: r.message } : {}),
    };
    const i = states.findIndex((s) => s.name === t.probeName);
    if (i < 0) states.push(entry);
    else
      states[i] = {
        ...entry,
        lastTransitionTime:
          states[i].state === r.state ? (states[i].lastTransitionTime ?? entry.lastTransitionTime) : entry.lastTransitionTime,
      };
  }
  const status: NodePodProbeStatus = statuses.length ? { podProbeStatuses: statuses } : {};
  const stored = npp.status ?? {};
  return isDeepStrictEqual(normalize(stored), normalize(status)) ? undefined : status;
}

const normalize = (s: NodePodProbeStatus) => (s.podProbeStatuses?.length ? s.podProbeStatuses : []);
