// Deletion protection of built-in resources (spec §20; upstream
// pkg/webhook/util/deletionprotection): label policy.kruise.io/delete-protection on the object being
// deleted, checked only with gate ResourcesDeletionProtection on and only while the object is not
// already being deleted. Kruise's own workloads (CloneSet, Advanced StatefulSet, UnitedDeployment)
// check it in their validating webhooks (src/webhooks/workload.ts checkWorkloadDeletion).
//
// Registered only while the gate is on (a DELETE webhook nothing needs would only block deletions
// with the manager down), failurePolicy Fail as upstream, and with an objectSelector on the label:
// only labelled objects ever reach the webhook, so a manager outage never blocks deleting anything
// unlabelled (docs/deletion-protection.md).
import { DELETION_PROTECTION_LABEL, DeletionProtection } from '../../apis/constants.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import type { KubeObject, Pod } from '../../apis/core-objects.ts';
import type { ResourceType } from '../../runtime/resources.ts';
import { AdmissionDenied, type AdmissionContext, type WebhookRegistration } from '../../runtime/webhook/types.ts';
import { isPodActive } from '../../util/pod.ts';
import { checkWorkloadDeletion } from '../workload.ts';

type Labelled = KubeObject & { spec?: { replicas?: number | null } };

const prefix = (value: string) => `forbidden by ResourcesProtectionDeletion for ${DELETION_PROTECTION_LABEL}=${value}`;

/** The label's value when protection applies to this deletion, else undefined. */
function protection(obj: Labelled | undefined, ctx: AdmissionContext): string | undefined {
  if (!ctx.features.ResourcesDeletionProtection || !obj || obj.metadata.deletionTimestamp) return undefined;
  return obj.metadata.labels?.[DELETION_PROTECTION_LABEL];
}

/** Deployment, ReplicaSet, StatefulSet (apps/v1): Always refuses; Cascading refuses while replicas > 0. */
export function validateBuiltinWorkloadDeletion(obj: Labelled, _old: unknown, ctx: AdmissionContext): FieldError[] {
  if (ctx.operation === 'DELETE') checkWorkloadDeletion(obj, obj.spec?.replicas ?? undefined, ctx.features);
  return [];
}

/** Service, Ingress: Always refuses; Cascading has no effect. */
export function validateAlwaysOnlyDeletion(obj: Labelled, _old: unknown, ctx: AdmissionContext): FieldError[] {
  if (ctx.operation === 'DELETE' && protection(obj, ctx) === DeletionProtection.Always)
    throw new AdmissionDenied(prefix(DeletionProtection.Always), 403);
  return [];
}

/** Namespace: Always refuses; Cascading refuses while an active pod, then a Bound PVC not being deleted, is in it. */
export async function validateNamespaceDeletion(obj: Labelled, _old: unknown, ctx: AdmissionContext): Promise<FieldError[]> {
  if (ctx.operation !== 'DELETE') return [];
  const value = protection(obj, ctx);
  if (value === DeletionProtection.Always) throw new AdmissionDenied(prefix(value), 403);
  if (value !== DeletionProtection.Cascading || !ctx.reader) return [];
  const namespace = obj.metadata.name ?? '';
  const pods = await ctx.reader.list<Pod>('v1', 'Pod', { namespace });
  const active = pods.filter(isPodActive).length;
  if (active > 0) throw new AdmissionDenied(`${prefix(value)} and active pods ${active}>0`, 403);
  const pvcs = await ctx.reader.list<KubeObject & { status?: { phase?: string } }>('v1', 'PersistentVolumeClaim', { namespace });
  const bound = pvcs.filter((c) => !c.metadata.deletionTimestamp && c.status?.phase === 'Bound').length;
  if (bound > 0) throw new AdmissionDenied(`${prefix(value)} and "Bound" status pvc ${bound}>0`, 403);
  return [];
}

interface CustomResourceDefinition extends KubeObject {
  spec?: {
    group?: string;
    names?: { plural?: string; kind?: string };
    scope?: string;
    versions?: Array<{ name: string; storage?: boolean }>;
  };
}

/**
 * CustomResourceDefinition: Always refuses; Cascading needs gate DeletionProtectionForCRDCascadingGate
 * and refuses while any object of the CRD's storage version (all namespaces) is not being deleted.
 */
export async function validateCRDDeletion(obj: CustomResourceDefinition, _old: unknown, ctx: AdmissionContext): Promise<FieldError[]> {
  if (ctx.operation !== 'DELETE') return [];
  const value = protection(obj as Labelled, ctx);
  if (value === DeletionProtection.Always) throw new AdmissionDenied(prefix(value), 403);
  if (value !== DeletionProtection.Cascading) return [];
  if (!ctx.features.DeletionProtectionForCRDCascadingGate) {
    throw new AdmissionDenied('feature-gate DeletionProtectionForCRDCascadingGate is not enabled', 403);
  }
  const spec = obj.spec ?? {};
  const storage = spec.versions?.find((v) => v.storage) ?? spec.versions?.[0];
  if (!ctx.reader?.listResource || !storage || !spec.names?.plural) return [];
  const type: ResourceType = {
    group: spec.group ?? '',
    version: storage.name,
    resource: spec.names.plural,
    kind: spec.names.kind ?? '',
    namespaced: spec.scope !== 'Cluster',
  };
  let items: KubeObject[];
  try {
    items = await ctx.reader.listResource<KubeObject>(type, {});
  } catch (err) {
    throw new AdmissionDenied(`failed to list CRs of ${type.group}/${type.version}, Kind=${type.kind}: ${(err as Error).message}`, 403);
  }
  const active = items.filter((i) => !i.metadata.deletionTimestamp).length;
  if (active > 0) throw new AdmissionDenied(`${prefix(value)} and active CRs ${active}>0`, 403);
  return [];
}

const deleteOnly = { operations: ['DELETE' as const], gate: 'ResourcesDeletionProtection' as const, failurePolicy: 'Fail' as const };

export const registrations: WebhookRegistration[] = [
  ...['deployments', 'replicasets', 'statefulsets'].map((resource) => ({
    group: 'apps',
    resource,
    versions: ['v1'],
    validate: validateBuiltinWorkloadDeletion,
    ...deleteOnly,
  })),
  { group: '', resource: 'namespaces', versions: ['v1'], validate: validateNamespaceDeletion, ...deleteOnly },
  { group: '', resource: 'services', versions: ['v1'], validate: validateAlwaysOnlyDeletion, ...deleteOnly },
  { group: 'networking.k8s.io', resource: 'ingresses', versions: ['v1'], validate: validateAlwaysOnlyDeletion, ...deleteOnly },
  { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', versions: ['v1'], validate: validateCRDDeletion, ...deleteOnly },
];
