// What every kubectl-kruise command shares, with kubectl's conventions: the kubeconfig and context
// (--kubeconfig, --context, $KUBECONFIG), the namespace (-n, else the context's, else "default"),
// resource names (TYPE/NAME or TYPE NAME, short names; the native apps kinds win over Kruise's
// for sts/ds as in kubectl), output (-o json|yaml|name|wide), --dry-run and errors that name the
// object and what to do.
import { AsyncLocalStorage } from 'node:async_hooks';
import { stringify as toYaml } from 'yaml';
import { resolveResource, hubGVR } from '../../apis/registry.ts';
import { KubeClient, PatchType } from '../../runtime/client.ts';
import fjp, { type Operation } from 'fast-json-patch';
import { toWire } from '../../runtime/wire-versions.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import { StatusError, isInvalid, isNotFound } from '../../runtime/errors.ts';
import {
  ConfigMaps,
  DaemonSets,
  Deployments,
  Jobs,
  Pods,
  ReplicaSets,
  Secrets,
  StatefulSets,
  type ResourceType,
} from '../../runtime/resources.ts';
import { selectContext, type SelectedContext } from '../../runtime/kubeconfig.ts';
import { errMessage } from '../../util/errors.ts';

/** A failure to report as `error: <message>` with exit code 1 (kubectl's convention). */
export class CliError extends Error {}

export interface GlobalOptions {
  namespace?: string;
  allNamespaces?: boolean;
  context?: string;
  kubeconfig?: string;
}

export interface Session {
  client: KubeClient;
  /** The namespace commands act in: -n, else the context's, else "default". */
  namespace: string;
  /** Whether -n was given (create commands must not silently pick another namespace). */
  namespaceExplicit: boolean;
  allNamespaces: boolean;
  close(): Promise<void>;
}

export function openSession(opts: GlobalOptions): Session {
  let selected: SelectedContext;
  try {
    selected = selectContext({ file: opts.kubeconfig, context: opts.context });
  } catch (err) {
    throw new CliError(`cannot use the kubeconfig${opts.kubeconfig ? ` ${opts.kubeconfig}` : ''}: ${errMessage(err)}`);
  }
  const client = new KubeClient({ ...selected.access, userAgent: 'kubectl-kruise' });
  return {
    client,
    namespace: opts.namespace || selected.namespace || 'default',
    namespaceExplicit: !!opts.namespace,
    allNamespaces: !!opts.allNamespaces,
    close: () => client.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// Resource types

const core = (resource: string, kind: string, namespaced = true): ResourceType =>
  Object.freeze({ group: '', version: 'v1', resource, kind, namespaced });
const Services = core('services', 'Service');
const CronJobs: ResourceType = Object.freeze({ group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', namespaced: true });
const rbac = (resource: string, kind: string, namespaced: boolean): ResourceType =>
  Object.freeze({ group: 'rbac.authorization.k8s.io', version: 'v1', resource, kind, namespaced });

/** Native types by every name kubectl accepts; they take precedence over Kruise short names. */
const NATIVE: ReadonlyArray<[readonly string[], ResourceType]> = [
  [['deployments', 'deployment', 'deploy', 'deployments.apps', 'deployment.apps'], Deployments],
  [['statefulsets', 'statefulset', 'sts', 'statefulsets.apps', 'statefulset.apps'], StatefulSets],
  [['daemonsets', 'daemonset', 'ds', 'daemonsets.apps', 'daemonset.apps'], DaemonSets],
  [['replicasets', 'replicaset', 'rs', 'replicasets.apps', 'replicaset.apps'], ReplicaSets],
  [['pods', 'pod', 'po'], Pods],
  [['services', 'service', 'svc'], Services],
  [['jobs', 'job', 'jobs.batch', 'job.batch'], Jobs],
  [['cronjobs', 'cronjob', 'cj', 'cronjobs.batch', 'cronjob.batch'], CronJobs],
  [['secrets', 'secret'], Secrets],
  [['configmaps', 'configmap', 'cm'], ConfigMaps],
  [['rolebindings', 'rolebinding', 'rolebindings.rbac.authorization.k8s.io'], rbac('rolebindings', 'RoleBinding', true)],
  [
    ['clusterrolebindings', 'clusterrolebinding', 'clusterrolebindings.rbac.authorization.k8s.io'],
    rbac('clusterrolebindings', 'ClusterRoleBinding', false),
  ],
];

/**
 * Kruise Rollout's Rollout (rollouts.kruise.io, not part of Kruise TS): kruise-tools' rollout
 * approve / undo / pause / resume and describe rollout act on it where Kruise Rollout is installed.
 * The version is the one the cluster serves (servedType), v1beta1 before v1alpha1.
 */
export const KruiseRollouts: ResourceType = Object.freeze({
  group: 'rollouts.kruise.io',
  version: 'v1beta1',
  resource: 'rollouts',
  kind: 'Rollout',
  namespaced: true,
});
const ROLLOUT_NAMES = ['rollouts', 'rollout', 'ro', 'rollouts.rollouts.kruise.io', 'rollout.rollouts.kruise.io'];
const ROLLOUT_VERSIONS = ['v1beta1', 'v1alpha1'];

/** The type at the version the cluster serves (Kruise Rollout's), or why the API is missing. */
export async function servedType(session: Session, type: ResourceType): Promise<ResourceType> {
  if (type.group !== KruiseRollouts.group) return type;
  for (const version of ROLLOUT_VERSIONS) {
    const list = await session.client.discoverResources(type.group, version).catch((err: unknown) => {
      throw new CliError(describeError(err));
    });
    if (list?.resources.some((r) => r.name === type.resource)) return Object.freeze({ ...type, version });
  }
  throw new CliError(
    `the server doesn't have a resource type "${type.resource}": Kruise Rollout (rollouts.kruise.io) is not installed in this cluster`,
  );
}

/** Kruise names kruise-tools users type that are not CRD names. */
const KRUISE_ALIASES: Record<string, string> = {
  advancedstatefulset: 'statefulsets.apps.kruise.io',
  advancedstatefulsets: 'statefulsets.apps.kruise.io',
  advanceddaemonset: 'daemonsets.apps.kruise.io',
  advanceddaemonsets: 'daemonsets.apps.kruise.io',
};

export function resolveType(name: string): ResourceType {
  const lower = name.toLowerCase();
  const native = NATIVE.find(([names]) => names.includes(lower));
  if (native) return native[1];
  if (ROLLOUT_NAMES.includes(lower)) return KruiseRollouts;
  const def = resolveResource(KRUISE_ALIASES[lower] ?? lower);
  if (!def) throw new CliError(`the server doesn't have a resource type "${name}"`);
  const gvr = hubGVR(def);
  return Object.freeze({
    group: gvr.group,
    version: gvr.version,
    resource: gvr.resource,
    kind: def.kind,
    namespaced: def.scope === 'Namespaced',
  });
}

/** kubectl's name for a type: `cloneset.apps.kruise.io`, `deployment.apps`, `pod`. */
export function typeName(type: ResourceType): string {
  return type.group ? `${type.kind.toLowerCase()}.${type.group}` : type.kind.toLowerCase();
}

/** The plural form kubectl uses in API errors: `clonesets.apps.kruise.io "x"`. */
export function pluralName(type: ResourceType): string {
  return type.group ? `${type.resource}.${type.group}` : type.resource;
}

export const isKruise = (type: ResourceType) => type.group === 'apps.kruise.io';

export interface Target {
  type: ResourceType;
  name: string;
}

/** `TYPE/NAME [TYPE/NAME…]` or `TYPE NAME [NAME…]`, as kubectl reads resource arguments. */
export function parseTargets(args: readonly string[]): Target[] {
  if (args.length === 0) throw new CliError('you must specify the type of resource and its name, e.g. cloneset/web or cloneset web');
  if (args[0]!.includes('/')) {
    return args.map((arg) => {
      const [type, name, ...rest] = arg.split('/');
      if (!type || !name || rest.length)
        throw new CliError(`arguments in resource/name form must have a single resource and name: "${arg}"`);
      return { type: resolveType(type), name };
    });
  }
  const [type, ...names] = args;
  if (names.length === 0) throw new CliError(`you must specify the name of the ${type} (e.g. ${type}/NAME)`);
  const rt = resolveType(type!);
  return names.map((name) => ({ type: rt, name }));
}

export function parseTarget(args: readonly string[]): Target {
  const targets = parseTargets(args);
  if (targets.length !== 1) throw new CliError('exactly one resource is expected (TYPE/NAME)');
  return targets[0]!;
}

/** Errors from the API server as kubectl words them, with what to do for the common ones. */
export function describeError(err: unknown, target?: Target): string {
  if (err instanceof CliError) return err.message;
  if (isNotFound(err) && target) {
    return `${pluralName(target.type)} "${target.name}" not found (check the name, and the namespace with -n)`;
  }
  if (err instanceof StatusError) {
    if (err.code === 401) return `${err.message} (check the credentials of your kubeconfig context)`;
    if (err.code === 403) return `${err.message} (your user lacks the RBAC permission for this)`;
    return err.message;
  }
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e?.code ?? e?.cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT') {
    return `the connection to the server was refused (${code}) - did you specify the right host or port, and is the cluster running?`;
  }
  return errMessage(err);
}

export async function getTarget<T extends KubeObject>(session: Session, target: Target): Promise<T> {
  const type = await servedType(session, target.type);
  try {
    return await session.client.get<T>(type, target.name, { namespace: ns(session, type) });
  } catch (err) {
    throw new CliError(describeError(err, target));
  }
}

export const ns = (session: Session, type: ResourceType) => (type.namespaced ? session.namespace : undefined);

// ---------------------------------------------------------------------------------------------
// Output

export type OutputFormat = 'json' | 'yaml' | 'name' | 'wide' | '';

export function parseOutput(value: string | undefined, allowed: readonly OutputFormat[] = ['json', 'yaml', 'name']): OutputFormat {
  const v = (value ?? '') as OutputFormat;
  if (v !== '' && !allowed.includes(v)) {
    throw new CliError(`unable to match a printer suitable for the output format "${value}", allowed formats are: ${allowed.join(',')}`);
  }
  return v;
}

export type DryRun = 'none' | 'client' | 'server';

export function parseDryRun(value: string | boolean | undefined): DryRun {
  if (value === undefined || value === false || value === 'none') return 'none';
  if (value === true || value === 'client') return 'client';
  if (value === 'server') return 'server';
  throw new CliError(`Invalid dry-run value (${String(value)}). Must be "none", "server", or "client".`);
}

/**
 * Where a command's output goes: the process's stdout/stderr, or (a run inside another program,
 * e.g. the tests, see runKubectlKruise) buffers of that one run. Concurrent runs each keep their own.
 */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  isTTY: boolean;
  columns?: number;
  /** The exit code a command chose other than by failing (exec: the remote command's). */
  exitCode?: number;
}

const processIO: CliIO = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  get isTTY() {
    return !!process.stdout.isTTY;
  },
  get columns() {
    return process.stdout.columns;
  },
};
const ioOfRun = new AsyncLocalStorage<CliIO>();

export const cliIO = (): CliIO => ioOfRun.getStore() ?? processIO;
/** Whether output goes to the process's own stdout/stderr (a child process may then share them). */
export const isProcessIO = (io: CliIO): boolean => io === processIO;
export const withCliIO = <T>(io: CliIO, body: () => T): T => ioOfRun.run(io, body);

export function write(text: string): void {
  cliIO().out(text.endsWith('\n') ? text : `${text}\n`);
}

/** Prints an object as -o asks, or kubectl's `kind/name <verb>` line. */
export function printResult(obj: KubeObject, type: ResourceType, output: OutputFormat, verb: string, dryRun: DryRun = 'none'): void {
  if (output === 'json') return write(JSON.stringify(obj, null, 4));
  if (output === 'yaml') return write(toYaml(obj));
  const name = `${typeName(type)}/${obj.metadata.name}`;
  if (output === 'name') return write(name);
  write(`${name} ${verb}${dryRun === 'none' ? '' : ` (${dryRun} dry run)`}`);
}

/**
 * `obj` (read through the client, which hands the code its own version of a kind) at the version
 * the cluster serves, as kubectl prints it: a CloneSet on a cluster serving OpenKruise v1.8's
 * versions prints as apps.kruise.io/v1alpha1 with its field paths.
 */
export async function asServed<T>(session: Session, type: ResourceType, obj: T): Promise<T> {
  return toWire(type, await session.client.servedVersion(type), obj);
}

/** Prints data for scripts (-o json|yaml) or returns false when the caller prints text. */
export function printData(data: unknown, output: OutputFormat): boolean {
  if (output === 'json') write(JSON.stringify(data, null, 4));
  else if (output === 'yaml') write(toYaml(data));
  else return false;
  return true;
}

/** Left-aligned columns separated by three spaces, as kubectl's tables. */
export function table(rows: ReadonlyArray<readonly string[]>): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Writes

export interface MutateOptions {
  dryRun: DryRun;
  output: OutputFormat;
  /** The past-tense verb kubectl prints: "image updated", "paused"… */
  verb: string;
  /** Printed instead of verb when the mutation changes nothing ("already paused"). */
  unchangedVerb?: string;
}

/** An object's content: what `mutate` may change (metadata and status are not its to write). */
const content = (obj: KubeObject) => Object.fromEntries(Object.entries(obj).filter(([key]) => key !== 'metadata' && key !== 'status'));

/** How many times `mutate` writes over a spec that moved before it gives up. */
const SPEC_MOVED_ATTEMPTS = 6;

/**
 * Read-modify-write of one object's content (a spec; a RoleBinding's subjects): `change` edits a
 * copy (at the version the code works with) and returns false when there is nothing to do. It goes
 * as a JSON patch of the change whose first operation tests the generation read: written only over
 * the spec read, yet a status write (a rollout makes many a second) or a label cannot make it fail,
 * as a write naming the resourceVersion read would. The patch is made between the two copies as the
 * cluster serves them (a CloneSet's paused is `updateStrategy.paused` at v1alpha1), and sent at that
 * version, so a conversion's round trip never touches the fields the command left alone.
 */
export async function mutate<T extends KubeObject>(
  session: Session,
  target: Target,
  change: (obj: T) => boolean | void,
  opts: MutateOptions,
): Promise<void> {
  const type = await servedType(session, target.type);
  const wire = await session.client.servedVersion(type);
  let refused: { err: unknown; generation: number | undefined } | undefined;
  for (let attempt = 0; ; attempt++) {
    const current = await getTarget<T>(session, target);
    if (refused) {
      // A failed test answers as any refusal does (422 Invalid, no details): the read tells them apart.
      if (current.metadata.generation === refused.generation) throw new CliError(describeError(refused.err, target));
      if (attempt === SPEC_MOVED_ATTEMPTS) {
        throw new CliError(
          `Operation cannot be fulfilled on ${pluralName(target.type)} "${target.name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      }
    }
    const next = structuredClone(current);
    if (change(next) === false) {
      printResult(toWire(type, wire, current), target.type, opts.output, opts.unchangedVerb ?? `${opts.verb} (no change)`);
      return;
    }
    const served = toWire(type, wire, next);
    if (opts.dryRun === 'client') return printResult(served, target.type, opts.output, opts.verb, opts.dryRun);
    const { generation } = current.metadata;
    const patch: Operation[] = [
      ...(generation === undefined ? [] : [{ op: 'test' as const, path: '/metadata/generation', value: generation }]),
      ...fjp.compare(content(toWire(type, wire, current)), content(served)),
    ];
    try {
      const written = await session.client.patch<T>({ ...type, version: wire }, target.name, patch, {
        namespace: ns(session, target.type),
        patchType: PatchType.JSON,
        dryRun: opts.dryRun === 'server',
        fieldManager: 'kubectl-kruise',
      });
      return printResult(written, target.type, opts.output, opts.verb, opts.dryRun);
    } catch (err) {
      if (!isInvalid(err)) throw new CliError(describeError(err, target));
      refused = { err, generation };
    }
  }
}
