// CloneSet validation (upstream pkg/webhook/cloneset/validating): spec rules on CREATE/UPDATE,
// immutable fields and the InPlaceOnly template rule on UPDATE, deletion protection on DELETE.
import type { CloneSet, CloneSetV1alpha1 } from '../../apis/apps/cloneset.ts';
import type { InPlaceUpdateStrategy, UpdatePriorityStrategy, UpdateScatterStrategy } from '../../apis/apps/pub.ts';
import { type FieldError, forbidden, invalid, notSupported, required } from '../../apis/field-errors.ts';
import { type IntOrString, getKruiseScaledValueFromIntOrPercent, nonNegativeCountError } from '../../util/intstr.ts';
import { defaultedTemplateCopy, semanticEqual, validateNonnegative, validateObjectMeta, validatePodTemplateSpec } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import {
  checkWorkloadDeletion,
  nonImageTemplateChange,
  priorityStrategyProblem,
  scatterStrategyProblem,
  validateSelectorMatchesTemplate,
  validateWorkloadSelector,
} from '../workload.ts';

type AnyCloneSet = CloneSet | CloneSetV1alpha1;

// ---------------------------------------------------------------------------------------------
// CloneSet

/** The version-independent view of the fields the rules read, with their paths. */
interface StrategyView {
  podUpdatePolicy?: string;
  podUpdatePolicyPath: string;
  base: string;
  partition?: IntOrString;
  maxUnavailable?: IntOrString;
  maxSurge?: IntOrString;
  priorityStrategy?: UpdatePriorityStrategy;
  scatterStrategy?: UpdateScatterStrategy;
  inPlaceUpdateStrategy?: InPlaceUpdateStrategy;
}

const POD_UPDATE_POLICIES = ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'];

function isAlpha(ctx: AdmissionContext): boolean {
  return ctx.apiVersion.endsWith('/v1alpha1');
}

function strategyView(obj: AnyCloneSet, alpha: boolean): StrategyView {
  if (alpha) {
    const s = (obj as CloneSetV1alpha1).spec?.updateStrategy ?? {};
    return { ...s, podUpdatePolicy: s.type, podUpdatePolicyPath: 'spec.updateStrategy.type', base: 'spec.updateStrategy' };
  }
  const ru = (obj as CloneSet).spec?.updateStrategy?.rollingUpdate ?? {};
  return {
    ...ru,
    podUpdatePolicyPath: 'spec.updateStrategy.rollingUpdate.podUpdatePolicy',
    base: 'spec.updateStrategy.rollingUpdate',
  };
}

function scaled(v: IntOrString | undefined, replicas: number, what: string, path: string, errs: FieldError[]): number {
  try {
    return getKruiseScaledValueFromIntOrPercent(v ?? 0, replicas, true);
  } catch (e) {
    errs.push(invalid(path, String(v), `failed GetScaledValueFromIntOrPercent for ${what}: ${(e as Error).message}`));
    return 0;
  }
}

function validateInPlaceUpdateStrategy(s: InPlaceUpdateStrategy | undefined, path: string): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  const p = s.imagePreDownloadParallelism;
  const problem = p === undefined || p === null ? undefined : nonNegativeCountError(p, 'imagePreDownloadParallelism');
  if (problem) errs.push(invalid(`${path}.imagePreDownloadParallelism`, p, problem));
  errs.push(...validateNonnegative(s.imagePreDownloadTimeoutSeconds, `${path}.imagePreDownloadTimeoutSeconds`));
  errs.push(...validateNonnegative(s.imagePreDownloadMinUpdatedReadyPods, `${path}.imagePreDownloadMinUpdatedReadyPods`));
  return errs;
}

function validateUpdateStrategy(obj: AnyCloneSet, alpha: boolean, replicas: number): FieldError[] {
  const errs: FieldError[] = [];
  const v = strategyView(obj, alpha);
  if (!alpha) {
    const type = (obj as CloneSet).spec?.updateStrategy?.type;
    if (type && type !== 'RollingUpdate' && type !== 'OnDelete') {
      errs.push(invalid('spec.updateStrategy.type', type, "must be 'RollingUpdate' or 'OnDelete'"));
    }
  }
  const allowed = alpha ? [...POD_UPDATE_POLICIES, 'OnDelete'] : POD_UPDATE_POLICIES;
  if (v.podUpdatePolicy && !allowed.includes(v.podUpdatePolicy)) {
    // Upstream quotes the middle value only in the v1beta1 message.
    const detail = alpha
      ? "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"
      : "must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'";
    errs.push(invalid(v.podUpdatePolicyPath, v.podUpdatePolicy, detail));
  }
  const partition = scaled(v.partition, replicas, 'partition', `${v.base}.partition`, errs);
  errs.push(...validateNonnegative(partition, `${v.base}.partition`));

  const priority = priorityStrategyProblem(v.priorityStrategy);
  if (priority) errs.push(required(`${v.base}.priorityStrategy`, priority));
  const scatter = scatterStrategyProblem(v.scatterStrategy);
  if (scatter) errs.push(required(`${v.base}.scatterStrategy`, scatter));

  let maxUnavailable = 0;
  if (v.maxUnavailable != null) maxUnavailable = scaled(v.maxUnavailable, replicas, 'maxUnavailable', `${v.base}.maxUnavailable`, errs);
  let maxSurge = 0;
  if (v.maxSurge != null) {
    maxSurge = scaled(v.maxSurge, replicas, 'maxSurge', `${v.base}.maxSurge`, errs);
    if (v.podUpdatePolicy === 'InPlaceOnly' && maxSurge > 0) {
      errs.push(invalid(`${v.base}.maxSurge`, String(v.maxSurge), 'can not use maxSurge with strategy type InPlaceOnly'));
    }
  }
  if (replicas > 0 && maxUnavailable < 1 && maxSurge < 1) {
    errs.push(invalid(`${v.base}.maxUnavailable`, v.maxUnavailable ?? null, 'maxUnavailable and maxSurge should not both be less than 1'));
  }
  errs.push(...validateInPlaceUpdateStrategy(v.inPlaceUpdateStrategy, `${v.base}.inPlaceUpdateStrategy`));
  return errs;
}

async function validatePodsToDelete(
  obj: AnyCloneSet,
  old: AnyCloneSet | undefined,
  alpha: boolean,
  ctx: AdmissionContext,
): Promise<FieldError[]> {
  const path = 'spec.scaleStrategy.podsToDelete';
  const names = obj.spec?.scaleStrategy?.podsToDelete ?? [];
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const n of names) (seen.has(n) ? dups : seen).add(n);
  if (dups.size) return [invalid(path, names, `duplicated items [${[...dups].join(' ')}]`)];
  // The v1alpha1 handler also checks each newly listed pod.
  if (!alpha || !ctx.reader) return [];
  const errs: FieldError[] = [];
  const before = new Set(old?.spec?.scaleStrategy?.podsToDelete ?? []);
  for (const name of [...seen].filter((n) => !before.has(n)).sort()) {
    const pod = await ctx.reader.get<{
      metadata?: { deletionTimestamp?: string; ownerReferences?: Array<{ uid: string; controller?: boolean }> };
    }>('v1', 'Pod', name, obj.metadata?.namespace ?? ctx.namespace);
    if (!pod) errs.push(invalid(path, name, `find pod ${name} failed: pods "${name}" not found`));
    else if (pod.metadata?.deletionTimestamp) errs.push(invalid(path, name, `find pod ${name} already terminating`));
    else {
      const owner = (pod.metadata?.ownerReferences ?? []).find((r) => r.controller);
      if (!owner || owner.uid !== obj.metadata?.uid) errs.push(invalid(path, name, `find pod ${name} owner is not this CloneSet`));
    }
  }
  return errs;
}

/** Spec rules (CREATE and UPDATE). */
export async function validateCloneSetSpec(obj: AnyCloneSet, old: AnyCloneSet | undefined, ctx: AdmissionContext): Promise<FieldError[]> {
  const alpha = isAlpha(ctx);
  const spec: NonNullable<AnyCloneSet['spec']> = obj.spec ?? ({} as NonNullable<AnyCloneSet['spec']>);
  const replicas = spec.replicas ?? 1;
  const errs: FieldError[] = [...validateObjectMeta(obj.metadata)];
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  const sel = validateWorkloadSelector(spec.selector, 'spec.selector', 'cloneset');
  errs.push(...sel.errs);
  const template = defaultedTemplateCopy(spec.template, ctx.features);
  if (sel.ok) {
    errs.push(...validateSelectorMatchesTemplate(spec.selector, spec.template?.metadata?.labels, 'spec.template.metadata.labels'));
    const extraVolumes = (spec.volumeClaimTemplates ?? []).map((p) => p.metadata?.name ?? '');
    errs.push(...validatePodTemplateSpec(template, 'spec.template', { extraVolumes }));
  }
  const restartPolicy = template.spec?.restartPolicy;
  if (restartPolicy && restartPolicy !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  if (template.spec?.activeDeadlineSeconds != null) {
    errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in cloneset is not Supported'));
  }
  errs.push(...validateNonnegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  errs.push(...validateNonnegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  if (spec.progressDeadlineSeconds != null) {
    errs.push(...validateNonnegative(spec.progressDeadlineSeconds, 'spec.progressDeadlineSeconds'));
    if (spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)) {
      errs.push(invalid('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
    }
  }
  errs.push(...(await validatePodsToDelete(obj, old, alpha, ctx)));
  errs.push(...validateUpdateStrategy(obj, alpha, replicas));
  return errs;
}

const MUTABLE_FIELDS = [
  'replicas',
  'template',
  'scaleStrategy',
  'updateStrategy',
  'minReadySeconds',
  'lifecycle',
  'revisionHistoryLimit',
  'volumeClaimTemplates',
  'progressDeadlineSeconds',
] as const;

/** UPDATE-only rules: immutable spec fields and the InPlaceOnly template rule. */
export function validateCloneSetUpdate(obj: AnyCloneSet, old: AnyCloneSet, ctx: AdmissionContext): FieldError[] {
  const errs: FieldError[] = [];
  const strip = (spec: object | undefined) => {
    const copy: Record<string, unknown> = { ...(spec ?? {}) };
    for (const f of MUTABLE_FIELDS) delete copy[f];
    return copy;
  };
  if (!semanticEqual(strip(obj.spec), strip(old.spec))) {
    errs.push(
      forbidden(
        'spec',
        "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden",
      ),
    );
  }
  if (strategyView(obj, isAlpha(ctx)).podUpdatePolicy === 'InPlaceOnly') {
    const change = nonImageTemplateChange(old.spec?.template, obj.spec?.template);
    if (change) errs.push(forbidden('spec', `only allowed to update images in spec for InPlaceOnly, but found ${change}`));
  }
  return errs;
}

export async function validateCloneSet(obj: AnyCloneSet, old: AnyCloneSet | undefined, ctx: AdmissionContext): Promise<FieldError[]> {
  switch (ctx.operation) {
    case 'CREATE':
      return validateCloneSetSpec(obj, undefined, ctx);
    case 'UPDATE':
      return [...(old ? validateCloneSetUpdate(obj, old, ctx) : []), ...(await validateCloneSetSpec(obj, old, ctx))];
    case 'DELETE': {
      const target = old ?? obj;
      checkWorkloadDeletion(target, target?.spec?.replicas, ctx.features);
      return [];
    }
    default:
      return [];
  }
}
