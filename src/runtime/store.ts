// The informers' cache (client-go tools/cache): object keys, delete tombstones, the indexed store
// and its read-only listers. Cached objects are shared by every reader.

import type { Selector } from '../util/labelselector.ts';
import type { KubeObject } from '../apis/core-objects.ts';

/** A delete noticed only by its absence from a relist: obj is the last state the cache knew. */
export class DeletedFinalStateUnknown<T extends KubeObject> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

/** The object a delete notification is about, whether or not it came as a tombstone. */
export function unwrapDeleted<T extends KubeObject>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

// ---------------------------------------------------------------------------------------------
// Read-only objects

/**
 * Cached objects are shared by every reader, who must copy before changing one. Tests prove they do:
 * with KRUISE_CACHE_MUTATION_DETECTOR=true (`./run.sh test` sets it, like Kubernetes'
 * KUBE_CACHE_MUTATION_DETECTOR in its e2e runs) every cached object is deep-frozen, so a write to
 * one throws where it happens. In production freezing would only cost time: it triples the ingest
 * of a list (≈60 µs a pod; seconds of start-up at 50k pods, docs/benchmarks.md).
 */
export const freezeCachedObjects = process.env.KRUISE_CACHE_MUTATION_DETECTOR === 'true';
/** obj as the cache keeps it: deep-frozen under the mutation detector. */
export const cached = <T>(obj: T): T => (freezeCachedObjects ? deepFreeze(obj) : obj);

/** Freezes obj and everything reachable from it; cached objects are shared by every reader. */
export function deepFreeze<T>(obj: T): T {
  if (obj === null || typeof obj !== 'object' || Object.isFrozen(obj)) return obj;
  Object.freeze(obj);
  for (const v of Object.values(obj)) deepFreeze(v);
  return obj;
}

// ---------------------------------------------------------------------------------------------
// Indexer

export type IndexFunc<T extends KubeObject> = (obj: T) => string[];

export const NamespaceIndex = 'namespace';
export const OwnerUIDIndex = 'ownerUID';
export const NodeNameIndex = 'nodeName';

const builtinIndexers: Record<string, IndexFunc<KubeObject>> = {
  [NamespaceIndex]: (obj) => (obj.metadata.namespace ? [obj.metadata.namespace] : []),
  [OwnerUIDIndex]: (obj) => {
    const owner = obj.metadata.ownerReferences?.find((r) => r.controller);
    return owner ? [owner.uid] : [];
  },
  [NodeNameIndex]: (obj) => {
    const nodeName = (obj as { spec?: { nodeName?: unknown } }).spec?.nodeName;
    return typeof nodeName === 'string' && nodeName ? [nodeName] : [];
  },
};

/** Objects by key, plus named secondary indexes (index value → keys). */
export class Indexer<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly funcs = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexers({ ...(builtinIndexers as Record<string, IndexFunc<T>>), ...indexers });
  }

  hasIndexer(name: string): boolean {
    return this.funcs.has(name);
  }

  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.funcs.has(name)) throw new Error(`indexer ${name} already exists`);
      this.funcs.set(name, fn);
      this.indices.set(name, new Map());
      for (const [key, obj] of this.items) this.indexOne(name, fn, key, obj);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  keys(): IterableIterator<string> {
    return this.items.keys();
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  get size(): number {
    return this.items.size;
  }

  set(key: string, obj: T): void {
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.funcs) this.indexOne(name, fn, key, obj);
  }

  delete(key: string): void {
    const old = this.items.get(key);
    if (!old) return;
    this.unindex(key, old);
    this.items.delete(key);
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no indexer named ${indexName}`);
    const keys = index.get(value);
    if (!keys) return [];
    return [...keys].map((k) => this.items.get(k)!);
  }

  private indexOne(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const index = this.indices.get(name)!;
    for (const value of fn(obj)) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.funcs) {
      const index = this.indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) index.delete(value);
      }
    }
  }
}

/** Anything that matches labels, typically a Selector from util/labelselector.ts. */
export type LabelMatcher = Pick<Selector, 'matches'>;

export interface Lister<T extends KubeObject> {
  /** Cluster-scoped: get(name); namespaced: get(namespace, name). */
  get(name: string): T | undefined;
  get(namespace: string, name: string): T | undefined;
  /** All objects, or those of one namespace, optionally filtered by a label selector. */
  list(namespace?: string, selector?: LabelMatcher): T[];
  byIndex(indexName: string, value: string): T[];
}

export function makeLister<T extends KubeObject>(indexer: Indexer<T>): Lister<T> {
  return {
    get(a: string, b?: string): T | undefined {
      return indexer.get(b === undefined || a === '' ? (b ?? a) : `${a}/${b}`);
    },
    list(namespace?: string, selector?: LabelMatcher): T[] {
      const objs = namespace ? indexer.byIndex(NamespaceIndex, namespace) : [...indexer.values()];
      return selector ? objs.filter((o) => selector.matches(o.metadata.labels)) : objs;
    },
    byIndex: (indexName, value) => indexer.byIndex(indexName, value),
  };
}
