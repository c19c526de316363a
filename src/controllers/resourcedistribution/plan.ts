// The ResourceDistribution controller's decisions (upstream pkg/controller/resourcedistribution,
// spec §13), pure: which namespaces the distribution targets, the copy each of them must hold,
// which copies to create, update and delete, the failures known before writing (a same-named object
// another owner controls, a target namespace that does not exist), and the status the round's
// failures add up to.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type {
  ResourceDistribution as ResourceDistributionApi,
  ResourceDistributionConditionType,
} from '../../apis/apps/resourcedistribution.ts';
import { APPS_GROUP, RESOURCE_DISTRIBUTION_FROM_ANNOTATION, RESOURCE_DISTRIBUTION_HASH_ANNOTATION } from '../../apis/constants.ts';
import type { ConfigMap, Namespace, OwnerReference, Secret, Stored } from '../../apis/core-objects.ts';
import { metaTime } from '../../util/clock.ts';
import { matchesLabelSelector } from '../../util/labelselector.ts';
import { marshalGoJSON } from '../../util/revision.ts';

export type ResourceDistribution = Stored<ResourceDistributionApi>;
export type ResourceDistributionStatus = NonNullable<ResourceDistribution['status']>;
export type ResourceDistributionCondition = NonNullable<ResourceDistributionStatus['conditions']>[number];
/** A distributed copy: a Secret or a ConfigMap. */
export type DistributedResource = Secret | ConfigMap;
export type DistributedKind = 'Secret' | 'ConfigMap';

/** The six conditions, in upstream's order (status.conditions[i] is always CONDITION_TYPES[i]). */
export const CONDITION_TYPES: readonly ResourceDistributionConditionType[] = [
  'GetResourceFailed',
  'CreateResourceFailed',
  'UpdateResourceFailed',
  'DeleteResourceFailed',
  'ConflictOccurred',
  'NamespaceNotExists',
];

/** Never distributed to, whatever the targets say. */
export const PROTECTED_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public']);

export const CONFLICT_MESSAGE = 'conflict with existing resources because of the same namespace, group, version, kind and name';
export const NAMESPACE_NOT_EXISTS_MESSAGE = 'namespace not found or is terminating';

/** One namespace the round could not bring in line, and why. */
export interface NamespaceFailure {
  type: ResourceDistributionConditionType;
  namespace: string;
  message: string;
}

export interface DistributionInput {
  rd: ResourceDistribution;
  /** Every namespace in the cache. */
  namespaces: readonly Namespace[];
  /** The object of the distributed kind and name in a namespace (cache), if any. */
  existing(namespace: string): DistributedResource | undefined;
}

export interface DistributionPlan {
  /** The distributed kind (copies from the cache do not say). */
  kind: DistributedKind;
  /** Set when spec.resource cannot be distributed (not a named v1 Secret/ConfigMap): nothing else is planned. */
  invalid?: string;
  /** Target patterns that are not regular expressions (they match nothing). */
  badPatterns: string[];
  /** Matched (target) namespaces, sorted: status.desired. */
  matched: string[];
  create: DistributedResource[];
  /** Full objects carrying the resourceVersion they were computed from. */
  update: DistributedResource[];
  delete: DistributedResource[];
  /** Failures known from the cache alone (ConflictOccurred, NamespaceNotExists). */
  failures: NamespaceFailure[];
}

const SUPPORTED_KINDS = new Set(['Secret', 'ConfigMap']);

/** What spec.resource is, or why it cannot be distributed. */
export function distributedResource(rd: ResourceDistribution): { resource: DistributedResource } | { invalid: string } {
  const raw = rd.spec?.resource as Record<string, unknown> | undefined;
  const kind = typeof raw?.kind === 'string' ? raw.kind : '';
  if (!raw || raw.apiVersion !== 'v1' || !SUPPORTED_KINDS.has(kind)) {
    return { invalid: 'unknown or unsupported resource GroupKind, only support [Secret ConfigMap]' };
  }
  const resource = raw as unknown as DistributedResource;
  if (!resource.metadata?.name) return { invalid: 'spec.resource.metadata.name is required' };
  return { resource };
}

/**
 * The hash upstream writes in kruise.io/resourcedistribution.resource.hashcode: SHA-256 of the raw
 * resource bytes, which the API server hands out as Go's json.Marshal of the embedded object (keys
 * sorted, compact, HTML-escaped) — so copies made by OpenKruise carry the same hash.
 */
export function resourceHash(rd: ResourceDistribution): string {
  return createHash('sha256')
    .update(marshalGoJSON(rd.spec?.resource ?? {}))
    .digest('hex');
}

/** A whole-name regular expression, or undefined when the pattern is empty or does not compile. */
function compilePattern(pattern: string | undefined, bad: string[]): RegExp | undefined {
  if (!pattern) return undefined;
  try {
    return new RegExp(`^(?:${pattern})$`);
  } catch {
    bad.push(pattern);
    return undefined;
  }
}

function hasSelector(sel: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | undefined): boolean {
  return !!sel && (Object.keys(sel.matchLabels ?? {}).length > 0 || (sel.matchExpressions ?? []).length > 0);
}

/**
 * The target namespaces (listNamespacesForDistributor): every namespace with allNamespaces, else
 * the included list (existing or not), the namespaces matching the included pattern and those a
 * non-empty namespaceSelector matches; minus the excluded list and pattern; never kube-system or
 * kube-public. Sorted.
 */
export function matchedNamespaces(rd: ResourceDistribution, namespaces: readonly Namespace[], badPatterns: string[] = []): string[] {
  const targets = rd.spec?.targets ?? {};
  const includedPattern = compilePattern(targets.includedNamespaces?.pattern, badPatterns);
  const excludedPattern = compilePattern(targets.excludedNamespaces?.pattern, badPatterns);
  const selector = targets.namespaceSelector;
  const matched = new Set<string>();
  for (const ns of namespaces) {
    const name = ns.metadata.name ?? '';
    if (
      targets.allNamespaces ||
      includedPattern?.test(name) ||
      (hasSelector(selector) && matchesLabelSelector(selector, ns.metadata.labels))
    ) {
      matched.add(name);
    }
  }
  for (const { name } of targets.includedNamespaces?.list ?? []) if (name) matched.add(name);
  for (const { name } of targets.excludedNamespaces?.list ?? []) if (name) matched.delete(name);
  for (const name of matched) {
    if (PROTECTED_NAMESPACES.has(name) || excludedPattern?.test(name)) matched.delete(name);
  }
  return [...matched].sort();
}

/** Whether an object's controller is this distribution (by name, v1alpha1 or v1beta1, as upstream). */
export function isControlledBy(obj: DistributedResource, rd: ResourceDistribution): boolean {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
  return (
    !!ref &&
    ref.kind === 'ResourceDistribution' &&
    (ref.apiVersion === `${APPS_GROUP}/v1beta1` || ref.apiVersion === `${APPS_GROUP}/v1alpha1`) &&
    ref.name === rd.metadata.name
  );
}

export function controllerRef(rd: ResourceDistribution): OwnerReference {
  return {
    apiVersion: `${APPS_GROUP}/v1beta1`,
    kind: 'ResourceDistribution',
    name: rd.metadata.name ?? '',
    uid: rd.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * The copy a namespace must hold: the resource in that namespace, controlled by the distribution,
 * with the hash and source annotations. Over an existing copy, its labels, annotations and
 * finalizers the resource does not set are kept (mergeMetadata), as is its resourceVersion.
 */
export function desiredCopy(
  rd: ResourceDistribution,
  resource: DistributedResource,
  namespace: string,
  hash: string,
  old?: DistributedResource,
): DistributedResource {
  const copy = structuredClone(resource);
  const {
    namespace: _namespace,
    uid: _uid,
    resourceVersion: _resourceVersion,
    creationTimestamp: _creationTimestamp,
    generation: _generation,
    managedFields: _managedFields,
    ...meta
  } = copy.metadata;
  copy.metadata = meta;
  if (old) {
    copy.metadata.labels = { ...old.metadata.labels, ...copy.metadata.labels };
    copy.metadata.annotations = { ...old.metadata.annotations, ...copy.metadata.annotations };
    const finalizers = [...new Set([...(copy.metadata.finalizers ?? []), ...(old.metadata.finalizers ?? [])])].sort();
    if (finalizers.length) copy.metadata.finalizers = finalizers;
    if (old.metadata.resourceVersion) copy.metadata.resourceVersion = old.metadata.resourceVersion;
  }
  copy.metadata.namespace = namespace;
  const owners = (copy.metadata.ownerReferences ?? []).filter((r) => r.uid !== rd.metadata.uid && !isDistributionRef(r));
  copy.metadata.ownerReferences = [...owners, ownRef(rd, old)];
  copy.metadata.annotations = {
    ...copy.metadata.annotations,
    [RESOURCE_DISTRIBUTION_HASH_ANNOTATION]: hash,
    [RESOURCE_DISTRIBUTION_FROM_ANNOTATION]: rd.metadata.name ?? '',
  };
  return copy;
}

/**
 * The controller reference a copy must carry: the one it has when that already names this
 * distribution (same uid, v1alpha1 or v1beta1: as upstream, a reference to the distribution is kept
 * as found), else a new v1beta1 one. Keeping the version found means a copy OpenKruise wrote keeps its
 * v1alpha1 reference through a takeover, and one that `kruise storage-version migrate --to
 * openkruise-v1.8` re-pointed to v1alpha1 is not pointed back while Kruise TS still runs.
 */
function ownRef(rd: ResourceDistribution, old?: DistributedResource): OwnerReference {
  const wanted = controllerRef(rd);
  const found = old?.metadata.ownerReferences?.find((r) => r.controller && isDistributionRef(r) && r.uid === rd.metadata.uid);
  return found && isControlledBy(old!, rd) ? { ...wanted, apiVersion: found.apiVersion } : wanted;
}

/** An ownerReference to a ResourceDistribution, at any `apps.kruise.io` version. */
export function isDistributionRef(ref: OwnerReference): boolean {
  return ref.kind === 'ResourceDistribution' && ref.apiVersion.startsWith(`${APPS_GROUP}/`);
}

/**
 * The content of a Secret or ConfigMap as the API server stores it, for comparison: everything but
 * metadata and status; a Secret's stringData folded into data (base64) and its type defaulted to
 * Opaque; empty maps dropped (the API server omits them).
 */
function storedContent(obj: DistributedResource, kind: string): Record<string, unknown> {
  // Objects from a list or watch carry no apiVersion/kind; the kind is the resource's.
  const {
    metadata: _metadata,
    status: _status,
    apiVersion: _apiVersion,
    kind: _kind,
    ...content
  } = obj as DistributedResource & { status?: unknown };
  const out: Record<string, unknown> = { ...content };
  if (kind === 'Secret') {
    const secret = obj as Secret;
    const data: Record<string, string> = { ...secret.data };
    for (const [k, v] of Object.entries(secret.stringData ?? {})) data[k] = Buffer.from(v, 'utf8').toString('base64');
    delete out.stringData;
    out.data = data;
    out.type = secret.type || 'Opaque';
  }
  for (const key of ['data', 'binaryData']) {
    const m = out[key];
    if (m && typeof m === 'object' && Object.keys(m).length === 0) delete out[key];
    if (m === undefined) delete out[key];
  }
  return out;
}

/**
 * Whether a copy this distribution controls must be rewritten: its content differs from the
 * resource (someone edited it, or the resource changed), or its hash, source annotation or
 * controller reference is not the one desiredCopy keeps or makes (a copy made by an earlier
 * distribution of the same name). An unchanged copy is left alone.
 */
export function copyNeedsUpdate(old: DistributedResource, desired: DistributedResource, rd: ResourceDistribution): boolean {
  const annotations = old.metadata.annotations ?? {};
  const ref = old.metadata.ownerReferences?.find((r) => r.controller);
  return (
    !isDeepStrictEqual(storedContent(old, desired.kind ?? ''), storedContent(desired, desired.kind ?? '')) ||
    annotations[RESOURCE_DISTRIBUTION_HASH_ANNOTATION] !== desired.metadata.annotations?.[RESOURCE_DISTRIBUTION_HASH_ANNOTATION] ||
    annotations[RESOURCE_DISTRIBUTION_FROM_ANNOTATION] !== rd.metadata.name ||
    !isDeepStrictEqual(
      ref,
      desired.metadata.ownerReferences?.find((r) => r.controller),
    )
  );
}

export function planDistribution(input: DistributionInput): DistributionPlan {
  const { rd } = input;
  const parsed = distributedResource(rd);
  const plan: DistributionPlan = { kind: 'Secret', badPatterns: [], matched: [], create: [], update: [], delete: [], failures: [] };
  if ('invalid' in parsed) return { ...plan, invalid: parsed.invalid };
  const { resource } = parsed;
  plan.kind = resource.kind as DistributedKind;
  const hash = resourceHash(rd);
  const byName = new Map(input.namespaces.map((ns) => [ns.metadata.name ?? '', ns]));
  plan.matched = matchedNamespaces(rd, input.namespaces, plan.badPatterns);
  const matched = new Set(plan.matched);

  for (const namespace of plan.matched) {
    const ns = byName.get(namespace);
    if (!ns || ns.metadata.deletionTimestamp) {
      plan.failures.push({ type: 'NamespaceNotExists', namespace, message: NAMESPACE_NOT_EXISTS_MESSAGE });
      continue;
    }
    const old = input.existing(namespace);
    if (!old) {
      plan.create.push(desiredCopy(rd, resource, namespace, hash));
      continue;
    }
    if (!isControlledBy(old, rd)) {
      plan.failures.push({ type: 'ConflictOccurred', namespace, message: CONFLICT_MESSAGE });
      continue;
    }
    if (old.metadata.deletionTimestamp) continue;
    const desired = desiredCopy(rd, resource, namespace, hash, old);
    if (copyNeedsUpdate(old, desired, rd)) plan.update.push(desired);
  }

  const unmatched = [...byName.keys()].filter((name) => !matched.has(name)).sort();
  for (const namespace of unmatched) {
    if (byName.get(namespace)?.metadata.deletionTimestamp) continue;
    const old = input.existing(namespace);
    if (old && !old.metadata.deletionTimestamp && isControlledBy(old, rd)) plan.delete.push(old);
  }
  return plan;
}

/**
 * The status after a round (calculateNewStatus): desired = matched namespaces, succeeded = desired
 * minus the matched namespaces that failed, the six conditions True with the namespaces that failed
 * for that reason (the last message as reason) or False/Succeeded, lastTransitionTime moving only
 * when a condition's status does. undefined when nothing changed.
 */
export function distributionStatus(
  rd: ResourceDistribution,
  desired: number,
  failures: readonly NamespaceFailure[],
  nowMs: number,
): ResourceDistributionStatus | undefined {
  const old = rd.status;
  const distributeFailures = failures.filter((f) => f.type !== 'DeleteResourceFailed').length;
  const succeeded = desired - distributeFailures;
  const conditions = CONDITION_TYPES.map((type, i): ResourceDistributionCondition => {
    const mine = failures.filter((f) => f.type === type);
    const status = mine.length ? 'True' : 'False';
    const previous = old?.conditions?.[i];
    const lastTransitionTime =
      previous && previous.type === type && previous.status === status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : metaTime(nowMs);
    const condition: ResourceDistributionCondition = {
      type,
      status,
      lastTransitionTime,
      reason: mine.length ? mine[mine.length - 1]!.message : 'Succeeded',
    };
    if (mine.length) condition.failedNamespaces = mine.map((f) => f.namespace);
    return condition;
  });
  const status: ResourceDistributionStatus = {
    desired,
    succeeded,
    failed: desired - succeeded,
    observedGeneration: rd.metadata.generation ?? 0,
    conditions,
  };
  return isDeepStrictEqual(normalisedStatus(old), status) ? undefined : status;
}

/** The stored status as the planner writes it (int fields the API server omits when zero come back absent). */
function normalisedStatus(status: ResourceDistributionStatus | undefined): ResourceDistributionStatus | undefined {
  if (!status) return undefined;
  return {
    desired: status.desired ?? 0,
    succeeded: status.succeeded ?? 0,
    failed: status.failed ?? 0,
    observedGeneration: status.observedGeneration ?? 0,
    conditions: (status.conditions ?? []).map((c) => {
      const out: ResourceDistributionCondition = { type: c.type, status: c.status };
      if (c.lastTransitionTime !== undefined) out.lastTransitionTime = c.lastTransitionTime;
      if (c.reason !== undefined) out.reason = c.reason;
      if (c.failedNamespaces?.length) out.failedNamespaces = [...c.failedNamespaces];
      return out;
    }),
  };
}

/** Whether a namespace event concerns a distribution (it is or was a target by name, pattern or labels). */
export function namespaceConcerns(rd: ResourceDistribution, ns: Namespace): boolean {
  const name = ns.metadata.name ?? '';
  if ((rd.spec?.targets?.includedNamespaces?.list ?? []).some((n) => n.name === name)) return true;
  return matchedNamespaces(rd, [ns]).includes(name);
}
