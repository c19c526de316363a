// AdvancedCronJob defaulting (upstream SetDefaultsAdvancedCronJob).
import type { AdvancedCronJob, AdvancedCronJobSpec } from '../../apis/apps/advancedcronjob.ts';
import { injectTemplateDefaults, setDefaultPodTemplate } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

export function mutateAdvancedCronJob(obj: AdvancedCronJob, ctx: AdmissionContext): void {
  const templateDefaults = injectTemplateDefaults(ctx, obj);
  const spec = (obj.spec ??= {} as AdvancedCronJobSpec);
  const template = (spec.template ??= {});
  if (templateDefaults) {
    if (template.jobTemplate) setDefaultPodTemplate(((template.jobTemplate.spec ??= { template: {} }).template ??= {}), ctx.features);
    if (template.broadcastJobTemplate) {
      const bspec = (template.broadcastJobTemplate.spec ??= {} as NonNullable<typeof template.broadcastJobTemplate.spec>);
      setDefaultPodTemplate((bspec.template ??= {}), ctx.features);
    }
  }
  const ilpj = template.imageListPullJobTemplate;
  if (ilpj) {
    const ispec = (ilpj.spec ??= {} as NonNullable<typeof ilpj.spec>);
    const completion = (ispec.completionPolicy ??= {});
    if (!completion.type) {
      completion.type = 'Always';
      const pull = (ispec.pullPolicy ??= {});
      pull.timeoutSeconds ??= 600;
      pull.backoffLimit ??= 3;
      if (!ispec.imagePullPolicy) ispec.imagePullPolicy = 'IfNotPresent';
    }
  }
  // Running image pulls concurrently is useless, so ImageListPullJob templates replace.
  if (!spec.concurrencyPolicy) spec.concurrencyPolicy = ilpj ? 'Replace' : 'Allow';
  spec.paused ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
}
