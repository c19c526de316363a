// Container meta (behaviour spec §18.2, gate InPlaceUpdateEnvFromMetadata) as pure decisions: the
// runtime-containers-meta annotation the daemon reports for a pod, and which containers must be
// restarted because the env they were started with no longer matches the pod's labels/annotations
// after an in-place metadata update.
import { RUNTIME_CONTAINERS_META_ANNOTATION } from '../../apis/constants.ts';
import type { Container } from '../../apis/core.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { envFromMetadataHash, getInPlaceUpdateState, type RuntimeContainerMetaSet } from '../../util/inplaceupdate.ts';
import { fnv1a_32, marshalGoJSON } from '../../util/revision.ts';
import type { RuntimeContainer } from '../runtime/types.ts';

const META_FIELD = /^metadata\.(labels|annotations)\['(.*)'\]$/;

function metaRefs(c: Container): Array<{ env: string; kind: 'labels' | 'annotations'; key: string }> {
  const out: Array<{ env: string; kind: 'labels' | 'annotations'; key: string }> = [];
  for (const e of c.env ?? []) {
    const m = META_FIELD.exec(e?.valueFrom?.fieldRef?.fieldPath ?? '');
    if (m) out.push({ env: e.name, kind: m[1] as 'labels' | 'annotations', key: m[2] });
  }
  return out;
}

/** Whether any container's env reads pod labels/annotations (only those pods need reporting). */
export function podUsesEnvFromMetadata(pod: Pod): boolean {
  return (pod.spec?.containers ?? []).some((c) => metaRefs(c).length > 0);
}

/**
 * The env-from-metadata hash of a running container: the values its env actually holds, hashed
 * exactly as envFromMetadataHash hashes the values the pod's metadata gives today — equal hashes
 * mean the container runs with the current values.
 */
export function runtimeEnvHash(c: Container, env: Record<string, string>): number {
  const meta: { labels: Record<string, string>; annotations: Record<string, string> } = { labels: {}, annotations: {} };
  for (const r of metaRefs(c)) if (env[r.env] !== undefined) meta[r.kind][r.key] = env[r.env];
  return envFromMetadataHash(c, meta);
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
    const hash = runtimeEnvHash(c, rc.env);
    set.containers.push({
      name: c.name,
      containerID: rc.containerID,
      restartCount: rc.restartCount,
      hashes: { plainHash: fnv1a_32(marshalGoJSON(c)), extractedEnvFromMetadataHash: hash },
    });
    if (updating && hash !== envFromMetadataHash(c, pod.metadata)) restart.push({ name: c.name, containerID: rc.containerID });
  }
  const value = JSON.stringify(set);
  const current = pod.metadata.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION];
  return { annotation: value === current ? undefined : value, restart };
}
