// `kruise storage-version migrate --to <version>`: rewrites every Kruise object at one API version
// and makes it the only stored version, so that CRDs which do not know the other version can be
// applied. Handing a cluster back to OpenKruise v1.8.2 (which has no v1beta1 for most kinds) is
// `--to v1alpha1` while Kruise TS still serves conversion; docs/migrate-from-openkruise.md.
import { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CustomResourceDefinitions,
  fromKubeconfigFile,
  isConflict,
  isNotFound,
  type KubeClient,
  type KubeObject,
  type ResourceType,
} from '../runtime/client.ts';

const KRUISE_GROUPS = ['apps.kruise.io', 'policy.kruise.io'];

interface CRD extends KubeObject {
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { plural: string; kind: string };
    versions: Array<{ name: string; served: boolean; storage: boolean }>;
  };
  status?: { storedVersions?: string[] };
}

export interface MigrationResult {
  crd: string;
  /** Objects rewritten at the target version. */
  rewritten: number;
  storedVersions: string[];
}

/** `--to openkruise-v1.8`: every CRD at the version OpenKruise v1.8 stores it in. */
export const OPENKRUISE_V18 = 'openkruise-v1.8';
/**
 * v1.8.2 stores every kind at v1alpha1 except Advanced StatefulSet (v1beta1, with v1alpha1 served
 * through its own conversion, which knows nothing of Kruise TS's residual annotation: an ASTS moved
 * to v1alpha1 would lose its v1beta1-only fields when upstream reads it back).
 */
const OPENKRUISE_V18_STORAGE: Record<string, string> = { 'statefulsets.apps.kruise.io': 'v1beta1' };

/**
 * For each Kruise CRD that serves `to`: make `to` the storage version, rewrite every object (a
 * read and an unchanged write at `to`, which the API server stores in the new encoding), then set
 * `status.storedVersions` to `[to]`. Objects are not changed, only re-encoded; controllers see one
 * update event each with nothing to do. CRDs that do not serve `to` are an error before anything
 * is changed.
 */
export async function migrateStorageVersion(
  client: KubeClient,
  target: string,
  log: (line: string) => void = () => undefined,
): Promise<MigrationResult[]> {
  const crds = (await client.listAll<CRD>(CustomResourceDefinitions)).items.filter((c) => KRUISE_GROUPS.includes(c.spec.group));
  const versionFor = (crd: CRD) => (target === OPENKRUISE_V18 ? (OPENKRUISE_V18_STORAGE[crd.metadata!.name!] ?? 'v1alpha1') : target);
  const lacking = crds.filter((c) => !c.spec.versions.some((v) => v.name === versionFor(c) && v.served));
  if (lacking.length)
    throw new Error(`these CRDs do not serve ${target}: ${lacking.map((c) => `${c.metadata!.name} (${versionFor(c)})`).join(', ')}`);

  const results: MigrationResult[] = [];
  for (const crd of crds) {
    const name = crd.metadata!.name!;
    const to = versionFor(crd);
    if (!crd.spec.versions.find((v) => v.name === to)!.storage) {
      crd.spec.versions = crd.spec.versions.map((v) => ({ ...v, storage: v.name === to }));
      await client.update(CustomResourceDefinitions, crd);
      // The API server swaps a CRD's storage asynchronously after the update is accepted.
      await sleep(2000);
    }
    const type: ResourceType = {
      group: crd.spec.group,
      version: to,
      resource: crd.spec.names.plural,
      kind: crd.spec.names.kind,
      namespaced: crd.spec.scope === 'Namespaced',
    };
    let rewritten = 0;
    for (const obj of (await client.listAll(type)).items) {
      if (await rewrite(client, type, obj)) rewritten++;
    }
    const live = await client.get<CRD>(CustomResourceDefinitions, name);
    if (live.status?.storedVersions?.join() !== to) {
      await client.updateStatus(CustomResourceDefinitions, { ...live, status: { ...live.status, storedVersions: [to] } });
    }
    log(`${name}: ${rewritten} objects rewritten at ${to}; storedVersions [${to}]`);
    results.push({ crd: name, rewritten, storedVersions: [to] });
  }
  return results;
}

/** An unchanged write of the object at the type's version; re-read on conflict. False when it is gone. */
async function rewrite(client: KubeClient, type: ResourceType, obj: KubeObject): Promise<boolean> {
  let current: KubeObject | undefined = obj;
  for (;;) {
    try {
      await client.update(type, current);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if (!isConflict(err)) throw err;
    }
    current = await client.get(type, obj.metadata!.name!, { namespace: obj.metadata!.namespace }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (!current) return false;
  }
}

export function storageVersionCommand(): Command {
  const cmd = new Command('storage-version').description(
    'move every Kruise object to one stored API version (to hand a cluster back to OpenKruise)',
  );
  cmd
    .command('migrate')
    .description(
      'make --to the storage version of every Kruise CRD, rewrite every object at it and trim status.storedVersions to it; run it while Kruise TS still serves conversion',
    )
    .requiredOption(
      '--to <version>',
      `the version to store, or ${OPENKRUISE_V18} (before applying OpenKruise v1.8's CRDs: v1beta1 for Advanced StatefulSet, v1alpha1 for the rest)`,
    )
    .option('--kubeconfig <path>', 'kubeconfig of the cluster (default: $KUBECONFIG)')
    .action(async (o: { to: string; kubeconfig?: string }) => {
      const kubeconfig = o.kubeconfig ?? process.env.KUBECONFIG;
      if (!kubeconfig) throw new Error('no kubeconfig: pass --kubeconfig or set KUBECONFIG');
      const client = fromKubeconfigFile(kubeconfig);
      try {
        await migrateStorageVersion(client, o.to, (line) => process.stdout.write(line + '\n'));
      } finally {
        await client.close();
      }
    });
  return cmd;
}
