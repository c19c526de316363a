// The pod writes of the workload executors (CloneSet, Advanced StatefulSet, Advanced DaemonSet and
// the kinds that follow; SidecarSet and BroadcastJob use its pieces), each with its expectation:
// ControllerRevisions (with collision handling), pod patches (lifecycle, in-place refreshes and
// updates, labels; the strategic-merge patches they send), creations and deletions, and the
// PodUnavailableBudget check before an in-place update. What to write comes from the planners in
// the vocabulary of plan-types.ts. A round's writes to different pods are independent, so each
// phase sends them in slow-start batches (1, 2, 4, …) rather than one after another: a wave of
// 100 pods costs 7 round trips, not 100, and a failure still stops the phase after its batch.
// Writes to one pod stay in order. Creations and deletions are expected before the call and withdrawn when the call
// fails; every write's result is a resourceVersion expectation, so the next round waits for the
// cache instead of acting on a copy older than our own writes. The order of the phases and what a
// failure means for the round stay with each kind's executor.

import type { PersistentVolumeClaim } from '../apis/core.ts';
import { kindFor } from '../apis/registry.ts';
import type { Pod, PodCondition, KubeObject, Stored } from '../apis/core-objects.ts';
import { PatchType, type KubeClient } from '../runtime/client.ts';
import { ignoreNotFound, isAlreadyExists, isConflict, isNamespaceTerminating, isNotFound } from '../runtime/errors.ts';
import { ControllerRevisions, PersistentVolumeClaims, Pods, type ResourceType } from '../runtime/resources.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Logger } from '../runtime/log.ts';
import type { LifecycleTransition } from '../util/lifecycle.ts';
import { equalRevision, type ControllerRevision } from '../util/revision-data.ts';
import { marshalGoJSON } from '../util/revision.ts';
import type { InPlaceUpdateAction, LabelPatch, PodCreation, PodRefresh } from './plan-types.ts';
import type { FeatureGates } from '../apis/features.ts';
import type { PubBudgetGuard } from '../runtime/pub-budget.ts';
import type { WorkloadExpectations } from './workload.ts';
import { errMessage } from '../util/errors.ts';

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
 * A strategic-merge patch turning `old` into `updated` for what in-place updates touch through the
 * pod itself: labels, annotations, added finalizers and container images (resources go through
 * podResizePatch). With `resourceVersion` it is a compare-and-swap (409 Conflict when the pod
 * changed since).
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
    if (before?.image !== c.image) containers.push({ name: c.name, image: c.image });
  }
  if (Object.keys(metadata).length === 0 && containers.length === 0) return undefined;
  if (resourceVersion) metadata.resourceVersion = resourceVersion;
  return { metadata, ...(containers.length ? { spec: { containers } } : {}) };
}

/**
 * The patch of the pod's `resize` subresource (Kubernetes in-place pod resize; the pod itself
 * refuses resource changes) turning the container resources of `old` into those of `updated`, a
 * compare-and-swap on `resourceVersion`; undefined when no container's resources changed.
 */
export function podResizePatch(old: Pod, updated: Pod, resourceVersion?: string): Record<string, unknown> | undefined {
  const containers: Array<Record<string, unknown>> = [];
  for (const c of updated.spec?.containers ?? []) {
    const before = old.spec?.containers?.find((o) => o.name === c.name);
    if (marshalGoJSON(before?.resources ?? {}) !== marshalGoJSON(c.resources ?? {}))
      containers.push({ name: c.name, resources: c.resources ?? {} });
  }
  if (containers.length === 0) return undefined;
  return { ...(resourceVersion ? { metadata: { resourceVersion } } : {}), spec: { containers } };
}

/** A pod condition in a strategic-merge patch: null removes a field the pod's condition has. */
export type ConditionPatch = Omit<PodCondition, 'reason' | 'message'> & { reason?: string | null; message?: string | null };

/**
 * The conditions of `conditions` that differ from the pod's, as strategic-merge patch entries
 * (merged by type on the server). A strategic merge keeps fields the entry leaves out, so a reason
 * or message the pod has and the new condition lacks is sent as null: otherwise e.g.
 * InPlaceUpdateReady=True would keep reason StartInPlaceUpdate, still differ next round, and be
 * re-patched on every reconcile of every in-place-updated pod.
 */
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

export type ExecutorClient = Pick<KubeClient, 'create' | 'get' | 'patch' | 'delete' | 'updateStatus'>;

export /** The key of a namespaced object in the workqueue and in expectations. */
const keyOf = (obj: KubeObject) => `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;

/** Event notes in each kind's upstream wording. */
export interface WorkloadEventNotes {
  created(pod: string, workload: string): string;
  createFailed(pod: string, workload: string, err: string): string;
  deleted(pod: string, workload: string): string;
  deleteFailed(pod: string, workload: string, err: string): string;
  inPlaceFailed(u: InPlaceUpdateAction, err: string): string;
  /** Upstream Advanced DaemonSet also reports each successful in-place update. */
  inPlaceUpdated?(u: InPlaceUpdateAction): string;
}

export interface WorkloadWriterDeps {
  client: ExecutorClient;
  recorder: EventRecorder;
  expectations: WorkloadExpectations;
  log: Logger;
  /** PodUnavailableBudget taken before each in-place update of a kind with pubGuarded (gate PodUnavailableBudgetUpdateGate). */
  pubBudget?: PubBudgetGuard;
  features?: Pick<FeatureGates, 'PodUnavailableBudgetUpdateGate'>;
}

export interface WorkloadWriterKind {
  type: ResourceType;
  notes: WorkloadEventNotes;
  /** Claims created with a pod are scale expectations too (CloneSet watches its claims). */
  expectClaims?: boolean;
  /** In-place updates take PodUnavailableBudget first, as upstream CloneSet and Advanced StatefulSet. */
  pubGuarded?: boolean;
}

export type RevisionOutcome = 'created' | 'collision' | 'namespaceTerminating';

/** How soon a round looks again after a revision name collision (status.collisionCount was bumped). */
export const COLLISION_REQUEUE_MS = 100;

interface WorkloadWithCollisions {
  status?: { collisionCount?: number };
}

/** What creating a revision takes: WorkloadWriter's deps, or those of an executor of a kind without pods. */
export type RevisionWriterDeps = Pick<WorkloadWriterDeps, 'client' | 'expectations' | 'log'>;

/**
 * Creates a workload's ControllerRevision (in the revision's own namespace: a cluster-scoped
 * SidecarSet keeps its revisions in the manager's), expected under the workload's key until the
 * cache shows it. 'created' — also when the name is taken by our own revision with equal data (our
 * cache lags); 'collision' when it belongs to a different revision (status.collisionCount bumped, so
 * the next round hashes anew); or 'namespaceTerminating' when the namespace refuses new objects
 * (the revision stays expected).
 */
export async function createRevision<W extends WorkloadWithCollisions>(
  deps: RevisionWriterDeps,
  type: ResourceType,
  workload: Stored<W>,
  rev: ControllerRevision,
): Promise<RevisionOutcome> {
  const key = keyOf(workload);
  const name = rev.metadata.name ?? '';
  const expected = deps.expectations.revisions;
  expected.expectScale(key, 'create', name);
  try {
    const created = await deps.client.create<ControllerRevision>(ControllerRevisions, rev);
    deps.expectations.resourceVersions.expect(created);
    return 'created';
  } catch (err) {
    if (isNamespaceTerminating(err)) return 'namespaceTerminating';
    if (!isAlreadyExists(err)) {
      expected.observeScale(key, 'create', name);
      throw err;
    }
  }
  const live = await deps.client.get<ControllerRevision>(ControllerRevisions, name, {
    namespace: rev.metadata.namespace ?? workload.metadata.namespace,
  });
  const ours = live.metadata.ownerReferences?.some((r) => r.controller && r.uid === workload.metadata.uid);
  if (ours && equalRevision(live, rev)) return 'created';
  expected.observeScale(key, 'create', name);
  const collisionCount = (workload.status?.collisionCount ?? 0) + 1;
  deps.log.info({ revision: name, collisionCount }, 'controller revision name collision');
  await deps.client.updateStatus(type, { ...workload, status: { ...requiredStatusOf(type), ...workload.status, collisionCount } });
  return 'collision';
}

export class WorkloadWriter<W extends WorkloadWithCollisions> {
  constructor(
    private readonly kind: WorkloadWriterKind,
    private readonly deps: WorkloadWriterDeps,
  ) {}

  event(workload: Stored<W>, type: 'Normal' | 'Warning', reason: string, note: string, action = reason): void {
    this.deps.recorder.event(workload, type, reason, action, note);
  }

  /** See createRevision. */
  createRevision(workload: Stored<W>, rev: ControllerRevision): Promise<RevisionOutcome> {
    return createRevision(this.deps, this.kind.type, workload, rev);
  }

  /** Renumbers an existing revision (a rollback to it makes it the newest), with annotations to merge. */
  async renumberRevision(
    namespace: string,
    update: { name: string; revision: number; annotations?: Record<string, string | null> },
  ): Promise<void> {
    const { name, revision, annotations } = update;
    const updated = await this.deps.client.patch<ControllerRevision>(
      ControllerRevisions,
      name,
      annotations ? { metadata: { annotations }, revision } : { revision },
      { namespace, patchType: PatchType.Merge },
    );
    this.deps.expectations.resourceVersions.expect(updated);
  }

  async patchPod(namespace: string, name: string, patch: unknown, subresource?: 'status' | 'resize'): Promise<Pod> {
    const pod = await this.deps.client.patch<Pod>(Pods, name, patch, {
      namespace,
      patchType: PatchType.StrategicMerge,
      ...(subresource ? { subresource } : {}),
    });
    this.deps.expectations.resourceVersions.expect(pod);
    return pod;
  }

  /**
   * Writes an in-place update's pod, compare-and-swap on `resourceVersion`: the resize first (new
   * container resources, through the `resize` subresource), then labels, annotations and images.
   * The resize is the compare-and-swap: once it went through, the pod patch (only the keys and
   * images the update changes) goes without a version, so status written in between (the kubelet
   * acting on the resize, readiness) cannot fail it and leave the pod resized but not updated —
   * with a RestartContainer policy the kubelet would restart the container for the resize and
   * again for the image. A round that fails between the two leaves the pod resized at its old
   * revision; the next round plans the same update again and only the second write remains.
   */
  async writeInPlace(namespace: string, pod: Pod, updated: Pod, resourceVersion: string | undefined): Promise<void> {
    const name = pod.metadata.name ?? '';
    const resize = podResizePatch(pod, updated, resourceVersion);
    if (resize) await this.patchPod(namespace, name, resize, 'resize');
    const patch = podUpdatePatch(pod, updated, resize ? undefined : resourceVersion);
    if (patch) await this.patchPod(namespace, name, patch);
  }

  /** Writes only the conditions that differ; undefined when none did. */
  async patchConditions(namespace: string, pod: Pod, conditions: readonly PodCondition[] | undefined): Promise<Pod | undefined> {
    const changed = changedConditions(pod, conditions ?? []);
    if (changed.length === 0) return undefined;
    return this.patchPod(namespace, pod.metadata.name ?? '', { status: { conditions: changed } }, 'status');
  }

  async refreshPods(namespace: string, refreshes: readonly PodRefresh[], pods: ReadonlyMap<string, Pod>): Promise<void> {
    await writeAllInSlowStart(refreshes, async (r) => {
      const pod = pods.get(r.pod);
      if (!pod) return;
      if (r.conditions) await ignoreNotFound(this.patchConditions(namespace, pod, r.conditions));
      if (r.updatedPod) await ignoreNotFound(this.writeInPlace(namespace, pod, r.updatedPod, pod.metadata.resourceVersion));
    });
  }

  /**
   * A pod's lifecycle change and the conditions due for it in the same round — InPlaceUpdateReady
   * from a refresh, KruisePodReady from the transition — written as ONE pods/status patch. The
   * status subresource takes labels and annotations along with the status (not spec, finalizers or
   * ownerReferences), so what upstream writes as two requests (the state label on the pod, then
   * the conditions on its status) is one: a new pod's PreparingNormal → Normal with its first
   * InPlaceUpdateReady, a finished in-place update's Updating → Normal with InPlaceUpdateReady=True.
   * Every request a controller makes waits on its QPS budget, so this is what bounds scale-up and
   * in-place rollouts (docs/benchmarks.md, issue 20). The end state is the same as upstream's; a
   * watcher sees one change instead of two. Returns what is left to write separately: transitions
   * that add finalizers or come with no condition change, refreshes that write the pod itself (next
   * container batch, grace ended) or have no transition, and any pod named more than once.
   */
  async writeLifecycleWithConditions(
    namespace: string,
    transitions: readonly LifecycleTransition[],
    refreshes: readonly PodRefresh[],
    pods: ReadonlyMap<string, Pod>,
  ): Promise<{ transitions: LifecycleTransition[]; refreshes: PodRefresh[] }> {
    const count = new Map<string, number>();
    for (const { pod } of [...transitions, ...refreshes]) count.set(pod, (count.get(pod) ?? 0) + 1);
    const refreshOf = new Map(refreshes.map((r) => [r.pod, r]));
    const patches: Array<{ pod: string; patch: unknown }> = [];
    for (const t of transitions) {
      const pod = pods.get(t.pod);
      const refresh = refreshOf.get(t.pod);
      if (!pod || count.get(t.pod)! > (refresh ? 2 : 1) || refresh?.updatedPod || t.addFinalizers.length) continue;
      if (!t.stateChanged && Object.keys(t.labels).length === 0) continue;
      const conditions = changedConditions(pod, [...(refresh?.conditions ?? []), ...(t.readinessCondition ? [t.readinessCondition] : [])]);
      if (conditions.length === 0) continue;
      patches.push({ pod: t.pod, patch: { metadata: { labels: t.labels, annotations: t.annotations }, status: { conditions } } });
    }
    await writeAllInSlowStart(patches, ({ pod, patch }) => ignoreNotFound(this.patchPod(namespace, pod, patch, 'status')));
    const written = new Set(patches.map((p) => p.pod));
    return {
      transitions: transitions.filter((t) => !written.has(t.pod)),
      refreshes: refreshes.filter((r) => !written.has(r.pod)),
    };
  }

  /** Lifecycle state changes (labels, annotations, finalizers) and their readiness conditions. */
  async applyLifecycleTransitions(
    namespace: string,
    transitions: readonly LifecycleTransition[],
    pods: ReadonlyMap<string, Pod>,
  ): Promise<void> {
    await writeAllInSlowStart(transitions, async (t) => {
      const pod = pods.get(t.pod);
      if (!pod) return;
      if (t.stateChanged || Object.keys(t.labels).length || t.addFinalizers.length) {
        const metadata: Record<string, unknown> = { labels: t.labels, annotations: t.annotations };
        if (t.addFinalizers.length) metadata.finalizers = t.addFinalizers;
        await ignoreNotFound(this.patchPod(namespace, t.pod, { metadata }));
      }
      if (t.readinessCondition) await ignoreNotFound(this.patchConditions(namespace, pod, [t.readinessCondition]));
    });
  }

  async patchLabels(namespace: string, patches: readonly LabelPatch[]): Promise<void> {
    await writeAllInSlowStart(patches, (l) => ignoreNotFound(this.patchPod(namespace, l.pod, { metadata: { labels: l.labels } })));
  }

  /**
   * In-place updates, each a compare-and-swap on the resourceVersion read: a pod changed since
   * ends the round with a conflict (the caller requeues), a vanished one is skipped. For a
   * pubGuarded kind a pod whose PodUnavailableBudget has no room is held back; returns how many
   * were (the caller looks again after PUB_BLOCKED_REQUEUE_MS).
   */
  async updateInPlace(workload: Stored<W>, updates: readonly InPlaceUpdateAction[], pods: ReadonlyMap<string, Pod>): Promise<number> {
    const namespace = workload.metadata.namespace ?? '';
    let held = 0;
    for (const u of updates) {
      const pod = pods.get(u.pod);
      if (!pod) continue;
      if (
        this.kind.pubGuarded &&
        !(await pubAllowsInPlaceUpdate(pod, this.deps.pubBudget, this.deps.features ?? { PodUnavailableBudgetUpdateGate: false }))
      ) {
        held++;
        continue;
      }
      try {
        // InPlaceUpdateReady=False goes first so the pod leaves endpoints before its containers restart.
        const afterConditions = await this.patchConditions(namespace, pod, u.conditions);
        await this.writeInPlace(namespace, pod, u.updatedPod, afterConditions?.metadata.resourceVersion ?? pod.metadata.resourceVersion);
        const note = this.kind.notes.inPlaceUpdated?.(u);
        if (note) this.event(workload, 'Normal', 'SuccessfulUpdatePodInPlace', note);
      } catch (err) {
        if (isNotFound(err)) continue;
        if (!isConflict(err)) this.event(workload, 'Warning', 'FailedUpdatePodInPlace', this.kind.notes.inPlaceFailed(u, errMessage(err)));
        throw err;
      }
    }
    return held;
  }

  /**
   * Creates pods in the given batch sizes (slow start: 1, 2, 4, …; or one at a time), each
   * expected as its request goes out and withdrawn if it fails; a failing batch stops the rest.
   * Returns 'namespaceTerminating' when the namespace refuses new objects: as upstream's ReplicaSet
   * controller, its deletion takes the workload too, so the refused creations stay expected and
   * rounds wait for the expectation timeout instead of retrying into the refusal. Other failures
   * are thrown (first one).
   */
  async createPods(
    workload: Stored<W>,
    creations: readonly PodCreation[],
    batchSizes: readonly number[],
  ): Promise<'namespaceTerminating' | undefined> {
    const key = keyOf(workload);
    const expected = (c: PodCreation) => [
      c.pod.metadata.name ?? '',
      ...(this.kind.expectClaims ? c.pvcs.map((p) => p.metadata?.name ?? '') : []),
    ];
    const { failures } = await writeInBatches(creations, batchSizes, (c) => {
      for (const n of expected(c)) this.deps.expectations.scale.expectScale(key, 'create', n);
      return this.createOne(workload, key, c);
    });
    if (!failures.length) return undefined;
    if (failures.some(isNamespaceTerminating)) {
      this.deps.log.info({ namespace: workload.metadata.namespace }, 'namespace is being terminated; not creating pods');
      return 'namespaceTerminating';
    }
    throw failures[0];
  }

  private async createOne(workload: Stored<W>, key: string, c: PodCreation): Promise<void> {
    const namespace = workload.metadata.namespace ?? '';
    const owner = workload.metadata.name ?? '';
    const name = c.pod.metadata.name ?? '';
    const unexpect = (n: string) => this.deps.expectations.scale.observeScale(key, 'create', n);
    try {
      for (const pvc of c.pvcs) {
        try {
          await this.deps.client.create(PersistentVolumeClaims, pvc as Stored<PersistentVolumeClaim>, { namespace });
        } catch (err) {
          // An existing claim brings no watch event: it is not expected any more.
          if (this.kind.expectClaims) unexpect(pvc.metadata?.name ?? '');
          if (!isAlreadyExists(err)) throw err;
        }
      }
      await this.deps.client.create(Pods, c.pod as Stored<Pod>, { namespace });
    } catch (err) {
      // Refused for a namespace being deleted: stays expected and unreported (see createPods).
      if (isNamespaceTerminating(err)) throw err;
      unexpect(name);
      if (this.kind.expectClaims) for (const pvc of c.pvcs) unexpect(pvc.metadata?.name ?? '');
      this.event(workload, 'Warning', 'FailedCreate', this.kind.notes.createFailed(name, owner, errMessage(err)), 'Create');
      throw err;
    }
    this.event(workload, 'Normal', 'SuccessfulCreate', this.kind.notes.created(name, owner), 'Create');
  }

  /**
   * Deletes pods in the given batch sizes (slow start, or one at a time), each followed by what
   * `after` deletes with it (its claims); a failing batch stops the rest and is thrown (first
   * failure).
   */
  async deletePods(
    workload: Stored<W>,
    names: readonly string[],
    batchSizes: readonly number[],
    uidOf: (name: string) => string | undefined,
    after?: (name: string) => Promise<unknown>,
  ): Promise<void> {
    const { failures } = await writeInBatches(names, batchSizes, async (name) => {
      if ((await this.deletePod(workload, name, uidOf(name))) && after) await after(name);
    });
    if (failures.length) throw failures[0];
  }

  /**
   * Deletes one pod with its uid as precondition (a pod recreated under the same name is not
   * ours to delete); false when it was already gone.
   */
  async deletePod(workload: Stored<W>, name: string, uid: string | undefined): Promise<boolean> {
    const key = keyOf(workload);
    const owner = workload.metadata.name ?? '';
    this.deps.expectations.scale.expectScale(key, 'delete', name);
    try {
      await this.deps.client.delete(Pods, name, { namespace: workload.metadata.namespace, preconditions: uid ? { uid } : undefined });
    } catch (err) {
      this.deps.expectations.scale.observeScale(key, 'delete', name);
      if (isNotFound(err)) return false;
      this.event(workload, 'Warning', 'FailedDelete', this.kind.notes.deleteFailed(name, owner, errMessage(err)), 'Delete');
      throw err;
    }
    this.event(workload, 'Normal', 'SuccessfulDelete', this.kind.notes.deleted(name, owner), 'Delete');
    return true;
  }
}

/** What each JSON schema type is when Go writes its zero value. */
const ZERO_OF_TYPE: Record<string, unknown> = { integer: 0, number: 0, string: '', boolean: false };

/**
 * The status fields the kind's CRD requires at the version written (from the schema the CRD is
 * generated from), at the zero values upstream's Go types write (no omitempty): a new workload's
 * first status write may be a collision's, and without them the API server refuses it (422),
 * round after round.
 */
function requiredStatusOf(type: ResourceType): Record<string, unknown> {
  const version = kindFor(type.group, type.kind)?.versions.find((v) => v.name === type.version);
  const status = version?.schema.properties.status as { required?: string[]; properties?: Record<string, { type?: string }> } | undefined;
  const zero: Record<string, unknown> = {};
  for (const field of status?.required ?? []) {
    const value = ZERO_OF_TYPE[status?.properties?.[field]?.type ?? ''];
    if (value !== undefined) zero[field] = value;
  }
  return zero;
}
