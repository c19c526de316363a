// The PodUnavailableBudget hooks of the pod webhook (spec §16; upstream
// pkg/webhook/pod/{validating,mutating}/pod_unavailable_budget.go):
//   - validate: a pod DELETE, an eviction (pods/eviction CREATE, what `kubectl drain` sends), or an
//     UPDATE that may make the pod unavailable (RESIZE when it only resizes in place) takes one unit
//     of the pod's budget through the process's PubBudgetGuard, or is refused with upstream's
//     Forbidden message;
//   - mutate: a pod being created that a budget covers gets pub.kruise.io/related-pub (and the
//     deprecated kruise.io/related-pub), which is how the validate hook finds its budget.
// Reads come from the informer caches only.
import { POLICY_GROUP } from '../../apis/constants.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import type { Pod } from '../../apis/core-objects.ts';
import type { PubOperation } from '../../apis/policy/podunavailablebudget.ts';
import { type AdmissionCache, AdmissionDenied } from '../../runtime/webhook/types.ts';
import { canResizeInPlace, isPodUnavailableChanged, relatedPubAnnotations, relatedPubName, type StoredPub } from '../../util/pub.ts';
import { pubCoversPod, type PubTargetCache } from '../../util/pub-targets.ts';
import type { PodAdmission, PodValidation } from './types.ts';

export const PUB_API_VERSION = `${POLICY_GROUP}/v1beta1`;

/** The workload lookups of pubCoversPod, from the admission cache (kinds it cannot read: none). */
function workloadLookup(cache: AdmissionCache): Pick<PubTargetCache, 'workload'> {
  return {
    async workload(apiVersion, kind, namespace, name) {
      try {
        return await cache.get(apiVersion, kind, name, namespace);
      } catch {
        return undefined;
      }
    },
  };
}

/** Mutating hook: the related-pub annotations when a budget of the pod's namespace covers it (the first, as upstream). */
export async function annotateRelatedPub(pod: Pod, req: PodAdmission): Promise<boolean> {
  if (!req.cache) return false;
  const namespace = pod.metadata.namespace ?? 'default';
  const pubs = await req.cache.list<StoredPub>(PUB_API_VERSION, 'PodUnavailableBudget', { namespace });
  if (!pubs.length) return false;
  const lookup = workloadLookup(req.cache);
  for (const pub of pubs) {
    if (!(await pubCoversPod(pub, pod, lookup))) continue;
    const name = pub.metadata.name ?? '';
    if (relatedPubName(pod) === name && pod.metadata.annotations?.['kruise.io/related-pub'] === name) return false;
    pod.metadata.annotations = { ...pod.metadata.annotations, ...relatedPubAnnotations(name) };
    return true;
  }
  return false;
}

/** Validating hook: refuses the operation when the pod's budget has nothing left (403, upstream's message). */
export async function validatePodUnavailableBudget(req: PodValidation): Promise<FieldError[]> {
  const guard = req.ctx.pubBudget;
  if (!guard) return [];
  let pod: Pod | undefined;
  let operation: PubOperation;
  switch (req.operation) {
    case 'UPDATE':
      if (!req.pod || !req.oldPod || !relatedPubName(req.pod)) return [];
      // Metadata-only changes never make a pod unavailable.
      if (!isPodUnavailableChanged(req.oldPod, req.pod)) return [];
      pod = req.oldPod;
      operation = canResizeInPlace(req.oldPod, req.pod) ? 'RESIZE' : 'UPDATE';
      break;
    case 'DELETE':
    case 'EVICT':
      pod = await req.leavingPod();
      operation = req.operation;
      break;
  }
  if (!pod || !relatedPubName(pod)) return [];
  pod = { ...pod, metadata: { ...pod.metadata, namespace: pod.metadata.namespace ?? req.namespace } };
  const decision = await guard.admit(pod, operation, req.ctx.dryRun);
  if (!decision.allowed) throw new AdmissionDenied(decision.message, 403);
  return [];
}
