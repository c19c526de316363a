// Which NodeImages a job pulls on (upstream GetNodeImagesForJob) and, the other way round, which
// active jobs an event on a NodeImage or a pod concerns (GetActiveJobsFor*). Pure over cache views.
import type { Pod } from '../../apis/core-objects.ts';
import { labelSelectorAsSelector, type Labels } from '../../util/labelselector.ts';
import { isPodActive } from '../../util/pod.ts';
import { isActiveJob, type ImagePullJob, type NodeImage } from '../imagejobs/resources.ts';

export interface SelectionCache {
  getNodeImage(name: string): NodeImage | undefined;
  listNodeImages(): NodeImage[];
  listPods(namespace: string): Pod[];
}

/**
 * The job's NodeImages: those of the nodes running an active matching pod (podSelector), the named
 * ones that exist, those whose labels (the node's) match, or all. Throws on a selector that does not
 * parse (the webhook refuses those, so only objects stored before it ran can have one).
 */
export function nodeImagesForJob(job: ImagePullJob, cache: SelectionCache): NodeImage[] {
  const spec = job.spec;
  if (spec?.podSelector) {
    const selector = labelSelectorAsSelector(spec.podSelector);
    const nodes = new Set<string>();
    for (const pod of cache.listPods(job.metadata.namespace ?? '')) {
      const node = pod.spec?.nodeName;
      if (node && isPodActive(pod) && selector.matches(pod.metadata.labels)) nodes.add(node);
    }
    return [...nodes].map((n) => cache.getNodeImage(n)).filter((n): n is NodeImage => !!n);
  }
  if (!spec?.selector) return cache.listNodeImages();
  if (spec.selector.names) {
    return [...new Set(spec.selector.names)].map((n) => cache.getNodeImage(n)).filter((n): n is NodeImage => !!n);
  }
  const selector = labelSelectorAsSelector(spec.selector);
  return cache.listNodeImages().filter((ni) => selector.matches(ni.metadata.labels));
}

function safeMatches(sel: Parameters<typeof labelSelectorAsSelector>[0], labels: Labels): boolean {
  try {
    return labelSelectorAsSelector(sel).matches(labels);
  } catch {
    return false;
  }
}

/**
 * Whether a NodeImage event concerns an active job. For label selection the old labels count too
 * (a node leaving the selection changes the job's desired count); podSelector jobs look at the
 * pods on that node.
 */
export function jobSelectsNodeImage(
  job: ImagePullJob,
  nodeImage: NodeImage,
  podsOnNode: () => Pod[],
  labels: Labels = nodeImage.metadata.labels,
): boolean {
  if (!isActiveJob(job)) return false;
  const spec = job.spec;
  if (spec?.podSelector) {
    return podsOnNode().some((p) => p.metadata.namespace === job.metadata.namespace && safeMatches(spec.podSelector, p.metadata.labels));
  }
  if (!spec?.selector) return true;
  if (spec.selector.names) return spec.selector.names.includes(nodeImage.metadata.name ?? '');
  return safeMatches(spec.selector, labels);
}

/** Whether a pod's labels put its node into an active podSelector job of its namespace. */
export function jobSelectsPod(job: ImagePullJob, labels: Labels): boolean {
  return isActiveJob(job) && !!job.spec?.podSelector && safeMatches(job.spec.podSelector, labels);
}
