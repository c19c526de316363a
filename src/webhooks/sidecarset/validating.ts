// SidecarSet validating webhook (upstream pkg/webhook/sidecarset/validating): metadata and canary
// annotations, spec rules, upgrade-type immutability on UPDATE, and — only when everything else
// passes — conflicts with other SidecarSets that can select the same pods.
import type { SidecarSet, SidecarSetV1alpha1 } from '../../apis/apps/sidecarset.ts';
import { NAMESPACE_NAME_LABEL } from '../../apis/conversion/sidecarset.ts';
import type { Namespace } from '../../apis/core-objects.ts';
import {
  DEFAULT_KRUISE_NAMESPACE,
  ENV_POD_NAMESPACE,
  KRUISE_CONFIGURATION_NAME,
  SIDECARSET_BASE_ANNOTATION,
  SIDECARSET_CANARY_ANNOTATION,
  SIDECARSET_CUSTOM_VERSION_LABEL,
  SIDECARSET_NAME_REVISION_LABEL,
  APPS_GROUP,
} from '../../apis/constants.ts';
import { type FieldError, invalid, required } from '../../apis/field-errors.ts';
import {
  type LabelSelectorLike,
  isLabelKey,
  labelSelectorAsSelector,
  matchesLabelSelector,
  validateLabelSelector,
  validateLabels,
} from '../../util/labelselector.ts';
import { semanticEqual, validatePositiveIntOrPercent } from '../podtemplate.ts';
import { regexError } from '../../util/labelselector.ts';
import type { AdmissionContext, AdmissionReader } from '../../runtime/webhook/types.ts';
import { validateSidecarContainers } from './containers.ts';
import { isNativeSidecar } from './mutating.ts';
import { selectorsOverlap } from '../../util/selector-overlap.ts';
import { canaryBaseOf } from '../../util/sidecarset.ts';
import { priorityStrategyProblem, scatterStrategyProblem } from '../workload.ts';

/** Both served versions; v1alpha1 adds spec.namespace. */
type AnySidecarSet = SidecarSet & { spec?: SidecarSetV1alpha1['spec'] & SidecarSet['spec'] };
type Spec = NonNullable<AnySidecarSet['spec']>;

const NAME_FMT = '^[a-zA-Z0-9\\-]+$';
const NAME_RE = new RegExp(NAME_FMT);
const NAME_MAX_LEN = 63;
/** Key of kruise-configuration holding the patchPodMetadata whitelist. */
export const PATCH_POD_METADATA_WHITELIST_KEY = 'SidecarSet_PatchPodMetadata_WhiteList';

const isEmptySelector = (s: LabelSelectorLike) => Object.keys(s.matchLabels ?? {}).length + (s.matchExpressions ?? []).length === 0;

function validateSelector(sel: LabelSelectorLike, path: string): FieldError[] {
  const errs = validateLabelSelector(sel, path);
  if (isEmptySelector(sel)) errs.push(invalid(path, sel, 'empty selector is not valid for sidecarset.'));
  try {
    labelSelectorAsSelector(sel);
  } catch {
    errs.push(invalid(`${path}.selector`, sel, ''));
  }
  return errs;
}

export function validateSidecarSetMetadata(obj: AnySidecarSet): FieldError[] {
  const errs: FieldError[] = [];
  const name = obj.metadata?.name;
  if (!name && !obj.metadata?.generateName) errs.push(required('metadata.name', 'name or generateName is required'));
  if (name) {
    if (!NAME_RE.test(name)) {
      errs.push(
        invalid(
          'metadata.name',
          name,
          regexError("sidecarset name must consist of alphanumeric characters or '-'", NAME_FMT, 'example-com'),
        ),
      );
    }
    if (name.length > NAME_MAX_LEN) errs.push(invalid('metadata.name', name, `must be no more than ${NAME_MAX_LEN} bytes`));
  }
  errs.push(...validateLabels(obj.metadata?.labels, 'metadata.labels'));
  return errs;
}

function validateUpdateStrategy(strategy: Spec['updateStrategy']): FieldError[] {
  const errs: FieldError[] = [];
  if (!strategy || strategy.type !== 'RollingUpdate') return errs;
  const partitionSet = typeof strategy.partition === 'string' || (typeof strategy.partition === 'number' && strategy.partition !== 0);
  if (partitionSet && strategy.selector) {
    errs.push(invalid('updateStrategy', strategy, 'Partition and Selector cannot be used together'));
  }
  if (strategy.selector) errs.push(...validateSelector(strategy.selector, 'spec.updateStrategy.selector'));
  if (strategy.partition !== undefined && strategy.partition !== null) {
    errs.push(...validatePositiveIntOrPercent(strategy.partition, 'spec.updateStrategy.partition'));
  }
  if (strategy.maxUnavailable !== undefined && strategy.maxUnavailable !== null) {
    errs.push(...validatePositiveIntOrPercent(strategy.maxUnavailable, 'spec.updateStrategy.maxUnavailable'));
  }
  const priorityErr = priorityStrategyProblem(strategy.priorityStrategy);
  if (priorityErr) errs.push(required('spec.updateStrategy.priorityStrategy', priorityErr));
  const scatterErr = scatterStrategyProblem(strategy.scatterStrategy);
  if (scatterErr) errs.push(required('spec.updateStrategy.scatterStrategy', scatterErr));
  return errs;
}

function kruiseNamespace(): string {
  return process.env[ENV_POD_NAMESPACE] || DEFAULT_KRUISE_NAMESPACE;
}

/** The ControllerRevision injectionStrategy.revision points at, or the lookup error text. */
async function findInjectRevision(obj: AnySidecarSet, reader: AdmissionReader): Promise<{ found: boolean; err: string }> {
  const revision = obj.spec!.injectionStrategy!.revision!;
  const name = obj.metadata?.name ?? '';
  try {
    if (revision.revisionName) {
      const rev = await reader.get('apps/v1', 'ControllerRevision', revision.revisionName, kruiseNamespace());
      return rev ? { found: true, err: '' } : { found: false, err: `controllerrevisions.apps "${revision.revisionName}" not found` };
    }
    // Custom versions need not be valid label values, so they are compared here, not in the query.
    const revs = await reader.list<{ metadata?: { labels?: Record<string, string> } }>('apps/v1', 'ControllerRevision', {
      namespace: kruiseNamespace(),
      labelSelector: `${SIDECARSET_NAME_REVISION_LABEL}=${name}`,
    });
    return revs.some((r) => r.metadata?.labels?.[SIDECARSET_CUSTOM_VERSION_LABEL] === revision.customVersion)
      ? { found: true, err: '' }
      : { found: false, err: '<nil>' };
  } catch (e) {
    return { found: false, err: (e as Error).message };
  }
}

async function validateInjectionStrategy(obj: AnySidecarSet, reader: AdmissionReader | undefined): Promise<FieldError[]> {
  const revision = obj.spec?.injectionStrategy?.revision;
  if (!revision) return [];
  const errs: FieldError[] = [];
  if (revision.revisionName == null && revision.customVersion == null) {
    errs.push(invalid('revision', revision, 'revisionName and customVersion cannot be empty simultaneously'));
  } else if (reader) {
    const { found, err } = await findInjectRevision(obj, reader);
    if (!found) errs.push(invalid('revision', null, `Cannot find specific ControllerRevision, err: ${err}`));
  }
  const policy: string = revision.policy ?? '';
  if (policy !== '' && policy !== 'Always' && policy !== 'Partial') {
    errs.push(invalid('revision.policy', revision, `Invalid policy ${policy}, supported: [Always, Partial]`));
  }
  return errs;
}

interface PatchWhitelist {
  rules?: Array<{ selector?: LabelSelectorLike; allowedAnnotationKeyExprs?: string[] }>;
}

/**
 * Upstream's ValidateSidecarSetPatchMetadataWhitelist: the rules whose selector matches the
 * SidecarSet's own labels allow annotation keys by regular expression; with no whitelist, or no
 * rule applying, only SidecarSetPatchPodMetadataDefaultsAllowed lets patches through.
 */
async function patchWhitelistError(obj: AnySidecarSet, ctx: AdmissionContext): Promise<string | undefined> {
  const patches = obj.spec?.patchPodMetadata ?? [];
  if (patches.length === 0) return undefined;
  const defaultsAllowed = ctx.features.SidecarSetPatchPodMetadataDefaultsAllowed;
  const cm = ctx.reader
    ? await ctx.reader.get<{ data?: Record<string, string> }>('v1', 'ConfigMap', KRUISE_CONFIGURATION_NAME, kruiseNamespace())
    : null;
  const raw = cm?.data?.[PATCH_POD_METADATA_WHITELIST_KEY];
  if (raw === undefined) return defaultsAllowed ? undefined : 'SidecarSet patch metadata whitelist not found';
  let whitelist: PatchWhitelist;
  try {
    whitelist = JSON.parse(raw) as PatchWhitelist;
  } catch (e) {
    return (e as Error).message;
  }
  const labels = obj.metadata?.labels ?? {};
  const allowed: RegExp[] = [];
  for (const rule of whitelist.rules ?? []) {
    if (rule.selector) {
      try {
        if (!labelSelectorAsSelector(rule.selector).matches(labels)) continue;
      } catch (e) {
        return (e as Error).message;
      }
    }
    for (const expr of rule.allowedAnnotationKeyExprs ?? []) {
      try {
        allowed.push(new RegExp(expr));
      } catch (e) {
        return (e as Error).message;
      }
    }
  }
  if (allowed.length === 0) return defaultsAllowed ? undefined : 'sidecarSet patch metadata annotation is not allowed';
  for (const patch of patches) {
    for (const key of Object.keys(patch.annotations ?? {})) {
      if (!allowed.some((r) => r.test(key))) return `sidecarSet patch metadata annotation(${key}) is not allowed`;
    }
  }
  return undefined;
}

async function validatePatchPodMetadata(obj: AnySidecarSet, ctx: AdmissionContext): Promise<FieldError[]> {
  const errs: FieldError[] = [];
  const whitelistErr = await patchWhitelistError(obj, ctx);
  if (whitelistErr) errs.push(required('spec.patchPodMetadata', whitelistErr));
  const keys = new Set<string>();
  for (const patch of obj.spec?.patchPodMetadata ?? []) {
    const annotations = patch.annotations ?? {};
    if (Object.keys(annotations).length === 0) errs.push(required('spec.patchPodMetadata', 'no annotations defined for SidecarSet'));
    else {
      for (const key of Object.keys(annotations).sort()) {
        for (const detail of isLabelKey(key.toLowerCase())) errs.push(invalid('patchPodMetadata.annotations', key, detail));
      }
    }
    if (!patch.patchPolicy) errs.push(required('spec.patchPodMetadata', 'no patchPolicy defined for patchPodMetadata'));
    for (const key of Object.keys(annotations)) {
      if (keys.has(key)) errs.push(required('spec.patchPodMetadata', `patch annotation[${key}] already exist`));
      keys.add(key);
    }
  }
  return errs;
}

export async function validateSidecarSetSpec(obj: AnySidecarSet, ctx: AdmissionContext): Promise<FieldError[]> {
  const spec: Spec = obj.spec ?? {};
  const errs: FieldError[] = [];
  for (const c of spec.initContainers ?? []) {
    if (isNativeSidecar(c) && spec.updateStrategy?.type === 'RollingUpdate') {
      errs.push(required('spec.updateStrategy', 'The initContainer in-place upgrade is not currently supported.'));
    }
  }
  if (!spec.selector) errs.push(required('spec.selector', 'no selector defined for SidecarSet'));
  else errs.push(...validateSelector(spec.selector, 'spec.selector'));
  if (spec.namespace && spec.namespaceSelector) {
    errs.push(required('spec.namespace, namespaceSelector', 'namespace and namespaceSelector are mutually exclusive'));
  } else if (spec.namespaceSelector) {
    errs.push(...validateSelector(spec.namespaceSelector, 'spec.namespaceSelector'));
  }
  errs.push(...(await validateInjectionStrategy(obj, ctx.reader)));
  errs.push(...validateUpdateStrategy(spec.updateStrategy));
  const init = spec.initContainers ?? [];
  const containers = spec.containers ?? [];
  if (init.length === 0 && containers.length === 0) {
    errs.push(required('spec', 'no initContainer or container defined for SidecarSet'));
  } else {
    errs.push(...validateSidecarContainers(init, containers, spec.volumes));
  }
  errs.push(...(await validatePatchPodMetadata(obj, ctx)));
  return errs;
}

/** UPDATE: a container's upgradeType cannot change once set. */
export function validateSidecarContainerUpgradeTypes(obj: AnySidecarSet, old: AnySidecarSet): FieldError[] {
  const oldTypes = new Map((old.spec?.containers ?? []).map((c) => [c.name, c.upgradeStrategy?.upgradeType ?? '']));
  const errs: FieldError[] = [];
  for (const c of obj.spec?.containers ?? []) {
    const before = oldTypes.get(c.name);
    if (before && (c.upgradeStrategy?.upgradeType ?? '') !== before) {
      errs.push(invalid('spec.containers.upgradeStrategy.upgradeType', c.name, `container ${c.name} upgradeType is immutable`));
    }
  }
  return errs;
}

/** Canary SidecarSets: an existing, non-canary base other than itself, fixed, and no RollingUpdate. */
export async function validateSidecarSetCanary(
  obj: AnySidecarSet,
  old: AnySidecarSet | undefined,
  reader: AdmissionReader | undefined,
): Promise<FieldError[]> {
  const annotations = obj.metadata?.annotations ?? {};
  if (annotations[SIDECARSET_CANARY_ANNOTATION] !== 'true') return [];
  const fail = (detail: string) => [invalid('metadata', annotations, detail)];
  const base = annotations[SIDECARSET_BASE_ANNOTATION] ?? '';
  if (old && (old.metadata?.annotations?.[SIDECARSET_BASE_ANNOTATION] ?? '') !== base) {
    return fail(`annotations[${SIDECARSET_BASE_ANNOTATION}] is immutable`);
  }
  if (base === obj.metadata?.name) return fail('base sidecarSet cannot be itself');
  if (obj.spec?.updateStrategy?.type === 'RollingUpdate') return fail('RollingUpdate is not supported for canary sidecarSet');
  if (!reader) return [];
  const baseObj = await reader.get<AnySidecarSet>(`${APPS_GROUP}/v1beta1`, 'SidecarSet', base);
  if (!baseObj) return fail(`fetch base sidecarSet[${base}] failed: sidecarsets.apps.kruise.io "${base}" not found`);
  if (baseObj.metadata?.annotations?.[SIDECARSET_CANARY_ANNOTATION] === 'true') return fail('base sidecarSet cannot be canary');
  return [];
}

/**
 * Where a SidecarSet injects: the one namespace v1alpha1's spec.namespace pins it to (served as
 * v1beta1, the namespace-name selector the conversion turns it into), or a namespaceSelector.
 */
function namespaceScope(s: AnySidecarSet): { namespace?: string; selector?: LabelSelectorLike } {
  if (s.spec?.namespace) return { namespace: s.spec.namespace };
  const selector = s.spec?.namespaceSelector;
  const matchLabels = Object.entries(selector?.matchLabels ?? {});
  if (selector && !selector.matchExpressions?.length && matchLabels.length === 1 && matchLabels[0]![0] === NAMESPACE_NAME_LABEL)
    return { namespace: matchLabels[0]![1] };
  return { selector };
}

/**
 * Whether two SidecarSets can inject into pods of one namespace, as v1.8.2 decides it
 * (isSidecarSetNamespaceOverlapping): different pinned namespaces or disjoint namespace selectors
 * never meet; a new SidecarSet pinned to a namespace meets one selecting namespaces by label only
 * if that namespace exists and carries the labels. A new SidecarSet selecting namespaces by label
 * never meets one pinned to a namespace: v1.8.2 matches the pinned namespace against the pinned
 * SidecarSet's own namespaceSelector, which it cannot have — what OpenKruise accepts is accepted.
 */
function namespacesOverlap(obj: AnySidecarSet, other: AnySidecarSet, objNamespace: Namespace | null): boolean {
  const mine = namespaceScope(obj);
  const theirs = namespaceScope(other);
  if (mine.namespace && theirs.namespace && mine.namespace !== theirs.namespace) return false;
  if (mine.selector && theirs.selector && !selectorsOverlap(mine.selector, theirs.selector)) return false;
  if (mine.namespace && theirs.selector && !(objNamespace && matchesLabelSelector(theirs.selector, objNamespace.metadata.labels ?? {})))
    return false;
  return !(theirs.namespace && mine.selector);
}

/**
 * Names (containers, volumes, overwriting annotations) other overlapping SidecarSets already use.
 * `objNamespace`: the namespace obj is pinned to, if it is and that namespace exists.
 */
export function validateSidecarSetConflicts(
  obj: AnySidecarSet,
  others: readonly AnySidecarSet[],
  objNamespace: Namespace | null = null,
): FieldError[] {
  const containersInOthers = new Map<string, string>();
  const initContainersInOthers = new Map<string, string>();
  const volumesInOthers = new Map<string, { owner: string; volume: unknown }>();
  const annotationsInOthers = new Map<string, { owner: string; policy: string }>();
  // A canary and its base never meet in one pod: they may share names.
  for (const other of others) {
    const name = other.metadata?.name ?? '';
    if (name === obj.metadata?.name) continue;
    if (canaryBaseOf(obj) === name || canaryBaseOf(other) === obj.metadata?.name) continue;
    if (!namespacesOverlap(obj, other, objNamespace)) continue;
    if (!selectorsOverlap(obj.spec?.selector, other.spec?.selector)) continue;
    for (const c of other.spec?.initContainers ?? []) initContainersInOthers.set(c.name, name);
    for (const c of other.spec?.containers ?? []) containersInOthers.set(c.name, name);
    for (const v of other.spec?.volumes ?? []) volumesInOthers.set(v.name, { owner: name, volume: v });
    for (const patch of other.spec?.patchPodMetadata ?? []) {
      if (patch.patchPolicy === 'Retain') continue;
      for (const key of Object.keys(patch.annotations ?? {}))
        annotationsInOthers.set(key, { owner: name, policy: patch.patchPolicy ?? '' });
    }
  }
  const errs: FieldError[] = [];
  for (const [list, inOthers] of [
    [obj.spec?.initContainers ?? [], initContainersInOthers],
    [obj.spec?.containers ?? [], containersInOthers],
  ] as const) {
    for (const c of list) {
      const owner = inOthers.get(c.name);
      if (owner !== undefined) errs.push(invalid('spec.containers', c.name, `container ${c.name} already exist in ${owner}`));
    }
  }
  for (const v of obj.spec?.volumes ?? []) {
    const other = volumesInOthers.get(v.name);
    if (other && !semanticEqual(v, other.volume)) {
      errs.push(invalid('spec.volumes', v.name, `volume ${v.name} is in conflict with sidecarset ${other.owner}`));
    }
  }
  for (const patch of obj.spec?.patchPodMetadata ?? []) {
    if (patch.patchPolicy === 'Retain') continue;
    for (const key of Object.keys(patch.annotations ?? {})) {
      const other = annotationsInOthers.get(key);
      if (other && (patch.patchPolicy === 'Overwrite' || other.policy === 'Overwrite')) {
        errs.push(invalid('spec.patchPodMetadata', key, `annotation ${key} is in conflict with sidecarset ${other.owner}`));
      }
    }
  }
  return errs;
}

export async function validateSidecarSet(obj: AnySidecarSet, old: AnySidecarSet | undefined, ctx: AdmissionContext): Promise<FieldError[]> {
  const errs = validateSidecarSetMetadata(obj);
  errs.push(...(await validateSidecarSetCanary(obj, old, ctx.reader)));
  errs.push(...(await validateSidecarSetSpec(obj, ctx)));
  if (old) errs.push(...validateSidecarContainerUpgradeTypes(obj, old));
  if (errs.length || !ctx.reader) return errs;
  try {
    const others = await ctx.reader.list<AnySidecarSet>(`${APPS_GROUP}/v1beta1`, 'SidecarSet', {});
    const pinned = namespaceScope(obj).namespace;
    // As v1.8.2's IsSelectorNamespace: a namespace that cannot be read (absent, or a name no
    // namespace can have) is selected by no selector; it is not a failure of the request.
    const objNamespace = pinned ? await ctx.reader.get<Namespace>('v1', 'Namespace', pinned).catch(() => null) : null;
    return validateSidecarSetConflicts(obj, others, objNamespace);
  } catch (e) {
    return [{ type: 'InternalError', field: '<nil>', detail: `query other sidecarsets failed, err: ${(e as Error).message}` }];
  }
}
