// Installs (server-side applies) the generated CRDs and waits until the API server serves them.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { CustomResourceDefinitions, isNotFound, type KubeClient, type KubeObject } from '../runtime/client.ts';

export const CRD_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../config/crd/bases');

export function loadCRDs(dir = CRD_DIR): KubeObject[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => YAML.parse(readFileSync(path.join(dir, f), 'utf8')) as KubeObject);
}

type CRD = KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } };

export async function installCRDs(client: KubeClient, opts: { dir?: string; timeoutMs?: number } = {}): Promise<number> {
  const crds = loadCRDs(opts.dir);
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
      await client.apply(CustomResourceDefinitions, desired, { fieldManager: 'kruise-ts', force: true });
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
