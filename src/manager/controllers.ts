// Which controllers this manager runs. Like upstream (each controller's Add checks DiscoverGVK), a
// controller whose CRDs the API server does not serve is not started: its informers would never
// sync, and a cluster may deliberately install only some of Kruise's CRDs.
//
// "Served" is read from the CRD objects (Established, storage version served) rather than from
// discovery: the API server's discovery document lags a freshly established CRD by a moment, and
// the manager starts right after `kruise start` installed them.
import { APPS_GROUP } from '../apis/constants.ts';
import type { FeatureGates } from '../apis/features.ts';
import { kinds as kruiseKinds } from '../apis/registry.ts';
import { CustomResourceDefinitions, ignoreNotFound, type KubeClient, type KubeObject } from '../runtime/client.ts';
import type { ControllerSetup } from '../controllers/types.ts';

/** A Kruise kind as ControllerSetup.kinds names it: bare in apps.kruise.io, else `Kind.group`. */
export const kindName = (kind: string, group: string): string => (group === APPS_GROUP ? kind : `${kind}.${group}`);

interface CRD extends KubeObject {
  spec?: { versions?: Array<{ name: string; served?: boolean }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** The Kruise kinds whose CRD is installed, Established and serves the storage version. */
export async function servedKruiseKinds(client: Pick<KubeClient, 'get'>, signal?: AbortSignal): Promise<Set<string>> {
  const served = new Set<string>();
  await Promise.all(
    kruiseKinds.map(async (def) => {
      const crd = await ignoreNotFound(client.get<CRD>(CustomResourceDefinitions, `${def.plural}.${def.group}`, { signal }));
      const established = crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      const storageServed = crd?.spec?.versions?.some((v) => v.name === def.storageVersion && v.served);
      if (established && storageServed) served.add(kindName(def.kind, def.group));
    }),
  );
  return served;
}

export interface ControllerSelection {
  run: ControllerSetup[];
  skipped: Array<{ name: string; reason: string }>;
}

export function selectControllers(
  all: readonly ControllerSetup[],
  features: FeatureGates,
  served: ReadonlySet<string>,
): ControllerSelection {
  const out: ControllerSelection = { run: [], skipped: [] };
  for (const c of all) {
    const missing = c.kinds.filter((k) => !served.has(k));
    const gates = c.gate === undefined ? [] : typeof c.gate === 'string' ? [c.gate] : c.gate;
    if (gates.length && !gates.some((g) => features[g]))
      out.skipped.push({ name: c.name, reason: `feature gate ${gates.join(' or ')} is off` });
    else if (missing.length)
      out.skipped.push({ name: c.name, reason: `the API server does not serve ${missing.join(', ')} (CRD not installed)` });
    else out.run.push(c);
  }
  return out;
}
