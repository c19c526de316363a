// AdvancedCronJob validation (upstream pkg/webhook/advancedcronjob/validating).
import type { AdvancedCronJob, AdvancedCronJobSpec } from '../../apis/apps/advancedcronjob.ts';
import type { BroadcastJobSpec } from '../../apis/apps/broadcastjob.ts';
import { type FieldError, forbidden, invalid } from '../../apis/field-errors.ts';
import { jobNameValidator } from '../workload.ts';
import { defaultedTemplateCopy, semanticEqual, validateNonnegative, validateObjectMeta, validatePodTemplateSpec } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { isValidTimeZone, parseStandardCron } from '../../util/cron.ts';
import { imageReferenceError } from '../../util/imageref.ts';
import { labelSelectorAsSelector } from '../../util/labelselector.ts';

export const MAX_IMAGES = 255;

function validateSchedule(spec: AdvancedCronJobSpec): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = spec.schedule ?? '';
  if (!schedule) errs.push(invalid('spec.schedule', schedule, 'schedule cannot be empty, please provide valid cron schedule.'));
  try {
    parseStandardCron(schedule);
  } catch (e) {
    errs.push(invalid('spec.schedule', schedule, (e as Error).message));
  }
  if (schedule.includes('TZ') && spec.timeZone != null) {
    errs.push(invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
  }
  return errs;
}

function validateTimeZone(zone: string | undefined): FieldError[] {
  if (zone == null) return [];
  const path = 'spec.timeZone';
  if (zone === '') return [invalid(path, zone, 'timeZone must be nil or non-empty string')];
  const errs: FieldError[] = [];
  if (zone.toLowerCase() === 'local')
    errs.push(invalid(path, zone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  if (!isValidTimeZone(zone)) errs.push(invalid(path, zone, `unknown time zone ${zone}`));
  return errs;
}

// Upstream's ceiling on an ImageListPullJob template's activeDeadlineSeconds (one day).
const MAX_ACTIVE_DEADLINE_SECONDS = 86400;

function selectorError(sel: Parameters<typeof labelSelectorAsSelector>[0]): string | undefined {
  try {
    labelSelectorAsSelector(sel);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The first broken rule of an ImageListPullJob template, in upstream's order and words. */
function imageListPullJobTemplateError(spec: AdvancedCronJobSpec): FieldError | undefined {
  const base = 'spec.template.imageListPullJobTemplate.spec';
  const ilpj =
    spec.template.imageListPullJobTemplate?.spec ??
    ({} as NonNullable<NonNullable<AdvancedCronJobSpec['template']['imageListPullJobTemplate']>['spec']>);
  const sel = ilpj.selector;
  if (sel) {
    if (sel.matchLabels || sel.matchExpressions) {
      if (sel.names) return invalid(`${base}.selector`, sel, 'can not set both names and labelSelector in this spec.selector');
      const err = selectorError(sel);
      if (err)
        return invalid(
          `${base}.selector.labelSelector`,
          { matchLabels: sel.matchLabels, matchExpressions: sel.matchExpressions },
          `invalid selector: ${err}`,
        );
    }
    if (sel.names && new Set(sel.names).size !== sel.names.length)
      return invalid(`${base}.selector.names`, sel.names, 'duplicated name in selector names');
  }
  if (ilpj.podSelector) {
    if (sel) return invalid(base, ilpj, 'can not set both selector and podSelector');
    const err = selectorError(ilpj.podSelector);
    if (err) return invalid(`${base}.podSelector.labelSelector`, ilpj.podSelector, `invalid selector: ${err}`);
  }
  const images = ilpj.images ?? [];
  if (images.length === 0) return invalid(`${base}.images`, images, 'image can not be empty');
  if (images.length > MAX_IMAGES) return invalid(`${base}.images`, images, `the maximum number of images cannot > ${MAX_IMAGES}`);
  if (new Set(images).size !== images.length) return invalid(`${base}.images`, images, 'images cannot have duplicate values');
  for (const image of images) {
    const err = imageReferenceError(image);
    if (err) return invalid(`${base}.images`, images, `invalid image ${image}: ${err}`);
  }
  const cp = ilpj.completionPolicy ?? {};
  const cpPath = `${base}.completionPolicy`;
  if ((cp.type ?? '') !== 'Always')
    return invalid(`${cpPath}.type`, cp.type ?? '', `completionPolicy should be Always, but current value is: ${cp.type ?? ''}`);
  const deadline = cp.activeDeadlineSeconds;
  if (deadline != null && deadline > MAX_ACTIVE_DEADLINE_SECONDS) {
    return invalid(
      `${cpPath}.activeDeadlineSeconds`,
      deadline,
      `activeDeadlineSeconds must be less than ${MAX_ACTIVE_DEADLINE_SECONDS}, current value is: ${deadline}`,
    );
  }
  const timeout = ilpj.pullPolicy?.timeoutSeconds;
  if (deadline != null && timeout != null && timeout > deadline) {
    return invalid(
      `${cpPath}.activeDeadlineSeconds`,
      deadline,
      `completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(${timeout})`,
    );
  }
  if (cp.ttlSecondsAfterFinished != null)
    return invalid(
      `${cpPath}.ttlSecondsAfterFinished`,
      cp.ttlSecondsAfterFinished,
      'ttlSecondsAfterFinished is not supported in advancedCronJob',
    );
  return undefined;
}

function validateImageListPullJobTemplate(spec: AdvancedCronJobSpec): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.concurrencyPolicy !== 'Replace' && spec.concurrencyPolicy !== 'Forbid') {
    // Upstream names the field spec.spec.concurrencyPolicy (its path starts at spec and adds spec again).
    errs.push(
      invalid(
        'spec.spec.concurrencyPolicy',
        spec.concurrencyPolicy ?? '',
        `concurrencyPolicy should be Replace or Forbid, but current value is: ${spec.concurrencyPolicy ?? ''}`,
      ),
    );
  }
  const err = imageListPullJobTemplateError(spec);
  return err ? [...errs, err] : errs;
}

function validateTemplates(spec: AdvancedCronJobSpec, ctx: AdmissionContext): FieldError[] {
  const errs: FieldError[] = [];
  const t = spec.template ?? {};
  let count = 0;
  // Upstream validates each job's pod template at spec.template (not the nested path).
  if (t.jobTemplate) {
    count++;
    errs.push(...validatePodTemplateSpec(defaultedTemplateCopy(t.jobTemplate.spec?.template, ctx.features), 'spec.template'));
  }
  if (t.broadcastJobTemplate) {
    count++;
    const bspec = t.broadcastJobTemplate.spec ?? ({} as BroadcastJobSpec);
    errs.push(...validatePodTemplateSpec(defaultedTemplateCopy(bspec.template, ctx.features), 'spec.template'));
  }
  if (t.imageListPullJobTemplate) {
    count++;
    errs.push(...validateImageListPullJobTemplate(spec));
  }
  if (count === 0) {
    errs.push(
      forbidden(
        'spec.template',
        'spec must have one template, either JobTemplate or BroadcastJobTemplate or ImageListPullJobTemplate should be provided',
      ),
    );
  } else if (count > 1) {
    errs.push(
      forbidden(
        'spec.template',
        'spec can have only one template, either JobTemplate or BroadcastJobTemplate or ImageListPullJobTemplate should be provided',
      ),
    );
  }
  return errs;
}

export function validateAdvancedCronJobSpec(spec: AdvancedCronJobSpec, ctx: AdmissionContext): FieldError[] {
  return [
    ...validateSchedule(spec),
    ...validateTemplates(spec, ctx),
    ...validateNonnegative(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'),
    ...validateNonnegative(spec.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'),
    ...validateNonnegative(spec.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'),
    ...validateTimeZone(spec.timeZone),
  ];
}

const MUTABLE = [
  'schedule',
  'concurrencyPolicy',
  'successfulJobsHistoryLimit',
  'failedJobsHistoryLimit',
  'startingDeadlineSeconds',
  'paused',
  'timeZone',
] as const;

export function validateAdvancedCronJobUpdate(obj: AdvancedCronJob, old: AdvancedCronJob): FieldError[] {
  const strip = (spec: AdvancedCronJobSpec | undefined, keepIlpj: boolean) => {
    const copy: Record<string, unknown> & { template?: { imageListPullJobTemplate?: unknown } } = structuredClone(spec ?? {});
    for (const f of MUTABLE) delete copy[f];
    if (keepIlpj && copy.template) delete copy.template.imageListPullJobTemplate;
    return copy;
  };
  // An existing ImageListPullJob template may be edited (upstream compares against the old one).
  const ilpj = old.spec?.template?.imageListPullJobTemplate != null;
  if (semanticEqual(strip(obj.spec, ilpj), strip(old.spec, ilpj))) return [];
  return [
    forbidden(
      'spec',
      "updates to advancedcronjob spec for fields other than 'imageListPullJobTemplate', 'schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden",
    ),
  ];
}

export function validateAdvancedCronJob(obj: AdvancedCronJob, old: AdvancedCronJob | undefined, ctx: AdmissionContext): FieldError[] {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return [];
  const errs = [
    ...validateObjectMeta(obj.metadata, jobNameValidator('AdvancedCronJob')),
    ...validateAdvancedCronJobSpec(obj.spec ?? ({} as AdvancedCronJobSpec), ctx),
  ];
  if (ctx.operation === 'UPDATE' && old) errs.push(...validateAdvancedCronJobUpdate(obj, old));
  return errs;
}
