// RBAC as declared by the code that needs it: every controller, the manager and the daemon list
// the API accesses they make, next to their informers and writes, and config/rbac/ is generated
// from those lists (hack/gen-rbac.ts; a unit test fails when the files are stale). One rule shape,
// merged and sorted so the output is stable.
import type { ResourceType } from './resources.ts';

/** Verbs on one resource (or subresource, `pods/status`) of one API group. */
export interface Access {
  group: string;
  resources: readonly string[];
  verbs: readonly Verb[];
}

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** What an informer needs: the initial list, the watch, and gets of single objects. */
export const READ: readonly Verb[] = ['get', 'list', 'watch'];
export const WRITE: readonly Verb[] = ['create', 'update', 'patch', 'delete'];

/** Access to a resource type (optionally a subresource of it). */
export function access(type: ResourceType, verbs: readonly Verb[], subresource?: string): Access {
  return { group: type.group, resources: [subresource ? `${type.resource}/${subresource}` : type.resource], verbs };
}

/** A policy rule of a (Cluster)Role. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const VERB_ORDER: readonly Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

/**
 * One rule per (group, verb set): resources needing the same verbs share a rule, as controller-gen
 * writes them. Sorted by group then resources, so the manifests diff cleanly.
 */
export function rulesFor(accesses: readonly Access[]): PolicyRule[] {
  const verbsOf = new Map<string, Set<Verb>>();
  for (const a of accesses) {
    for (const r of a.resources) {
      const key = `${a.group}\u0000${r}`;
      const set = verbsOf.get(key) ?? new Set<Verb>();
      for (const v of a.verbs) set.add(v);
      verbsOf.set(key, set);
    }
  }
  const rules = new Map<string, PolicyRule>();
  for (const [key, set] of verbsOf) {
    const [group, resource] = key.split('\u0000') as [string, string];
    const verbs = VERB_ORDER.filter((v) => set.has(v));
    const id = `${group}\u0000${verbs.join(',')}`;
    const rule = rules.get(id) ?? { apiGroups: [group], resources: [], verbs };
    rule.resources.push(resource);
    rules.set(id, rule);
  }
  return [...rules.values()]
    .map((r) => ({ ...r, resources: r.resources.sort() }))
    .sort((a, b) => a.apiGroups[0]!.localeCompare(b.apiGroups[0]!) || a.resources[0]!.localeCompare(b.resources[0]!));
}
