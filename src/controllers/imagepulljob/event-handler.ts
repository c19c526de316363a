// Event handlers of the ImagePullJob controller (upstream imagepulljob_event_handler.go): they only
// observe expectations and enqueue the active jobs an event concerns — jobs whose NodeImage entry
// for their image changed, whose node selection a NodeImage or pod moved into or out of, or whose
// source pull secret changed.
import { isDeepStrictEqual } from 'node:util';
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../apis/constants.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import type { EventHandler } from '../../runtime/informer.ts';
import { unwrapDeleted } from '../../runtime/store.ts';
import { LowPriority } from '../../runtime/workqueue.ts';
import { normalizeImageRef } from '../../util/imageref.ts';
import { isActiveJob, jobKey, type ImagePullJob, type NodeImage } from '../imagejobs/resources.ts';
import type { Pod, Secret } from '../../apis/core-objects.ts';
import { referencingJobs } from './secrets.ts';
import { jobSelectsNodeImage, jobSelectsPod } from './select.ts';

export interface Enqueuer {
  add(key: string, opts?: { priority?: number }): void;
}

export interface HandlerDeps {
  queue: Enqueuer;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  /** Cached jobs, of one namespace or (undefined) all. */
  listJobs(namespace?: string): ImagePullJob[];
  podsOnNode(node: string): Pod[];
}

/** Image names whose spec entry or status differs between two versions of a NodeImage. */
export function changedImages(old: NodeImage, cur: NodeImage): Set<string> {
  const changed = new Set<string>();
  const diff = (a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined) => {
    for (const name of new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])) {
      if (!isDeepStrictEqual(a?.[name], b?.[name])) changed.add(name);
    }
  };
  diff(old.spec?.images, cur.spec?.images);
  diff(old.status?.imageStatuses, cur.status?.imageStatuses);
  return changed;
}

function imageNameOf(job: ImagePullJob): string | undefined {
  try {
    return normalizeImageRef(job.spec?.image ?? '').name;
  } catch {
    return undefined;
  }
}

export function makeHandlers(deps: HandlerDeps) {
  const enqueue = (keys: Iterable<string>, initial = false) => {
    for (const k of keys) deps.queue.add(k, initial ? { priority: LowPriority } : {});
  };

  const job: EventHandler<ImagePullJob> = {
    onAdd: (j, initial) => enqueue([jobKey(j)], initial),
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.resourceVersions.observe(cur);
      enqueue([jobKey(cur)]);
    },
    onDelete: (obj) => {
      const j = unwrapDeleted(obj);
      deps.resourceVersions.delete(j);
      deps.scaleExpectations.deleteExpectations(jobKey(j));
      enqueue([jobKey(j)]);
    },
  };

  const jobsSelecting = (ni: NodeImage, labels = ni.metadata.labels) => {
    let pods: Pod[] | undefined;
    const podsOnNode = () => (pods ??= deps.podsOnNode(ni.metadata.name ?? ''));
    return deps.listJobs().filter((j) => jobSelectsNodeImage(j, ni, podsOnNode, labels));
  };

  const nodeImage: EventHandler<NodeImage> = {
    onAdd: (ni, initial) => {
      deps.resourceVersions.observe(ni);
      enqueue(jobsSelecting(ni).map(jobKey), initial);
    },
    onUpdate: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      deps.resourceVersions.observe(cur);
      if (cur.metadata.deletionTimestamp) return enqueue(jobsSelecting(cur).map(jobKey));
      const now = new Set(jobsSelecting(cur).map(jobKey));
      const before = new Set(jobsSelecting(cur, old.metadata.labels).map(jobKey));
      const keys = new Set([...now].filter((k) => !before.has(k)).concat([...before].filter((k) => !now.has(k))));
      const changed = changedImages(old, cur);
      if (changed.size) {
        for (const j of deps.listJobs()) {
          if (now.has(jobKey(j)) && changed.has(imageNameOf(j) ?? '')) keys.add(jobKey(j));
        }
      }
      enqueue(keys);
    },
    onDelete: (obj) => {
      const ni = unwrapDeleted(obj);
      deps.resourceVersions.delete(ni);
      enqueue(jobsSelecting(ni).map(jobKey));
    },
  };

  const jobsForPod = (p: Pod, labels = p.metadata.labels) =>
    deps
      .listJobs(p.metadata.namespace)
      .filter((j) => jobSelectsPod(j, labels))
      .map(jobKey);

  const pod: EventHandler<Pod> = {
    onAdd: (p, initial) => {
      if (p.spec?.nodeName) enqueue(jobsForPod(p), initial);
    },
    onUpdate: (old, cur) => {
      if (!cur.spec?.nodeName) return;
      if (cur.metadata.deletionTimestamp) return enqueue(jobsForPod(cur));
      if (cur.spec.nodeName === old.spec?.nodeName && isDeepStrictEqual(cur.metadata.labels ?? {}, old.metadata.labels ?? {})) return;
      const now = jobsForPod(cur);
      if (!old.spec?.nodeName) return enqueue(now);
      const before = jobsForPod(cur, old.metadata.labels);
      enqueue([...now.filter((k) => !before.includes(k)), ...before.filter((k) => !now.includes(k))]);
    },
    onDelete: (obj) => {
      const p = unwrapDeleted(obj);
      if (p.spec?.nodeName) enqueue(jobsForPod(p));
    },
  };

  // Copies in kruise-daemon-config satisfy the creation expectations of the jobs they name; changes
  // to a source secret are re-copied by the active jobs naming it.
  const observeCopy = (s: Secret) => {
    for (const key of referencingJobs(s)) deps.scaleExpectations.observeScale(key, 'create', s.metadata.name ?? '');
  };
  const jobsNaming = (s: Secret) =>
    deps
      .listJobs(s.metadata.namespace)
      .filter((j) => isActiveJob(j) && (j.spec?.pullSecrets ?? []).includes(s.metadata.name ?? ''))
      .map(jobKey);

  const secret: EventHandler<Secret> = {
    onAdd: (s, initial) => {
      if (s.metadata.namespace === KRUISE_DAEMON_CONFIG_NAMESPACE) return observeCopy(s);
      if (!s.metadata.deletionTimestamp) enqueue(jobsNaming(s), initial);
    },
    onUpdate: (old, cur) => {
      if (cur.metadata.namespace === KRUISE_DAEMON_CONFIG_NAMESPACE) {
        deps.resourceVersions.observe(cur);
        return observeCopy(cur);
      }
      if (cur.metadata.deletionTimestamp) return;
      if (isDeepStrictEqual(old.data ?? {}, cur.data ?? {}) && isDeepStrictEqual(old.stringData ?? {}, cur.stringData ?? {})) return;
      enqueue(jobsNaming(cur));
    },
  };

  return { job, nodeImage, pod, secret };
}
