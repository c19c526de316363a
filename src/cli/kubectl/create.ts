// `kubectl kruise create ContainerRecreateRequest|job|broadcastjob` (kruise-tools pkg/cmd/create,
// behaviour spec §23): a v1alpha1 CRR with kruise-tools' fixed defaults; a Job or BroadcastJob
// instantiated by hand from an AdvancedCronJob's (or CronJob's) template, annotated
// cronjob.kubernetes.io/instantiate=manual and owned by it.
import { Command, Option, type OptionValues } from 'commander';
import { CRONJOB_INSTANTIATE_ANNOTATION } from '../../apis/constants.ts';
import type { Pod, KubeObject } from '../../apis/core-objects.ts';
import { Jobs, Pods, kruiseResource } from '../../runtime/resources.ts';
import { parseSelector } from '../../util/labelselector.ts';
import { ManifestMapper, namespaceFor, readManifests } from './manifests.ts';
import {
  CliError,
  cliIO,
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
  asServed,
} from './session.ts';
import { withSession } from './program.ts';

const ContainerRecreateRequestsV1alpha1 = { ...kruiseResource('ContainerRecreateRequest'), version: 'v1alpha1' };
const BroadcastJobs = kruiseResource('BroadcastJob');

const dryRunOption = () => new Option('--dry-run [strategy]', 'must be "none", "server", or "client"').default('none');
const outputOption = () => new Option('-o, --output <format>', 'output format: json|yaml|name');

const collect = (value: string, previous: string[]) => [...previous, value];

export function createCommand(): Command {
  const create = new Command('create').description(
    'create objects from files (-f FILE, - for stdin: YAML or JSON, any kind the server serves), a ContainerRecreateRequest, or a Job/BroadcastJob from an AdvancedCronJob',
  );
  // `create -f …` is a hidden default subcommand, so that -o / --dry-run after a named subcommand
  // (`create crr NAME -o yaml`) stay that subcommand's.
  const fromFiles = new Command('from-files')
    .description('create objects from files: create -f FILE [-f FILE…] (- for stdin)')
    .option('-f, --filename <file>', 'a file (or - for stdin) with the objects to create; repeatable', collect, [])
    .option('-l, --selector <selector>', 'create only the objects of the files that match this label selector')
    .option('--field-manager <name>', 'the name of the manager recording field ownership', 'kubectl-create')
    .addOption(dryRunOption())
    .addOption(outputOption())
    .action(async function (this: Command) {
      const files = this.opts<{ filename: string[] }>().filename;
      if (files.length === 0) {
        cliIO().err('Error: must specify one of -f and -k\n\n');
        create.outputHelp({ error: true });
        cliIO().exitCode = 1;
        return;
      }
      await withSession(this, (session, o) => createFromFiles(session, files, o));
    });
  create.addCommand(fromFiles, { isDefault: true, hidden: true });
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
    printResult(await asServed(session, target.type, created), target.type, output, 'created', dryRun);
  } catch (err) {
    throw new CliError(describeError(err, target));
  }
}

/** `create -f`: every object of the files (matching -l), each error reported, the others created. */
async function createFromFiles(session: Session, files: string[], opts: OptionValues): Promise<void> {
  const dryRun = parseDryRun(opts.dryRun);
  const output = parseOutput(opts.output);
  const selector = opts.selector ? parseSelector(String(opts.selector)) : undefined;
  const mapper = new ManifestMapper(session);
  const errors: string[] = [];
  for (const m of readManifests(files)) {
    if (selector && !selector.matches(m.obj.metadata.labels ?? {})) continue;
    try {
      const type = await mapper.typeOf(m);
      const namespace = namespaceFor(session, type, m.obj);
      const obj = namespace ? { ...m.obj, metadata: { ...m.obj.metadata, namespace } } : m.obj;
      if (dryRun === 'client') {
        printResult(obj, type, output, 'created', dryRun);
        continue;
      }
      const created = await session.client
        .create(type, obj, { namespace, dryRun: dryRun === 'server', fieldManager: String(opts.fieldManager) })
        .catch((err: unknown) => {
          throw new CliError(`${describeError(err)} (from ${m.source})`);
        });
      printResult(created, type, output, 'created', dryRun);
    } catch (err) {
      errors.push(describeError(err));
    }
  }
  if (errors.length > 0) throw new CliError(errors.join('\nerror: '));
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
