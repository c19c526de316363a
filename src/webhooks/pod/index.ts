// The pod webhooks (spec §19). Safety choices, since a pod webhook that is slow or down can stop
// pod creation cluster-wide (docs/pod-webhook.md):
//   - /mutate-pod: failurePolicy Fail, as upstream: a pod silently created without its sidecar
//     (mesh proxy, log agent) is worse than a retried creation; workload controllers retry.
//   - /validate-pod: failurePolicy Fail, as upstream, and registered per operation only while a
//     feature needs it (DELETE and pods/eviction with the PUB delete gate or WorkloadSpread, UPDATE
//     with the PUB update gate): a budget that lapsed whenever no manager answered would let a node drain
//     during a manager restart take every replica at once. Every replica serves it (leader or not),
//     so only a manager with no replica up blocks pod deletion; turning those gates off removes the
//     registration. A matchCondition keeps pods that are already terminating out: the kubelet's
//     final removal of a terminated pod never depends on the manager.
//   - both skip kube-system and the manager's own namespace (namespaceSelector), besides
//     upstream's `control-plane` namespaces: the control plane and Kruise itself can always start.
//   - timeoutSeconds: the manager's --webhook-timeout-seconds like every webhook (default 10, the API
//     server's; the chart's webhookConfiguration.timeoutSeconds, 30, as upstream's chart sets on every
//     webhook): the handlers are in-memory except WorkloadSpread's status write for the pods a
//     WorkloadSpread matches (pipeline.ts); a cache's first sync may wait, at most 5 s.
import type { WebhookRegistration } from '../../runtime/webhook/types.ts';
import { mutatePodWebhook, validatePodWebhook } from './pipeline.ts';

export * from './handlers.ts';
export * from './pipeline.ts';
export * from './types.ts';
export * from './sidecarset.ts';
export * from './pub.ts';

/** How long a pod admission waits for a cache's initial list (the manager's first seconds). */
export const POD_WEBHOOK_CACHE_SYNC_TIMEOUT_MS = 5_000;

/** The kinds the pod webhook reads, whose informers the manager opens at start-up. */
export const POD_WEBHOOK_CACHED_KINDS: ReadonlyArray<{ apiVersion: string; kind: string }> = [
  { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet' },
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'apps/v1', kind: 'ControllerRevision' },
  { apiVersion: 'apps.kruise.io/v1beta1', kind: 'PersistentPodState' },
  { apiVersion: 'apps.kruise.io/v1beta1', kind: 'WorkloadSpread' },
  // Serverless PodProbeMarker (gate EnablePodProbeMarkerOnServerless).
  { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'PodProbeMarker' },
  // PodUnavailableBudget: budgets (related-pub at creation) and pods (an eviction names its pod only).
  { apiVersion: 'policy.kruise.io/v1beta1', kind: 'PodUnavailableBudget' },
  { apiVersion: 'v1', kind: 'Pod' },
];

export const registrations: WebhookRegistration[] = [
  {
    group: '',
    resource: 'pods',
    versions: ['v1'],
    operations: ['CREATE'],
    mutate: mutatePodWebhook,
    gate: 'PodWebhook',
    failurePolicy: 'Fail',
    excludeSystemNamespaces: true,
  },
  {
    group: '',
    resource: 'pods',
    versions: ['v1'],
    operations: ['UPDATE', 'DELETE'],
    // Registered per operation only when a feature that judges it is on (docs/operations.md).
    operationGates: { UPDATE: 'PodUnavailableBudgetUpdateGate', DELETE: ['PodUnavailableBudgetDeleteGate', 'WorkloadSpread'] },
    // A pod already terminating is never judged (it disrupts nothing more): its final removal by
    // the kubelet, and finalizer edits on it, must not wait for a manager.
    matchConditions: [{ name: 'not-terminating', expression: '!has(oldObject.metadata.deletionTimestamp)' }],
    validate: validatePodWebhook,
    gate: 'PodWebhook',
    failurePolicy: 'Fail',
    excludeSystemNamespaces: true,
  },
  {
    group: '',
    resource: 'pods/eviction',
    versions: ['v1'],
    operations: ['CREATE'],
    operationGates: { CREATE: ['PodUnavailableBudgetDeleteGate', 'WorkloadSpread'] },
    validate: validatePodWebhook,
    gate: 'PodWebhook',
    failurePolicy: 'Fail',
    excludeSystemNamespaces: true,
  },
];
