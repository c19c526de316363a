// Advanced DaemonSet defaulting (upstream SetDefaultsDaemonSet). Upstream applies no pod template
// defaults to DaemonSets; validation still judges a defaulted copy of the template.
import type { DaemonSet, DaemonSetSpec } from '../../apis/apps/daemonset.ts';
import type { AdmissionContext } from '../../runtime/webhook/types.ts';

export function setDefaultsDaemonSet(obj: DaemonSet): void {
  const spec = (obj.spec ??= {} as DaemonSetSpec);
  spec.burstReplicas ??= 250;
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {});
    if (!ru.rollingUpdateType) ru.rollingUpdateType = 'Standard';
    if (ru.maxUnavailable == null && ru.maxSurge == null) {
      ru.maxUnavailable = 1;
      ru.maxSurge = 0;
    }
  }
  spec.revisionHistoryLimit ??= 10;
}

export function mutateDaemonSet(obj: DaemonSet, _ctx: AdmissionContext): void {
  setDefaultsDaemonSet(obj);
}
