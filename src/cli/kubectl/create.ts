// `kubectl kruise create ContainerRecreateRequest|job|broadcastjob` (kruise-tools pkg/cmd/create,
// behaviour spec §23): a v1alpha1 CRR with kruise-tools' fixed defaults; a Job or BroadcastJob
// instantiated by hand from an AdvancedCronJob's (or CronJob's) template, annotated
// cronjob.kubernetes.io/instantiate=manual and owned by it.
import { Command, Option } from 'commander';
import { CRONJOB_INSTANTIATE_ANNOTATION } from '../../apis/constants.ts';
import type { Pod, KubeObject } from '../../apis/core-objects.ts';
import { Jobs, Pods, kruiseResource } from '../../runtime/resources.ts';
import {
  CliError,
  describeError,
  getTarget,
  parseDryRun,
  parseOutput,
  resolveType,
  type DryRun,
  type OutputFormat,
  type Session,
  type Target,
  printResult,
} from './session.ts';
import { withSession } from './program.ts';

const ContainerRecreateRequestsV1alpha1 = { ...kruiseResource('ContainerRecreateRequest'), version: 'v1alpha1' };
const BroadcastJobs = kruiseResource('BroadcastJob');

const dryRunOption = () => new Option('--dry-run [strategy]', 'must be "none", "server", or "client"').default('none');
const outputOption = () => new Option('-o, --output <format>', 'output format: json|yaml|name');

export function createCommand(): Command {
  const create = new Command('create').description('create a ContainerRecreateRequest, or a Job/BroadcastJob from an AdvancedCronJob');
  create.addCommand(crrCommand());
  create.addCommand(jobCommand());
  create.addCommand(broadcastJobCommand());
  return create;
}

async function createObject(session: Session, target: Target, obj: KubeObject, dryRun: DryRun, output: OutputFormat): Promise<void> {
  if (dryRun === 'client') return printResult(obj, target.type, output, 'created', dryRun);
  try {
    const created = await session.client.create(target.type, obj, {
      namespace: session.namespace,
      dryRun: dryRun === 'server',
      fieldManager: 'kubectl-kruise',
    });
    printResult(created, target.type, output, 'created', dryRun);
  } catch (err) {
    throw new CliError(describeError(err, target));
  }
}

/** The CRR kruise-tools creates: every container of the pod unless --containers names some. */
export function containerRecreateRequest(
  name: string,
  namespace: string,
  pod: Pod,
  containers: string[],
  unreadyGracePeriodSeconds: number,
  minStartedSeconds: number,
): KubeObject {
  const names = containers.length > 0 ? containers : (pod.spec?.containers ?? []).map((c) => c.name);
  const known = new Set((pod.spec?.containers ?? []).map((c) => c.name));
  const unknown = names.filter((c) => !known.has(c));
  if (unknown.length) throw new CliError(`pod ${pod.metadata.name} has no container named ${unknown.map((c) => `"${c}"`).join(', ')}`);
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: { name, namespace },
    spec: {
      podName: pod.metadata.name,
      containers: names.map((c) => ({ name: c })),
      strategy: { failurePolicy: 'Fail', orderedRecreate: false, unreadyGracePeriodSeconds, minStartedSeconds },
      activeDeadlineSeconds: 300,
      ttlSecondsAfterFinished: 1800,
    },
  } as KubeObject;
}

function crrCommand(): Command {
  return new Command('ContainerRecreateRequest')
    .aliases(['containerrecreaterequest', 'crr'])
    .description('create a ContainerRecreateRequest: restart containers of a pod in place')
    .argument('<name>')
    .requiredOption('-p, --pod <pod>', 'the pod whose containers are recreated')
    .option('--containers <c1,c2>', 'the containers to recreate (default: every container of the pod)', '')
    .option('-u, --unreadyGracePeriodSeconds <n>', 'seconds the pod stays not-ready before a container is stopped', '3')
    .option('-m, --minStartedSeconds <n>', 'seconds a new container must have run to count as started', '3')
    .addOption(dryRunOption())
    .addOption(outputOption())
    .action(async function (this: Command, name: string) {
      await withSession(this, async (session, opts) => {
        const pod = await session.client.get<Pod>(Pods, opts.pod, { namespace: session.namespace }).catch((err: unknown) => {
          throw new CliError(describeError(err, { type: Pods, name: opts.pod }));
        });
        const containers = String(opts.containers).split(',').filter(Boolean);
        const crr = containerRecreateRequest(
          name,
          session.namespace,
          pod,
          containers,
          Number(opts.unreadyGracePeriodSeconds),
          Number(opts.minStartedSeconds),
        );
        await createObject(
          session,
          { type: ContainerRecreateRequestsV1alpha1, name },
          crr,
          parseDryRun(opts.dryRun),
          parseOutput(opts.output),
        );
      });
    });
}

interface CronJobLike extends KubeObject {
  spec?: {
    jobTemplate?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown };
    template?: {
      jobTemplate?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown };
      broadcastJobTemplate?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown };
    };
  };
}

function parseFrom(from: string | undefined, allowed: readonly string[]): Target {
  if (!from) throw new CliError('--from is required (e.g. --from=advancedcronjob/NAME)');
  const [type, name] = from.split('/');
  if (!type || !name) throw new CliError(`--from must be TYPE/NAME (got "${from}")`);
  const rt = resolveType(type);
  if (!allowed.includes(rt.kind)) throw new CliError(`from must be an existing ${allowed.join(' or ')} (got ${rt.kind})`);
  return { type: rt, name };
}

/** A Job or BroadcastJob made by hand from a cron job's template, as kubectl create job --from does. */
export function instantiate(source: CronJobLike, sourceTarget: Target, name: string, kind: 'Job' | 'BroadcastJob'): KubeObject {
  const template =
    kind === 'BroadcastJob'
      ? source.spec?.template?.broadcastJobTemplate
      : sourceTarget.type.kind === 'CronJob'
        ? source.spec?.jobTemplate
        : source.spec?.template?.jobTemplate;
  if (!template) {
    throw new CliError(
      `${sourceTarget.type.kind} ${sourceTarget.name} has no ${kind === 'BroadcastJob' ? 'broadcastJobTemplate' : 'jobTemplate'} to create a ${kind} from`,
    );
  }
  return {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps.kruise.io/v1beta1',
    kind,
    metadata: {
      name,
      namespace: source.metadata.namespace,
      labels: template.metadata?.labels,
      annotations: { ...template.metadata?.annotations, [CRONJOB_INSTANTIATE_ANNOTATION]: 'manual' },
      ownerReferences: [
        {
          apiVersion: source.apiVersion ?? `${sourceTarget.type.group}/${sourceTarget.type.version}`,
          kind: sourceTarget.type.kind,
          name: source.metadata.name ?? '',
          uid: source.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: template.spec,
  } as KubeObject;
}

function fromCommand(kind: 'Job' | 'BroadcastJob'): Command {
  const allowed = kind === 'Job' ? ['AdvancedCronJob', 'CronJob'] : ['AdvancedCronJob'];
  return new Command(kind === 'Job' ? 'job' : 'broadcastjob')
    .description(`create a ${kind} from the template of an ${allowed.join(' or ')} (--from=advancedcronjob/NAME)`)
    .argument('<name>')
    .requiredOption('--from <type/name>', `the ${allowed.join(' or ')} to instantiate`)
    .addOption(dryRunOption())
    .addOption(outputOption())
    .action(async function (this: Command, name: string) {
      await withSession(this, async (session, opts) => {
        const from = parseFrom(opts.from, allowed);
        const source = await getTarget<CronJobLike>(session, from);
        const obj = instantiate(source, from, name, kind);
        await createObject(
          session,
          { type: kind === 'Job' ? Jobs : BroadcastJobs, name },
          obj,
          parseDryRun(opts.dryRun),
          parseOutput(opts.output),
        );
      });
    });
}

const jobCommand = () => fromCommand('Job');
const broadcastJobCommand = () => fromCommand('BroadcastJob');
