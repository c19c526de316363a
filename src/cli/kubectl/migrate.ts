// `kubectl kruise migrate CloneSet --from Deployment --src-name X [--dst-name Y] [--create
// [--copy]] [--replicas N] [--max-surge N] [--timeout-seconds N]` (kruise-tools pkg/cmd/migrate).
// Two steps, as kruise-tools: `--create` only creates the CloneSet from the Deployment (same
// selector and template) with 0 replicas, or with the Deployment's replicas under `--copy` (the
// Deployment keeps its own: both run); without it, replicas move step by step to the existing
// CloneSet — up to max-surge new pods at a time, waiting until they are ready before the
// Deployment gives up as many, and until the Deployment's pods are gone (terminating) before the
// next step, so that the two together never run more than the replicas plus max-surge.
import { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../apis/core-objects.ts';
import { isNotFound } from '../../runtime/errors.ts';
import { CloneSets, Deployments } from '../../runtime/resources.ts';
import type { PodTemplateSpec } from '../../apis/core.ts';
import type { LabelSelectorLike } from '../../util/labelselector.ts';
import { withSession } from './program.ts';
import { CliError, describeError, getTarget, write, type Session } from './session.ts';

interface DeploymentLike extends KubeObject {
  spec?: {
    replicas?: number;
    selector?: LabelSelectorLike;
    template?: PodTemplateSpec;
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
  };
  status?: { replicas?: number; observedGeneration?: number };
}
interface CloneSetLike extends KubeObject {
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; observedGeneration?: number };
}

/** The CloneSet a Deployment becomes (same selector and template; replicas as given). */
export function cloneSetFromDeployment(d: DeploymentLike, name: string, replicas: number): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name, namespace: d.metadata.namespace, labels: d.metadata.labels },
    spec: {
      replicas,
      selector: d.spec?.selector,
      template: d.spec?.template,
      ...(d.spec?.minReadySeconds ? { minReadySeconds: d.spec.minReadySeconds } : {}),
      ...(d.spec?.revisionHistoryLimit !== undefined ? { revisionHistoryLimit: d.spec.revisionHistoryLimit } : {}),
    },
  } as KubeObject;
}

async function setReplicas(session: Session, kind: 'CloneSet' | 'Deployment', name: string, replicas: number): Promise<void> {
  await session.client.patch(
    kind === 'CloneSet' ? CloneSets : Deployments,
    name,
    { spec: { replicas } },
    { namespace: session.namespace, patchType: 'application/merge-patch+json' },
  );
}

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('migrate a Deployment to a CloneSet, moving replicas step by step')
    .argument('<kind>', 'CloneSet (the destination kind)')
    .requiredOption('--from <kind>', 'Deployment (the source kind)')
    .requiredOption('--src-name <name>', 'the Deployment to migrate')
    .option('--dst-name <name>', 'the CloneSet (default: the Deployment name)')
    .option('--create', 'create the CloneSet from the Deployment with replicas=0 (and do nothing else)')
    .option('--copy', "with --create: give the CloneSet the Deployment's replicas (the Deployment keeps its own)")
    .option('--replicas <n>', 'replicas to migrate; -1 means all of them', '-1')
    .option('--max-surge <n>', 'replicas moved per step', '1')
    .option('--timeout-seconds <n>', 'give up after this long; -1 means never', '-1')
    .action(async function (this: Command, kind: string) {
      await withSession(this, async (session, opts) => {
        if (kind.toLowerCase() !== 'cloneset') throw new CliError(`migrate supports CloneSet as destination only (got ${kind})`);
        if (String(opts.from).toLowerCase() !== 'deployment')
          throw new CliError(`migrate supports --from Deployment only (got ${opts.from})`);
        const src = await getTarget<DeploymentLike>(session, { type: Deployments, name: opts.srcName });
        const dstName: string = opts.dstName ?? opts.srcName;
        const total = Number(opts.replicas) >= 0 ? Number(opts.replicas) : (src.spec?.replicas ?? 1);
        const maxSurge = Math.max(1, Number(opts.maxSurge));
        const deadline = Number(opts.timeoutSeconds) > 0 ? Date.now() + Number(opts.timeoutSeconds) * 1000 : Infinity;
        if (opts.create) {
          const replicas = opts.copy ? (src.spec?.replicas ?? 1) : 0;
          try {
            await session.client.create(CloneSets, cloneSetFromDeployment(src, dstName, replicas), { namespace: session.namespace });
          } catch (err) {
            throw new CliError(describeError(err, { type: CloneSets, name: dstName }));
          }
          write(`cloneset.apps.kruise.io/${dstName} created with ${replicas} replicas from deployment.apps/${opts.srcName}`);
          return;
        }
        let moved: number;
        try {
          moved = (await session.client.get<CloneSetLike>(CloneSets, dstName, { namespace: session.namespace })).spec?.replicas ?? 0;
        } catch (err) {
          if (!isNotFound(err)) throw err;
          throw new CliError(`clonesets.apps.kruise.io "${dstName}" not found (create it first: add --create to this command)`);
        }
        let srcReplicas = src.spec?.replicas ?? 1;
        while (moved < total) {
          const step = Math.min(maxSurge, total - moved);
          moved += step;
          await setReplicas(session, 'CloneSet', dstName, moved);
          for (;;) {
            const cs = await getTarget<CloneSetLike>(session, { type: CloneSets, name: dstName });
            if ((cs.status?.readyReplicas ?? 0) >= moved) break;
            if (Date.now() > deadline)
              throw new CliError(`timed out: CloneSet ${dstName} has ${cs.status?.readyReplicas ?? 0} of ${moved} pods ready`);
            await sleep(1000);
          }
          srcReplicas = Math.max(0, srcReplicas - step);
          await setReplicas(session, 'Deployment', opts.srcName, srcReplicas);
          for (;;) {
            const d = await getTarget<DeploymentLike>(session, { type: Deployments, name: opts.srcName });
            if ((d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && (d.status?.replicas ?? 0) <= srcReplicas) break;
            if (Date.now() > deadline)
              throw new CliError(
                `timed out: Deployment ${opts.srcName} still has ${d.status?.replicas ?? 0} pods, scaling to ${srcReplicas}`,
              );
            await sleep(500);
          }
          write(`migrate: CloneSet ${dstName} ${moved}/${total} ready, Deployment ${opts.srcName} scaled to ${srcReplicas}`);
        }
        write(`migrated ${total} replicas from deployment.apps/${opts.srcName} to cloneset.apps.kruise.io/${dstName}`);
      });
    });
}
