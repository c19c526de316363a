// Advanced StatefulSet defaulting (upstream SetDefaultsStatefulSet). v1alpha1 objects carry a
// subset of the v1beta1 fields, so one defaulter serves both; beta-only fields stay beta-only.
import type { StatefulSet, StatefulSetSpec } from '../../apis/apps/statefulset.ts';
import type { FeatureGates } from '../../apis/features.ts';
import { injectTemplateDefaults, setDefaultPodTemplate, setDefaultVolumeClaimTemplates } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

export function setDefaultsStatefulSet(obj: StatefulSet, features: FeatureGates, beta: boolean, templateDefaults: boolean): void {
  const spec = (obj.spec ??= {} as StatefulSetSpec);
  if (!spec.podManagementPolicy) spec.podManagementPolicy = 'OrderedReady';
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {});
    ru.partition ??= 0;
    ru.maxUnavailable ??= 1;
    if (!ru.podUpdatePolicy) ru.podUpdatePolicy = 'ReCreate';
    ru.minReadySeconds ??= 0;
  }
  if (beta && features.StatefulSetAutoDeletePVC) {
    const policy = (spec.persistentVolumeClaimRetentionPolicy ??= {});
    if (!policy.whenDeleted) policy.whenDeleted = 'Retain';
    if (!policy.whenScaled) policy.whenScaled = 'Retain';
  }
  if (beta && features.StatefulSetAutoResizePVCGate) {
    const vcus = (spec.volumeClaimUpdateStrategy ??= {});
    if (!vcus.type) vcus.type = 'OnDelete';
  }
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  if (templateDefaults) {
    spec.template ??= {};
    setDefaultPodTemplate(spec.template, features);
    setDefaultVolumeClaimTemplates(spec.volumeClaimTemplates);
  }
}

export function mutateStatefulSet(obj: StatefulSet, ctx: AdmissionContext): void {
  setDefaultsStatefulSet(obj, ctx.features, !ctx.apiVersion.endsWith('/v1alpha1'), injectTemplateDefaults(ctx, obj));
}
