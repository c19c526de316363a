// SidecarSet `resourcesPolicy` at pod creation (upstream master
// pkg/webhook/pod/mutating/sidecarset_resources.go; spec §6.1/§6.2): a sidecar's resources computed
// from the pod's own containers. Pure.
//
// Target containers: the pod's native sidecars (init containers with restartPolicy Always) then its
// containers, whose names match `targetContainersNameRegex`, minus any container named like a
// sidecar of the SidecarSets being injected; none ⇒ the pod is refused. Aggregation (`sum` / `max`)
// per resource: a limit exists only when every target has one (one unlimited target makes the
// sidecar unlimited too), a missing request counts as 0. Each expression of `resourcesExpr` is then
// evaluated with the aggregate bound to `memory` when the expression names `memory`, else to `cpu`
// (upstream's rule); a plain-number result is cores for `cpu` (milli-units) and bytes for
// `memory`. The sidecar's resources are replaced by the result.
import type { SidecarContainer } from '../../apis/apps/sidecarset.ts';
import type { Container, ResourceRequirements } from '../../apis/core.ts';
import type { Pod } from '../../apis/core-objects.ts';
import { addQuantity, compareQuantity, formatQuantity, parseQuantity, type Quantity } from '../../apis/quantity.ts';
import { evaluateExpr, ExprError, goInt64, milliQuantity } from '../../util/resource-expr.ts';
import { isNativeSidecar } from '../../util/sidecarset.ts';
import { AdmissionDenied } from '../../runtime/webhook/types.ts';

type Policy = NonNullable<SidecarContainer['resourcesPolicy']>;
type Aggregate = { limits: Map<string, Quantity>; requests: Map<string, Quantity> };

const RESOURCES = ['cpu', 'memory'] as const;
const ZERO: Quantity = { unscaled: 0n, exponent: 0, format: 'DecimalSI' };

/**
 * The containers whose resources the policy reads. `sidecarNames`: every container and init
 * container name of the SidecarSets injected into this pod.
 */
export function resourcesPolicyTargets(pod: Pod, regex: string, sidecarNames: ReadonlySet<string>): Container[] {
  const pattern = compileGoRegex(regex);
  const candidates = [...(pod.spec?.initContainers ?? []).filter(isNativeSidecar), ...(pod.spec?.containers ?? [])];
  return candidates.filter((c) => !sidecarNames.has(c.name) && pattern.test(c.name));
}

function compileGoRegex(regex: string): RegExp {
  try {
    return new RegExp(regex);
  } catch (err) {
    throw new AdmissionDenied(`failed to get target containers: invalid regex pattern ${JSON.stringify(regex)}: ${(err as Error).message}`);
  }
}

// A quantity may be written as a JSON number (`cpu: 1`).
const quantityOf = (list: Record<string, string | number> | undefined, name: string): Quantity | undefined => {
  const v = list?.[name];
  return v === undefined ? undefined : parseQuantity(String(v));
};

/** aggregateResources: per resource, the sum or the max; limits only when every target has one. */
export function aggregateResources(targets: readonly Container[], mode: Policy['targetContainersMode']): Aggregate {
  const out: Aggregate = { limits: new Map(), requests: new Map() };
  if (mode !== 'sum' && mode !== 'max') return out;
  const combine = (acc: Quantity | undefined, q: Quantity): Quantity =>
    mode === 'sum' ? addQuantity(acc ?? ZERO, q) : acc === undefined || compareQuantity(q, acc) > 0 ? q : acc;
  for (const name of RESOURCES) {
    let limit: Quantity | undefined;
    let allLimited = true;
    let request: Quantity | undefined;
    for (const c of targets) {
      const l = quantityOf(c.resources?.limits, name);
      if (l === undefined) allLimited = false;
      else limit = combine(limit, l);
      const r = quantityOf(c.resources?.requests, name);
      if (r !== undefined) request = combine(request, r);
    }
    // A sum starts from a zero DecimalSI quantity (its format turns to the first addend's).
    if (allLimited) out.limits.set(name, limit ?? ZERO);
    if (request !== undefined && (mode === 'max' || request.unscaled !== 0n)) out.requests.set(name, request);
  }
  return out;
}

/** evaluateResourceExpression: the expression with the aggregate bound to `memory` or `cpu`. */
export function evaluateResourceExpr(expr: string, aggregate: Quantity): Quantity {
  const variable = /\bmemory\b/.test(expr) ? 'memory' : 'cpu';
  const result = evaluateExpr(expr, new Map([[variable, { kind: 'quantity', q: aggregate }]]));
  if (result.kind === 'quantity') return result.q;
  return variable === 'cpu' ? milliQuantity(goInt64(result.n * 1000)) : { unscaled: goInt64(result.n), exponent: 0, format: 'DecimalSI' };
}

const LABEL = { cpu: 'CPU', memory: 'memory' } as const;

/**
 * applyResourcesPolicy: the sidecar's resources from the policy (nothing when it has none).
 * Throws AdmissionDenied (400) with upstream's wording when no container is targeted or an
 * expression fails.
 */
export function applyResourcesPolicy(sidecar: SidecarContainer, pod: Pod, sidecarNames: ReadonlySet<string>): void {
  const policy = sidecar.resourcesPolicy;
  if (!policy) return;
  const regex = policy.targetContainersNameRegex ?? '';
  const targets = resourcesPolicyTargets(pod, regex, sidecarNames);
  if (!targets.length) throw new AdmissionDenied(`no containers match the regex pattern ${JSON.stringify(regex)}`);
  const aggregate = aggregateResources(targets, policy.targetContainersMode);
  const resources: ResourceRequirements = {};
  for (const kind of ['limits', 'requests'] as const) {
    const exprs = policy.resourcesExpr?.[kind];
    if (!exprs) continue;
    const list: Record<string, string> = {};
    for (const name of RESOURCES) {
      const expr = exprs[name];
      if (!expr) continue;
      // An unlimited aggregate leaves the sidecar's limit unset; a missing request is 0.
      const value = kind === 'limits' ? aggregate.limits.get(name) : (aggregate.requests.get(name) ?? ZERO);
      if (value === undefined) continue;
      try {
        list[name] = formatQuantity(evaluateResourceExpr(expr, value));
      } catch (err) {
        if (!(err instanceof ExprError)) throw err;
        throw new AdmissionDenied(
          `failed to evaluate ${LABEL[name]} ${kind} expression: failed to parse expression ${JSON.stringify(expr)}: ${err.message}`,
        );
      }
    }
    if (Object.keys(list).length) resources[kind] = list;
  }
  sidecar.resources = resources;
}
