// Advanced StatefulSet validation (upstream pkg/webhook/statefulset/validating). v1alpha1 objects
// are a subset of v1beta1, so the rules read both shapes directly.
import type { StatefulSet, StatefulSetSpec } from '../../apis/apps/statefulset.ts';
import { CONDITION_INPLACE_UPDATE_READY } from '../../apis/constants.ts';
import type { PersistentVolumeClaim } from '../../apis/core.ts';
import { compareQuantity, parseQuantity, tryParseQuantity, type Quantity } from '../../apis/quantity.ts';
import { type FieldError, forbidden, invalid, notSupported, required } from '../../apis/field-errors.ts';
import { type IntOrString, getScaledValueFromIntOrPercent } from '../../util/intstr.ts';
import { validateLabels } from '../../util/labelselector.ts';
import { claimCompatibleWithoutSize } from '../../util/pvc.ts';
import {
  checkWorkloadDeletion,
  nonImageTemplateChange,
  priorityStrategyProblem,
  validateSelectorMatchesTemplate,
  validateWorkloadSelector,
} from '../workload.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import {
  defaultedTemplateCopy,
  semanticEqual,
  validateNonnegative,
  validateObjectMeta,
  validatePositiveIntOrPercent,
} from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

export const MAX_MIN_READY_SECONDS = 300;
const RESERVE_RANGE = /^\d+-\d+$/;
const RU = 'spec.updateStrategy.rollingUpdate';

function validateMaxUnavailable(v: IntOrString, spec: StatefulSetSpec, path: string): FieldError[] {
  const errs = validatePositiveIntOrPercent(v, path);
  try {
    if (getScaledValueFromIntOrPercent(v, 1, true) < 1) errs.push(invalid(path, v, 'should not be less than 1'));
  } catch (e) {
    errs.push(invalid(path, v, `getValueFromIntOrPercent error: ${(e as Error).message}`));
  }
  if (spec.podManagementPolicy !== 'Parallel' && v !== 1) {
    errs.push(invalid(path, v, 'can only work with Parallel PodManagementPolicyType'));
  }
  return errs;
}

function validateReserveOrdinals(spec: StatefulSetSpec): FieldError[] {
  const errs: FieldError[] = [];
  (spec.reserveOrdinals ?? []).forEach((o, i) => {
    if (typeof o === 'string') {
      if (!RESERVE_RANGE.test(o)) errs.push(invalid('spec', spec.reserveOrdinals, `${i} th reserve ordinal is not a valid range: ${o}`));
    } else if (o < 0) {
      errs.push(invalid('spec', spec.reserveOrdinals, `${i} th reserve ordinal is negative: ${o}`));
    }
  });
  return errs;
}

function validateRetentionPolicy(spec: StatefulSetSpec): FieldError[] {
  const policy = spec.persistentVolumeClaimRetentionPolicy;
  if (!policy) return [];
  const values = ['Retain', 'Delete'];
  const errs: FieldError[] = [];
  for (const key of ['whenDeleted', 'whenScaled'] as const) {
    const v = policy[key] ?? '';
    if (!values.includes(v)) errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${key}`, v, values));
  }
  return errs;
}

function validateUpdateStrategy(spec: StatefulSetSpec): FieldError[] {
  const errs: FieldError[] = [];
  const strategy = spec.updateStrategy ?? {};
  switch (strategy.type ?? '') {
    case '':
      errs.push(required('spec.updateStrategy'));
      break;
    case 'OnDelete':
      if (strategy.rollingUpdate) errs.push(invalid(RU, strategy.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"));
      break;
    case 'RollingUpdate': {
      const ru = strategy.rollingUpdate;
      if (!ru) break;
      errs.push(...validateNonnegative(ru.partition, `${RU}.partition`));
      errs.push(...validateNonnegative(ru.minReadySeconds, `${RU}.minReadySeconds`));
      if ((ru.minReadySeconds ?? 0) > MAX_MIN_READY_SECONDS) {
        errs.push(invalid(`${RU}.minReadySeconds`, ru.minReadySeconds, 'must be no more than 300 seconds'));
      }
      if (ru.maxUnavailable == null) errs.push(required(`${RU}.maxUnavailable`));
      else errs.push(...validateMaxUnavailable(ru.maxUnavailable, spec, `${RU}.maxUnavailable`));
      switch (ru.podUpdatePolicy ?? '') {
        case '':
          errs.push(required(`${RU}.podUpdatePolicy`));
          break;
        case 'ReCreate':
          break;
        case 'InPlaceIfPossible':
        case 'InPlaceOnly': {
          const gates = spec.template?.spec?.readinessGates ?? [];
          if (!gates.some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY)) {
            errs.push(
              invalid(
                'spec.template.spec.readinessGates',
                gates,
                `must contains ${CONDITION_INPLACE_UPDATE_READY} when podUpdatePolicy is ${ru.podUpdatePolicy}`,
              ),
            );
          }
          break;
        }
        default:
          errs.push(invalid(`${RU}.podUpdatePolicy`, ru.podUpdatePolicy, "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"));
      }
      if (ru.unorderedUpdate) {
        if (spec.podManagementPolicy !== 'Parallel') {
          errs.push(required(`${RU}.unorderedUpdate`, 'unorderedUpdate can only work with Parallel PodManagementPolicyType'));
        }
        const problem = priorityStrategyProblem(ru.unorderedUpdate.priorityStrategy);
        if (problem) errs.push(required(`${RU}.unorderedUpdate.priorityStrategy`, problem));
      }
      break;
    }
    default:
      errs.push(invalid('spec.updateStrategy', strategy, "must be 'RollingUpdate' or 'OnDelete'"));
  }
  return errs;
}

/** Spec rules (CREATE and UPDATE). */
export function validateStatefulSetSpec(obj: StatefulSet, ctx: AdmissionContext): FieldError[] {
  const spec: StatefulSetSpec = obj.spec ?? ({} as StatefulSetSpec);
  const errs: FieldError[] = [...validateObjectMeta(obj.metadata)];
  switch (spec.podManagementPolicy ?? '') {
    case '':
      errs.push(required('spec.podManagementPolicy'));
      break;
    case 'OrderedReady':
    case 'Parallel':
      break;
    default:
      errs.push(invalid('spec.podManagementPolicy', spec.podManagementPolicy, "must be 'OrderedReady' or 'Parallel'"));
  }
  errs.push(...validateReserveOrdinals(spec));
  if (spec.scaleStrategy?.maxUnavailable != null) {
    errs.push(...validateMaxUnavailable(spec.scaleStrategy.maxUnavailable, spec, 'spec.scaleStrategy.maxUnavailable'));
  }
  errs.push(...validateUpdateStrategy(spec));
  errs.push(...validateRetentionPolicy(spec));
  errs.push(...validateNonnegative(spec.replicas, 'spec.replicas'));
  const sel = validateWorkloadSelector(spec.selector, 'spec.selector', 'statefulset');
  errs.push(...sel.errs);
  if (sel.ok) {
    // apps ValidatePodTemplateSpecForStatefulSet: selector match and template labels only.
    errs.push(...validateSelectorMatchesTemplate(spec.selector, spec.template?.metadata?.labels, 'spec.template.metadata.labels'));
    errs.push(...validateLabels(spec.template?.metadata?.labels, 'spec.template.labels'));
  }
  const template = defaultedTemplateCopy(spec.template, ctx.features);
  const restartPolicy = template.spec?.restartPolicy;
  if (restartPolicy && restartPolicy !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  if (template.spec?.activeDeadlineSeconds != null) {
    errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'));
  }
  return errs;
}

const MUTABLE_FIELDS = [
  'replicas',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'scaleStrategy',
  'volumeClaimTemplates',
  'volumeClaimUpdateStrategy',
  'reserveOrdinals',
  'lifecycle',
  'revisionHistoryLimit',
  'ordinals',
] as const;

/** UPDATE-only field rules. */
export function validateStatefulSetUpdate(obj: StatefulSet, old: StatefulSet): FieldError[] {
  const strip = (spec: object | undefined) => {
    const copy: Record<string, unknown> = { ...(spec ?? {}) };
    for (const f of MUTABLE_FIELDS) delete copy[f];
    return copy;
  };
  const errs: FieldError[] = [];
  if (!semanticEqual(strip(obj.spec), strip(old.spec))) {
    errs.push(
      forbidden(
        'spec',
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', `volumeClaimTemplates`, `VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden",
      ),
    );
  }
  errs.push(...validateNonnegative(obj.spec?.replicas, 'spec.replicas'));
  errs.push(...validateRetentionPolicy(obj.spec ?? ({} as StatefulSetSpec)));
  return errs;
}

// Storage requests and limits compared by value for the resize rule. A missing storage is zero, as
// Go's ResourceList.Storage(); text Go cannot parse (the CRD schema rejects it before this webhook
// runs) compares unequal to everything.
const ZERO_QUANTITY = parseQuantity('0');

function storageQuantity(q: number | string | undefined): Quantity | undefined {
  return q === undefined || q === null ? ZERO_QUANTITY : tryParseQuantity(String(q));
}

const quantitiesDiffer = (a: Quantity | undefined, b: Quantity | undefined) => !a || !b || compareQuantity(a, b) !== 0;

/**
 * volumeClaimTemplates rules under volumeClaimUpdateStrategy OnPodRollingUpdate (gate
 * StatefulSetAutoResizePVCGate), upstream's: same set of names, storage class and access modes
 * unchanged, and a new storage size (larger or smaller: a rollback restores the old one) only on a
 * class that allows expansion.
 */
export async function validateVolumeClaimTemplateUpdate(obj: StatefulSet, old: StatefulSet, ctx: AdmissionContext): Promise<FieldError[]> {
  const type = obj.spec?.volumeClaimUpdateStrategy?.type ?? '';
  if (type === '' || type === 'OnDelete') return [];
  const vcts = obj.spec?.volumeClaimTemplates ?? [];
  const oldVcts = old.spec?.volumeClaimTemplates ?? [];
  if (vcts.length !== oldVcts.length) {
    return [invalid('spec.volumeClaimTemplates', vcts, 'volumeClaimTemplate can not be added or deleted when OnRollingUpdate')];
  }
  const byName = new Map(oldVcts.map((p) => [p.metadata?.name ?? '', p]));
  for (const vct of vcts) {
    const id = `spec.volumeClaimTemplates[${vct.metadata?.name ?? ''}]`;
    const before = byName.get(vct.metadata?.name ?? '');
    if (!before) return [forbidden(`${id}.name`, 'volumeClaimTemplate name can not be modified')];
    const storage = (p: PersistentVolumeClaim, k: 'requests' | 'limits') => storageQuantity(p.spec?.resources?.[k]?.storage);
    const resized =
      quantitiesDiffer(storage(before, 'requests'), storage(vct, 'requests')) ||
      quantitiesDiffer(storage(before, 'limits'), storage(vct, 'limits'));
    if (!claimCompatibleWithoutSize(before, vct)) {
      return [invalid(id, vct, 'volumeClaimTemplate can not be modified when OnRollingUpdate')];
    }
    if (!resized) continue;
    if (!ctx.reader) continue;
    const scName = vct.spec?.storageClassName;
    type StorageClass = {
      allowVolumeExpansion?: boolean;
      metadata?: { name?: string; creationTimestamp?: string; annotations?: Record<string, string> };
    };
    let sc: StorageClass | null | undefined;
    if (scName == null) {
      const all = await ctx.reader.list<StorageClass>('storage.k8s.io/v1', 'StorageClass', {});
      const defaults = all.filter((s) => s.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
      defaults.sort((a, b) => String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? '')));
      sc = defaults[0];
      if (!sc) continue;
    } else {
      sc = await ctx.reader.get<StorageClass>('storage.k8s.io/v1', 'StorageClass', scName);
      if (!sc) return [invalid(`${id}.spec.storageClassName`, scName, 'can not get sc')];
    }
    if (sc.allowVolumeExpansion === false) {
      return [forbidden(`${id}.spec.resources.requests.storage`, `storage class ${sc.metadata?.name} does not support volume expansion`)];
    }
  }
  return [];
}

export async function validateStatefulSet(obj: StatefulSet, old: StatefulSet | undefined, ctx: AdmissionContext): Promise<FieldError[]> {
  switch (ctx.operation) {
    case 'CREATE':
      return validateStatefulSetSpec(obj, ctx);
    case 'UPDATE': {
      if (!old) return validateStatefulSetSpec(obj, ctx);
      const errs = [...validateStatefulSetSpec(obj, ctx), ...validateStatefulSetUpdate(obj, old)];
      if (errs.length) return errs;
      if (ctx.features.StatefulSetAutoResizePVCGate) {
        const vctErrs = await validateVolumeClaimTemplateUpdate(obj, old, ctx);
        if (vctErrs.length) return vctErrs;
      }
      if (obj.spec?.updateStrategy?.rollingUpdate?.podUpdatePolicy === 'InPlaceOnly') {
        const change = nonImageTemplateChange(old.spec?.template, obj.spec?.template);
        if (change) {
          throw new AdmissionDenied(
            `invalid template modified with InPlaceOnly strategy: ${change}, currently only image update is allowed for InPlaceOnly`,
            422,
          );
        }
      }
      return [];
    }
    case 'DELETE': {
      const target = old ?? obj;
      checkWorkloadDeletion(target, target?.spec?.replicas, ctx.features);
      return [];
    }
    default:
      return [];
  }
}
