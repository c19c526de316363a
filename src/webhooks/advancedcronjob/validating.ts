// AdvancedCronJob validation (upstream pkg/webhook/advancedcronjob/validating).
import type { AdvancedCronJob, AdvancedCronJobSpec } from '../../apis/apps/advancedcronjob.ts';
import type { BroadcastJobSpec } from '../../apis/apps/broadcastjob.ts';
import { type FieldError, forbidden, invalid } from '../../apis/field-errors.ts';
import { jobNameValidator } from '../workload.ts';
import { defaultedTemplateCopy, semanticEqual, validateNonnegative, validateObjectName, validatePodTemplateSpec } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { isValidTimeZone, parseStandardCron } from './cron.ts';

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
  if (zone.toLowerCase() === 'local') errs.push(invalid(path, zone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  if (!isValidTimeZone(zone)) errs.push(invalid(path, zone, `unknown time zone ${zone}`));
  return errs;
}

function validateImageListPullJobTemplate(spec: AdvancedCronJobSpec): FieldError[] {
  const errs: FieldError[] = [];
  const base = 'spec.template.imageListPullJobTemplate.spec';
  const ilpj = spec.template.imageListPullJobTemplate?.spec;
  if (spec.concurrencyPolicy !== 'Replace' && spec.concurrencyPolicy !== 'Forbid') {
    errs.push(invalid('spec.concurrencyPolicy', spec.concurrencyPolicy ?? '', 'ImageListPullJobTemplate only supports Replace or Forbid concurrencyPolicy'));
  }
  const images = ilpj?.images ?? [];
  if (images.length === 0) errs.push(invalid(`${base}.images`, images, 'image can not be empty'));
  if (images.length > MAX_IMAGES) errs.push(invalid(`${base}.images`, images.length, `the maximum number of images cannot > ${MAX_IMAGES}`));
  const seen = new Set<string>();
  for (const image of images) {
    if (seen.has(image)) errs.push(invalid(`${base}.images`, image, `image ${image} is duplicated`));
    seen.add(image);
  }
  const sel = ilpj?.selector;
  if (sel?.names?.length && (Object.keys(sel.matchLabels ?? {}).length || sel.matchExpressions?.length)) {
    errs.push(invalid(`${base}.selector`, sel, 'can not set both names and labelSelector in this spec.selector'));
  }
  if (sel && ilpj?.podSelector) errs.push(invalid(`${base}.podSelector`, ilpj.podSelector, 'can not set both selector and podSelector'));
  return errs;
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
    errs.push(forbidden('spec.template', 'spec must have one template, either JobTemplate or BroadcastJobTemplate should be provided'));
  } else if (count > 1) {
    errs.push(forbidden('spec.template', 'spec can have only one template, either JobTemplate or BroadcastJobTemplate should be provided'));
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

const MUTABLE = ['schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'paused', 'timeZone'] as const;

export function validateAdvancedCronJobUpdate(obj: AdvancedCronJob, old: AdvancedCronJob): FieldError[] {
  const strip = (spec: AdvancedCronJobSpec | undefined, keepIlpj: boolean) => {
    const copy: Record<string, unknown> & { template?: { imageListPullJobTemplate?: unknown } } = structuredClone(spec ?? {});
    for (const f of MUTABLE) delete copy[f];
    if (keepIlpj && copy.template) delete copy.template.imageListPullJobTemplate;
    return copy;
  };
  // An existing ImageListPullJob template may be edited in place.
  const ilpj = old.spec?.template?.imageListPullJobTemplate != null && obj.spec?.template?.imageListPullJobTemplate != null;
  if (semanticEqual(strip(obj.spec, ilpj), strip(old.spec, ilpj))) return [];
  return [
    forbidden(
      'spec',
      "updates to advancedcronjob spec for fields other than 'schedule', 'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden",
    ),
  ];
}

export function validateAdvancedCronJob(obj: AdvancedCronJob, old: AdvancedCronJob | undefined, ctx: AdmissionContext): FieldError[] {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return [];
  const errs = [
    ...validateObjectName(obj.metadata?.name, jobNameValidator('AdvancedCronJob')),
    ...validateAdvancedCronJobSpec(obj.spec ?? ({} as AdvancedCronJobSpec), ctx),
  ];
  if (ctx.operation === 'UPDATE' && old) errs.push(...validateAdvancedCronJobUpdate(obj, old));
  return errs;
}
