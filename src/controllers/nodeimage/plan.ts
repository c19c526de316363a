// The NodeImage controller's decisions (upstream pkg/controller/nodeimage), pure: whether a Node's
// NodeImage is created or deleted, how its spec is cleaned up, and which tags the manager marks
// Failed because the node daemon stopped answering or ran past the deadline. Everything else in
// the status belongs to the daemon; see docs in controller.ts for the split.
import { isDeepStrictEqual } from 'node:util';
import {
  byTag,
  parseTime,
  pruneUndefined,
  type ImageSpec,
  type ImageTagStatus,
  type NodeImage,
  type NodeImageStatus,
} from '../imagejobs/resources.ts';
import { metaTime } from '../../util/clock.ts';
import type { Node } from '../../apis/core-objects.ts';

/** NodeImages with this label may exist without a Node (tests). */
export const FAKE_NODEIMAGE_LABEL = 'apps.kruise.io/fake-nodeimage';
/** Upstream --nodeimage-creation-delay default. */
export const DEFAULT_CREATION_DELAY_MS = 30_000;
/** How long the daemon may take to report a tag version the spec asks for. */
export const RESPONSE_TIMEOUT_MS = 60_000;
/** Shortest wait before checking time-based conditions again (upstream adds 0–2 s of jitter). */
export const MIN_REQUEUE_MS = 3000;

export const MSG_NOT_RESPONDED = 'node has not responded for a long time';
export const MSG_DEADLINE = 'pulling exceeds the activeDeadlineSeconds';

/** Ready, and how much longer to wait before the NodeImage may be created. */
export function nodeReadiness(node: Node, nowMs: number, creationDelayMs: number): { ready: boolean; waitMs: number } {
  const cond = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (cond?.status !== 'True') return { ready: false, waitMs: 0 };
  const since = parseTime(cond.lastTransitionTime) ?? nowMs;
  return { ready: true, waitMs: Math.max(0, creationDelayMs - (nowMs - since)) };
}

/** What the cleanup knows about a tag's ImagePullJob owner: its UID, null when gone, undefined when unknown. */
export type JobLookup = (namespace: string, name: string) => string | null | undefined;
/** Whether a referenced secret exists; undefined when the manager cannot tell. */
export type SecretLookup = (namespace: string, name: string) => boolean | undefined;

export interface SpecCleanup {
  modified: boolean;
  images: Record<string, ImageSpec>;
  messages: string[];
  /** ms until the earliest tag TTL runs out. */
  requeueAfterMs?: number;
}

const isPullJobRef = (r: { apiVersion?: string; kind?: string }) =>
  r.kind === 'ImagePullJob' && (r.apiVersion ?? '').split('/')[0] === 'apps.kruise.io';

/**
 * Upstream doUpdateNodeImage: drop tags the webhook never stamped with createdAt, owner refs to
 * ImagePullJobs that are gone or were recreated (UID differs), tags left without owners or past
 * ttlSecondsAfterFinished since they completed (same version), references to old-style secret
 * copies that no longer exist, and image entries with no tags left.
 */
export function cleanSpec(nodeImage: NodeImage, jobUID: JobLookup, secretExists: SecretLookup, nowMs: number): SpecCleanup {
  const messages: string[] = [];
  const images: Record<string, ImageSpec> = {};
  let wait: number | undefined;
  for (const [name, spec] of Object.entries(nodeImage.spec?.images ?? {})) {
    const entry = structuredClone(spec);
    const tags: ImageSpec['tags'] = [];
    for (const tag of entry.tags ?? []) {
      const fullName = `${name}:${tag.tag}`;
      if (!tag.createdAt) {
        messages.push(`image ${fullName} has no createAt field`);
        continue;
      }
      const owners = tag.ownerReferences ?? [];
      const active = owners.filter((r) => {
        if (!isPullJobRef(r)) return true;
        const uid = jobUID(r.namespace ?? '', r.name ?? '');
        return uid === undefined || uid === r.uid;
      });
      if (active.length !== owners.length) {
        messages.push(`image ${fullName} owners changed from ${JSON.stringify(owners)} to ${JSON.stringify(active)}`);
        if (active.length === 0) continue;
        tag.ownerReferences = active;
      }
      const ttl = tag.pullPolicy?.ttlSecondsAfterFinished;
      if (ttl != null) {
        const st = nodeImage.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === tag.tag && (t.version ?? 0) === (tag.version ?? 0));
        const completed = parseTime(st?.completionTime);
        if (completed !== undefined) {
          const left = ttl * 1000 - (nowMs - completed);
          if (left <= 0) {
            messages.push(`image ${fullName} has exceeded TTL (${ttl})s since ${st!.completionTime} completed`);
            continue;
          }
          wait = Math.min(wait ?? left, left);
        }
      }
      tags.push(tag);
    }
    if (tags.length === 0) {
      messages.push(`no longer has ${name} image spec`);
      continue;
    }
    if (entry.pullSecrets) {
      const kept = entry.pullSecrets.filter((s) => s.mode === 'batch' || secretExists(s.namespace ?? '', s.name ?? '') !== false);
      if (kept.length !== entry.pullSecrets.length) {
        messages.push(`image ${name} pull secrets changed from ${JSON.stringify(entry.pullSecrets)} to ${JSON.stringify(kept)}`);
        if (kept.length) entry.pullSecrets = kept;
        else delete entry.pullSecrets;
      }
    }
    entry.tags = tags.sort(byTag);
    images[name] = entry;
  }
  const before = pruneUndefined(nodeImage.spec?.images ?? {});
  return { modified: messages.length > 0 || !isDeepStrictEqual(before, pruneUndefined(images)), images, messages, requeueAfterMs: wait };
}

export interface TagFailure {
  fullName: string;
  message: string;
  owners: NonNullable<NonNullable<NodeImage['spec']>['images']>[string]['tags'][number]['ownerReferences'];
}

export interface StatusPlan {
  /** The status to write, when it differs from the stored one. */
  status?: NodeImageStatus;
  failures: TagFailure[];
  /** ms until the earliest response timeout or deadline. */
  requeueAfterMs?: number;
}

/**
 * Upstream updateNodeImageStatus: a tag whose status lags the spec version for 60s after createdAt
 * is failed "node has not responded for a long time"; an unfinished tag past activeDeadlineSeconds
 * + 60s since createdAt is failed "pulling exceeds the activeDeadlineSeconds". Statuses of tags no
 * longer in the spec are dropped and the counts recomputed — the same counts the daemon writes, so
 * the two writers agree and the manager only writes when it changed something.
 */
export function planStatus(nodeImage: NodeImage, nowMs: number): StatusPlan {
  const now = metaTime(nowMs);
  const failures: TagFailure[] = [];
  const statuses: Record<string, { tags: ImageTagStatus[] }> = structuredClone(nodeImage.status?.imageStatuses ?? {});
  const inSpec = new Set<string>();
  let wait: number | undefined;
  const waitAtLeast = (ms: number) => (wait = Math.min(wait ?? ms, ms));

  for (const [name, spec] of Object.entries(nodeImage.spec?.images ?? {})) {
    const imageStatus = (statuses[name] ??= { tags: [] });
    for (const tag of spec.tags ?? []) {
      const fullName = `${name}:${tag.tag}`;
      inSpec.add(fullName);
      const created = parseTime(tag.createdAt);
      if (created === undefined) continue;
      let st = imageStatus.tags.find((t) => t.tag === tag.tag);
      let failed = false;
      if (!st || (st.version ?? 0) !== (tag.version ?? 0)) {
        const left = RESPONSE_TIMEOUT_MS - (nowMs - created);
        if (left > 0) {
          waitAtLeast(left);
          continue;
        }
        if (!st) imageStatus.tags.push((st = { tag: tag.tag, phase: 'Failed' }));
        Object.assign(st, { phase: 'Failed', completionTime: now, version: tag.version ?? 0, message: MSG_NOT_RESPONDED });
        failed = true;
      }
      const deadline = tag.pullPolicy?.activeDeadlineSeconds;
      if (!st.completionTime && deadline != null) {
        const left = deadline * 1000 + RESPONSE_TIMEOUT_MS - (nowMs - created);
        if (left > 0) {
          waitAtLeast(left);
          continue;
        }
        Object.assign(st, { phase: 'Failed', completionTime: now, version: tag.version ?? 0, message: MSG_DEADLINE });
        failed = true;
      }
      if (failed) failures.push({ fullName, message: st.message ?? '', owners: tag.ownerReferences });
    }
  }

  const counts = { succeeded: 0, failed: 0, pulling: 0, waiting: 0 };
  const kept: NodeImageStatus['imageStatuses'] = {};
  for (const [name, imageStatus] of Object.entries(statuses)) {
    const tags = imageStatus.tags.filter((t) => inSpec.has(`${name}:${t.tag}`)).sort(byTag);
    for (const t of tags) {
      if (t.phase === 'Succeeded') counts.succeeded++;
      else if (t.phase === 'Failed') counts.failed++;
      else if (t.phase === 'Pulling') counts.pulling++;
      else counts.waiting++;
    }
    if (tags.length) kept[name] = { ...imageStatus, tags };
  }
  const status: NodeImageStatus = pruneUndefined({
    ...nodeImage.status,
    desired: inSpec.size,
    ...counts,
    imageStatuses: Object.keys(kept).length ? kept : undefined,
  });
  const changed = !isDeepStrictEqual(withCountDefaults(pruneUndefined(nodeImage.status ?? { desired: 0 })), withCountDefaults(status));
  return { status: changed ? status : undefined, failures, requeueAfterMs: wait };
}

/** Zero counts may be omitted by a writer (Go omitempty); they compare equal to absent ones. */
function withCountDefaults(s: NodeImageStatus): NodeImageStatus {
  return { succeeded: 0, failed: 0, pulling: 0, waiting: 0, ...s, desired: s.desired ?? 0 };
}

export type NodeImagePlan =
  | { action: 'none'; requeueAfterMs?: number }
  | { action: 'create'; labels?: Record<string, string> }
  | { action: 'delete' }
  | { action: 'updateSpec'; labels?: Record<string, string>; images: Record<string, ImageSpec>; messages: string[] }
  | ({ action: 'updateStatus' } & Required<Pick<StatusPlan, 'status'>> & Omit<StatusPlan, 'status'>);

export interface PlanInput {
  node: Node | undefined;
  nodeImage: NodeImage | undefined;
  nowMs: number;
  creationDelayMs: number;
  jobUID: JobLookup;
  secretExists: SecretLookup;
}

function laterWait(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** One round for one node name: at most one write, the rest waits for the resulting event. */
export function planNodeImage(input: PlanInput): NodeImagePlan {
  const { node, nodeImage, nowMs } = input;
  if (!node || node.metadata.deletionTimestamp) {
    if (!nodeImage || nodeImage.metadata.deletionTimestamp) return { action: 'none' };
    if (!(FAKE_NODEIMAGE_LABEL in (nodeImage.metadata.labels ?? {}))) return { action: 'delete' };
  }
  if (!nodeImage) {
    const { ready, waitMs } = nodeReadiness(node!, nowMs, input.creationDelayMs);
    if (!ready) return { action: 'none' };
    if (waitMs > 0) return { action: 'none', requeueAfterMs: waitMs };
    return { action: 'create', labels: node!.metadata.labels };
  }
  if (nodeImage.metadata.deletionTimestamp) return { action: 'none' };

  const labelsDiffer = !!node && !isDeepStrictEqual(nodeImage.metadata.labels ?? {}, node.metadata.labels ?? {});
  const cleanup = cleanSpec(nodeImage, input.jobUID, input.secretExists, nowMs);
  if (cleanup.modified || labelsDiffer) {
    const messages = labelsDiffer ? ['node labels changed', ...cleanup.messages] : cleanup.messages;
    return {
      action: 'updateSpec',
      labels: node ? (node.metadata.labels ?? {}) : nodeImage.metadata.labels,
      images: cleanup.images,
      messages,
    };
  }
  const status = planStatus(nodeImage, nowMs);
  const requeueAfterMs = clampRequeue(laterWait(cleanup.requeueAfterMs, status.requeueAfterMs));
  if (status.status) return { action: 'updateStatus', status: status.status, failures: status.failures, requeueAfterMs };
  return { action: 'none', requeueAfterMs };
}

function clampRequeue(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : Math.max(MIN_REQUEUE_MS, ms);
}
