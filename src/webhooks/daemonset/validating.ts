// Advanced DaemonSet validation (upstream pkg/webhook/daemonset/validating).
import type { DaemonSet, DaemonSetSpec } from '../../apis/apps/daemonset.ts';
import { type FieldError, forbidden, invalid, notSupported, required } from '../../apis/field-errors.ts';
import type { IntOrString } from '../../util/intstr.ts';
import { labelSelectorAsSelector, validateLabelSelector } from '../../util/labelselector.ts';
import {
  defaultedTemplateCopy,
  isNotMoreThan100Percent,
  validateNonnegative,
  validateObjectMeta,
  validatePodTemplateSpec,
  validatePositiveIntOrPercent,
} from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

const UPDATE = 'spec.updateStrategy';
const RU = `${UPDATE}.rollingUpdate`;

/** The integer an int-or-percent stands for (a percentage's number); 0 when unparsable. */
function intOrPercentValue(v: IntOrString): number {
  if (typeof v === 'number') return v;
  return /^[0-9]+%$/.test(v) ? Number(v.slice(0, -1)) : Number.parseInt(v, 10) || 0;
}

function validateRollingUpdate(spec: DaemonSetSpec, alpha: boolean): FieldError[] {
  const ru = spec.updateStrategy!.rollingUpdate!;
  const errs: FieldError[] = [];
  let hasUnavailable = false;
  let hasSurge = false;
  if (ru.maxUnavailable != null && intOrPercentValue(ru.maxUnavailable) !== 0) {
    hasUnavailable = true;
    errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, `${RU}.maxUnavailable`));
    errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, `${RU}.maxUnavailable`));
  }
  if (ru.maxSurge != null && intOrPercentValue(ru.maxSurge) !== 0) {
    hasSurge = true;
    errs.push(...validatePositiveIntOrPercent(ru.maxSurge, `${RU}.maxSurge`));
    errs.push(...isNotMoreThan100Percent(ru.maxSurge, `${RU}.maxSurge`));
  }
  if (hasUnavailable && hasSurge) errs.push(invalid(`${RU}.maxSurge`, ru.maxSurge, 'may not be set when maxUnavailable is non-zero'));
  if (!hasUnavailable && !hasSurge) errs.push(required(`${RU}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));

  // Upstream nests these two paths under rollingUpdate twice; kept for identical messages.
  const types = alpha ? ['Standard', 'Surging', 'InPlaceIfPossible'] : ['Standard', 'InPlaceIfPossible'];
  switch (ru.rollingUpdateType ?? '') {
    case '':
    case 'Standard':
      break;
    case 'InPlaceIfPossible':
      if (hasSurge) errs.push(required(`${RU}.maxSurge`, 'must be 0 for InPlaceIfPossible type'));
      break;
    case 'Surging':
      if (alpha) {
        if (hasUnavailable) errs.push(required(`${RU}.maxUnavailable`, 'must be 0 for Surging type'));
        break;
      }
    // falls through: v1beta1 has no Surging type
    default:
      errs.push(notSupported(`${RU}.rollingUpdate.type`, ru.rollingUpdateType, types));
  }
  if (typeof ru.partition === 'number') errs.push(...validateNonnegative(ru.partition, `${RU}.rollingUpdate.partition`));
  return errs;
}

export function validateDaemonSetSpec(obj: DaemonSet, ctx: AdmissionContext): FieldError[] {
  const alpha = ctx.apiVersion.endsWith('/v1alpha1');
  const spec: DaemonSetSpec = obj.spec ?? ({} as DaemonSetSpec);
  const errs: FieldError[] = [...validateObjectMeta(obj.metadata)];
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  try {
    // A missing selector selects nothing, so it never matches the template.
    if (!labelSelectorAsSelector(spec.selector).matches(spec.template?.metadata?.labels ?? {})) {
      errs.push(
        invalid('spec.template.metadata.labels', spec.template?.metadata?.labels ?? null, '`selector` does not match template `labels`'),
      );
    }
  } catch {
    // reported by validateLabelSelector
  }
  if (spec.selector && Object.keys(spec.selector.matchLabels ?? {}).length + (spec.selector.matchExpressions?.length ?? 0) === 0) {
    errs.push(invalid('spec.selector', spec.selector, 'empty selector is invalid for daemonset'));
  }
  const template = defaultedTemplateCopy(spec.template, ctx.features);
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  const restartPolicy = template.spec?.restartPolicy ?? '';
  if (restartPolicy !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  if (template.spec?.activeDeadlineSeconds != null) {
    errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in DaemonSet is not Supported'));
  }
  errs.push(...validateNonnegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  const strategy = spec.updateStrategy ?? {};
  switch (strategy.type ?? '') {
    case 'OnDelete':
      break;
    case 'RollingUpdate':
      if (!strategy.rollingUpdate) errs.push(required(RU));
      else errs.push(...validateRollingUpdate(spec, alpha));
      break;
    default:
      errs.push(notSupported(UPDATE, strategy, ['RollingUpdate', 'OnDelete']));
  }
  errs.push(...validateNonnegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  if (spec.lifecycle?.inPlaceUpdate) errs.push(forbidden('spec.lifecycle.inPlaceUpdate', 'inPlaceUpdate hook has not supported yet'));
  return errs;
}

export function validateDaemonSet(obj: DaemonSet, _old: DaemonSet | undefined, ctx: AdmissionContext): FieldError[] {
  return ctx.operation === 'CREATE' || ctx.operation === 'UPDATE' ? validateDaemonSetSpec(obj, ctx) : [];
}
