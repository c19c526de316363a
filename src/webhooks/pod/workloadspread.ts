// WorkloadSpread in the pod webhook (spec §10; upstream pkg/util/workloadspread Handler):
//   CREATE: a pod of a workload some WorkloadSpread targets gets a subset: its slot is reserved by
//     a status write (creatingPods, missingReplicas - 1) carrying the resourceVersion read, so
//     concurrent creations, here or on another replica, can never overspend a subset (a 409 re-reads
//     the WorkloadSpread from the API server and chooses again); then the subset's placement and
//     patch are injected with the apps.kruise.io/matched-workloadspread annotation.
//   DELETE / EVICT: a pod annotated with a subset is recorded in its deletingPods with
//     missingReplicas + 1, so its replacement may go back to the subset at once.
// Reads come from the informer caches; only a lost write race reads the API server.

import { randomUUID } from 'node:crypto';
import type { OwnerReference, Pod } from '../../apis/core-objects.ts';
import { isConflict } from '../../runtime/errors.ts';
import type { AdmissionCache, AdmissionReader, AdmissionWriter } from '../../runtime/webhook/types.ts';
import {
  BUILTIN_WORKLOADS,
  controllerOf,
  groupOf,
  hasPercentSubset,
  injectSubsetIntoPod,
  isPodSelected,
  isWorkloadRef,
  matchedWorkloadSpreadOf,
  recordPodInSubset,
  replicasAtPath,
  statefulSubset,
  workloadApiVersion,
  workloadReplicasOf,
  type MatchedWorkloadSpread,
  type SpreadOperation,
  type SpreadView,
} from '../../util/workloadspread.ts';
import { isPodActive } from '../../util/pod.ts';
import {
  isWhitelistedOrSubResource,
  parseCustomWorkloadWhitelist,
  whitelistEntryFor,
  type CustomWorkload,
} from '../../util/custom-workloads.ts';
import {
  DEFAULT_KRUISE_NAMESPACE,
  ENV_POD_NAMESPACE,
  KRUISE_CONFIGURATION_NAME,
  WS_CUSTOM_WORKLOAD_WHITELIST_KEY,
} from '../../apis/constants.ts';

const WS_API_VERSION = 'apps.kruise.io/v1beta1';
type StoredWS = SpreadView & { metadata: NonNullable<SpreadView['metadata']> & { name: string; namespace: string } };

/** What the WorkloadSpread handlers read and write through. */
export interface SpreadAccess {
  cache: AdmissionCache;
  writer?: AdmissionWriter;
  /** Live reads after a lost write race. */
  reader?: AdmissionReader;
  /** Dry-run requests choose a subset but write nothing. */
  dryRun?: boolean;
  now: () => number;
  newUID?: () => string;
}

/** How many times a reservation is tried again after a 409 (client-go retry.DefaultBackoff has 4 steps). */
const CONFLICT_RETRIES = 5;

/**
 * One reservation at a time per WorkloadSpread in this process (upstream's GlobalKeyedMutex): local
 * requests queue instead of burning their retries on each other's 409s.
 */
const locks = new Map<string, Promise<void>>();
async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const chained = prev.then(() => mine);
  locks.set(key, chained);
  await prev;
  try {
    return await fn();
  } finally {
    release();
    if (locks.get(key) === chained) locks.delete(key);
  }
}

/**
 * The WorkloadSpreads this process last wrote (upstream's GlobalCache): the next reservation starts
 * from whichever of it and the informer's copy is newer, not from a cache that has not yet seen our
 * own write.
 */
const lastWritten = new Map<string, StoredWS>();
const rvNumber = (ws: StoredWS | undefined) => Number(ws?.metadata.resourceVersion ?? 0) || 0;

function newest(fromCache: StoredWS): StoredWS {
  const mine = lastWritten.get(fromCache.metadata.uid ?? '');
  return mine && rvNumber(mine) > rvNumber(fromCache) ? mine : fromCache;
}

/** WorkloadSpread_Watch_Custom_Workload_WhiteList of kruise-configuration, from the cache; malformed reads as empty. */
async function spreadWhitelist(cache: AdmissionCache): Promise<CustomWorkload[]> {
  const ns = process.env[ENV_POD_NAMESPACE] || DEFAULT_KRUISE_NAMESPACE;
  const cm = await cache.get<{ data?: Record<string, string> }>('v1', 'ConfigMap', KRUISE_CONFIGURATION_NAME, ns);
  try {
    return parseCustomWorkloadWhitelist(cm?.data?.[WS_CUSTOM_WORKLOAD_WHITELIST_KEY]);
  } catch {
    return [];
  }
}

/** How far an owner chain is followed (pod → sub-resource → workload → …). */
const MAX_OWNER_DEPTH = 4;

/**
 * Whether the WorkloadSpread targets the pod's owner, directly or through it (upstream
 * isReferenceEqual). Among the built-in targets only a ReplicaSet has a workload owner (its
 * Deployment), so only that chain is followed for them: no other built-in pod makes the webhook open
 * the ReplicaSet cache. A whitelisted custom kind (or one of its subResources) is followed up its
 * controller references.
 */
async function targetsOwner(
  ws: StoredWS,
  owner: OwnerReference,
  namespace: string,
  cache: AdmissionCache,
  whitelist: readonly CustomWorkload[],
  depth = 0,
): Promise<boolean> {
  const target = ws.spec.targetRef;
  const names = (ref: OwnerReference) =>
    groupOf(target.apiVersion) === groupOf(ref.apiVersion) && target.kind === ref.kind && target.name === ref.name;
  if (names(owner)) return true;
  if (target.kind === 'Deployment' && owner.kind === 'ReplicaSet' && groupOf(owner.apiVersion) === 'apps') {
    const rs = await cache.get<{ metadata?: Pod['metadata'] }>('apps/v1', 'ReplicaSet', owner.name, namespace);
    const deployment = rs ? controllerOf(rs) : undefined;
    return !!deployment && names(deployment);
  }
  if (depth >= MAX_OWNER_DEPTH || !isWhitelistedOrSubResource(owner, whitelist)) return false;
  const object = await cache.get<{ metadata?: Pod['metadata'] }>(owner.apiVersion, owner.kind, owner.name, namespace);
  const parent = object && object.metadata?.uid === owner.uid ? controllerOf(object) : undefined;
  return !!parent && targetsOwner(ws, parent, namespace, cache, whitelist, depth + 1);
}

/** The WorkloadSpread (at most one) whose targetRef is the pod's owner and whose targetFilter selects it. */
export async function matchWorkloadSpread(pod: Pod, access: SpreadAccess): Promise<StoredWS | undefined> {
  const owner = controllerOf(pod);
  if (!owner) return undefined;
  const builtIn = isWorkloadRef(owner, BUILTIN_WORKLOADS);
  // The whitelist is read only for pods of other owners: built-in pods pay nothing for it.
  const whitelist = builtIn ? [] : await spreadWhitelist(access.cache);
  if (!builtIn && !isWhitelistedOrSubResource(owner, whitelist)) return undefined;
  const namespace = pod.metadata.namespace ?? '';
  const spreads = await access.cache.list<StoredWS>(WS_API_VERSION, 'WorkloadSpread', { namespace });
  for (const ws of spreads) {
    if (ws.metadata.deletionTimestamp || !ws.spec?.targetRef) continue;
    if (!(await targetsOwner(ws, owner, namespace, access.cache, whitelist))) continue;
    try {
      if (isPodSelected(ws, pod.metadata.labels)) return ws;
    } catch {
      // An invalid targetFilter selects nothing (validation refuses it at admission).
    }
  }
  return undefined;
}

async function workloadReplicas(ws: StoredWS, access: SpreadAccess): Promise<number> {
  if (!hasPercentSubset(ws)) return 0;
  const ref = ws.spec.targetRef;
  const workload = await access.cache.get<{ kind?: string; spec?: unknown }>(
    workloadApiVersion(ref),
    ref.kind,
    ref.name,
    ws.metadata.namespace,
  );
  if (!workload || isWorkloadRef(ref, BUILTIN_WORKLOADS) || ws.spec.targetFilter?.replicasPathList?.length)
    return workloadReplicasOf(ws, workload);
  // A custom workload's replicas are at its whitelist entry's replicasPath (GetReplicasFromCustomWorkload).
  const entry = whitelistEntryFor(ref, await spreadWhitelist(access.cache));
  return entry?.replicasPath ? replicasAtPath(workload, entry.replicasPath) : 0;
}

/**
 * acquireSuitableSubset: records the pod in a subset of the WorkloadSpread's status and writes it
 * (compare-and-swap, retried on conflict from a fresh read). Returns the subset and the generated id.
 */
export async function reserveSubset(
  matched: StoredWS,
  pod: Pod,
  op: SpreadOperation,
  access: SpreadAccess,
  annotation?: MatchedWorkloadSpread,
): Promise<{ subset?: string; generatedUID?: string }> {
  const subsets = matched.spec.subsets;
  if (subsets.length === 1 && subsets[0]!.maxReplicas === undefined) return { subset: subsets[0]!.name };
  if (matched.spec.targetRef.kind === 'StatefulSet') {
    return op === 'Create' ? { subset: statefulSubset(matched, pod.metadata.name) } : {};
  }
  return withLock(matched.metadata.uid ?? `${matched.metadata.namespace}/${matched.metadata.name}`, async () => {
    let current: StoredWS | undefined = newest(matched);
    for (let attempt = 0; ; attempt++) {
      const ws = structuredClone(current);
      const status = (ws.status ??= {});
      const record = recordPodInSubset(ws, status, pod, op, {
        now: access.now(),
        workloadReplicas: await workloadReplicas(ws, access),
        newUID: access.newUID ?? randomUUID,
        matched: annotation,
      });
      if (!record.changed || access.dryRun || !access.writer) return record;
      try {
        const written = await access.writer.updateStatus<StoredWS>(WS_API_VERSION, 'WorkloadSpread', ws);
        if (written.metadata.uid) lastWritten.set(written.metadata.uid, written);
        return record;
      } catch (err) {
        if (!isConflict(err) || attempt >= CONFLICT_RETRIES || !access.reader) throw err;
        const fresh = await access.reader.get<StoredWS>(
          WS_API_VERSION,
          'WorkloadSpread',
          matched.metadata.name,
          matched.metadata.namespace,
        );
        if (!fresh) return {};
        current = fresh;
      }
    }
  });
}

/** Mutating handler (CREATE): true when the pod was changed. */
export async function injectWorkloadSpread(pod: Pod, access: SpreadAccess): Promise<boolean> {
  if (!isPodActive(pod) || !controllerOf(pod)) return false;
  const ws = await matchWorkloadSpread(pod, access);
  if (!ws) return false;
  const { subset, generatedUID } = await reserveSubset(ws, pod, 'Create', access);
  if (!subset) return false;
  const out = injectSubsetIntoPod(ws, pod, subset, generatedUID);
  if (out !== pod) {
    for (const k of Object.keys(pod)) delete (pod as unknown as Record<string, unknown>)[k];
    Object.assign(pod, out);
  }
  return true;
}

/** Validating handler (DELETE / EVICT): books the pod's leaving; never refuses. */
export async function recordPodDeletion(pod: Pod | undefined, op: 'Delete' | 'Eviction', access: SpreadAccess): Promise<void> {
  if (!pod) return;
  const annotation = matchedWorkloadSpreadOf(pod);
  if (!annotation || !isPodActive(pod) || !controllerOf(pod)) return;
  const ws = await access.cache.get<StoredWS>(WS_API_VERSION, 'WorkloadSpread', annotation.name, pod.metadata.namespace);
  if (!ws || ws.metadata.deletionTimestamp) return;
  await reserveSubset(ws, pod, op, access, annotation);
}
