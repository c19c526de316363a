// Advanced DaemonSet defaulting (upstream SetDefaultsDaemonSet). Upstream applies no pod template
// defaults to DaemonSets; validation still judges a defaulted copy of the template. Its answer is a
// patch to the object as Go re-marshals it, so the stored template is the Go round trip of the one
// sent (quantities canonical, empty omitempty lists and maps gone, unknown fields dropped) — and
// the revision name is a hash of exactly that (util/go-pod-template.ts).
import type { DaemonSet, DaemonSetSpec } from '../../apis/apps/daemonset.ts';
import type { PodTemplateSpec } from '../../apis/core.ts';
import { goPodTemplateRoundTrip } from '../../util/go-pod-template.ts';
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
  if (spec.template) spec.template = goPodTemplateRoundTrip(spec.template) as PodTemplateSpec;
}

export function mutateDaemonSet(obj: DaemonSet, _ctx: AdmissionContext): void {
  setDefaultsDaemonSet(obj);
}
