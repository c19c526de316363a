// Pod writes shared by the workload controllers (CloneSet, Advanced StatefulSet, Advanced DaemonSet, …): the
// strategic-merge patches for in-place updates and pod conditions, slow-start batches of writes, and
// the PodUnavailableBudget check before an in-place update.

import type { Pod, PodCondition } from '../apis/core-objects.ts';
import type { FeatureGates } from '../apis/features.ts';
import type { PubBudgetGuard } from '../runtime/pub-budget.ts';

/** How soon a workload looks again at pods whose in-place update a PodUnavailableBudget held back. */
export const PUB_BLOCKED_REQUEUE_MS = 2000;

/**
 * Whether a Kruise workload controller (CloneSet, Advanced StatefulSet, SidecarSet) may update the
 * pod in place now. With PodUnavailableBudgetUpdateGate on, as upstream, the pod's budget must have
 * room and one unit is taken (the pod is recorded in unavailablePods): the controllers' own
 * updates spend the same budget users' updates do through the pod webhook, which then lets the
 * recorded pod's update through.
 */
export async function pubAllowsInPlaceUpdate(
  pod: Pod,
  guard: PubBudgetGuard | undefined,
  features: Pick<FeatureGates, 'PodUnavailableBudgetUpdateGate'>,
): Promise<boolean> {
  if (!features.PodUnavailableBudgetUpdateGate || !guard) return true;
  return (await guard.admit(pod, 'UPDATE', false)).allowed;
}

/** In-place progress of one pod: grace finished, next container batch, InPlaceUpdateReady=True. */
export interface PodRefresh {
  pod: string;
  /** Pod write from the in-place engine (grace finished / next container batch). */
  updatedPod?: Pod;
  conditions?: PodCondition[];
}

/** One in-place update: the conditions go first (InPlaceUpdateReady=False), then the pod. */
export interface InPlaceUpdateAction {
  pod: string;
  /** The revision the pod moves to. */
  revision: string;
  /** Pod to write (metadata + spec). */
  updatedPod: Pod;
  /** status.conditions to write before the pod (InPlaceUpdateReady=False). */
  conditions?: PodCondition[];
}

function mapDiff(
  old: Record<string, string> | undefined,
  updated: Record<string, string> | undefined,
): Record<string, string | null> | undefined {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(updated ?? {})) if (old?.[k] !== v) out[k] = v;
  for (const k of Object.keys(old ?? {})) if (!updated || !Object.hasOwn(updated, k)) out[k] = null;
  return Object.keys(out).length ? out : undefined;
}

/**
 * A strategic-merge patch turning `old` into `updated` for what in-place updates touch: labels,
 * annotations, added finalizers, container images and resources. With `resourceVersion` it is a
 * compare-and-swap (409 Conflict when the pod changed since).
 */
export function podUpdatePatch(old: Pod, updated: Pod, resourceVersion?: string): Record<string, unknown> | undefined {
  const metadata: Record<string, unknown> = {};
  const labels = mapDiff(old.metadata.labels, updated.metadata.labels);
  if (labels) metadata.labels = labels;
  const annotations = mapDiff(old.metadata.annotations, updated.metadata.annotations);
  if (annotations) metadata.annotations = annotations;
  const added = (updated.metadata.finalizers ?? []).filter((f) => !(old.metadata.finalizers ?? []).includes(f));
  if (added.length) metadata.finalizers = added;
  const containers: Array<Record<string, unknown>> = [];
  for (const c of updated.spec?.containers ?? []) {
    const before = old.spec?.containers?.find((o) => o.name === c.name);
    const change: Record<string, unknown> = {};
    if (before?.image !== c.image) change.image = c.image;
    if (JSON.stringify(before?.resources ?? {}) !== JSON.stringify(c.resources ?? {})) change.resources = c.resources ?? {};
    if (Object.keys(change).length) containers.push({ name: c.name, ...change });
  }
  if (Object.keys(metadata).length === 0 && containers.length === 0) return undefined;
  if (resourceVersion) metadata.resourceVersion = resourceVersion;
  return { metadata, ...(containers.length ? { spec: { containers } } : {}) };
}

/**
 * The conditions of `conditions` that differ from the pod's, as strategic-merge patch entries
 * (merged by type on the server). A strategic merge keeps fields the entry leaves out, so a reason
 * or message the pod has and the new condition lacks is sent as null: otherwise e.g.
 * InPlaceUpdateReady=True would keep reason StartInPlaceUpdate, still differ next round, and be
 * re-patched on every reconcile of every in-place-updated pod.
 */
/** A pod condition in a strategic-merge patch: null removes a field the pod's condition has. */
export type ConditionPatch = Omit<PodCondition, 'reason' | 'message'> & { reason?: string | null; message?: string | null };

export function changedConditions(pod: Pod, conditions: readonly PodCondition[]): ConditionPatch[] {
  const current = pod.status?.conditions ?? [];
  const out: ConditionPatch[] = [];
  for (const c of conditions) {
    const old = current.find((o) => o.type === c.type);
    if (old && old.status === c.status && (old.reason ?? '') === (c.reason ?? '') && (old.message ?? '') === (c.message ?? '')) continue;
    const entry: ConditionPatch = { ...c };
    if (old?.reason && !c.reason) entry.reason = null;
    if (old?.message && !c.message) entry.message = null;
    out.push(entry);
  }
  return out;
}

/** Slow-start batch sizes for n writes: 1, 2, 4, … (writeInBatches stops at the first failing batch). */
export function slowStartBatches(n: number, initial = 1): number[] {
  const out: number[] = [];
  let remaining = n;
  for (let size = Math.min(remaining, initial); size > 0; size = Math.min(2 * size, remaining)) {
    out.push(size);
    remaining -= size;
  }
  return out;
}

/**
 * Runs `write` over `items` in batches of the given sizes, a batch's writes in flight together; a
 * batch with a failure ends the run once all its writes have settled, so a refusal that would meet
 * every item (a webhook, a quota, a terminating namespace) costs a few requests, not one per item.
 * Each write starts synchronously, so what it records before its first await (an expectation) is
 * in place for the whole batch before any answer. Returns how many items were attempted and the
 * failures of the last batch, in item order.
 */
export async function writeInBatches<T>(
  items: readonly T[],
  batchSizes: readonly number[],
  write: (item: T) => Promise<unknown>,
): Promise<{ attempted: number; failures: unknown[] }> {
  let attempted = 0;
  for (const size of batchSizes) {
    const batch = items.slice(attempted, attempted + size);
    attempted += batch.length;
    const results = await Promise.allSettled(batch.map(write));
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    if (failures.length) return { attempted, failures };
  }
  return { attempted, failures: [] };
}

/**
 * Every item written in slow-start batches (1, 2, 4, …): one round's independent pod writes — a
 * wave of 100 pods' lifecycle patches or deletions takes 7 round trips instead of 100. Throws the
 * first failure once its batch has settled; the items after that batch are not attempted.
 */
export async function writeAllInSlowStart<T>(items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
  const { failures } = await writeInBatches(items, slowStartBatches(items.length), write);
  if (failures.length) throw failures[0];
}
