// `kruise sharding unlabel`: after the sharded manager is stopped or turned off (a hand-back to
// OpenKruise, or to an unsharded Kruise TS), removes what sharding left on the cluster — each
// workload's and child's shard label, a workload's drain label and its children note, and the
// ring's shard Leases (docs/sharding.md, "Zero-churn takeover and hand-back"). They are inert to
// both; this is for a cluster that should carry nothing of a mode no longer in use. One metadata
// merge patch per labelled object (the count the takeover wrote), one delete per Lease.
import { Command } from 'commander';
import type { KubeObject } from '../apis/core-objects.ts';
import { KRUISE_NAMESPACE_DEFAULT, LEADER_ELECTION_ID_DEFAULT } from '../manager/options.ts';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../runtime/client.ts';
import { isNotFound } from '../runtime/errors.ts';
import { Leases, type ResourceType } from '../runtime/resources.ts';
import { shardLabels } from '../util/shard-ring.ts';
import { SHARDED_CHILDREN, SHARDED_WORKLOADS } from '../controllers/index.ts';

export interface UnlabelOptions {
  /** The ring: the sharded manager's --leader-election-id. */
  ring: string;
  /** Where the shard Leases are: the manager's --leader-election-namespace. */
  leaseNamespace: string;
  /** Report what would change and write nothing. */
  dryRun?: boolean;
  log?: (line: string) => void;
}

export interface UnlabelResult {
  /** Objects unlabelled (with dryRun: that would be), by resource. */
  unlabelled: Record<string, number>;
  /** Shard Leases deleted (with dryRun: that would be). */
  leases: string[];
}

export async function removeShardLabels(client: KubeClient, opts: UnlabelOptions): Promise<UnlabelResult> {
  const labels = shardLabels(opts.ring);
  const log = opts.log ?? (() => {});
  const result: UnlabelResult = { unlabelled: {}, leases: [] };
  // Children first, as the sharder moves them: a workload keeps its label until its children have
  // none, so a run cut short leaves no child labelled under an unlabelled workload.
  const unlabel = async (type: ResourceType, metadata: Record<string, unknown>) => {
    const { items } = await client.listAll<KubeObject>(type, { labelSelector: labels.shard });
    for (const obj of items) {
      const { name, namespace } = obj.metadata;
      if (!opts.dryRun) {
        try {
          await client.patch(type, name!, { metadata }, { namespace, patchType: PatchType.Merge });
        } catch (err) {
          if (!isNotFound(err)) throw err;
          continue;
        }
      }
      result.unlabelled[type.resource] = (result.unlabelled[type.resource] ?? 0) + 1;
      log(`${opts.dryRun ? 'would unlabel' : 'unlabelled'} ${type.resource} ${namespace ? `${namespace}/` : ''}${name}`);
    }
  };
  for (const type of SHARDED_CHILDREN) await unlabel(type, { labels: { [labels.shard]: null } });
  for (const type of SHARDED_WORKLOADS) {
    await unlabel(type, { labels: { [labels.shard]: null, [labels.drain]: null }, annotations: { [labels.children]: null } });
  }
  const leases = await client.listAll<KubeObject>(Leases, { namespace: opts.leaseNamespace, labelSelector: `${labels.ring}=${opts.ring}` });
  for (const lease of leases.items) {
    const name = lease.metadata.name!;
    if (!opts.dryRun) {
      await client.delete(Leases, name, { namespace: opts.leaseNamespace }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    result.leases.push(name);
    log(`${opts.dryRun ? 'would delete' : 'deleted'} shard Lease ${opts.leaseNamespace}/${name}`);
  }
  return result;
}

export function shardingCommand(): Command {
  const cmd = new Command('sharding').description('the sharded manager (--sharding) and what it leaves on the cluster');
  cmd
    .command('unlabel')
    .description(
      "remove the shard labels, drain labels and children notes of one ring from every workload, pod, claim and revision, and delete the ring's shard Leases; run it once no sharded manager of that ring runs, while a manager serves the webhooks",
    )
    .option('--ring <name>', "the ring: the sharded manager's --leader-election-id", LEADER_ELECTION_ID_DEFAULT)
    .option('--namespace <name>', "where the shard Leases are: the manager's --leader-election-namespace", KRUISE_NAMESPACE_DEFAULT)
    .option('--kubeconfig <path>', 'kubeconfig of the cluster (default: $KUBECONFIG)')
    .option('--dry-run', 'print what would change and write nothing')
    .action(async (o: { ring: string; namespace: string; kubeconfig?: string; dryRun?: boolean }) => {
      const kubeconfig = o.kubeconfig ?? process.env.KUBECONFIG;
      if (!kubeconfig) throw new Error('no kubeconfig: pass --kubeconfig or set KUBECONFIG');
      const client = fromKubeconfigFile(kubeconfig);
      try {
        const result = await removeShardLabels(client, {
          ring: o.ring,
          leaseNamespace: o.namespace,
          dryRun: o.dryRun,
          log: (line) => process.stdout.write(line + '\n'),
        });
        const counts = Object.entries(result.unlabelled).map(([resource, n]) => `${n} ${resource}`);
        process.stdout.write(
          `${o.dryRun ? 'would unlabel' : 'unlabelled'}: ${counts.join(', ') || 'nothing'}; ${o.dryRun ? 'would delete' : 'deleted'} ${result.leases.length} shard Lease(s)\n`,
        );
      } finally {
        await client.close();
      }
    });
  return cmd;
}
