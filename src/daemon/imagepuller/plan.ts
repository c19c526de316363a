// Image pulling on a node (behaviour spec §12.2, daemon puller) as pure decisions: the pull tasks a
// NodeImage spec asks for, which workers to start or stop, the retry backoff, and the status the
// daemon reports. The manager's ImagePullJob controller reads tag status by `version`, so every tag
// status echoes the version of the spec tag it belongs to.
import type { ImageTagStatus, NodeImageSpec, NodeImageStatus } from '../../apis/apps/nodeimage.ts';

export const DEFAULT_TIMEOUT_SECONDS = 600;
export const DEFAULT_BACKOFF_LIMIT = 3;
export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_CAP_MS = 30_000;

export interface PullTask {
  /** `<image name>:<tag>`, one worker each. */
  key: string;
  imageName: string;
  tag: string;
  /** The reference handed to the runtime. */
  ref: string;
  version: number;
  timeoutSeconds: number;
  backoffLimit: number;
  ifNotPresent: boolean;
  pullSecrets: Array<{ namespace: string; name: string }>;
  sandboxConfig?: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

/** `name:tag`, or `name@sha256:…` when the tag is a digest. */
export function imageReference(imageName: string, tag: string): string {
  return /^[a-z0-9]+:[a-f0-9]{32,}$/i.test(tag) ? `${imageName}@${tag}` : `${imageName}:${tag}`;
}

const nonNegInt = (v: unknown, dflt: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : dflt);

/** The tasks of a spec, in spec order; entries of the wrong shape are skipped, never thrown on. */
export function desiredTasks(spec: NodeImageSpec | undefined): PullTask[] {
  const out: PullTask[] = [];
  const images = spec?.images;
  if (!images || typeof images !== 'object') return out;
  for (const [imageName, image] of Object.entries(images)) {
    if (!image || !Array.isArray(image.tags)) continue;
    const pullSecrets = (Array.isArray(image.pullSecrets) ? image.pullSecrets : [])
      .filter((s) => s && typeof s.name === 'string' && s.name && typeof s.namespace === 'string' && s.namespace)
      .map((s) => ({ namespace: s.namespace!, name: s.name! }));
    for (const t of image.tags) {
      if (!t || typeof t.tag !== 'string' || !t.tag) continue;
      out.push({
        key: `${imageName}:${t.tag}`,
        imageName,
        tag: t.tag,
        ref: imageReference(imageName, t.tag),
        version: nonNegInt(t.version, 0),
        timeoutSeconds: nonNegInt(t.pullPolicy?.timeoutSeconds, DEFAULT_TIMEOUT_SECONDS) || DEFAULT_TIMEOUT_SECONDS,
        backoffLimit: nonNegInt(t.pullPolicy?.backoffLimit, DEFAULT_BACKOFF_LIMIT),
        ifNotPresent: t.imagePullPolicy === 'IfNotPresent',
        pullSecrets,
        sandboxConfig: image.sandboxConfig ?? undefined,
      });
    }
  }
  return out;
}

/** Wait before retry n (0-based): 1 s, 2 s, 4 s … capped at 30 s. */
export function backoffMs(retry: number): number {
  return Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, retry));
}

const isFinished = (s: ImageTagStatus | undefined) => s?.phase === 'Succeeded' || s?.phase === 'Failed';

function reportedTag(status: NodeImageStatus | undefined, task: PullTask): ImageTagStatus | undefined {
  const tags = status?.imageStatuses?.[task.imageName]?.tags;
  return Array.isArray(tags) ? tags.find((t) => t?.tag === task.tag) : undefined;
}

export interface WorkerPlan {
  start: PullTask[];
  /** Keys of workers to cancel: their tag left the spec or got a new version. */
  stop: string[];
}

/**
 * Workers to start and stop. A tag whose status already shows this version finished is not pulled
 * again (after a daemon restart, say); a new version always starts a fresh pull.
 */
export function planWorkers(
  tasks: readonly PullTask[],
  reported: NodeImageStatus | undefined,
  running: ReadonlyMap<string, number>,
): WorkerPlan {
  const byKey = new Map(tasks.map((t) => [t.key, t]));
  const stop = [...running].filter(([key, version]) => byKey.get(key)?.version !== version).map(([key]) => key);
  const start = tasks.filter((t) => {
    if (running.get(t.key) === t.version) return false;
    const r = reportedTag(reported, t);
    return !(isFinished(r) && r!.version === t.version);
  });
  return { start, stop };
}

/**
 * The status to report: each spec tag's worker status when it has one for this version, else the
 * finished status already reported for this version, else Waiting.
 */
export function buildStatus(
  tasks: readonly PullTask[],
  workers: ReadonlyMap<string, ImageTagStatus>,
  reported: NodeImageStatus | undefined,
  now: string,
): NodeImageStatus {
  const imageStatuses: Record<string, { tags: ImageTagStatus[] }> = {};
  const counts = { succeeded: 0, failed: 0, pulling: 0, waiting: 0 };
  for (const t of tasks) {
    const w = workers.get(t.key);
    const r = reportedTag(reported, t);
    const s: ImageTagStatus =
      w && w.version === t.version
        ? w
        : isFinished(r) && r!.version === t.version
          ? r!
          : { tag: t.tag, phase: 'Waiting', version: t.version };
    (imageStatuses[t.imageName] ??= { tags: [] }).tags.push(s);
    if (s.phase === 'Succeeded') counts.succeeded++;
    else if (s.phase === 'Failed') counts.failed++;
    else if (s.phase === 'Pulling') counts.pulling++;
    else counts.waiting++;
  }
  return {
    desired: tasks.length,
    ...counts,
    imageStatuses,
    firstSyncStatus: reported?.firstSyncStatus ?? { syncAt: now, status: 'Succeeded' },
  };
}

/**
 * A JSON merge patch turning reported into next (images no longer in the spec are nulled), or
 * undefined when nothing changed.
 */
export function statusMergePatch(
  reported: NodeImageStatus | undefined,
  next: NodeImageStatus,
): { status: Record<string, unknown> } | undefined {
  const imageStatuses: Record<string, unknown> = { ...next.imageStatuses };
  for (const name of Object.keys(reported?.imageStatuses ?? {})) if (!(name in imageStatuses)) imageStatuses[name] = null;
  const patch: Record<string, unknown> = { ...next, imageStatuses };
  const same = JSON.stringify(canon(reported ?? {})) === JSON.stringify(canon({ ...next }));
  return same ? undefined : { status: patch };
}

/** Key-sorted copy with absent counts as 0, so equal statuses compare equal whatever their origin. */
function canon(s: Partial<NodeImageStatus>): unknown {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v)
          .filter(([, x]) => x !== undefined && x !== null)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, x]) => [k, sortKeys(x)]),
      );
    }
    return v;
  };
  return sortKeys({
    ...s,
    desired: s.desired ?? 0,
    succeeded: s.succeeded ?? 0,
    failed: s.failed ?? 0,
    pulling: s.pulling ?? 0,
    waiting: s.waiting ?? 0,
    imageStatuses: s.imageStatuses ?? {},
  });
}
