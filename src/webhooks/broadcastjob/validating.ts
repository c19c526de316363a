// BroadcastJob validation (upstream pkg/webhook/broadcastjob/validating).
import type { BroadcastJob, BroadcastJobSpec } from '../../apis/apps/broadcastjob.ts';
import { BROADCASTJOB_CONTROLLER_UID_LABEL, BROADCASTJOB_NAME_LABEL } from '../../apis/constants.ts';
import { type FieldError, invalid } from '../../apis/field-errors.ts';
import { defaultedTemplateCopy, validateObjectMeta, validatePodTemplateSpec } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';
import { jobNameValidator } from '../workload.ts';

export function validateBroadcastJobSpec(spec: BroadcastJobSpec, ctx: AdmissionContext): FieldError[] {
  const errs: FieldError[] = [];
  const completion = spec.completionPolicy ?? {};
  if (completion.type === 'Never') {
    if (completion.ttlSecondsAfterFinished != null) {
      errs.push(
        invalid(
          'spec.completionPolicy.ttlSecondsAfterFinished',
          completion.ttlSecondsAfterFinished,
          'ttlSecondsAfterFinished can just work with Always CompletionPolicyType',
        ),
      );
    }
    if (completion.activeDeadlineSeconds != null) {
      errs.push(
        invalid(
          'spec.completionPolicy.activeDeadlineSeconds',
          completion.activeDeadlineSeconds,
          'activeDeadlineSeconds can just work with Always CompletionPolicyType',
        ),
      );
    }
  }
  // Upstream judges the defaulted template, so an empty restartPolicy reads as Always here.
  const template = defaultedTemplateCopy(spec.template, ctx.features);
  const restartPolicy = template.spec?.restartPolicy;
  if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') {
    errs.push(invalid('spec.template.spec.restartPolicy', restartPolicy ?? '', 'pod restartPolicy can only be Never or OnFailure'));
  }
  const labels = spec.template?.metadata?.labels;
  if (labels && (labels[BROADCASTJOB_NAME_LABEL] || labels[BROADCASTJOB_CONTROLLER_UID_LABEL])) {
    errs.push(
      invalid(
        'spec.template.metadata.labels',
        labels,
        `"${BROADCASTJOB_NAME_LABEL}" and "${BROADCASTJOB_CONTROLLER_UID_LABEL}" are not allowed to preset in pod labels`,
      ),
    );
  }
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  return errs;
}

export function validateBroadcastJob(obj: BroadcastJob, _old: BroadcastJob | undefined, ctx: AdmissionContext): FieldError[] {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return [];
  return [
    ...validateObjectMeta(obj.metadata, jobNameValidator('BroadcastJob')),
    ...validateBroadcastJobSpec(obj.spec ?? ({} as BroadcastJobSpec), ctx),
  ];
}
