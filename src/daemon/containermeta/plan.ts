// Container meta (behaviour spec §18.2, gate InPlaceUpdateEnvFromMetadata) as pure decisions: the
// runtime-containers-meta annotation the daemon reports for a pod, and which containers must be
// restarted because the env they were started with no longer matches the pod's labels/annotations
// after an in-place metadata update.
import { RUNTIME_CONTAINERS_META_ANNOTATION } from '../../apis/constants.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { hashContainer } from '../../util/go-container.ts';
import {
  envFromMetadataHash,
  getInPlaceUpdateState,
  metadataEnvRefs,
  runtimeEnvFromMetadataHash,
  type RuntimeContainerMetaSet,
} from '../../util/inplaceupdate.ts';
import type { RuntimeContainer } from '../runtime/types.ts';

/** Whether any container's env reads pod labels/annotations (only those pods need reporting). */
export function podUsesEnvFromMetadata(pod: Pod): boolean {
  return (pod.spec?.containers ?? []).some((c) => metadataEnvRefs(c).length > 0);
}

export interface ContainerMetaPlan {
  /** The new annotation value, or undefined when the pod already carries it. */
  annotation?: string;
  /** Running containers whose env is stale and must be restarted. */
  restart: Array<{ name: string; containerID: string }>;
}

export function planContainerMeta(pod: Pod, runtime: readonly RuntimeContainer[]): ContainerMetaPlan {
  const byName = new Map(runtime.map((c) => [c.name, c]));
  const set: RuntimeContainerMetaSet = { containers: [] };
  const restart: ContainerMetaPlan['restart'] = [];
  // Restarts belong to in-place updates that changed env-from-metadata; an ordinary label edit
  // must not restart anything (the kubelet would not either).
  let updating = false;
  try {
    updating = !!getInPlaceUpdateState(pod)?.updateEnvFromMetadata;
  } catch {
    // A malformed in-place-update-state annotation describes no update: nothing is restarted.
  }
  for (const c of pod.spec?.containers ?? []) {
    const rc = byName.get(c.name);
    // Only a running container with a known env can be described; the manager waits meanwhile.
    if (!rc || rc.state !== 'running' || !rc.env) continue;
    const hash = runtimeEnvFromMetadataHash(c, rc.env);
    set.containers.push({
      name: c.name,
      containerID: rc.containerID,
      restartCount: rc.restartCount,
      // plainHash is the hash of the spec the container was started from (the kubelet's, as
      // upstream's daemon reports it): the spec's hash while an old container still runs would
      // tell an OpenKruise manager the in-place update is done. Only a runtime without kubelet
      // hashes (simulated) falls back to the spec's HashContainer.
      // Keys in upstream's order, plainHashWithoutResources always written (0 when the kubelet has none).
      hashes: {
        plainHash: rc.specHash ?? hashContainer(c),
        plainHashWithoutResources: rc.specHashWithoutResources ?? 0,
        extractedEnvFromMetadataHash: hash,
      },
    });
    if (updating && hash !== envFromMetadataHash(c, pod.metadata)) restart.push({ name: c.name, containerID: rc.containerID });
  }
  const value = JSON.stringify(set);
  const current = pod.metadata.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION];
  return { annotation: value === current ? undefined : value, restart };
}
