// Kubelet-style image credential provider plugins (KEP-2133), which kruise-daemon takes since
// OpenKruise v1.7 (`--plugin-config-file`, `--plugin-bin-dir`; chart `daemon.credentialProvider`):
// for registries no pull secret covers, e.g. ECR, GCR or ACR through the node's cloud identity.
//
// The config is the kubelet's CredentialProviderConfig (kubelet.config.k8s.io/v1, v1beta1 or
// v1alpha1): providers, each a binary `<bin dir>/<name>`, the images it serves (`matchImages`,
// globs per host label, an optional port and path prefix), a default cache duration, the protocol
// version, and extra args and env. For a pull, every provider whose patterns match is executed with
// a CredentialProviderRequest on stdin; its CredentialProviderResponse's `auth` entries that match
// the image become credentials, cached per image, registry or globally for the response's (or the
// provider's default) duration. As upstream's daemon, the plugins are asked about the registry
// (`ParseRegistry` of the image), and their credentials follow the pull secrets'.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { parseDuration } from '../../util/duration.ts';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../runtime/log.ts';
import type { PullAuth } from '../runtime/types.ts';

const CONFIG_API_VERSIONS = ['kubelet.config.k8s.io/v1', 'kubelet.config.k8s.io/v1beta1', 'kubelet.config.k8s.io/v1alpha1'];
const PLUGIN_API_VERSIONS = [
  'credentialprovider.kubelet.k8s.io/v1',
  'credentialprovider.kubelet.k8s.io/v1beta1',
  'credentialprovider.kubelet.k8s.io/v1alpha1',
];
/** How long a plugin may take (the kubelet's exec timeout). */
const PLUGIN_TIMEOUT_MS = 60_000;

export interface CredentialProvider {
  name: string;
  matchImages: string[];
  /** ms */
  defaultCacheDuration: number;
  apiVersion: string;
  args: string[];
  env: Array<{ name: string; value: string }>;
}

/** The providers of a CredentialProviderConfig document; throws on what the kubelet would refuse. */
export function parseCredentialProviderConfig(text: string): CredentialProvider[] {
  const doc = parse(text) as {
    apiVersion?: string;
    kind?: string;
    providers?: Array<Partial<Record<keyof CredentialProvider, unknown>> & { defaultCacheDuration?: string }>;
  } | null;
  if (!doc || doc.kind !== 'CredentialProviderConfig' || !CONFIG_API_VERSIONS.includes(doc.apiVersion ?? ''))
    throw new Error(`not a CredentialProviderConfig (${CONFIG_API_VERSIONS.join(', ')})`);
  if (!Array.isArray(doc.providers) || !doc.providers.length) throw new Error('at least 1 item in plugins is required');
  const seen = new Set<string>();
  return doc.providers.map((p, i) => {
    const where = `providers[${i}]`;
    const name = typeof p.name === 'string' ? p.name : '';
    if (!name || name === '.' || name === '..' || /[/\\:]/.test(name))
      throw new Error(`${where}.name ${JSON.stringify(name)} is not a file name`);
    if (seen.has(name)) throw new Error(`${where}.name ${name} is duplicated`);
    seen.add(name);
    if (!Array.isArray(p.matchImages) || !p.matchImages.length) throw new Error(`${where}.matchImages is required`);
    if (typeof p.defaultCacheDuration !== 'string') throw new Error(`${where}.defaultCacheDuration is required`);
    const defaultCacheDuration = parseDuration(p.defaultCacheDuration);
    if (defaultCacheDuration < 0) throw new Error(`${where}.defaultCacheDuration must be greater than or equal to 0`);
    const apiVersion = typeof p.apiVersion === 'string' ? p.apiVersion : '';
    if (!PLUGIN_API_VERSIONS.includes(apiVersion)) throw new Error(`${where}.apiVersion must be one of ${PLUGIN_API_VERSIONS.join(', ')}`);
    return {
      name,
      matchImages: p.matchImages.map(String),
      defaultCacheDuration,
      apiVersion,
      args: Array.isArray(p.args) ? p.args.map(String) : [],
      env: Array.isArray(p.env)
        ? (p.env as Array<{ name: string; value: string }>).map((e) => ({ name: String(e.name), value: String(e.value ?? '') }))
        : [],
    };
  });
}

interface ParsedURL {
  hostLabels: string[];
  port: string;
  path: string;
}

/** `[scheme://]host[:port][/path]` → its parts (no URL class: it would escape a pattern's globs). */
function parseTarget(s: string): ParsedURL {
  const rest = s.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const colon = authority.lastIndexOf(':');
  const host = colon < 0 ? authority : authority.slice(0, colon);
  return {
    hostLabels: host.toLowerCase().split('.'),
    port: colon < 0 ? '' : authority.slice(colon + 1),
    path: slash < 0 ? '' : rest.slice(slash),
  };
}

/** A glob over one host label: `*` any run of characters, `?` one, `[...]` a class (Go's path.Match). */
function labelMatches(pattern: string, label: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '[^.]*')
    .replace(/\?/g, '[^.]');
  return new RegExp(`^${re}$`).test(label);
}

/**
 * Whether `target` (an image or registry) is matched by `pattern` (a matchImages entry or an auth
 * key), as the kubelet's URLsMatchStr: the same number of host labels, each matching its glob; the
 * same port; the pattern's path a prefix of the target's.
 */
export function imageMatches(pattern: string, target: string): boolean {
  const [g, t] = [parseTarget(pattern), parseTarget(target)];
  if (g.hostLabels.length !== t.hostLabels.length || g.port !== t.port) return false;
  if (!g.hostLabels.every((l, i) => labelMatches(l, t.hostLabels[i]!))) return false;
  return t.path.startsWith(g.path);
}

interface CacheEntry {
  auths: PullAuth[];
  expiresAt: number;
}

interface PluginResponse {
  kind?: string;
  apiVersion?: string;
  cacheKeyType?: string;
  cacheDuration?: string;
  auth?: Record<string, { username?: string; password?: string }>;
}

export type PluginRunner = (binary: string, args: string[], env: NodeJS.ProcessEnv, stdin: string) => Promise<string>;

/** Runs a plugin: its stdout, or an error with its stderr. */
export const execPlugin: PluginRunner = (binary, args, env, stdin) =>
  new Promise((resolve, reject) => {
    const child = spawn(binary, args, { env, stdio: ['pipe', 'pipe', 'pipe'], timeout: PLUGIN_TIMEOUT_MS });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`${path.basename(binary)} exited ${signal ?? code}: ${Buffer.concat(err).toString('utf8').trim()}`));
    });
    child.stdin.on('error', () => {}); // a plugin that exits without reading stdin
    child.stdin.end(stdin);
  });

export class CredentialProviders {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly providers: readonly CredentialProvider[],
    private readonly binDir: string,
    private readonly deps: { clock: Pick<Clock, 'now'>; logger: Logger; run?: PluginRunner },
  ) {}

  /**
   * `--plugin-config-file` and `--plugin-bin-dir`: undefined (one log line) when there is no config
   * file, as upstream's daemon; a config that cannot be used fails the start.
   */
  static load(configFile: string, binDir: string, deps: { clock: Pick<Clock, 'now'>; logger: Logger }): CredentialProviders | undefined {
    if (!existsSync(configFile)) {
      deps.logger.info({ configFile }, 'no credential provider plugin config file, skipping');
      return undefined;
    }
    let providers: CredentialProvider[];
    try {
      providers = parseCredentialProviderConfig(readFileSync(configFile, 'utf8'));
    } catch (err) {
      throw new Error(`credential provider plugin config ${configFile}: ${(err as Error).message}`, { cause: err });
    }
    for (const p of providers) {
      if (!existsSync(path.join(binDir, p.name))) throw new Error(`credential provider plugin ${p.name} not found in ${binDir}`);
    }
    deps.logger.info({ configFile, plugins: providers.map((p) => p.name) }, 'registered credential provider plugins');
    return new CredentialProviders(providers, binDir, deps);
  }

  /** Credentials for the registry from every plugin that serves it (a failing plugin gives none). */
  async authsFor(registry: string): Promise<PullAuth[]> {
    const out: PullAuth[] = [];
    for (const p of this.providers) {
      if (!p.matchImages.some((m) => imageMatches(m, registry))) continue;
      try {
        out.push(...(await this.fromProvider(p, registry)));
      } catch (err) {
        this.deps.logger.error({ plugin: p.name, registry, err: (err as Error).message }, 'credential provider plugin failed');
      }
    }
    return out;
  }

  private async fromProvider(p: CredentialProvider, image: string): Promise<PullAuth[]> {
    const now = this.deps.clock.now();
    for (const key of [`${p.name} image ${image}`, `${p.name} registry ${hostOf(image)}`, `${p.name} global`]) {
      const hit = this.cache.get(key);
      if (hit && hit.expiresAt > now) return hit.auths;
      if (hit) this.cache.delete(key);
    }
    const request = JSON.stringify({ apiVersion: p.apiVersion, kind: 'CredentialProviderRequest', image });
    const env = { ...process.env, ...Object.fromEntries(p.env.map((e) => [e.name, e.value])) };
    const stdout = await (this.deps.run ?? execPlugin)(path.join(this.binDir, p.name), p.args, env, request);
    const res = JSON.parse(stdout) as PluginResponse;
    if (res.kind !== 'CredentialProviderResponse')
      throw new Error(`kind was ${JSON.stringify(res.kind)}, expected CredentialProviderResponse`);
    if (res.apiVersion !== p.apiVersion)
      throw new Error(`apiVersion ${JSON.stringify(res.apiVersion)} does not match the request's ${p.apiVersion}`);
    // More specific keys first, as the kubelet's keyring orders its matches.
    const auths = Object.entries(res.auth ?? {})
      .filter(([pattern]) => imageMatches(pattern, image))
      .sort(([a], [b]) => b.length - a.length)
      .map(([, c]): PullAuth => ({ serverAddress: hostOf(image), username: c.username ?? '', password: c.password ?? '' }));
    const ttl = res.cacheDuration !== undefined ? parseDuration(res.cacheDuration) : p.defaultCacheDuration;
    if (ttl > 0) {
      const key =
        res.cacheKeyType === 'Global'
          ? `${p.name} global`
          : res.cacheKeyType === 'Registry'
            ? `${p.name} registry ${hostOf(image)}`
            : `${p.name} image ${image}`;
      this.cache.set(key, { auths, expiresAt: now + ttl });
    }
    return auths;
  }
}

function hostOf(image: string): string {
  const { hostLabels, port } = parseTarget(image);
  return `${hostLabels.join('.')}${port ? `:${port}` : ''}`;
}
