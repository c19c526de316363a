// `kubectl kruise set image|env|resources|selector|serviceaccount` on CloneSet, Advanced
// StatefulSet/DaemonSet, SidecarSet and the native Deployment/ReplicaSet/StatefulSet/DaemonSet
// (kruise-tools updatepodspec.go: SidecarSet keeps its containers in spec, the others in
// spec.template.spec).
import { Command, Option } from 'commander';
import type { Container, PodSpec } from '../../apis/core.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import { parseQuantity } from '../../apis/quantity.ts';
import { readFileSync } from 'node:fs';
import { ConfigMaps, Secrets, type ResourceType } from '../../runtime/resources.ts';
import {
  envFrom,
  envRefString,
  listEnv,
  parseEnv,
  splitEnvironmentFromResources,
  updateEnv,
  validateNoOverwrites,
  type RefResolver,
} from './env.ts';
import { ManifestMapper, readManifests } from './manifests.ts';
import {
  CliError,
  cliIO,
  describeError,
  getTarget,
  mutate,
  ns,
  parseDryRun,
  parseOutput,
  parseTarget,
  parseTargets,
  printResult,
  resolveType,
  type Session,
  type Target,
} from './session.ts';
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

/** Containers named by -c (a name, or a pattern with * wildcards), init containers included as kubectl does. */
function selectContainers(spec: Containerful, selector: string): Container[] {
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])] as Container[];
  const pattern = new RegExp(
    `^${selector
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return all.filter((c) => pattern.test(c.name));
}

const common = (cmd: Command) =>
  cmd
    .addOption(new Option('--dry-run [strategy]', 'must be "none", "server", or "client"').default('none'))
    .addOption(new Option('-o, --output <format>', 'output format: json|yaml|name'));

export function setCommand(): Command {
  const set = new Command('set').description('set specific features on objects (image, env, resources, selector, serviceaccount, subject)');
  set.addCommand(imageCommand());
  set.addCommand(envCommand());
  set.addCommand(resourcesCommand());
  set.addCommand(selectorCommand());
  set.addCommand(serviceAccountCommand());
  set.addCommand(subjectCommand());
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
      .argument('<args...>', 'TYPE/NAME CONTAINER_NAME_1=CONTAINER_IMAGE_1 ...')
      .option('-l, --selector <selector>', 'with TYPE: the objects matching this label selector')
      .option('--all', 'with TYPE: every object of the type in the namespace'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const { resources, pairs } = splitArgs(args);
      if (pairs.length === 0) throw new CliError('at least one image update is required (CONTAINER=IMAGE)');
      const images = pairs.map((p) => {
        const eq = p.indexOf('=');
        if (eq <= 0 || eq === p.length - 1) throw new CliError(`invalid image update "${p}" (expected CONTAINER=IMAGE)`);
        return [p.slice(0, eq), p.slice(eq + 1)] as const;
      });
      for (const target of await selectTargets(session, resources, { all: opts.all, selector: opts.selector })) {
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

const collect = (value: string, previous: string[]) => [...previous, value];
const parseBool = (v: string | boolean) => v === true || v === 'true';

/** TYPE/NAME… as given, or with --all / -l every object of the TYPE(s) (matching the selector). */
async function selectTargets(session: Session, resources: string[], o: { all?: boolean; selector?: string }): Promise<Target[]> {
  if (!o.all && !o.selector) return parseTargets(resources);
  if (resources.some((r) => r.includes('/'))) throw new CliError('name cannot be provided when a selector is specified');
  const targets: Target[] = [];
  for (const typeArg of resources.flatMap((r) => r.split(','))) {
    const type = resolveType(typeArg);
    const list = await session.client.list(type, { namespace: ns(session, type), labelSelector: o.selector }).catch((err: unknown) => {
      throw new CliError(describeError(err));
    });
    targets.push(...list.items.map((i) => ({ type, name: i.metadata.name! })));
  }
  return targets;
}

/** --resolve: the value behind a Secret or ConfigMap key (each object read once). */
function refResolver(session: Session): RefResolver {
  const objects = new Map<string, Promise<KubeObject & { data?: Record<string, string> }>>();
  const read = (type: typeof Secrets, name: string) => {
    const key = `${type.resource}/${name}`;
    if (!objects.has(key)) objects.set(key, session.client.get(type, name, { namespace: session.namespace }));
    return objects.get(key)!;
  };
  return async (from) => {
    if (from.secretKeyRef) {
      const { name = '', key } = from.secretKeyRef;
      const value = (await read(Secrets, name)).data?.[key];
      if (value === undefined) throw new Error(`key ${key} not found in secret ${name}`);
      return Buffer.from(value, 'base64').toString();
    }
    if (from.configMapKeyRef) {
      const { name = '', key } = from.configMapKeyRef;
      const value = (await read(ConfigMaps, name)).data?.[key];
      if (value === undefined) throw new Error(`key ${key} not found in config map ${name}`);
      return value;
    }
    throw new Error(`${envRefString(from)} cannot be resolved by kubectl-kruise`);
  };
}

function envCommand(): Command {
  return common(
    new Command('env')
      .description(
        'update environment variables of containers: set env TYPE/NAME KEY=VALUE ... KEY- (removes KEY); --from=secret/NAME|configmap/NAME imports keys; --list shows them',
      )
      .argument('[args...]', 'TYPE/NAME KEY_1=VAL_1 ... KEY_N-')
      .option('-c, --containers <name>', 'the names of containers to change; may use wildcards (*)', '*')
      .option('-e, --env <KEY=VALUE>', 'a variable to set (repeatable); - reads KEY=VALUE lines from stdin', collect, [])
      .option('--from <resource>', 'the Secret or ConfigMap (secret/NAME, configmap/NAME) whose keys to import as variables')
      .option('--keys <keys>', 'with --from: only these keys (comma-separated, repeatable)', collect, [])
      .option('--prefix <prefix>', 'prefix to prepend to the variable names')
      .option('--list', 'show the variables (after the change) instead of writing them')
      .option('--resolve', 'with --list: show the values of Secret and ConfigMap references')
      .option('-l, --selector <selector>', 'with TYPE: the objects matching this label selector')
      .option('--all', 'with TYPE: every object of the type in the namespace')
      .option('--local', 'change the objects of -f files without contacting the server, and print them')
      .option('-f, --filename <file>', 'the objects to change, from a file (- for stdin); repeatable', collect, [])
      .option('--overwrite [bool]', 'allow changing a variable that already has another value', parseBool, true),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const { resources, envArgs } = splitEnvironmentFromResources(args);
      const dryRun = parseDryRun(opts.dryRun);
      const output = parseOutput(opts.output);
      const files = opts.filename as string[];
      if (opts.local && dryRun === 'server')
        throw new CliError('cannot specify --local and --dry-run=server - did you mean --dry-run=client?');
      if (files.length === 0 && resources.length === 0)
        throw new CliError('one or more resources must be specified as <resource> <name> or <resource>/<name>');
      if (opts.list && output) throw new CliError('--list and --output may not be specified together');
      const keys = (opts.keys as string[]).flatMap((k) => k.split(',')).filter(Boolean);
      if (keys.length > 0 && !opts.from) throw new CliError('when specifying --keys, a configmap or secret must be provided with --from');
      if (opts.all && opts.selector) throw new CliError('cannot set --all and --selector at the same time');
      if (opts.local && resources.length > 0) throw new CliError('you must specify resources by --filename when --local is set.');
      let stdinText: string | undefined;
      const stdin = () => (stdinText ??= readFileSync(0, 'utf8'));
      const { env, remove } = parseEnv([...(opts.env as string[]), ...envArgs], stdin);
      if (opts.from) {
        if (opts.local) throw new CliError('--from reads the Secret or ConfigMap from the server: not with --local');
        const from = parseTarget([String(opts.from)]);
        const source = await getTarget<KubeObject & { data?: Record<string, string> }>(session, from);
        env.push(...envFrom(from.type.kind, from.name, source.data, keys));
      }
      if (opts.prefix) for (const e of env) e.name = `${opts.prefix}${e.name}`;

      /** Applies the change to a copy's containers; the containers changed (none: a warning, as kubectl). */
      const edit = (target: Target, obj: SpecHolder): Container[] => {
        const containers = selectContainers(podSpecOf(target, obj), opts.containers);
        if (containers.length === 0) {
          cliIO().err(`warning: ${target.type.kind}/${target.name} does not have any containers matching "${opts.containers}"\n`);
          return [];
        }
        for (const c of containers) {
          if (opts.overwrite === false) validateNoOverwrites(c.env ?? [], env);
          c.env = updateEnv(c.env ?? [], env, remove);
        }
        return containers;
      };

      const manifests = readManifests(files, stdin);
      const mapper = new ManifestMapper(session);
      const fileTargets = async () =>
        Promise.all(
          manifests.map(async (m) => ({
            target: { type: opts.local ? localType(m.obj) : await mapper.typeOf(m), name: m.obj.metadata.name ?? '' },
            obj: m.obj as SpecHolder,
          })),
        );
      if (opts.local) {
        for (const { target, obj } of await fileTargets()) {
          edit(target, obj);
          printResult(obj, target.type, output, 'env updated', 'client');
        }
        return;
      }
      const targets = [
        ...(await fileTargets()).map((f) => f.target),
        ...(resources.length ? await selectTargets(session, resources, { all: opts.all, selector: opts.selector }) : []),
      ];
      if (opts.list) {
        const resolve = opts.resolve ? refResolver(session) : undefined;
        const errors: string[] = [];
        for (const target of targets) {
          const obj = structuredClone(await getTarget<SpecHolder>(session, target));
          for (const c of edit(target, obj)) {
            const listed = await listEnv(target.type.kind, target.name, c, resolve);
            cliIO().out(listed.text);
            errors.push(...listed.errors);
          }
        }
        for (const e of errors) cliIO().err(`${e}\n`);
        if (errors.length > 0) throw new CliError('failed to retrieve valueFrom references');
        return;
      }
      for (const target of targets) {
        await mutate<SpecHolder>(
          session,
          target,
          (obj) => {
            const before = JSON.stringify(podSpecOf(target, structuredClone(obj)));
            edit(target, obj);
            return JSON.stringify(podSpecOf(target, obj)) !== before;
          },
          { dryRun, output, verb: 'env updated' },
        );
      }
    });
  });
}

/** The type of an object from a file without asking the server (--local): its kind in its group. */
function localType(obj: KubeObject): ResourceType {
  const group = obj.apiVersion?.includes('/') ? obj.apiVersion.split('/')[0] : '';
  return resolveType(group ? `${obj.kind!.toLowerCase()}.${group}` : obj.kind!);
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
      .option('--requests <list>', 'the resource requests, e.g. cpu=100m,memory=256Mi')
      .option('-l, --selector <selector>', 'with TYPE: the objects matching this label selector')
      .option('--all', 'with TYPE: every object of the type in the namespace'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const limits = parseResourceList(opts.limits);
      const requests = parseResourceList(opts.requests);
      if (!limits && !requests) throw new CliError('you must specify an update to requests or limits (in the form of --requests/--limits)');
      for (const target of await selectTargets(session, args, { all: opts.all, selector: opts.selector })) {
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
      .argument('<args...>', 'TYPE/NAME SERVICE_ACCOUNT')
      .option('-l, --selector <selector>', 'with TYPE: the objects matching this label selector')
      .option('--all', 'with TYPE: every object of the type in the namespace'),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      if (args.length < 2) throw new CliError('serviceaccount is required (set serviceaccount TYPE/NAME SERVICE_ACCOUNT)');
      const account = args[args.length - 1]!;
      for (const target of await selectTargets(session, args.slice(0, -1), { all: opts.all })) {
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

interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

/** The subjects `set subject` binds: users, then groups, then service accounts, each sorted and unique (kubectl). */
export function subjectsOf(
  o: { users: string[]; groups: string[]; serviceAccounts: string[] },
  namespace: string,
  clusterScoped: boolean,
): Subject[] {
  const sorted = (xs: string[]) => [...new Set(xs)].sort();
  return [
    ...sorted(o.users).map((name) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name })),
    ...sorted(o.groups).map((name) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name })),
    ...sorted(o.serviceAccounts).map((sa) => {
      const tokens = sa.split(':');
      if (tokens.length !== 2 || !tokens[1]) throw new CliError('serviceaccount must be <namespace>:<name>');
      if (clusterScoped && !tokens[0]) throw new CliError('serviceaccount must be <namespace>:<name>, namespace must be specified');
      return { kind: 'ServiceAccount', namespace: tokens[0] || namespace, name: tokens[1] };
    }),
  ];
}

const sameSubject = (a: Subject, b: Subject) =>
  a.kind === b.kind && (a.apiGroup ?? '') === (b.apiGroup ?? '') && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');

function subjectCommand(): Command {
  return common(
    new Command('subject')
      .description('add Users, Groups or ServiceAccounts to a RoleBinding/ClusterRoleBinding')
      .argument('[resource...]', 'rolebinding NAME, clusterrolebinding/NAME')
      .option('--user <name>', 'a user to bind to the role (repeatable)', collect, [])
      .option('--group <name>', 'a group to bind to the role (repeatable)', collect, [])
      .option('--serviceaccount <namespace:name>', 'a service account to bind to the role (repeatable)', collect, [])
      .option('-l, --selector <selector>', 'with TYPE: the bindings matching this label selector')
      .option('--all', 'with TYPE: every binding of the type')
      .option('--local', 'change the bindings of -f files without contacting the server, and print them')
      .option('-f, --filename <file>', 'the bindings to change, from a file (- for stdin); repeatable', collect, []),
  ).action(async function (this: Command, args: string[]) {
    await withSession(this, async (session, opts) => {
      const dryRun = parseDryRun(opts.dryRun);
      const output = parseOutput(opts.output);
      if (opts.local && args.length > 0) throw new CliError('you must specify resources by --filename when --local is set.');
      if (opts.local && dryRun === 'server')
        throw new CliError('cannot specify --local and --dry-run=server - did you mean --dry-run=client?');
      if (opts.all && opts.selector) throw new CliError('cannot set --all and --selector at the same time');
      const who = { users: opts.user as string[], groups: opts.group as string[], serviceAccounts: opts.serviceaccount as string[] };
      if (who.users.length + who.groups.length + who.serviceAccounts.length === 0)
        throw new CliError('you must specify at least one value of user, group or serviceaccount');
      if (args.length === 0 && (opts.filename as string[]).length === 0)
        throw new CliError('one or more resources must be specified as <resource> <name> or <resource>/<name>');
      /** Adds the subjects a binding lacks; false when it has them all. */
      const add = (kind: string, name: string, obj: KubeObject & { subjects?: Subject[] }): boolean => {
        if (kind !== 'RoleBinding' && kind !== 'ClusterRoleBinding')
          throw new CliError(`${name} setting subjects is only supported for RoleBinding/ClusterRoleBinding`);
        const existing = obj.subjects ?? [];
        const missing = subjectsOf(who, session.namespace, kind === 'ClusterRoleBinding').filter(
          (s) => !existing.some((e) => sameSubject(e, s)),
        );
        obj.subjects = [...existing, ...missing];
        return missing.length > 0;
      };
      const manifests = readManifests(opts.filename as string[]);
      if (opts.local) {
        for (const m of manifests) {
          if (add(m.obj.kind ?? '', m.obj.metadata.name ?? '', m.obj))
            printResult(m.obj, localType(m.obj), output, 'subjects updated', 'client');
        }
        return;
      }
      const mapper = new ManifestMapper(session);
      const targets: Target[] = [];
      for (const m of manifests) targets.push({ type: await mapper.typeOf(m), name: m.obj.metadata.name ?? '' });
      if (args.length) targets.push(...(await selectTargets(session, args, { all: opts.all, selector: opts.selector })));
      for (const target of targets) {
        await mutate<KubeObject & { subjects?: Subject[] }>(session, target, (obj) => add(target.type.kind, target.name, obj), {
          dryRun,
          output,
          verb: 'subjects updated',
          unchangedVerb: 'subjects unchanged',
        });
      }
    });
  });
}
