// The AdmissionReader webhooks use to look at other objects (the pod a CRR targets, the
// kruise-configuration ConfigMap, other WorkloadSpreads…), read straight from the API server so a
// decision never rests on a cache that has not caught up.
import { gvrFor, kindFor, parseApiVersion } from '../../apis/registry.ts';
import type { KubeClient } from '../client.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import { isNotFound } from '../errors.ts';
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
  type ResourceType,
} from '../resources.ts';
import type { SharedInformerFactory } from '../informer-factory.ts';
import type { RestMapper } from '../restmapper.ts';
import type { AdmissionCache, AdmissionReader, AdmissionWriter } from './types.ts';

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
    async listResource<T>(type: ResourceType, opts: { namespace?: string }): Promise<T[]> {
      return (await client.listAll<KubeObject>(type, opts)).items as T[];
    },
  };
}

/**
 * Reads from the manager's shared informers (one per resource type, shared with the controllers).
 * A kind's first read waits at most syncTimeoutMs for the initial list, then fails: the webhook
 * answers an error rather than deciding on an empty cache.
 */
export function informerAdmissionCache(
  informers: SharedInformerFactory,
  opts: {
    syncTimeoutMs: number;
    /** Resolves kinds outside the built-in and Kruise tables (third-party workloads) through API discovery. */
    mapper?: Pick<RestMapper, 'resourceFor'>;
    /**
     * Kinds the API server does not serve (CRD not installed) read as empty, never wait for a list.
     * A promise while that is not known yet (the manager's first moments); a boolean after, so that
     * the pod webhook's reads await nothing more than before.
     */
    serves?: (apiVersion: string, kind: string) => boolean | Promise<boolean>;
  },
): AdmissionCache {
  const { syncTimeoutMs } = opts;
  const typeFor = async (apiVersion: string, kind: string): Promise<ResourceType> => {
    try {
      return resourceTypeFor(apiVersion, kind);
    } catch (err) {
      if (!opts.mapper) throw err;
      return opts.mapper.resourceFor(apiVersion, kind);
    }
  };
  const serving = (apiVersion: string, kind: string) => opts.serves?.(apiVersion, kind) ?? true;
  const synced = async (apiVersion: string, kind: string) => {
    const informer = informers.informerFor<KubeObject>(await typeFor(apiVersion, kind));
    if (!informer.hasSynced() && !(await informer.waitForSync(AbortSignal.timeout(syncTimeoutMs)))) {
      throw new Error(`the cache of ${kind} has not synced yet`);
    }
    return informer.lister;
  };
  return {
    async list<T>(apiVersion: string, kind: string, listOpts: { namespace?: string } = {}): Promise<T[]> {
      const served = serving(apiVersion, kind);
      if (!(typeof served === 'boolean' ? served : await served)) return [];
      return (await synced(apiVersion, kind)).list(listOpts.namespace) as T[];
    },
    async get<T>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | undefined> {
      const served = serving(apiVersion, kind);
      if (!(typeof served === 'boolean' ? served : await served)) return undefined;
      const lister = await synced(apiVersion, kind);
      return (namespace ? lister.get(namespace, name) : lister.get(name)) as T | undefined;
    },
  };
}

/** Status writes straight to the API server, compare-and-swap on the object's resourceVersion. */
export function clientAdmissionWriter(client: KubeClient): AdmissionWriter {
  return {
    async updateStatus<T>(apiVersion: string, kind: string, obj: T): Promise<T> {
      return (await client.updateStatus<KubeObject>(resourceTypeFor(apiVersion, kind), obj as KubeObject)) as T;
    },
  };
}
