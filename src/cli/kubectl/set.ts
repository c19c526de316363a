// `kubectl kruise set image|env|resources|selector|serviceaccount` on CloneSet, Advanced
// StatefulSet/DaemonSet, SidecarSet and the native Deployment/ReplicaSet/StatefulSet/DaemonSet
// (kruise-tools updatepodspec.go: SidecarSet keeps its containers in spec, the others in
// spec.template.spec).
import { Command, Option } from 'commander';
import type { Container, PodSpec } from '../../apis/core.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import { parseQuantity } from '../../apis/quantity.ts';
import { CliError, mutate, parseDryRun, parseOutput, parseTargets, type Target } from './session.ts';
import { withSession } from './program.ts';

type Containerful = Pick<PodSpec, 'containers' | 'initContainers' | 'serviceAccountName'>;

/** The spec shapes set edits: a pod template (workloads), container lists (SidecarSet), a selector. */
type SpecHolder = KubeObject & {
  spec?: Partial<Containerful> & {
    template?: { spec?: Containerful };
    selector?: Record<string, string> | { matchLabels: Record<string, string> };
  };
};

const TEMPLATE_KINDS = new Set(['CloneSet', 'StatefulSet', 'DaemonSet', 'Deployment', 'ReplicaSet']);

/** Where the pod spec (or, for a SidecarSet, the container lists) of an object lives. */
export function podSpecOf(target: Target, obj: SpecHolder): Containerful {
  if (target.type.kind === 'SidecarSet') return (obj.spec ??= {}) as Containerful;
  if (TEMPLATE_KINDS.has(target.type.kind)) {
    obj.spec ??= {};
    obj.spec.template ??= {};
    return (obj.spec.template.spec ??= { containers: [] });
  }
  throw new CliError(
    `${target.type.kind} ${target.name} has no pod template to set (supported: CloneSet, Advanced StatefulSet/DaemonSet, SidecarSet, Deployment, ReplicaSet, StatefulSet, DaemonSet)`,
  );
}

/** Containers named by -c (a name or *), init containers included as kubectl does. */
function selectContainers(spec: Containerful, selector: string): Container[] {
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])] as Container[];
  return all.filter((c) => selector === '*' || c.name === selector);
}

const common = (cmd: Command) =>
  cmd
    .addOption(new Option('--dry-run [strategy]', 'must be "none", "server", or "client"').default('none'))
    .addOption(new Option('-o, --output <format>', 'output format: json|yaml|name'));

export function setCommand(): Command {
  const set = new Command('set').description('set specific features on objects (image, env, resources, selector, serviceaccount)');
  set.addCommand(imageCommand());
  set.addCommand(envCommand());
  set.addCommand(resourcesCommand());
  set.addCommand(selectorCommand());
  set.addCommand(serviceAccountCommand());
  return set;
}

/** Splits arguments into resources (TYPE/NAME, or TYPE NAME…) and the KEY=VALUE pairs that follow. */
function splitArgs(args: string[]): { resources: string[]; pairs: string[] } {
  const firstPair = args.findIndex((a, i) => i > 0 && (a.includes('=') || a.endsWith('-')));
  return firstPair < 0 ? { resources: args, pairs: [] } : { resources: args.slice(0, firstPair), pairs: args.slice(firstPair) };
}

function imageCommand(): Command {
  return common(
    new Command('image')
      .description('update the image of containers: set image TYPE/NAME CONTAINER=IMAGE [...] (CONTAINER * for all)')
      .argument('<args...>', 'TYPE/NAME CONTAINER_NAME_1=CONTAINER_IMAGE_1 ...'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const { resources, pairs } = splitArgs(args);
      if (pairs.length === 0) throw new CliError('at least one image update is required (CONTAINER=IMAGE)');
      const images = pairs.map((p) => {
        const eq = p.indexOf('=');
        if (eq <= 0 || eq === p.length - 1) throw new CliError(`invalid image update "${p}" (expected CONTAINER=IMAGE)`);
        return [p.slice(0, eq), p.slice(eq + 1)] as const;
      });
      for (const target of parseTargets(resources)) {
        await mutate<SpecHolder>(
          session,
          target,
          (obj) => {
            const spec = podSpecOf(target, obj);
            let changed = false;
            for (const [name, image] of images) {
              const containers = selectContainers(spec, name);
              if (containers.length === 0)
                throw new CliError(`unable to find container named "${name}" in ${target.type.kind} ${target.name}`);
              for (const c of containers) {
                if (c.image !== image) changed = true;
                c.image = image;
              }
            }
            return changed;
          },
          { dryRun: parseDryRun(opts.dryRun), output: parseOutput(opts.output), verb: 'image updated' },
        );
      }
    });
  });
}

function envCommand(): Command {
  return common(
    new Command('env')
      .description('update environment variables of containers: set env TYPE/NAME KEY=VALUE ... KEY- (removes KEY)')
      .argument('<args...>', 'TYPE/NAME KEY_1=VAL_1 ... KEY_N-')
      .option('-c, --containers <name>', 'the names of containers to change; * for all', '*'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const { resources, pairs } = splitArgs(args);
      if (pairs.length === 0) throw new CliError('at least one environment variable change is required (KEY=VALUE or KEY-)');
      for (const target of parseTargets(resources)) {
        await mutate<SpecHolder>(
          session,
          target,
          (obj) => {
            const containers = selectContainers(podSpecOf(target, obj), opts.containers);
            if (containers.length === 0)
              throw new CliError(`unable to find container named "${opts.containers}" in ${target.type.kind} ${target.name}`);
            const before = JSON.stringify(containers.map((c) => c.env));
            for (const c of containers) {
              let env = [...(c.env ?? [])];
              for (const pair of pairs) {
                if (pair.endsWith('-') && !pair.includes('=')) {
                  env = env.filter((e) => e.name !== pair.slice(0, -1));
                  continue;
                }
                const eq = pair.indexOf('=');
                const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
                const existing = env.find((e) => e.name === name);
                if (existing) {
                  existing.value = value;
                  delete existing.valueFrom;
                } else env.push({ name, value });
              }
              c.env = env;
            }
            return JSON.stringify(containers.map((c) => c.env)) !== before;
          },
          { dryRun: parseDryRun(opts.dryRun), output: parseOutput(opts.output), verb: 'env updated' },
        );
      }
    });
  });
}

function parseResourceList(value: string | undefined): Record<string, string> | undefined {
  if (!value) return undefined;
  const out: Record<string, string> = {};
  for (const item of value.split(',')) {
    const [name, quantity] = item.split('=');
    if (!name || !quantity) throw new CliError(`invalid resource "${item}" (expected NAME=QUANTITY, e.g. cpu=200m)`);
    try {
      parseQuantity(quantity);
    } catch {
      throw new CliError(`invalid quantity "${quantity}" for ${name}`);
    }
    out[name] = quantity;
  }
  return out;
}

function resourcesCommand(): Command {
  return common(
    new Command('resources')
      .description('update resource requests/limits of containers')
      .argument('<resource...>', 'TYPE/NAME')
      .option('-c, --containers <name>', 'the names of containers to change; * for all', '*')
      .option('--limits <list>', 'the resource limits, e.g. cpu=200m,memory=512Mi')
      .option('--requests <list>', 'the resource requests, e.g. cpu=100m,memory=256Mi'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const limits = parseResourceList(opts.limits);
      const requests = parseResourceList(opts.requests);
      if (!limits && !requests) throw new CliError('you must specify an update to requests or limits (in the form of --requests/--limits)');
      for (const target of parseTargets(args)) {
        await mutate<SpecHolder>(
          session,
          target,
          (obj) => {
            const containers = selectContainers(podSpecOf(target, obj), opts.containers);
            if (containers.length === 0)
              throw new CliError(`unable to find container named "${opts.containers}" in ${target.type.kind} ${target.name}`);
            const before = JSON.stringify(containers.map((c) => c.resources));
            for (const c of containers) {
              c.resources = {
                ...c.resources,
                ...(limits ? { limits: { ...c.resources?.limits, ...limits } } : {}),
                ...(requests ? { requests: { ...c.resources?.requests, ...requests } } : {}),
              };
            }
            return JSON.stringify(containers.map((c) => c.resources)) !== before;
          },
          { dryRun: parseDryRun(opts.dryRun), output: parseOutput(opts.output), verb: 'resource requirements updated' },
        );
      }
    });
  });
}

function selectorCommand(): Command {
  return common(
    new Command('selector')
      .description(
        'set the selector (spec.selector.matchLabels; spec.selector of a Service). Workload selectors are immutable: the API refuses a change',
      )
      .argument('<args...>', 'TYPE/NAME key=value[,key=value]'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const { resources, pairs } = splitArgs(args);
      if (pairs.length === 0) throw new CliError('a selector is required (key=value[,key=value])');
      const labels = Object.fromEntries(
        pairs
          .join(',')
          .split(',')
          .filter(Boolean)
          .map((kv) => kv.split('=') as [string, string]),
      );
      for (const target of parseTargets(resources)) {
        await mutate<SpecHolder>(
          session,
          target,
          (obj) => {
            obj.spec ??= {};
            if (target.type.kind === 'Service') obj.spec.selector = labels;
            else obj.spec.selector = { matchLabels: labels };
          },
          { dryRun: parseDryRun(opts.dryRun), output: parseOutput(opts.output), verb: 'selector updated' },
        );
      }
    });
  });
}

function serviceAccountCommand(): Command {
  return common(
    new Command('serviceaccount')
      .alias('sa')
      .description('update the ServiceAccount of the pod template')
      .argument('<args...>', 'TYPE/NAME SERVICE_ACCOUNT'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      if (args.length < 2) throw new CliError('serviceaccount is required (set serviceaccount TYPE/NAME SERVICE_ACCOUNT)');
      const account = args[args.length - 1]!;
      for (const target of parseTargets(args.slice(0, -1))) {
        if (target.type.kind === 'SidecarSet') throw new CliError('a SidecarSet has no pod service account to set');
        await mutate<SpecHolder>(
          session,
          target,
          (obj) => {
            const spec = podSpecOf(target, obj);
            if (spec.serviceAccountName === account) return false;
            spec.serviceAccountName = account;
          },
          { dryRun: parseDryRun(opts.dryRun), output: parseOutput(opts.output), verb: 'serviceaccount updated' },
        );
      }
    });
  });
}
