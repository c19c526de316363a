// CloneSet defaulting (upstream SetDefaultsCloneSet / the v1beta1 equivalent).
import type { CloneSet, CloneSetSpec, CloneSetSpecV1alpha1, CloneSetV1alpha1 } from '../../apis/apps/cloneset.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { injectTemplateDefaults, setDefaultPodTemplate, setDefaultVolumeClaimTemplates } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

export const DEFAULT_CLONESET_MAX_UNAVAILABLE = '20%';

const isInPlace = (policy: string | undefined) => policy === 'InPlaceIfPossible' || policy === 'InPlaceOnly';

function defaultCommon(spec: CloneSetSpec | CloneSetSpecV1alpha1, features: FeatureGates, templateDefaults: boolean): void {
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  if (templateDefaults) {
    spec.template ??= {};
    setDefaultPodTemplate(spec.template, features);
    setDefaultVolumeClaimTemplates(spec.volumeClaimTemplates);
  }
}

/** v1beta1: updateStrategy {type: RollingUpdate, rollingUpdate {partition 0, maxUnavailable 20%, maxSurge 0, podUpdatePolicy ReCreate}}. */
export function setDefaultsCloneSet(obj: CloneSet, features: FeatureGates, templateDefaults: boolean): void {
  const spec = (obj.spec ??= {} as CloneSetSpec);
  defaultCommon(spec, features, templateDefaults);
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  const ru = (strategy.rollingUpdate ??= {});
  if (!ru.podUpdatePolicy) ru.podUpdatePolicy = 'ReCreate';
  if (isInPlace(ru.podUpdatePolicy)) ru.inPlaceUpdateStrategy ??= {};
  ru.partition ??= 0;
  ru.maxUnavailable ??= DEFAULT_CLONESET_MAX_UNAVAILABLE;
  ru.maxSurge ??= 0;
}

/** v1alpha1: the flat updateStrategy {type: ReCreate, partition 0, maxUnavailable 20%, maxSurge 0}. */
export function setDefaultsCloneSetV1alpha1(obj: CloneSetV1alpha1, features: FeatureGates, templateDefaults: boolean): void {
  const spec = (obj.spec ??= {} as CloneSetSpecV1alpha1);
  defaultCommon(spec, features, templateDefaults);
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'ReCreate';
  else if (isInPlace(strategy.type)) strategy.inPlaceUpdateStrategy ??= {};
  strategy.partition ??= 0;
  strategy.maxUnavailable ??= DEFAULT_CLONESET_MAX_UNAVAILABLE;
  strategy.maxSurge ??= 0;
}

export function mutateCloneSet(obj: CloneSet | CloneSetV1alpha1, ctx: AdmissionContext): void {
  const templateDefaults = injectTemplateDefaults(ctx, obj);
  if (ctx.apiVersion.endsWith('/v1alpha1')) setDefaultsCloneSetV1alpha1(obj as CloneSetV1alpha1, ctx.features, templateDefaults);
  else setDefaultsCloneSet(obj as CloneSet, ctx.features, templateDefaults);
}
