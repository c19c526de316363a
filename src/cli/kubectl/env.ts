// `set env`'s pure parts, with kubectl's (and kruise-tools') rules and messages: which arguments are
// resources and which are changes, KEY=VALUE / KEY- / `-` (stdin) parsing, variables from a Secret or
// ConfigMap (--from, --keys, --prefix), the merge into a container's env, --overwrite=false, and the
// --list text.
import type { Container } from '../../apis/core.ts';
import { CliError } from './session.ts';

export type EnvVar = NonNullable<Container['env']>[number];
type EnvSource = NonNullable<EnvVar['valueFrom']>;

const isEnvArgument = (s: string) => /^.+=/s.test(s) || s.endsWith('-');

/** Resources come first, then the changes; a resource after a change is refused (kubectl). */
export function splitEnvironmentFromResources(args: readonly string[]): { resources: string[]; envArgs: string[] } {
  const first = args.findIndex(isEnvArgument);
  if (first < 0) return { resources: [...args], envArgs: [] };
  const envArgs = args.slice(first);
  if (!envArgs.every(isEnvArgument)) {
    throw new CliError(`all resources must be specified before environment changes: ${args.join(' ')}`);
  }
  return { resources: args.slice(0, first), envArgs };
}

/** Kubernetes' IsEnvVarName: letters, digits, `_`, `-`, `.`; not starting with a digit. */
function envNameErrors(name: string): string[] {
  if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name)) {
    return [
      "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnv1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
    ];
  }
  return [];
}

/** The variables of `env` text read from stdin: KEY=VALUE lines, `#` comments. */
export function readEnv(text: string): EnvVar[] {
  const env: EnvVar[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.includes('#') ? raw.slice(0, raw.indexOf('#')) : raw;
    const eq = line.indexOf('=');
    if (eq >= 0) env.push({ name: line.slice(0, eq), value: line.slice(eq + 1) });
  }
  return env;
}

/** KEY=VALUE (set), KEY- (remove), `-` (KEY=VALUE lines from stdin). */
export function parseEnv(specs: readonly string[], stdin: () => string): { env: EnvVar[]; remove: string[] } {
  const env: EnvVar[] = [];
  const remove: string[] = [];
  for (const spec of specs) {
    if (spec === '-') env.push(...readEnv(stdin()));
    else if (spec.includes('=')) {
      const eq = spec.indexOf('=');
      const name = spec.slice(0, eq);
      const errs = envNameErrors(name);
      if (errs.length) throw new CliError(`"${name}" is not a valid key name: ${errs.join(';')}`);
      env.push({ name, value: spec.slice(eq + 1) });
    } else if (spec.endsWith('-')) remove.push(spec.slice(0, -1));
    else throw new CliError(`unknown environment variable: ${spec}`);
  }
  if (remove.some((r) => env.some((e) => e.name === r))) {
    throw new CliError('can not both modify and remove the same environment variable in the same command');
  }
  return { env, remove };
}

/** A key of a Secret or ConfigMap as a variable name: upper case, other characters than [a-zA-Z0-9_] as `_`. */
export const keyToEnvName = (key: string) => key.replace(/[^a-zA-Z0-9_]/g, '_').toUpperCase();

/** The variables --from imports: one reference per key (only --keys when given), in key order. */
export function envFrom(kind: string, name: string, data: Record<string, string> | undefined, keys: readonly string[]): EnvVar[] {
  if (kind !== 'Secret' && kind !== 'ConfigMap') throw new CliError('unsupported resource specified in --from');
  return Object.keys(data ?? {})
    .filter((k) => keys.length === 0 || keys.includes(k))
    .sort()
    .map((key) => ({
      name: keyToEnvName(key),
      valueFrom: kind === 'Secret' ? { secretKeyRef: { name, key } } : { configMapKeyRef: { name, key } },
    }));
}

/** --overwrite=false: a change of a variable that already has another value is refused. */
export function validateNoOverwrites(existing: readonly EnvVar[], env: readonly EnvVar[]): void {
  for (const e of env) {
    const current = existing.find((x) => x.name === e.name);
    if (current && current.value !== e.value) {
      throw new CliError(`'${current.name}' already has a value (${current.value ?? ''}), and --overwrite is false`);
    }
  }
}

/** The container's env after the change: removed ones gone, changed ones in place, new ones appended. */
export function updateEnv(existing: readonly EnvVar[], env: readonly EnvVar[], remove: readonly string[]): EnvVar[] {
  const covered = new Set(remove);
  const out: EnvVar[] = [];
  for (const e of existing) {
    if (covered.has(e.name)) continue;
    const newer = env.find((x) => x.name === e.name);
    if (newer) covered.add(e.name);
    out.push(newer ?? e);
  }
  for (const e of env) {
    if (covered.has(e.name)) continue;
    covered.add(e.name);
    out.push(e);
  }
  return out;
}

/** kubectl's description of a reference, for --list without --resolve. */
export function envRefString(from: EnvSource): string {
  if (from.configMapKeyRef) return `configmap ${from.configMapKeyRef.name}, key ${from.configMapKeyRef.key}`;
  if (from.secretKeyRef) return `secret ${from.secretKeyRef.name}, key ${from.secretKeyRef.key}`;
  if (from.fieldRef) return `field path ${from.fieldRef.fieldPath}`;
  if (from.resourceFieldRef) {
    const prefix = from.resourceFieldRef.containerName ? `${from.resourceFieldRef.containerName}/` : '';
    return `resource field ${prefix}${from.resourceFieldRef.resource}`;
  }
  return 'invalid valueFrom';
}

/** Looks a reference's value up (a Secret's or ConfigMap's key); throws what kubectl says when it cannot. */
export type RefResolver = (from: EnvSource) => Promise<string>;

/**
 * --list: `# Kind name, container c`, then NAME=VALUE per variable, a reference as `# NAME from …`
 * unless --resolve looked it up. Returns the text and the lookup failures (kubectl's stderr lines).
 */
export async function listEnv(
  kind: string,
  name: string,
  container: Pick<Container, 'name' | 'env'>,
  resolve: RefResolver | undefined,
): Promise<{ text: string; errors: string[] }> {
  const lines = [`# ${kind} ${name}, container ${container.name}`];
  const failures = new Map<string, string[]>();
  for (const e of container.env ?? []) {
    if (!e.valueFrom) {
      lines.push(`${e.name}=${e.value ?? ''}`);
      continue;
    }
    if (resolve) {
      try {
        lines.push(`${e.name}=${await resolve(e.valueFrom)}`);
        continue;
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        failures.set(msg, [...(failures.get(msg) ?? []), e.name]);
      }
    }
    lines.push(`# ${e.name} from ${envRefString(e.valueFrom)}`);
  }
  const errors = [...failures].map(([msg, vars]) => `error retrieving reference for ${[...vars].sort().join(', ')}: ${msg}`).sort();
  return { text: `${lines.join('\n')}\n`, errors };
}
