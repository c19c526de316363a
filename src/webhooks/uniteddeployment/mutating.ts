// UnitedDeployment defaulting (upstream SetDefaultsUnitedDeployment).
import type { UnitedDeployment, UnitedDeploymentSpec } from '../../apis/apps/uniteddeployment.ts';
import type { PersistentVolumeClaim, PodTemplateSpec } from '../../apis/core.ts';
import { injectTemplateDefaults, setDefaultPodTemplate, setDefaultVolumeClaimTemplates } from '../podtemplate.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

export function mutateUnitedDeployment(obj: UnitedDeployment, ctx: AdmissionContext): void {
  const templateDefaults = injectTemplateDefaults(ctx, obj);
  const spec = (obj.spec ??= {} as UnitedDeploymentSpec);
  spec.revisionHistoryLimit ??= 10;
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'Manual';
  if (strategy.type === 'Manual') strategy.manualUpdate ??= {};
  // Upstream defaults only the apps/v1 StatefulSet template's pods.
  const sts = spec.template?.statefulSetTemplate;
  if (sts && templateDefaults) {
    const stsSpec = (sts.spec ??= {}) as { template?: PodTemplateSpec; volumeClaimTemplates?: PersistentVolumeClaim[] };
    setDefaultPodTemplate((stsSpec.template ??= {}), ctx.features);
    setDefaultVolumeClaimTemplates(stsSpec.volumeClaimTemplates);
  }
  const subsets = spec.topology?.subsets ?? [];
  const hasReplicas = subsets.some((s) => s.replicas != null);
  const hasCapacity = subsets.some((s) => s.minReplicas != null || s.maxReplicas != null);
  if (hasCapacity && !hasReplicas) for (const s of subsets) s.minReplicas ??= 0;
}
