// Which controllers this manager runs. Like upstream (each controller's Add checks DiscoverGVK), a
// controller whose CRDs the API server does not serve is not started: its informers would never
// sync, and a cluster may deliberately install only some of Kruise's CRDs.
//
// "Served" is read from the CRD objects (Established, a version Kruise TS knows served) rather than
// from discovery: the API server's discovery document lags a freshly established CRD by a moment,
// and the manager starts right after `kruise start` installed them. The same read tells the client
// which version to speak for each kind (src/runtime/wire-versions.ts).
import { APPS_GROUP } from '../apis/constants.ts';
import type { FeatureGates } from '../apis/features.ts';
import { kinds as kruiseKinds, servedVersions, type APIVersionSet } from '../apis/registry.ts';
import type { KubeClient } from '../runtime/client.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { ignoreNotFound } from '../runtime/errors.ts';
import { CustomResourceDefinitions } from '../runtime/resources.ts';
import type { ControllerSetup } from '../controllers/types.ts';

/** A Kruise kind as ControllerSetup.kinds names it: bare in apps.kruise.io, else `Kind.group`. */
export const kindName = (kind: string, group: string): string => (group === APPS_GROUP ? kind : `${kind}.${group}`);

interface CRD extends KubeObject {
  spec?: { group?: string; names?: { plural?: string }; versions?: Array<{ name: string; served?: boolean }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/**
 * The Kruise kinds whose CRD is installed, Established and serves a version Kruise TS knows; the
 * client learns from the same CRDs which version to speak.
 */
export async function servedKruiseKinds(
  client: Pick<KubeClient, 'get' | 'wireVersions'>,
  opts: { signal?: AbortSignal; expected?: APIVersionSet; warn?: (message: string) => void } = {},
): Promise<Set<string>> {
  const { signal } = opts;
  const served = new Set<string>();
  const crds: CRD[] = [];
  await Promise.all(
    kruiseKinds.map(async (def) => {
      const crd = await ignoreNotFound(client.get<CRD>(CustomResourceDefinitions, `${def.plural}.${def.group}`, { signal }));
      if (!crd) return;
      crds.push(crd);
      const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      const knownServed = crd.spec?.versions?.some((v) => v.served && def.versions.some((d) => d.name === v.name));
      if (established && knownServed) served.add(kindName(def.kind, def.group));
      if (opts.expected && opts.warn) {
        const have = (crd.spec?.versions ?? []).filter((v) => v.served).map((v) => v.name);
        const want = servedVersions(def, opts.expected).versions.map((v) => v.name);
        if (have.join() !== want.join()) {
          opts.warn(
            `CRD ${def.plural}.${def.group} serves ${have.join(', ')} where --api-versions=${opts.expected} serves ${want.join(', ')}; ` +
              'the manager speaks what is served (install the CRDs of one set: docs/migrate-from-openkruise.md#api-versions)',
          );
        }
      }
    }),
  );
  client.wireVersions.learnFromCRDs(crds);
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
