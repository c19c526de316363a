// Kubeconfig and in-cluster credentials, read with `js-yaml`. @kubernetes/client-node's
// KubeConfig is loaded only for users that need its authenticators (exec plugins, auth providers):
// importing it pulls in its generated API (≈80 MiB of RSS and 45 MiB of heap), more than the whole
// manager needs before its caches fill.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type * as JsYaml from 'js-yaml';

// The parser is required on the first kubeconfig file read: a manager in a pod (service account,
// no file) never loads it. js-yaml (the parser @kubernetes/client-node reads kubeconfigs with), not
// the `yaml` package the rest of the code writes YAML with: one file against 72 modules, 12 ms
// against 45 ms to load and parse a kubeconfig, all of it before the webhook server can listen
// (docs/benchmarks.md, eighteenth pass).
const parseYAML = (text: string): unknown => (createRequire(import.meta.url)('js-yaml') as typeof JsYaml).load(text);

export interface TLSOptions {
  ca?: Buffer | string;
  cert?: Buffer | string;
  key?: Buffer | string;
  /** SNI / name to verify, when it differs from the server's host. */
  servername?: string;
  insecureSkipVerify?: boolean;
}

/** Returns the headers (Authorization, Impersonate-User…) to send with one request. */
export type AuthHeaders = () => Promise<Record<string, string>> | Record<string, string>;

/** Where to connect and how to authenticate: what a KubeClient needs from a kubeconfig. */
export interface ClusterAccess {
  server: string;
  tls: TLSOptions;
  auth?: AuthHeaders;
}

interface NamedCluster {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
}
interface NamedUser {
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  as?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  exec?: unknown;
  'auth-provider'?: unknown;
}
interface Named<T> {
  name: string;
  /** The directory of the file it came from: relative paths in it are relative to that file. */
  dir: string;
  value: T;
}
interface KubeconfigFiles {
  /** The files read, in order (for the authenticator fallback). */
  files: string[];
  clusters: Array<Named<NamedCluster>>;
  users: Array<Named<NamedUser>>;
  contexts: Array<Named<{ cluster?: string; user?: string; namespace?: string }>>;
  currentContext?: string;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Projected service-account tokens rotate; re-reading the file once a minute follows them (client-go's period). */
const TOKEN_FILE_REREAD_MS = 60_000;

/** In a pod with a service account: the API server is $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT. */
export function inCluster(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return !!env.KUBERNETES_SERVICE_HOST && !!env.KUBERNETES_SERVICE_PORT && fs.existsSync(path.join(SERVICE_ACCOUNT_DIR, 'token'));
}

/** The current context of one kubeconfig file. */
export function accessFromKubeconfigFile(file: string): ClusterAccess {
  return accessFromFiles(readKubeconfigs([file]));
}

/** $KUBECONFIG (a list, merged: the first file to set a name wins), then ~/.kube/config, then the in-cluster service account. */
export function accessFromDefault(): ClusterAccess {
  return selectContext().access;
}

/** A context chosen as kubectl chooses it: where to connect, and the context's namespace. */
export interface SelectedContext {
  access: ClusterAccess;
  /** The context's namespace (in a pod: the service account's), if it names one. */
  namespace?: string;
}

/**
 * kubectl's choice of cluster: the file (--kubeconfig), else $KUBECONFIG, else ~/.kube/config, else
 * the in-cluster service account; the named context (--context), else the current one.
 */
export function selectContext(opts: { file?: string; context?: string } = {}): SelectedContext {
  const fromEnv = (process.env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  const home = path.join(os.homedir(), '.kube', 'config');
  const files = opts.file ? [opts.file] : fromEnv.length ? fromEnv.filter((f) => fs.existsSync(f)) : fs.existsSync(home) ? [home] : [];
  if (files.length || opts.file || fromEnv.length) return contextOf(readKubeconfigs(files), opts.context);
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (host && port && inCluster() && !opts.context) {
    const namespaceFile = path.join(SERVICE_ACCOUNT_DIR, 'namespace');
    return {
      access: {
        server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
        tls: { ca: fs.readFileSync(path.join(SERVICE_ACCOUNT_DIR, 'ca.crt')) },
        auth: tokenFileAuth(path.join(SERVICE_ACCOUNT_DIR, 'token')),
      },
      namespace: fs.existsSync(namespaceFile) ? fs.readFileSync(namespaceFile, 'utf8').trim() : undefined,
    };
  }
  throw new Error('no kubeconfig: set KUBECONFIG or --kubeconfig, or run in a pod with a service account');
}

function readKubeconfigs(files: string[]): KubeconfigFiles {
  const out: KubeconfigFiles = { files, clusters: [], users: [], contexts: [] };
  for (const file of files) {
    const doc = (parseYAML(fs.readFileSync(file, 'utf8')) ?? {}) as {
      clusters?: Array<{ name: string; cluster?: NamedCluster }>;
      users?: Array<{ name: string; user?: NamedUser }>;
      contexts?: Array<{ name: string; context?: { cluster?: string; user?: string; namespace?: string } }>;
      'current-context'?: string;
    };
    const dir = path.dirname(path.resolve(file));
    const add = <T>(into: Array<Named<T>>, name: string, value: T | undefined) => {
      if (!into.some((n) => n.name === name)) into.push({ name, dir, value: value ?? ({} as T) });
    };
    for (const c of doc.clusters ?? []) add(out.clusters, c.name, c.cluster);
    for (const u of doc.users ?? []) add(out.users, u.name, u.user);
    for (const c of doc.contexts ?? []) add(out.contexts, c.name, c.context);
    out.currentContext ||= doc['current-context'];
  }
  return out;
}

function accessFromFiles(cfg: KubeconfigFiles): ClusterAccess {
  return contextOf(cfg).access;
}

function contextOf(cfg: KubeconfigFiles, name?: string): SelectedContext {
  const context = cfg.contexts.find((c) => c.name === (name ?? cfg.currentContext));
  if (!context) {
    throw new Error(name ? `context "${name}" does not exist` : `kubeconfig ${cfg.files.join(path.delimiter)}: no current context`);
  }
  const cluster = cfg.clusters.find((c) => c.name === context.value.cluster);
  if (!cluster?.value.server) throw new Error(`kubeconfig context ${context.name}: no cluster with a server`);
  if (cluster.value['proxy-url']) throw new Error('kubeconfig proxy-url is not supported');
  const user = cfg.users.find((u) => u.name === context.value.user);
  const c = cluster.value;
  const u = user?.value ?? {};
  const tls: TLSOptions = {
    ca: fileOrData(cluster.dir, c['certificate-authority'], c['certificate-authority-data']),
    cert: user && fileOrData(user.dir, u['client-certificate'], u['client-certificate-data']),
    key: user && fileOrData(user.dir, u['client-key'], u['client-key-data']),
    servername: c['tls-server-name'],
    insecureSkipVerify: c['insecure-skip-tls-verify'],
  };
  return { access: { server: c.server!, tls, auth: user && authFor(user, cfg.files, context.name) }, namespace: context.value.namespace };
}

function fileOrData(dir: string, file: string | undefined, data: string | undefined): Buffer | undefined {
  if (data) return Buffer.from(data, 'base64');
  if (file) return fs.readFileSync(path.resolve(dir, file));
  return undefined;
}

function authFor(user: Named<NamedUser>, files: string[], context: string): AuthHeaders | undefined {
  const u = user.value;
  const extra: Record<string, string> = u.as ? { 'impersonate-user': u.as } : {};
  if (u.exec || u['auth-provider']) return pluginAuth(files, context, extra);
  if (u.token) return constant({ authorization: `Bearer ${u.token}`, ...extra });
  if (u.tokenFile) {
    const fromFile = tokenFileAuth(path.resolve(user.dir, u.tokenFile));
    return () => ({ ...(fromFile() as Record<string, string>), ...extra });
  }
  if (u.username) {
    const basic = Buffer.from(`${u.username}:${u.password ?? ''}`).toString('base64');
    return constant({ authorization: `Basic ${basic}`, ...extra });
  }
  return Object.keys(extra).length ? constant(extra) : undefined;
}

const constant =
  (headers: Record<string, string>): AuthHeaders =>
  () =>
    headers;

function tokenFileAuth(file: string): AuthHeaders {
  let token = '';
  let readAt = -Infinity;
  return () => {
    if (Date.now() - readAt >= TOKEN_FILE_REREAD_MS) {
      token = fs.readFileSync(file, 'utf8').trim();
      readAt = Date.now();
    }
    return { authorization: `Bearer ${token}` };
  };
}

/** Exec plugins and auth providers refresh credentials themselves: client-node's KubeConfig asks them on every request. */
function pluginAuth(files: string[], context: string, extra: Record<string, string>): AuthHeaders {
  let loaded: Promise<{ applyToHTTPSOptions(o: { headers?: Record<string, string> }): Promise<void> }> | undefined;
  return async () => {
    loaded ??= import('@kubernetes/client-node').then(({ KubeConfig }) => {
      const kc = new KubeConfig();
      if (files.length === 1) kc.loadFromFile(files[0]);
      else kc.loadFromDefault();
      kc.setCurrentContext(context);
      return kc;
    });
    const opts: { headers?: Record<string, string> } = {};
    await (await loaded).applyToHTTPSOptions(opts);
    return { ...opts.headers, ...extra };
  };
}
