// ContainerRecreateRequest execution on the node (behaviour spec §11, kruise-daemon bullets), as
// pure decisions: which CRR of a pod runs, whether it may start, what state each container is in,
// and which container to kill next. The controller (controller.ts) feeds them observed state and
// applies the returned plan.
import type { ContainerRecreateRequestSpec, ContainerRecreateRequestStatus } from '../../apis/apps/containerrecreaterequest.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import type { RuntimeContainer } from '../runtime/types.ts';

/** A CRR whose spec has the shape the daemon relies on (see isWellFormedCRR). */
export type CRR = KubeObject & { spec: ContainerRecreateRequestSpec; status?: ContainerRecreateRequestStatus };
export type ContainerRecreateState = NonNullable<ContainerRecreateRequestStatus['containerRecreateStates']>[number];

/**
 * The webhook admits only well-formed CRRs, but the daemon must not trust that (a CRR created
 * while the webhook was down, or written by an older version): malformed ones are skipped.
 */
export function isWellFormedCRR(obj: KubeObject): obj is CRR {
  const spec = (obj as { spec?: unknown }).spec as Partial<ContainerRecreateRequestSpec> | undefined;
  return (
    !!spec &&
    typeof spec.podName === 'string' &&
    spec.podName !== '' &&
    Array.isArray(spec.containers) &&
    spec.containers.every((c) => !!c && typeof c.name === 'string')
  );
}

export const PRE_RECREATE_GRACE_CONDITION = 'PreRecreateGrace';
/** How often a running CRR is looked at again when nothing else wakes it. */
export const POLL_MS = 3000;

const finished = (phase: string | undefined) => phase === 'Succeeded' || phase === 'Failed' || phase === 'Completed';

export function isCRRFinished(crr: CRR): boolean {
  return finished(crr.status?.phase);
}

// Recreating first (a CRR already under way is never overtaken), then Pending, then new ones;
// within a phase the oldest first, so requests run in the order they were made.
const phaseRank = (phase: string | undefined): number => (phase === 'Recreating' ? 0 : phase === 'Pending' ? 1 : !phase ? 2 : 3);

export interface CRRPick {
  picked?: CRR;
  /** Unstarted CRRs that wait behind the picked one: their phase is set to Pending. */
  toPending: CRR[];
}

/** The one CRR of a pod that runs now; the daemon recreates a pod's containers for one request at a time. */
export function pickCRR(crrs: readonly CRR[]): CRRPick {
  const sorted = [...crrs].sort(
    (a, b) =>
      phaseRank(a.status?.phase) - phaseRank(b.status?.phase) ||
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  const out: CRRPick = { toPending: [] };
  for (const crr of sorted) {
    if (isCRRFinished(crr) || crr.metadata.deletionTimestamp) continue;
    if (!out.picked) out.picked = crr;
    else if (!crr.status?.phase) out.toPending.push(crr);
  }
  return out;
}

export type GraceGate = { wait: false } | { wait: true; requeueAfterMs?: number; reason: string };

/**
 * With unreadyGracePeriodSeconds the pod must first be taken out of service (the manager sets
 * condition PreRecreateGrace once it has), then the grace must pass so traffic drains.
 */
export function unreadyGraceGate(crr: CRR, now: number): GraceGate {
  const grace = crr.spec.strategy?.unreadyGracePeriodSeconds;
  if (grace === undefined || grace === null) return { wait: false };
  const cond = crr.status?.conditions?.find((c) => c.type === PRE_RECREATE_GRACE_CONDITION);
  if (!cond) return { wait: true, reason: 'waiting for the pod to be marked not-ready (condition PreRecreateGrace)' };
  const since = Date.parse(cond.lastTransitionTime ?? '');
  // A condition without a usable time cannot be waited on; it still proves the pod was taken out.
  if (Number.isNaN(since)) return { wait: false };
  const left = since + grace * 1000 - now;
  return left > 0
    ? { wait: true, requeueAfterMs: left, reason: `waiting ${Math.ceil(left / 1000)}s of unreadyGracePeriodSeconds` }
    : { wait: false };
}

/**
 * Whether the kubelet leaves this exited container exited (the pod's restartPolicy): Never keeps
 * every exit, OnFailure only a successful one, Always none.
 */
export function exitIsFinal(rc: RuntimeContainer, restartPolicy: string | undefined): boolean {
  if (rc.state !== 'exited') return false;
  if (restartPolicy === 'Never') return true;
  return restartPolicy === 'OnFailure' && (rc.exitCode ?? 0) === 0;
}

/**
 * The state of every container the CRR names, from its previous states, the runtime's view of the
 * pod and the manager's snapshot of pod status. `restartPolicy` is the pod's: a container we killed
 * in a pod that does not restart it (a Job's sidecar stopped by the sidecar terminator) is done
 * once it has exited, as nothing will recreate it.
 */
export function computeContainerStates(
  crr: CRR,
  runtime: readonly RuntimeContainer[],
  now: number,
  restartPolicy?: string,
): ContainerRecreateState[] {
  const minStartedMs = (crr.spec.strategy?.minStartedSeconds ?? 0) * 1000;
  const previous = new Map((crr.status?.containerRecreateStates ?? []).map((s) => [s.name, s]));
  const snapshot = new Map((crr.status?.containerStatusSnapshot ?? []).map((s) => [s.name, s]));
  const byName = new Map(runtime.map((c) => [c.name, c]));
  return crr.spec.containers.map((c): ContainerRecreateState => {
    const prev = previous.get(c.name);
    if (prev && (prev.phase === 'Succeeded' || prev.phase === 'Failed')) return prev;
    const isKilled = prev?.isKilled ? true : undefined;
    const rc = byName.get(c.name);
    if (!rc) return { name: c.name, phase: 'Pending', message: 'not found container on Node' };
    if (isKilled && exitIsFinal(rc, restartPolicy)) {
      return {
        name: c.name,
        phase: 'Succeeded',
        isKilled,
        message: `container exited and is not restarted (restartPolicy ${restartPolicy})`,
      };
    }
    // An exited container is about to be restarted by the kubelet: killing it again is pointless.
    if (rc.state === 'exited') return { name: c.name, phase: 'Recreating', isKilled };
    if (crr.spec.strategy?.forceRecreate && !prev?.isKilled) return { name: c.name, phase: 'Pending' };
    const ctx = c.statusContext;
    const replaced = !!ctx && (rc.containerID !== ctx.containerID || rc.restartCount > ctx.restartCount);
    if (!replaced) return { name: c.name, phase: 'Pending', isKilled };
    const started = rc.state === 'running' && rc.startedAt !== undefined && now - rc.startedAt >= minStartedMs;
    // The manager copies pod status into the snapshot: the new container is done once the snapshot
    // shows it ready (upstream), so a completed CRR always carries the snapshot it completed on.
    const synced = snapshot.get(c.name);
    const ready = synced?.containerID === rc.containerID && synced.ready;
    return { name: c.name, phase: started && ready ? 'Succeeded' : 'Recreating', isKilled };
  });
}

export type CRRStep =
  /** Write these container states and come back (they changed, or a container must be killed first). */
  | { kind: 'states'; states: ContainerRecreateState[]; kill?: string; requeueAfterMs?: number }
  /** Every container is done (or failed and that ends the request): phase Completed. */
  | { kind: 'complete'; states: ContainerRecreateState[]; message: string }
  /** Nothing to write now; look again later. */
  | { kind: 'wait'; requeueAfterMs?: number };

function sameStates(a: readonly ContainerRecreateState[] | undefined, b: readonly ContainerRecreateState[]): boolean {
  const norm = (s: ContainerRecreateState) => JSON.stringify([s.name, s.phase, s.message ?? '', !!s.isKilled]);
  return !!a && a.length === b.length && a.every((s, i) => norm(s) === norm(b[i]));
}

/**
 * The next step for a running CRR. Observed changes are written before anything is killed, so the
 * CRR status always shows what the daemon last saw; a kill is planned for at most one container
 * per round, after the states that precede it are recorded, and only for a container the runtime
 * has (`onNode`: names of the pod's containers on the node).
 */
export function planCRRStep(crr: CRR, states: ContainerRecreateState[], onNode: ReadonlySet<string>): CRRStep {
  const minStartedMs = (crr.spec.strategy?.minStartedSeconds ?? 0) * 1000;
  // Pod events wake the CRR too, but a real runtime's changes need not show in pod status at once.
  const requeue = minStartedMs > 0 ? minStartedMs : POLL_MS;
  if (!sameStates(crr.status?.containerRecreateStates, states)) return { kind: 'states', states, requeueAfterMs: requeue };
  const ignore = crr.spec.strategy?.failurePolicy === 'Ignore';
  const next = states.map((s) => ({ ...s }));
  let done = 0;
  for (const s of next) {
    if (s.phase === 'Succeeded') {
      done++;
      continue;
    }
    if (s.phase === 'Failed') {
      done++;
      if (ignore) continue;
      return {
        kind: 'complete',
        states: next,
        message: s.message ? `container ${s.name} failed: ${s.message}` : `container ${s.name} failed`,
      };
    }
    if (s.phase === 'Recreating') {
      s.isKilled = true;
      if (crr.spec.strategy?.orderedRecreate) break;
      continue;
    }
    // A container the runtime does not have cannot be killed: its pod is gone or not started yet,
    // which the manager (pod gone) or a later round settles.
    if (!onNode.has(s.name)) break;
    return { kind: 'states', states: next, kill: s.name, requeueAfterMs: requeue };
  }
  if (done === next.length) return { kind: 'complete', states: next, message: '' };
  if (!sameStates(crr.status?.containerRecreateStates, next)) return { kind: 'states', states: next, requeueAfterMs: requeue };
  return { kind: 'wait', requeueAfterMs: requeue };
}

/** The kill error written for a fault of kruise-daemon itself (a JavaScript error, logged with its stack). */
export const INTERNAL_KILL_ERROR = 'kruise-daemon internal error, see its log';

/** The states after a kill attempt: Recreating once killed, Failed with the runtime's reason otherwise. */
export function afterKill(states: readonly ContainerRecreateState[], name: string, error?: string): ContainerRecreateState[] {
  return states.map((s) =>
    s.name !== name
      ? s
      : error === undefined
        ? { name, phase: 'Recreating', isKilled: true }
        : { name, phase: 'Failed', message: `kill container error: ${error}` },
  );
}

/** The kill grace: the CRR's own, else the pod's, else the kubelet default of 30 s. */
export function terminationGraceSeconds(crr: CRR, podGrace: number | undefined): number {
  return crr.spec.strategy?.terminationGracePeriodSeconds ?? podGrace ?? 30;
}
