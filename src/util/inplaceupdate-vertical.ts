// In-place vertical scaling of workload pods (gate InPlaceWorkloadVerticalScaling; upstream
// pkg/util/inplaceupdate/inplace_update_vertical.go, Kubernetes' native in-place pod resize): which
// template resource changes can be resized in place, the pod QoS class that must not change, when
// the resize restarts a container (its resizePolicy), and when the kubelet has applied it. Pure.

import { addQuantity, canonicalQuantity, compareQuantity, parseQuantity, tryParseQuantity } from '../apis/quantity.ts';
import type { Container, PodSpec, ResourceRequirements } from '../apis/core.ts';
import type { Pod } from '../apis/core-objects.ts';

/** Only cpu and memory resize in place; any other resource change recreates the pod. */
const RESIZABLE_RESOURCES = new Set(['cpu', 'memory']);

/** `/spec/containers/<i>/resources/…`: a resource change (after `/spec/template` is dropped). */
export const CONTAINER_RESOURCES_PATH = /^\/spec\/containers\/([0-9]+)\/resources\/.*$/;

type ResourceList = Record<string, string>;

/**
 * Records a `replace` of `/spec/containers/<i>/resources/<limits|requests>/<name>` in
 * `resources` (container name → new values); returns why it cannot be resized in place
 * otherwise (the caller recreates): a resource added or removed, a path that is not one
 * quantity, an invalid quantity, or a resource other than cpu and memory.
 */
export function recordResourceChange(
  op: { op: string; path: string; value?: unknown },
  oldContainers: readonly Container[],
  resources: Record<string, ResourceRequirements>,
): string | undefined {
  const words = op.path.split('/');
  if (words.length !== 7) return `invalid resource path: ${op.path}`;
  const container = oldContainers[Number(words[3])];
  if (!container) return `invalid container index: ${op.path}`;
  if (op.op === 'remove' || op.op === 'add') return 'can not add or remove resources';
  if (op.value === undefined || op.value === null) return 'json patch value is nil';
  const quantity = tryParseQuantity(String(op.value));
  if (!quantity) return `parse quantity error: ${String(op.value)}`;
  const [, , , , , kind, name] = words;
  if (!RESIZABLE_RESOURCES.has(name)) return `disallowed inplace update resource: ${name}`;
  const entry = (resources[container.name] ??= {});
  if (kind === 'limits') (entry.limits ??= {})[name] = canonicalQuantity(String(op.value));
  else if (kind === 'requests') (entry.requests ??= {})[name] = canonicalQuantity(String(op.value));
  return undefined;
}

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const positive = (v: unknown) => {
  const q = tryParseQuantity(String(v));
  return q !== undefined && q.unscaled > 0n;
};

/** The QoS class of a pod with this spec (Kubernetes' GetPodQOS over cpu and memory, init containers included). */
export function podQOSClass(spec: PodSpec | undefined): PodQOSClass {
  const requests = new Map<string, string[]>();
  const limits = new Map<string, string[]>();
  let guaranteed = true;
  for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
    for (const [name, v] of Object.entries(c.resources?.requests ?? {})) {
      if (RESIZABLE_RESOURCES.has(name) && positive(v)) requests.set(name, [...(requests.get(name) ?? []), String(v)]);
    }
    const limitsFound = new Set<string>();
    for (const [name, v] of Object.entries(c.resources?.limits ?? {})) {
      if (RESIZABLE_RESOURCES.has(name) && positive(v)) {
        limits.set(name, [...(limits.get(name) ?? []), String(v)]);
        limitsFound.add(name);
      }
    }
    if (![...RESIZABLE_RESOURCES].every((r) => limitsFound.has(r))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    const sum = (vs: string[]) => vs.map(parseQuantity).reduce(addQuantity);
    for (const [name, vs] of requests) {
      const l = limits.get(name);
      if (!l || compareQuantity(sum(l), sum(vs)) !== 0) guaranteed = false;
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** Writes the new cpu/memory values into the named containers of `pod` (mutates it). */
export function applyContainerResources(pod: Pod, resources: Readonly<Record<string, ResourceRequirements>>): void {
  for (const c of pod.spec?.containers ?? []) {
    const next = resources[c.name];
    if (!next) continue;
    const current: ResourceRequirements = { ...c.resources };
    for (const kind of ['limits', 'requests'] as const) {
      const values = Object.entries(next[kind] ?? {}).filter(([name]) => RESIZABLE_RESOURCES.has(name));
      if (values.length) current[kind] = { ...current[kind], ...Object.fromEntries(values) };
    }
    c.resources = current;
  }
}

function sameResourceList(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => {
    const qa = tryParseQuantity(String(a![k]));
    const qb = b && Object.hasOwn(b, k) ? tryParseQuantity(String(b[k])) : undefined;
    return qa !== undefined && qb !== undefined && compareQuantity(qa, qb) === 0;
  });
}

/**
 * Why the kubelet has not applied the pod's container resources yet, or undefined when every
 * container reports (status.containerStatuses[].resources) the limits and requests of its spec.
 */
export function checkResourcesResized(pod: Pod): string | undefined {
  const containers = pod.spec?.containers ?? [];
  const statuses = pod.status?.containerStatuses ?? [];
  if (statuses.length !== containers.length) return 'some container status is not reported';
  for (const cs of statuses) {
    const c = containers.find((x) => x.name === cs.name);
    if (
      !c ||
      !cs.resources ||
      !sameResourceList(c.resources?.limits as ResourceList, cs.resources.limits as ResourceList) ||
      !sameResourceList(c.resources?.requests as ResourceList, cs.resources.requests as ResourceList)
    ) {
      return `container ${cs.name} resources not changed`;
    }
  }
  return undefined;
}

/**
 * Whether resizing `resources` restarts a container of the pod: a container whose resizePolicy
 * says RestartContainer for a resource (cpu or memory) that changes for it.
 */
export function resizeRestartsContainer(pod: Pod, resources: Readonly<Record<string, ResourceRequirements>>): boolean {
  return (pod.spec?.containers ?? []).some((c) => {
    const change = resources[c.name];
    if (!change) return false;
    const changed = (name: string) => change.limits?.[name] !== undefined || change.requests?.[name] !== undefined;
    return ((c.resizePolicy ?? []) as Array<{ resourceName?: string; restartPolicy?: string }>).some(
      (p) => p.restartPolicy === 'RestartContainer' && (p.resourceName === 'cpu' || p.resourceName === 'memory') && changed(p.resourceName),
    );
  });
}
