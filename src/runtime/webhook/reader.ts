// The AdmissionReader webhooks use to look at other objects (the pod a CRR targets, the
// kruise-configuration ConfigMap, other WorkloadSpreads…), read straight from the API server so a
// decision never rests on a cache that has not caught up.
import { gvrFor, kindFor, parseApiVersion } from '../../apis/registry.ts';
import {
  ConfigMaps,
  ControllerRevisions,
  Namespaces,
  Nodes,
  Pods,
  PersistentVolumeClaims,
  Secrets,
  StorageClasses,
  Deployments,
  ReplicaSets,
  StatefulSets,
  DaemonSets,
  Jobs,
  isNotFound,
  type KubeClient,
  type KubeObject,
  type ResourceType,
} from '../client.ts';
import type { AdmissionReader } from './types.ts';

const builtIn: readonly ResourceType[] = [
  ConfigMaps,
  ControllerRevisions,
  Namespaces,
  Nodes,
  Pods,
  PersistentVolumeClaims,
  Secrets,
  StorageClasses,
  Deployments,
  ReplicaSets,
  StatefulSets,
  DaemonSets,
  Jobs,
];

/** The ResourceType for an apiVersion + kind: built-in ones, or any served Kruise kind/version. */
export function resourceTypeFor(apiVersion: string, kind: string): ResourceType {
  const { group, version } = parseApiVersion(apiVersion);
  const known = builtIn.find((t) => t.group === group && t.version === version && t.kind === kind);
  if (known) return known;
  const gvr = gvrFor(apiVersion, kind);
  const def = kindFor(group, kind);
  if (gvr && def) return { group, version, resource: gvr.resource, kind, namespaced: def.scope === 'Namespaced' };
  throw new Error(`admission reader: no resource known for ${apiVersion} ${kind}`);
}

export function clientAdmissionReader(client: KubeClient): AdmissionReader {
  return {
    async get<T>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | null> {
      try {
        return (await client.get<KubeObject>(resourceTypeFor(apiVersion, kind), name, { namespace })) as T;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async list<T>(apiVersion: string, kind: string, opts: { namespace?: string; labelSelector?: string }): Promise<T[]> {
      const list = await client.listAll<KubeObject>(resourceTypeFor(apiVersion, kind), opts);
      return list.items as T[];
    },
  };
}
