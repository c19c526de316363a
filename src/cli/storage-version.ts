// `kruise storage-version migrate --to <version>`: rewrites every Kruise object at one API version
// and makes it the only stored version, so that CRDs which do not know the other version can be
// applied, and re-points the ownerReferences of ResourceDistribution copies at the version
// distributions are then stored at. Handing a cluster back to OpenKruise v1.8.2 (which has no
// v1beta1 for most kinds) is `--to openkruise-v1.8` while Kruise TS still serves conversion;
// docs/migrate-from-openkruise.md.
import { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { APPS_GROUP } from '../apis/constants.ts';
import { fromKubeconfigFile, type KubeClient } from '../runtime/client.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { isConflict, isNotFound } from '../runtime/errors.ts';
import { ConfigMaps, CustomResourceDefinitions, type ResourceType, Secrets } from '../runtime/resources.ts';
import { isDistributionRef } from '../controllers/resourcedistribution/plan.ts';

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
  /** Objects rewritten at the target version (with dryRun: that would be). */
  rewritten: number;
  storedVersions: string[];
}

/** The ResourceDistribution copies (Secrets, ConfigMaps) whose ownerReferences were re-pointed. */
export interface CopiesResult {
  /** `apps.kruise.io/<version>`: the version ResourceDistributions are stored at after the migration. */
  apiVersion: string;
  /** `<kind> <namespace>/<name>` of each copy re-pointed (with dryRun: that would be). */
  repointed: string[];
}

export interface Migration {
  crds: MigrationResult[];
  /** Absent when the cluster has no ResourceDistribution CRD. */
  copies?: CopiesResult;
}

export interface MigrateOptions {
  log?: (line: string) => void;
  /** Report what would change and write nothing. */
  dryRun?: boolean;
}

const RESOURCE_DISTRIBUTION_CRD = `resourcedistributions.${APPS_GROUP}`;

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
 * update event each with nothing to do. Then every Secret and ConfigMap with an ownerReference to a
 * ResourceDistribution at another `apps.kruise.io` version gets it re-pointed at the distributions'
 * new storage version (repointDistributedCopies). CRDs that do not serve `to` are an error before
 * anything is changed; with dryRun nothing is written and the results say what would change.
 */
export async function migrateStorageVersion(client: KubeClient, target: string, opts: MigrateOptions = {}): Promise<Migration> {
  const { log = () => undefined, dryRun = false } = opts;
  const crds = (await client.listAll<CRD>(CustomResourceDefinitions)).items.filter((c) => KRUISE_GROUPS.includes(c.spec.group));
  const versionFor = (crd: CRD) => (target === OPENKRUISE_V18 ? (OPENKRUISE_V18_STORAGE[crd.metadata!.name!] ?? 'v1alpha1') : target);
  const lacking = crds.filter((c) => !c.spec.versions.some((v) => v.name === versionFor(c) && v.served));
  if (lacking.length)
    throw new Error(`these CRDs do not serve ${target}: ${lacking.map((c) => `${c.metadata!.name} (${versionFor(c)})`).join(', ')}`);

  const results: MigrationResult[] = [];
  const would = dryRun ? 'would be ' : '';
  for (const crd of crds) {
    const name = crd.metadata!.name!;
    const to = versionFor(crd);
    if (dryRun) {
      const storage = crd.spec.versions.find((v) => v.storage)?.name;
      const count = (await client.listAll(crdType(crd, to))).items.length;
      log(
        `${name}: storage ${storage} → ${to}; ${count} objects ${would}rewritten at ${to}; storedVersions [${crd.status?.storedVersions?.join(', ') ?? ''}] → [${to}]`,
      );
      results.push({ crd: name, rewritten: count, storedVersions: [to] });
      continue;
    }
    if (!crd.spec.versions.find((v) => v.name === to)!.storage) {
      crd.spec.versions = crd.spec.versions.map((v) => ({ ...v, storage: v.name === to }));
      await client.update(CustomResourceDefinitions, crd);
      // The API server swaps a CRD's storage asynchronously after the update is accepted.
      await sleep(2000);
    }
    const type = crdType(crd, to);
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
  const rdCRD = crds.find((c) => c.metadata!.name === RESOURCE_DISTRIBUTION_CRD);
  if (!rdCRD) return { crds: results };
  const copies = await repointDistributedCopies(client, `${APPS_GROUP}/${versionFor(rdCRD)}`, dryRun);
  log(`ResourceDistribution copies: ${copies.repointed.length} ownerReferences ${would}re-pointed to ${copies.apiVersion}`);
  return { crds: results, copies };
}

function crdType(crd: CRD, version: string): ResourceType {
  return {
    group: crd.spec.group,
    version,
    resource: crd.spec.names.plural,
    kind: crd.spec.names.kind,
    namespaced: crd.spec.scope === 'Namespaced',
  };
}

/**
 * Every Secret and ConfigMap with an ownerReference to a ResourceDistribution at an `apps.kruise.io`
 * version other than `apiVersion` gets that reference's apiVersion set to it; nothing else changes.
 * Kruise TS writes its copies' references at v1beta1 (spec §22); OpenKruise v1.8, whose only
 * version is v1alpha1, takes a copy whose controller reference says v1beta1 for someone else's
 * (ConflictOccurred) and its garbage collector cannot resolve the owner. Kruise TS keeps a
 * reference to the distribution at the version it finds, so while it runs it does not undo this.
 */
export async function repointDistributedCopies(client: KubeClient, apiVersion: string, dryRun = false): Promise<CopiesResult> {
  const repointed: string[] = [];
  const stale = (o: KubeObject) => (o.metadata?.ownerReferences ?? []).some((r) => isDistributionRef(r) && r.apiVersion !== apiVersion);
  for (const type of [Secrets, ConfigMaps]) {
    for (const obj of (await client.listAll(type)).items) {
      if (!stale(obj)) continue;
      const done =
        dryRun ||
        (await writeWithRetry(client, type, obj, (current) => {
          if (!stale(current)) return undefined;
          const ownerReferences = current.metadata!.ownerReferences!.map((r) => (isDistributionRef(r) ? { ...r, apiVersion } : r));
          return { ...current, metadata: { ...current.metadata, ownerReferences } };
        }));
      if (done) repointed.push(`${type.kind} ${obj.metadata!.namespace}/${obj.metadata!.name}`);
    }
  }
  return { apiVersion, repointed };
}

/**
 * Writes change(obj), re-reading it on conflict; false when it is gone or change has nothing left
 * to do (undefined).
 */
async function writeWithRetry(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject,
  change: (current: KubeObject) => KubeObject | undefined,
): Promise<boolean> {
  let current: KubeObject | undefined = obj;
  for (;;) {
    const next = change(current);
    if (!next) return false;
    try {
      await client.update(type, next);
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

/** An unchanged write of the object at the type's version; re-read on conflict. False when it is gone. */
const rewrite = (client: KubeClient, type: ResourceType, obj: KubeObject) => writeWithRetry(client, type, obj, (current) => current);

export function storageVersionCommand(): Command {
  const cmd = new Command('storage-version').description(
    'move every Kruise object to one stored API version (to hand a cluster back to OpenKruise)',
  );
  cmd
    .command('migrate')
    .description(
      'make --to the storage version of every Kruise CRD, rewrite every object at it, trim status.storedVersions to it and re-point ResourceDistribution copies to it; run it while Kruise TS still serves conversion',
    )
    .requiredOption(
      '--to <version>',
      `the version to store, or ${OPENKRUISE_V18} (before applying OpenKruise v1.8's CRDs: v1beta1 for Advanced StatefulSet, v1alpha1 for the rest)`,
    )
    .option('--kubeconfig <path>', 'kubeconfig of the cluster (default: $KUBECONFIG)')
    .option('--dry-run', 'print what would change and write nothing')
    .action(async (o: { to: string; kubeconfig?: string; dryRun?: boolean }) => {
      const kubeconfig = o.kubeconfig ?? process.env.KUBECONFIG;
      if (!kubeconfig) throw new Error('no kubeconfig: pass --kubeconfig or set KUBECONFIG');
      const client = fromKubeconfigFile(kubeconfig);
      try {
        await migrateStorageVersion(client, o.to, { dryRun: o.dryRun, log: (line) => process.stdout.write(line + '\n') });
      } finally {
        await client.close();
      }
    });
  return cmd;
}
