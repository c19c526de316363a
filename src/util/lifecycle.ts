// Pod lifecycle hooks shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet (behaviour
// spec §3.9, upstream pkg/util/lifecycle + pkg/util/podreadiness). Everything here is pure: a
// transition is planned from the observed pod and applied by the caller's executor.

import { CONDITION_KRUISE_POD_READY, LIFECYCLE_STATE_LABEL, LIFECYCLE_TIMESTAMP_ANNOTATION, LifecycleState } from '../apis/constants.ts';
import type { LifecycleHook } from '../apis/apps/pub.ts';
import type { PodCondition, PodView } from '../apis/core-objects.ts';

/** The parts of a pod the lifecycle helpers read. */
export type LifecyclePodFacts = PodView<'name' | 'labels' | 'annotations' | 'finalizers', 'readinessGates', 'conditions'>;

export function getPodLifecycleState(pod: LifecyclePodFacts): LifecycleState | '' {
  return (pod.metadata?.labels?.[LIFECYCLE_STATE_LABEL] ?? '') as LifecycleState | '';
}

/** Any hook label (key=value) or any hook finalizer is present. */
export function isPodHooked(hook: LifecycleHook | undefined, pod: LifecyclePodFacts): boolean {
  if (!hook) return false;
  const finalizers = pod.metadata?.finalizers ?? [];
  if ((hook.finalizersHandler ?? []).some((f) => finalizers.includes(f))) return true;
  const labels = pod.metadata?.labels ?? {};
  return Object.entries(hook.labelsHandler ?? {}).some(([k, v]) => (labels[k] ?? '') === v);
}

/** Every hook label and finalizer is present (true for a hook that names none). */
export function isPodAllHooked(hook: LifecycleHook | undefined, pod: LifecyclePodFacts): boolean {
  if (!hook) return false;
  const finalizers = pod.metadata?.finalizers ?? [];
  if (!(hook.finalizersHandler ?? []).every((f) => finalizers.includes(f))) return false;
  const labels = pod.metadata?.labels ?? {};
  return Object.entries(hook.labelsHandler ?? {}).every(([k, v]) => (labels[k] ?? '') === v);
}

// ---------------------------------------------------------------------------------------------
// KruisePodReady "not-ready keys" (podreadiness): the condition message is a JSON list of
// {userAgent, key}; the condition is False while any key is held.

export interface NotReadyMessage {
  userAgent: string;
  key: string;
}

export const LIFECYCLE_READINESS_USER_AGENT = 'Lifecycle';
export const PRE_DELETE_HOOK_KEY = 'preDeleteHook';
export const PRE_UPDATE_HOOK_KEY = 'preUpdateHook';

function parseMessages(message: string | undefined): NotReadyMessage[] {
  if (!message) return [];
  try {
    const parsed: unknown = JSON.parse(message);
    return Array.isArray(parsed) ? parsed.map((m) => ({ userAgent: String(m?.userAgent ?? ''), key: String(m?.key ?? '') })) : [];
  } catch {
    return [];
  }
}

function dumpMessages(messages: NotReadyMessage[]): string {
  const sorted = [...messages].sort((a, b) =>
    a.userAgent !== b.userAgent ? (a.userAgent < b.userAgent ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  return JSON.stringify(sorted.map((m) => ({ userAgent: m.userAgent, key: m.key })));
}

const sameMessage = (a: NotReadyMessage, b: NotReadyMessage) => a.userAgent === b.userAgent && a.key === b.key;

export function containsReadinessGate(pod: LifecyclePodFacts, conditionType: string): boolean {
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === conditionType);
}

export function getCondition(pod: LifecyclePodFacts, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/**
 * The KruisePodReady condition after holding `msg`, or undefined when nothing changes (no
 * readiness gate, or the key is already held).
 */
export function addNotReadyKey(pod: LifecyclePodFacts, msg: NotReadyMessage, now: string): PodCondition | undefined {
  if (!containsReadinessGate(pod, CONDITION_KRUISE_POD_READY)) return undefined;
  const existing = getCondition(pod, CONDITION_KRUISE_POD_READY);
  const messages = parseMessages(existing?.message);
  if (messages.some((m) => sameMessage(m, msg)) && existing?.status === 'False') return undefined;
  if (!messages.some((m) => sameMessage(m, msg))) messages.push(msg);
  return { ...existing, type: CONDITION_KRUISE_POD_READY, status: 'False', message: dumpMessages(messages), lastTransitionTime: now };
}

/** The KruisePodReady condition after releasing `msg` (True once no key is held), or undefined. */
export function removeNotReadyKey(pod: LifecyclePodFacts, msg: NotReadyMessage, now: string): PodCondition | undefined {
  const existing = getCondition(pod, CONDITION_KRUISE_POD_READY);
  if (!existing) return undefined;
  const messages = parseMessages(existing.message);
  if (!messages.some((m) => sameMessage(m, msg))) return undefined;
  const rest = messages.filter((m) => !sameMessage(m, msg));
  return {
    ...existing,
    status: rest.length === 0 ? 'True' : existing.status,
    message: dumpMessages(rest),
    lastTransitionTime: now,
  };
}

// ---------------------------------------------------------------------------------------------
// Transitions

export interface LifecycleTransition {
  pod: string;
  /** Old state ('' when unset). */
  from: LifecycleState | '';
  to: LifecycleState;
  /** False when only the readiness condition changes (the state label already matches). */
  stateChanged: boolean;
  /** Labels to merge: the state label, plus hook labels when re-arming an in-place hook. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Finalizers to add (re-arming an in-place hook). */
  addFinalizers: string[];
  /** New KruisePodReady condition (a status update) when markPodNotReady applies. */
  readinessCondition?: PodCondition;
}

export interface TransitionOptions {
  /** RFC 3339, written to the lifecycle timestamp annotation and condition times. */
  now: string;
  markPodNotReady?: boolean;
  /** Re-arm this hook's labels and finalizers with the state (UpdatePodLifecycleWithHandler). */
  handler?: LifecycleHook;
}

function readinessFor(pod: LifecyclePodFacts, state: LifecycleState, now: string): PodCondition | undefined {
  const msg = (key: string) => ({ userAgent: LIFECYCLE_READINESS_USER_AGENT, key });
  switch (state) {
    case LifecycleState.PreparingDelete:
      return addNotReadyKey(pod, msg(PRE_DELETE_HOOK_KEY), now);
    case LifecycleState.PreparingUpdate:
      return addNotReadyKey(pod, msg(PRE_UPDATE_HOOK_KEY), now);
    case LifecycleState.Updated:
      return removeNotReadyKey(pod, msg(PRE_UPDATE_HOOK_KEY), now);
    default:
      return undefined;
  }
}

/**
 * Plans moving a pod to `state`. Undefined when there is nothing to write. As upstream, the
 * not-ready policy is applied even when the state label already matches.
 */
export function planLifecycleTransition(
  pod: LifecyclePodFacts,
  state: LifecycleState,
  opts: TransitionOptions,
): LifecycleTransition | undefined {
  const markPodNotReady = opts.handler ? !!opts.handler.markPodNotReady : !!opts.markPodNotReady;
  const readinessCondition = markPodNotReady ? readinessFor(pod, state, opts.now) : undefined;
  const from = getPodLifecycleState(pod);
  const stateChanged = from !== state;
  if (!stateChanged && !readinessCondition) return undefined;
  const labels: Record<string, string> = {};
  const addFinalizers: string[] = [];
  if (stateChanged) {
    if (opts.handler) {
      Object.assign(labels, opts.handler.labelsHandler ?? {});
      const existing = pod.metadata?.finalizers ?? [];
      addFinalizers.push(...(opts.handler.finalizersHandler ?? []).filter((f) => !existing.includes(f)));
    }
    labels[LIFECYCLE_STATE_LABEL] = state;
  }
  return {
    pod: pod.metadata?.name ?? '',
    from,
    to: state,
    stateChanged,
    labels,
    annotations: stateChanged ? { [LIFECYCLE_TIMESTAMP_ANNOTATION]: opts.now } : {},
    addFinalizers,
    readinessCondition,
  };
}

function withCondition(conditions: PodCondition[] | undefined, condition: PodCondition): PodCondition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === condition.type);
  if (i >= 0) list[i] = condition;
  else list.push(condition);
  return list;
}

/** The pod as it looks once a transition has been written (for executors and tests). */
export function applyLifecycleTransition<P extends LifecyclePodFacts>(pod: P, t: LifecycleTransition): P {
  const metadata = pod.metadata ?? {};
  const out: P = {
    ...pod,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, ...t.labels },
      annotations: { ...metadata.annotations, ...t.annotations },
      ...(t.addFinalizers.length ? { finalizers: [...(metadata.finalizers ?? []), ...t.addFinalizers] } : {}),
    },
  };
  if (t.readinessCondition) out.status = { ...pod.status, conditions: withCondition(pod.status?.conditions, t.readinessCondition) };
  return out;
}

export { withCondition as setCondition };
