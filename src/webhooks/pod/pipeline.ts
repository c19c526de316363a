// The pod admission webhook as a pipeline of small handlers, in upstream's order (spec §19):
//   /mutate-pod (CREATE): KruisePodReady readiness gate → WorkloadSpread → SidecarSet injection →
//     container launch priority (must follow injection: it numbers the injected sidecars too) →
//     PodUnavailableBudget related-pub → PersistentPodState → enhanced liveness probe →
//     PodProbeMarker on serverless;
//   /validate-pod (pods UPDATE/DELETE, pods/eviction CREATE): WorkloadSpread → PodUnavailableBudget.
//
// Reads are from the manager's informer caches (AdmissionContext.cache), and a pod nothing applies
// to (no Kruise owner, no matching SidecarSet, one container, no annotations asking for anything) is
// answered from memory without a patch. The one handler that calls the API server is WorkloadSpread's,
// as upstream's does: a pod a WorkloadSpread matches reserves its subset slot by a status write
// (a deletion books it back likewise), and a lost write race re-reads the WorkloadSpread live
// (workloadspread.ts). Only those pods pay that latency: one round trip, more after a 409.
import type { FieldError } from '../../apis/field-errors.ts';
import type { ControllerRevision, Namespace, Pod } from '../../apis/core-objects.ts';
import { APPS_GROUP } from '../../apis/constants.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import type { PodAdmission, PodMutatingHandler, PodOperation, PodValidatingHandler, PodValidation } from './types.ts';
import type { StoredSidecarSet } from '../../util/sidecarset.ts';
import { injectPodReadinessGate, initializeContainerLaunchPriority, moveLivenessProbesToContext } from './handlers.ts';
import { injectSidecarSets, sidecarSetsToInject } from './sidecarset.ts';
import { injectWorkloadSpread, recordPodDeletion } from './workloadspread.ts';
import { logger } from '../../runtime/log.ts';
import { injectPersistentPodState } from './persistentpodstate.ts';
import { annotateRelatedPub, validatePodUnavailableBudget } from './pub.ts';
import { errMessage } from '../../util/errors.ts';
import { annotateServerlessProbes } from './podprobemarker.ts';

const always = () => true;

/** SidecarSet injection from the caches: the SidecarSets, the pod's Namespace (only for namespaceSelector), revisions (only for injectionStrategy.revision). */
async function injectSidecarSetsFromCache(pod: Pod, req: PodAdmission): Promise<boolean> {
  if (!req.cache) return false;
  const sidecarSets = await req.cache.list<StoredSidecarSet>(`${APPS_GROUP}/v1beta1`, 'SidecarSet');
  if (!sidecarSets.length) return false;
  const ns = pod.metadata.namespace ?? 'default';
  const namespace = sidecarSets.some((s) => s.spec?.namespaceSelector) ? await req.cache.get<Namespace>('v1', 'Namespace', ns) : undefined;
  let revisions: ControllerRevision[] = [];
  if (sidecarSets.some((s) => s.spec?.injectionStrategy?.revision)) {
    revisions = await req.cache.list<ControllerRevision>('apps/v1', 'ControllerRevision');
  }
  const inputs = {
    sidecarSets,
    namespace,
    revisionsOf: (name: string) => revisions.filter((r) => r.metadata.labels?.['kruise.io/sidecarset-name'] === name),
    sortByName: req.features.EnableSortSidecarContainerByName,
    now: req.now,
    random: req.random,
  };
  return injectSidecarSets(pod, sidecarSetsToInject(pod, inputs), inputs);
}

export const podMutatingHandlers: readonly PodMutatingHandler[] = [
  {
    name: 'KruisePodReady readiness gate',
    enabled: always,
    mutate: (pod, req) => injectPodReadinessGate(pod, req.features.KruisePodReadinessGate),
  },
  {
    name: 'WorkloadSpread',
    enabled: (f) => f.WorkloadSpread,
    mutate: (pod, req) =>
      !!req.cache &&
      injectWorkloadSpread(pod, {
        cache: req.cache,
        writer: req.writer,
        reader: req.reader,
        dryRun: req.dryRun,
        now: () => req.now.getTime(),
      }),
  },
  { name: 'SidecarSet injection', enabled: always, mutate: injectSidecarSetsFromCache },
  { name: 'container launch priority', enabled: always, mutate: (pod, req) => initializeContainerLaunchPriority(pod, req.random) },
  {
    name: 'PodUnavailableBudget related-pub',
    enabled: (f) => f.PodUnavailableBudgetDeleteGate || f.PodUnavailableBudgetUpdateGate,
    mutate: annotateRelatedPub,
  },
  { name: 'PersistentPodState', enabled: always, mutate: injectPersistentPodState },
  { name: 'enhanced liveness probe', enabled: (f) => f.EnhancedLivenessProbe, mutate: moveLivenessProbesToContext },
  { name: 'PodProbeMarker on serverless', enabled: (f) => f.EnablePodProbeMarkerOnServerless, mutate: annotateServerlessProbes },
];

/** Runs the mutating handlers on a pod being created; returns the names of those that changed it. */
export async function mutatePod(
  pod: Pod,
  req: PodAdmission,
  handlers: readonly PodMutatingHandler[] = podMutatingHandlers,
): Promise<string[]> {
  const changed: string[] = [];
  for (const h of handlers) {
    if (!h.enabled(req.features)) continue;
    if (await h.mutate(pod, req)) changed.push(h.name);
  }
  return changed;
}

/** The Defaulter of /mutate-pod. */
export async function mutatePodWebhook(pod: Pod, ctx: AdmissionContext): Promise<void> {
  if (ctx.operation !== 'CREATE') return;
  // A pod as sent may leave its namespace to the request.
  pod.metadata ??= {};
  const hadNamespace = !!pod.metadata.namespace;
  if (!hadNamespace) pod.metadata.namespace = ctx.namespace;
  // Pods already being deleted or finished are never injected (IsActivePod).
  if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
  await mutatePod(pod, {
    features: ctx.features,
    cache: ctx.cache,
    writer: ctx.writer,
    reader: ctx.reader,
    dryRun: ctx.dryRun,
    now: new Date(),
    random: Math.random,
  });
  if (!hadNamespace) delete pod.metadata.namespace;
}

/**
 * WorkloadSpread books a deleted or evicted pod in its subset's deletingPods; it never refuses, and
 * a failed write only costs the subset its early refill (the controller recounts), so it is logged.
 */
async function recordWorkloadSpreadDeletion(req: PodValidation): Promise<FieldError[]> {
  const { ctx } = req;
  if (!ctx.cache) return [];
  try {
    await recordPodDeletion(await req.leavingPod(), req.operation === 'EVICT' ? 'Eviction' : 'Delete', {
      cache: ctx.cache,
      writer: ctx.writer,
      reader: ctx.reader,
      dryRun: ctx.dryRun,
      now: () => Date.now(),
    });
  } catch (err) {
    logger.info({ pod: `${req.namespace}/${req.name}`, err: errMessage(err) }, 'WorkloadSpread could not record a pod deletion');
  }
  return [];
}

export const podValidatingHandlers: readonly PodValidatingHandler[] = [
  { name: 'WorkloadSpread', enabled: (f, op) => f.WorkloadSpread && op !== 'UPDATE', validate: recordWorkloadSpreadDeletion },
  // Refuses what would take more pods out of service than a PodUnavailableBudget allows.
  {
    name: 'PodUnavailableBudget',
    enabled: (f, op) => (op === 'UPDATE' ? f.PodUnavailableBudgetUpdateGate : f.PodUnavailableBudgetDeleteGate),
    validate: validatePodUnavailableBudget,
  },
];

/**
 * The Validator of /validate-pod (pods UPDATE/DELETE; pods/eviction CREATE, whose object is the
 * Eviction): the first handler that refuses decides.
 */
export async function validatePodWebhook(obj: unknown, old: unknown, ctx: AdmissionContext): Promise<FieldError[]> {
  const operation: PodOperation = ctx.operation === 'CREATE' ? 'EVICT' : ctx.operation === 'UPDATE' ? 'UPDATE' : 'DELETE';
  const namespace = ctx.namespace ?? '';
  const name = ctx.name ?? '';
  // With --sharding the pod cache is the API server (manager.ts podsFromApiServer): a deletion, which
  // carries the pod, reads nothing; an eviction reads its pod once, whichever handlers look at it.
  let evicted: Promise<Pod | undefined> | undefined;
  const leavingPod = async (): Promise<Pod | undefined> => {
    if (operation === 'DELETE') return obj as Pod;
    if (operation === 'UPDATE') return undefined;
    evicted ??= ctx.cache ? ctx.cache.get<Pod>('v1', 'Pod', name, namespace) : Promise.resolve(undefined);
    return evicted;
  };
  const req: PodValidation = {
    operation,
    namespace,
    name,
    ...(operation === 'UPDATE' ? { pod: obj as Pod, oldPod: old as Pod } : {}),
    leavingPod,
    ctx,
  };
  for (const h of podValidatingHandlers) {
    if (!h.enabled(ctx.features, operation)) continue;
    const errs = await h.validate(req);
    if (errs.length) return errs;
  }
  return [];
}
