// The small pod handlers of the mutating pod webhook besides SidecarSet injection (upstream
// pkg/webhook/pod/mutating: pod_readiness.go, container_launch_priority_initialization.go,
// enhancedlivenessprobe_handler.go; spec §18). Each mutates the pod in place and says whether it
// changed anything.
import type { EnvVar } from '../../apis/core.ts';
import type { Pod } from '../../apis/core-objects.ts';
import {
  APPS_GROUP,
  CONDITION_KRUISE_POD_READY,
  CONTAINER_LAUNCH_PRIORITY_ANNOTATION,
  CONTAINER_PROBE_CONTEXT_ANNOTATION,
  ENV_CONTAINER_BARRIER,
  ENV_CONTAINER_PRIORITY,
  USING_ENHANCED_LIVENESS_ANNOTATION,
} from '../../apis/constants.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';
import { randomString } from '../../util/rand.ts';

/** Whether the pod's controller is a Kruise workload (IsPodOwnedByKruise: group apps.kruise.io). */
export function isPodOwnedByKruise(pod: Pick<Pod, 'metadata'>): boolean {
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
  return !!owner && owner.apiVersion.split('/')[0] === APPS_GROUP && owner.apiVersion.includes('/');
}

/** KruisePodReady readiness gate: pods of Kruise workloads, or every pod with gate KruisePodReadinessGate. */
export function injectPodReadinessGate(pod: Pod, allPods: boolean): boolean {
  if (!allPods && !isPodOwnedByKruise(pod)) return false;
  const spec = (pod.spec ??= { containers: [] });
  if (spec.readinessGates?.some((g) => g.conditionType === CONDITION_KRUISE_POD_READY)) return false;
  spec.readinessGates = [...(spec.readinessGates ?? []), { conditionType: CONDITION_KRUISE_POD_READY }];
  return true;
}

const PRIORITY_MIN = -2147483647;
const PRIORITY_MAX = 2147483647;

/** The ConfigMap whose keys release each priority: `<pod>-barrier`. */
export const barrierConfigMapName = (podName: string): string => `${podName}-barrier`;
/** The barrier key of a priority: `p_<n>`. */
export const barrierKey = (priority: number): string => `p_${priority}`;

/** The API server's name generator (generateName + 5 random characters). */
export function generateName(base: string, random: () => number): string {
  const prefix = base.length > 58 ? base.slice(0, 58) : base;
  return prefix + randomString(5, random);
}

/**
 * Container launch priority (after SidecarSet injection, CREATE, pods with more than one container):
 * `Ordered` ⇒ priorities 0, -1, -2… in container order; else each container's
 * KRUISE_CONTAINER_PRIORITY (missing = 0). When they differ, every container waits on
 * KRUISE_CONTAINER_BARRIER from ConfigMap `<pod>-barrier` key `p_<priority>`; a pod with only
 * generateName gets its name here, since the ConfigMap must be named after it.
 */
export function initializeContainerLaunchPriority(pod: Pod, random: () => number): boolean {
  const containers = pod.spec?.containers ?? [];
  if (containers.length <= 1) return false;
  let priorities: number[];
  if (pod.metadata.annotations?.[CONTAINER_LAUNCH_PRIORITY_ANNOTATION] === 'Ordered') {
    priorities = containers.map((_, i) => -i);
  } else {
    let any = false;
    priorities = containers.map((c, i) => {
      let p = 0;
      for (const e of c.env ?? []) {
        if (e.name !== ENV_CONTAINER_PRIORITY) continue;
        const v = e.value ?? '';
        if (!/^[+-]?\d+$/.test(v) || Number(v) < PRIORITY_MIN || Number(v) > PRIORITY_MAX) {
          throw new AdmissionDenied(
            `spec.containers[${i}].env: invalid ${ENV_CONTAINER_PRIORITY} ${JSON.stringify(v)}: must be an integer in [${PRIORITY_MIN}, ${PRIORITY_MAX}]`,
            500,
          );
        }
        p = Number(v);
        if (p !== 0) any = true;
      }
      return p;
    });
    if (!any || priorities.every((p) => p === priorities[0])) return false;
  }
  if (!pod.metadata.name && pod.metadata.generateName) pod.metadata.name = generateName(pod.metadata.generateName, random);
  const cm = barrierConfigMapName(pod.metadata.name ?? '');
  containers.forEach((c, i) => {
    const env: EnvVar = { name: ENV_CONTAINER_BARRIER, valueFrom: { configMapKeyRef: { name: cm, key: barrierKey(priorities[i]!) } } };
    c.env = [...(c.env ?? []), env];
  });
  return true;
}

/**
 * Enhanced liveness probe (gate EnhancedLivenessProbe; pods of Kruise workloads with
 * apps.kruise.io/using-enhanced-liveness=true): the liveness probes move from the containers to
 * apps.kruise.io/container-probe-context, for the external prober to run.
 */
export function moveLivenessProbesToContext(pod: Pod): boolean {
  if (!isPodOwnedByKruise(pod) || pod.metadata.annotations?.[USING_ENHANCED_LIVENESS_ANNOTATION] !== 'true') return false;
  const probes: Array<{ name: string; livenessProbe: unknown }> = [];
  for (const c of pod.spec?.containers ?? []) {
    if (!c.livenessProbe) continue;
    probes.push({ name: c.name, livenessProbe: c.livenessProbe });
    delete c.livenessProbe;
  }
  if (!probes.length) return false;
  (pod.metadata.annotations ??= {})[CONTAINER_PROBE_CONTEXT_ANNOTATION] = JSON.stringify(probes);
  return true;
}
