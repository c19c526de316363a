// The ImagePullJob controller's decisions (upstream imagepulljob_controller.go / _utils.go), pure:
// the job's status from the NodeImages it selects, the pull policy its tags carry, how one
// NodeImage's spec changes when the job claims it, and planImagePullJob, the whole round.
import { isDeepStrictEqual } from 'node:util';
import { FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION, KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../apis/constants.ts';
import type { KubeObject, Secret } from '../../apis/core-objects.ts';
import {
  byTag,
  finishedJobAction,
  isActiveJob,
  parseTime,
  pruneUndefined,
  type ImagePullJob,
  type ImagePullJobStatus,
  type ImageSpec,
  type ImageTagSpec,
  type NodeImage,
} from '../imagejobs/resources.ts';
import { planSecretSync, type PullSecretRef, type SecretSyncPlan } from './secrets.ts';
import { metaTime } from '../../util/clock.ts';

/** Nodes pulling at once when spec.parallelism is unset. */
export const DEFAULT_PARALLELISM = 1;
/** Tags of Never-type jobs are cleaned up 24h (± 10 min) after they finish. */
const TTL_SECONDS_FOR_NEVER = 24 * 3600;
/** Tags of Never-type jobs fail after this long unless one pull attempt may take longer. */
const ACTIVE_DEADLINE_SECONDS_FOR_NEVER = 1800;
/** Upstream --default-ttlseconds-for-always-nodeimage default. */
export const DEFAULT_TTL_SECONDS_FOR_ALWAYS_NODEIMAGE = 300;
const DEFAULT_PULL_TIMEOUT_SECONDS = 600;
const DEFAULT_BACKOFF_LIMIT = 3;
/** The shortest wait before re-checking activeDeadlineSeconds. */
export const MIN_REQUEUE_MS = 1000;

/** The reference a NodeImage tag keeps to each job that wants it. */
export function jobOwnerRef(job: ImagePullJob) {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImagePullJob',
    name: job.metadata.name ?? '',
    namespace: job.metadata.namespace ?? '',
    uid: job.metadata.uid ?? '',
  };
}

/**
 * intstr IntValue: parallelism is validated to be a non-negative integer (or numeric string); a
 * string that does not parse counts as 0, as in Go, so such a job waits instead of flooding nodes.
 */
export function parallelismOf(job: ImagePullJob): number {
  const p = job.spec?.parallelism;
  if (p === undefined || p === null) return DEFAULT_PARALLELISM;
  if (typeof p === 'number') return p;
  return /^[+-]?\d+$/.test(p) ? Number(p) : 0;
}

const isNever = (job: ImagePullJob) => job.spec?.completionPolicy?.type === 'Never';

export interface StatusInput {
  job: ImagePullJob;
  nodeImages: readonly NodeImage[];
  imageName: string;
  imageTag: string;
  /** Secrets every NodeImage entry for this image must reference. */
  secrets: readonly PullSecretRef[];
  nowMs: number;
}

export interface StatusResult {
  status: ImagePullJobStatus;
  /** NodeImages the job still has to write its tag (or secrets) into, sorted by name. */
  notSynced: string[];
}

const hasSecret = (list: ImageSpec['pullSecrets'], s: PullSecretRef) =>
  (list ?? []).some((o) => (o.namespace ?? '') === s.namespace && (o.name ?? '') === s.name);

export function formatStatusMessage(status: ImagePullJobStatus): string {
  if (status.completionTime) return 'job has completed';
  if (status.desired === 0) return 'job is running, no progress';
  const done = (status.succeeded ?? 0) + (status.failed ?? 0);
  return `job is running, progress ${((100 * done) / status.desired).toFixed(1)}%`;
}

/**
 * Upstream calculateStatus: a node counts once the tag for this image carries the job as owner; its
 * phase is read from the tag status of the same version (another version means the node is still
 * on it). Always-type jobs complete when every node finished, or at activeDeadlineSeconds with
 * whatever is unfinished counted as failed.
 */
export function calculateStatus(input: StatusInput): StatusResult {
  const { job, nodeImages, imageName, imageTag, secrets, nowMs } = input;
  const uid = job.metadata.uid;
  const startTime = job.status?.startTime ?? metaTime(nowMs);
  const notSynced = new Set<string>();
  const pulling: string[] = [];
  const succeeded: string[] = [];
  const failed: string[] = [];
  for (const ni of nodeImages) {
    const name = ni.metadata.name ?? '';
    const imageSpec = ni.spec?.images?.[imageName];
    let version = -1;
    if (imageSpec) {
      if (!secrets.every((s) => hasSecret(imageSpec.pullSecrets, s))) notSynced.add(name);
      const tag = imageSpec.tags?.find((t) => t.tag === imageTag);
      if (tag && (tag.ownerReferences ?? []).some((r) => r.uid === uid)) version = tag.version ?? 0;
    }
    if (version < 0) {
      notSynced.add(name);
      continue;
    }
    const tagStatus = ni.status?.imageStatuses?.[imageName]?.tags?.find((t) => t.tag === imageTag);
    if (!tagStatus || (tagStatus.version ?? 0) !== version) pulling.push(name);
    else if (tagStatus.phase === 'Succeeded') succeeded.push(name);
    else if (tagStatus.phase === 'Failed') failed.push(name);
    else pulling.push(name);
  }

  const desired = nodeImages.length;
  const policy = job.spec?.completionPolicy;
  const deadline = policy?.activeDeadlineSeconds;
  const start = parseTime(startTime) ?? nowMs;
  if (!isNever(job) && deadline != null && desired !== succeeded.length + failed.length && nowMs - start >= deadline * 1000) {
    const counted = new Set([...succeeded, ...failed, ...pulling]);
    const failedNodes = [...failed, ...pulling, ...[...notSynced].filter((n) => !counted.has(n))].sort();
    const status: ImagePullJobStatus = {
      startTime,
      completionTime: metaTime(nowMs),
      desired,
      active: 0,
      succeeded: succeeded.length,
      failed: failedNodes.length,
      failedNodes,
      message: 'job exceeds activeDeadlineSeconds',
    };
    return { status: pruneUndefined(status), notSynced: [] };
  }

  const status: ImagePullJobStatus = {
    startTime,
    desired,
    active: pulling.length,
    succeeded: succeeded.length,
    failed: failed.length,
    failedNodes: failed.sort(),
  };
  if (!isNever(job) && desired - succeeded.length - failed.length === 0) status.completionTime = metaTime(nowMs);
  status.message = formatStatusMessage(status);
  return { status: pruneUndefined(status), notSynced: [...notSynced].sort() };
}

/** Whether the new status differs from the stored one (what an update would change). */
export function statusChanged(job: ImagePullJob, status: ImagePullJobStatus): boolean {
  return !isDeepStrictEqual(pruneUndefined(job.status ?? {}), status);
}

/** The not-synced NodeImages this round may claim: parallelism minus the nodes still pulling. */
export function nodesToClaim(job: ImagePullJob, status: ImagePullJobStatus, notSynced: readonly string[]): string[] {
  const room = parallelismOf(job) - (status.active ?? 0);
  return room > 0 ? notSynced.slice(0, room) : [];
}

/** Random integer in [0, n). */
export type RandomInt = (n: number) => number;

/**
 * The pull policy a new tag carries. Tags of Always-type jobs outlive the job's own TTL (else its
 * deadline, else every retry) by --default-ttlseconds-for-always-nodeimage plus up to 5 min of
 * jitter, so tags of one job do not all expire at once; Never-type jobs never complete, so their
 * tags get a day and a deadline of their own.
 */
export function tagPullPolicy(
  job: ImagePullJob,
  defaultTtlForAlways: number,
  randomInt: RandomInt,
): NonNullable<ImageTagSpec['pullPolicy']> {
  const pp = job.spec?.pullPolicy;
  const cp = job.spec?.completionPolicy;
  const policy: NonNullable<ImageTagSpec['pullPolicy']> = {};
  if (pp?.backoffLimit != null) policy.backoffLimit = pp.backoffLimit;
  if (pp?.timeoutSeconds != null) policy.timeoutSeconds = pp.timeoutSeconds;
  if (isNever(job)) {
    policy.ttlSecondsAfterFinished = TTL_SECONDS_FOR_NEVER + randomInt(1200) - 600;
    policy.activeDeadlineSeconds =
      pp?.timeoutSeconds != null && pp.timeoutSeconds > ACTIVE_DEADLINE_SECONDS_FOR_NEVER
        ? pp.timeoutSeconds
        : ACTIVE_DEADLINE_SECONDS_FOR_NEVER;
    return policy;
  }
  const base =
    cp?.ttlSecondsAfterFinished ??
    cp?.activeDeadlineSeconds ??
    (pp?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS) * (pp?.backoffLimit ?? DEFAULT_BACKOFF_LIMIT);
  policy.ttlSecondsAfterFinished = base + defaultTtlForAlways + randomInt(300);
  if (cp?.activeDeadlineSeconds != null) policy.activeDeadlineSeconds = cp.activeDeadlineSeconds;
  return policy;
}

export interface ClaimInput {
  nodeImage: NodeImage;
  job: ImagePullJob;
  imageName: string;
  imageTag: string;
  secrets: readonly PullSecretRef[];
  pullPolicy: NonNullable<ImageTagSpec['pullPolicy']>;
  nowMs: number;
}

/**
 * The image entry after the job claims this NodeImage (§12.1 step 5), or undefined when nothing
 * changes. A tag already owned by someone else gets the job as another owner and a version bump,
 * which starts a new pull round on the node; a new tag continues from the last version the node
 * reported, so the node never mistakes it for a round it already finished. Missing pull secrets are
 * added even when the job already owns the tag, or that node would never count as synced.
 */
export function claimNodeImage(input: ClaimInput): ImageSpec | undefined {
  const { nodeImage, job, imageName, imageTag, secrets, pullPolicy, nowMs } = input;
  const before = nodeImage.spec?.images?.[imageName];
  const entry: ImageSpec = structuredClone(before ?? { tags: [] });
  entry.tags ??= [];
  if (job.spec?.sandboxConfig) entry.sandboxConfig = structuredClone(job.spec.sandboxConfig);
  else delete entry.sandboxConfig;
  for (const s of secrets) {
    if (!hasSecret(entry.pullSecrets, s)) (entry.pullSecrets ??= []).push({ ...s });
  }
  const owner = jobOwnerRef(job);
  const createdAt = metaTime(nowMs);
  const tag = entry.tags.find((t) => t.tag === imageTag);
  if (tag) {
    if (!(tag.ownerReferences ?? []).some((r) => r.uid === owner.uid)) {
      tag.version = (tag.version ?? 0) + 1;
      (tag.ownerReferences ??= []).push(owner);
      tag.createdAt = createdAt;
      if (job.spec?.imagePullPolicy) tag.imagePullPolicy = job.spec.imagePullPolicy;
      else delete tag.imagePullPolicy;
    }
  } else {
    const reported = nodeImage.status?.imageStatuses?.[imageName]?.tags?.find((t) => t.tag === imageTag);
    const newTag: ImageTagSpec = {
      tag: imageTag,
      version: (reported ? (reported.version ?? 0) : -1) + 1,
      pullPolicy: structuredClone(pullPolicy),
      ownerReferences: [owner],
      createdAt,
    };
    if (job.spec?.imagePullPolicy) newTag.imagePullPolicy = job.spec.imagePullPolicy;
    entry.tags.push(newTag);
  }
  entry.tags.sort(byTag);
  return before && isDeepStrictEqual(pruneUndefined(before), pruneUndefined(entry)) ? undefined : entry;
}

/** When to look again at a running Always-type job with a deadline. */
export function deadlineRequeueMs(job: ImagePullJob, status: ImagePullJobStatus, nowMs: number): number | undefined {
  const deadline = job.spec?.completionPolicy?.activeDeadlineSeconds;
  if (isNever(job) || deadline == null) return undefined;
  const start = parseTime(status.startTime) ?? nowMs;
  return Math.max(MIN_REQUEUE_MS, deadline * 1000 - (nowMs - start));
}

/** What one reconcile of a job observed; the NodeImages and image only for an active job. */
export interface ImagePullJobInput {
  job: ImagePullJob;
  /** Every secret in kruise-daemon-config. */
  secretCopies: readonly Secret[];
  /** Source secrets by name in the job's namespace. */
  sourceSecret(name: string): Secret | undefined;
  /** kruise-daemon-config itself; copies cannot be made without it. */
  daemonNamespace: KubeObject | undefined;
  /** The NodeImages the job selects (active jobs). */
  nodeImages?: readonly NodeImage[];
  /** The job's image, normalized (active jobs). */
  image?: { name: string; tag: string };
  nowMs: number;
  /** --default-ttlseconds-for-always-nodeimage. */
  defaultTtlForAlways: number;
  randomInt: RandomInt;
  randomSuffix(): string;
}

/** The pull-secret copies to write; `blocked` says why copies cannot be created (they are not). */
export type SecretWrites = SecretSyncPlan & { blocked?: string };

/** The NodeImages that get the job's tag this round, and the claim to apply to each. */
export interface Claims {
  nodes: string[];
  imageName: string;
  claim: Omit<ClaimInput, 'nodeImage'>;
}

export type ImagePullJobPlan =
  /** A deleted or completed job: let go of its secrets, drop the finalizer, delete it after its TTL. */
  | { kind: 'finalize'; secrets?: SecretWrites; finalizers?: string[]; deleteJob: boolean; requeueAfterMs?: number }
  /** An active job: protect it with the finalizer, sync secrets, claim NodeImages, store the status. */
  | { kind: 'sync'; finalizers?: string[]; secrets: SecretWrites; claims?: Claims; status?: ImagePullJobStatus; requeueAfterMs?: number };

function secretWrites(input: ImagePullJobInput): SecretWrites {
  const { job } = input;
  const plan = planSecretSync({
    job,
    copies: input.secretCopies,
    source: (name) => input.sourceSecret(name),
    randomSuffix: () => input.randomSuffix(),
  });
  const daemonNs = input.daemonNamespace;
  if (!plan.create.length || (daemonNs && !daemonNs.metadata.deletionTimestamp)) return plan;
  const why = daemonNs ? 'is being deleted' : 'does not exist';
  return { ...plan, blocked: `namespace ${KRUISE_DAEMON_CONFIG_NAMESPACE} ${why}: pull secrets cannot be copied for kruise-daemon` };
}

/** The whole round for one job (upstream Reconcile after its expectation checks). */
export function planImagePullJob(input: ImagePullJobInput): ImagePullJobPlan {
  const { job, nowMs } = input;
  const finalizers = job.metadata.finalizers ?? [];
  const protectedJob = finalizers.includes(FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION);
  if (!isActiveJob(job)) {
    const release = protectedJob
      ? { secrets: secretWrites(input), finalizers: finalizers.filter((f) => f !== FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION) }
      : {};
    if (job.metadata.deletionTimestamp) return { kind: 'finalize', ...release, deleteJob: false };
    const finished = finishedJobAction(job, nowMs);
    return {
      kind: 'finalize',
      ...release,
      deleteJob: finished.action === 'delete',
      requeueAfterMs: finished.action === 'wait' ? finished.requeueAfterMs : undefined,
    };
  }
  const nodeImages = input.nodeImages ?? [];
  const image = input.image ?? { name: '', tag: '' };
  const secrets = secretWrites(input);
  const { status, notSynced } = calculateStatus({
    job,
    nodeImages,
    imageName: image.name,
    imageTag: image.tag,
    secrets: secrets.refs,
    nowMs,
  });
  const nodes = nodesToClaim(job, status, notSynced);
  const changed = statusChanged(job, status);
  return {
    kind: 'sync',
    finalizers: protectedJob ? undefined : [...finalizers, FINALIZER_IMAGEPULLJOB_DELETION_PROTECTION],
    secrets,
    claims: nodes.length
      ? {
          nodes,
          imageName: image.name,
          claim: {
            job,
            imageName: image.name,
            imageTag: image.tag,
            secrets: secrets.refs,
            nowMs,
            pullPolicy: tagPullPolicy(job, input.defaultTtlForAlways, input.randomInt),
          },
        }
      : undefined,
    status: changed ? status : undefined,
    requeueAfterMs: changed ? undefined : deadlineRequeueMs(job, status, nowMs),
  };
}
