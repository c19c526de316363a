// BroadcastJob defaulting (upstream SetDefaultsBroadcastJob); v1alpha1 and v1beta1 share a shape.
import type { BroadcastJob, BroadcastJobSpec } from '../../apis/apps/broadcastjob.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { injectTemplateDefaults, setDefaultPodTemplate } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

/** Unlimited parallelism. */
export const MAX_PARALLELISM = 2147483647;

/** Defaults a BroadcastJob spec (upstream SetDefaultsBroadcastJob's spec part). */
export function setDefaultsBroadcastJobSpec(spec: BroadcastJobSpec, features: FeatureGates, templateDefaults: boolean): void {
  if (templateDefaults) {
    spec.template ??= {};
    setDefaultPodTemplate(spec.template, features);
  }
  const completion = (spec.completionPolicy ??= {});
  if (!completion.type) completion.type = 'Always';
  spec.parallelism ??= MAX_PARALLELISM;
  const failure = (spec.failurePolicy ??= {});
  if (!failure.type) failure.type = 'FailFast';
}

export function mutateBroadcastJob(obj: BroadcastJob, ctx: AdmissionContext): void {
  const templateDefaults = injectTemplateDefaults(ctx, obj);
  setDefaultsBroadcastJobSpec((obj.spec ??= {} as BroadcastJobSpec), ctx.features, templateDefaults);
}
