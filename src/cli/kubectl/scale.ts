// `kubectl kruise scale` (through the scale subresource: CloneSet, Advanced StatefulSet,
// Deployment, ReplicaSet, StatefulSet) and `scaledown cloneset/NAME --pods p1,p2` (the pods go to
// spec.scaleStrategy.podsToDelete and replicas drops by as many, so exactly those pods go).
import { Command, Option } from 'commander';
import type { CloneSet } from '../../apis/apps/cloneset.ts';
import type { Pod, KubeObject } from '../../apis/core-objects.ts';
import { Pods } from '../../runtime/resources.ts';
import {
  CliError,
  describeError,
  getTarget,
  mutate,
  ns,
  parseDryRun,
  parseOutput,
  parseTarget,
  parseTargets,
  printResult,
} from './session.ts';
import { withSession } from './program.ts';

export function scaleCommand(): Command {
  return new Command('scale')
    .description('set a new size for a CloneSet, Advanced StatefulSet, Deployment, ReplicaSet or StatefulSet (scale subresource)')
    .argument('<resource...>', 'TYPE/NAME or TYPE NAME')
    .requiredOption('--replicas <n>', 'the new desired number of replicas')
    .option('--current-replicas <n>', 'precondition: the current size must be this, or nothing is scaled')
    .addOption(new Option('--dry-run [strategy]', 'must be "none", "server", or "client"').default('none'))
    .addOption(new Option('-o, --output <format>', 'output format: json|yaml|name'))
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const replicas = Number(opts.replicas);
        if (!Number.isInteger(replicas) || replicas < 0)
          throw new CliError(`--replicas must be a non-negative integer (got "${opts.replicas}")`);
        const dryRun = parseDryRun(opts.dryRun);
        const output = parseOutput(opts.output);
        for (const target of parseTargets(args)) {
          const namespace = ns(session, target.type);
          try {
            const scale = await session.client.getScale(target.type, target.name, { namespace });
            if (opts.currentReplicas !== undefined && scale.spec?.replicas !== Number(opts.currentReplicas)) {
              throw new CliError(`expected replicas to be ${opts.currentReplicas}, was ${scale.spec?.replicas ?? 0}`);
            }
            const next = { ...scale, spec: { ...scale.spec, replicas } };
            const written =
              dryRun === 'client'
                ? next
                : await session.client.updateScale(target.type, target.name, next, { namespace, dryRun: dryRun === 'server' });
            printResult({ ...written, metadata: { ...written.metadata, name: target.name } }, target.type, output, 'scaled', dryRun);
          } catch (err) {
            throw new CliError(describeError(err, target));
          }
        }
      });
    });
}

export function scaledownCommand(): Command {
  return new Command('scaledown')
    .description('scale a CloneSet down by deleting exactly the pods named (scaleStrategy.podsToDelete, replicas - number of pods)')
    .argument('<resource...>', 'cloneset/NAME')
    .requiredOption('--pods <p1,p2>', 'the pods to delete, comma separated')
    .addOption(new Option('--dry-run [strategy]', 'must be "none", "server", or "client"').default('none'))
    .addOption(new Option('-o, --output <format>', 'output format: json|yaml|name'))
    .action(async function (this: Command, args: string[]) {
      await withSession(this, async (session, opts) => {
        const target = parseTarget(args);
        if (target.type.kind !== 'CloneSet')
          throw new CliError(`scaledown supports CloneSet only (got ${target.type.kind} ${target.name})`);
        const pods = String(opts.pods).split(',').filter(Boolean);
        if (pods.length === 0) throw new CliError('--pods must name at least one pod');
        const cs = await getTarget<CloneSet & KubeObject>(session, target);
        for (const name of pods) {
          const pod = await session.client.get<Pod>(Pods, name, { namespace: session.namespace }).catch((err: unknown) => {
            throw new CliError(describeError(err, { type: Pods, name }));
          });
          if (!pod.metadata.ownerReferences?.some((r) => r.controller && r.uid === cs.metadata.uid)) {
            throw new CliError(`pod ${name} does not belong to CloneSet ${target.name}`);
          }
        }
        await mutate<CloneSet & KubeObject>(
          session,
          target,
          (obj) => {
            const spec = obj.spec!;
            const already = new Set(spec.scaleStrategy?.podsToDelete ?? []);
            const fresh = pods.filter((p) => !already.has(p));
            if (fresh.length === 0) return false;
            spec.scaleStrategy = { ...spec.scaleStrategy, podsToDelete: [...already, ...fresh] };
            spec.replicas = Math.max(0, (spec.replicas ?? 1) - fresh.length);
          },
          {
            dryRun: parseDryRun(opts.dryRun),
            output: parseOutput(opts.output),
            verb: 'scaled down',
            unchangedVerb: 'unchanged (the pods are already being deleted)',
          },
        );
      });
    });
}
