// Installs (server-side applies) the generated CRDs and waits until the API server serves them.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { CRD_SET_DIRS } from '../apis/crd.ts';
import { DEFAULT_API_VERSION_SET, type APIVersionSet } from '../apis/registry.ts';
import type { KubeClient } from '../runtime/client.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { isInvalid, isNotFound } from '../runtime/errors.ts';
import { CustomResourceDefinitions } from '../runtime/resources.ts';

const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** The generated CRDs of an API version set (config/crd/bases holds OpenKruise v1.8.2's versions). */
export function crdDir(set: APIVersionSet = DEFAULT_API_VERSION_SET): string {
  return path.join(REPO_ROOT, CRD_SET_DIRS[set]);
}

export function loadCRDs(dir = crdDir()): KubeObject[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => YAML.parse(readFileSync(path.join(dir, f), 'utf8')) as KubeObject);
}

type CRD = KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } };

/**
 * Applies the CRDs of an API version set (or of a directory). Moving a CRD whose objects are stored at
 * v1beta1 to the default set is refused by the API server until they are stored at v1alpha1 again:
 * the error says how.
 */
export async function installCRDs(
  client: KubeClient,
  opts: { dir?: string; set?: APIVersionSet; timeoutMs?: number } = {},
): Promise<number> {
  const crds = loadCRDs(opts.dir ?? crdDir(opts.set));
  await Promise.all(
    crds.map(async (crd) => {
      // The running manager owns spec.conversion (it points the webhook at itself and injects the
      // CA); re-applying the Service default over its URL would merge both, which is invalid.
      const live = await client.get<CRD>(CustomResourceDefinitions, crd.metadata!.name!).catch((err) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      const desired = structuredClone(crd) as CRD & { spec: { conversion?: unknown } };
      const liveConversion = (live as (CRD & { spec?: { conversion?: { strategy?: string } } }) | undefined)?.spec?.conversion;
      if (liveConversion?.strategy === 'Webhook') desired.spec.conversion = liveConversion;
      await client.apply(CustomResourceDefinitions, desired, { fieldManager: 'kruise-ts', force: true }).catch((err: unknown) => {
        if (!isInvalid(err) || !/storedVersions/.test((err as Error).message)) throw err;
        throw new Error(
          `${crd.metadata!.name}: objects are stored at a version these CRDs do not serve (${(err as Error).message}); ` +
            'store them at the served version first: kruise storage-version migrate --to v1alpha1 (docs/migrate-from-openkruise.md#api-versions)',
        );
      });
    }),
  );
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (const crd of crds) {
    for (;;) {
      const live = await client.get<CRD>(CustomResourceDefinitions, crd.metadata!.name!);
      if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata!.name} not Established after ${(opts.timeoutMs ?? 60_000) / 1000}s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return crds.length;
}
