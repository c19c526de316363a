// Webhook certificates and the objects that point the API server at the webhook server, as
// kruise-manager manages them (pkg/webhook/util/{writer,configuration,crd,controller}):
//
// - self-managed certs: a CA and a serving certificate kept in the Secret kruise-webhook-certs of
//   the manager's namespace (keys ca-cert.pem, ca-key.pem, cert.pem/tls.crt, key.pem/tls.key),
//   created when absent and re-issued when invalid or close to expiry; every replica copies them
//   into its cert dir, which the HTTPS server watches;
// - external certs (feature gate EnableExternalCerts, e.g. cert-manager): the Secret (keys ca.crt,
//   tls.crt, tls.key) or a mounted directory is only read, and the webhook configurations' caBundle
//   is checked rather than written, since the external injector owns it;
// - the caBundle and client config of the Mutating/ValidatingWebhookConfigurations and of the
//   conversion webhook of every apps.kruise.io / policy.kruise.io CRD, in one of two client modes:
//   URL (https://host:port/path, for a manager running outside the cluster, e.g. on 127.0.0.1) or
//   Service (kruise-system/kruise-webhook-service, for a manager running in a pod).

import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { createCA, issueCert, loadCA } from '../../util/pki.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { LabelSelector, Secret } from '../../apis/core-objects.ts';
import { APPS_GROUP, POLICY_GROUP } from '../../apis/constants.ts';
import type { Operation, WebhookRegistration } from './types.ts';
import {
  CustomResourceDefinitions, MutatingWebhookConfigurations, Secrets, ValidatingWebhookConfigurations,
  isAlreadyExists, isNotFound, type KubeClient, type KubeObject, type ResourceType,
} from '../client.ts';
import { logger as rootLogger, type Logger } from '../log.ts';
import { enabledRegistrations, webhookName, webhookPath, type WebhookType } from './server.ts';

// ---------------------------------------------------------------------------------------------
// Names (pkg/webhook/util/util.go, writer/certwriter.go, writer/external.go)

export const DEFAULT_NAMESPACE = 'kruise-system';
export const DEFAULT_SECRET_NAME = 'kruise-webhook-certs';
export const DEFAULT_SERVICE_NAME = 'kruise-webhook-service';
export const DEFAULT_WEBHOOK_PORT = 9876;
export const DEFAULT_CERT_DIR = '/tmp/kruise-webhook-certs';
export const MUTATING_WEBHOOK_CONFIGURATION_NAME = 'kruise-mutating-webhook-configuration';
export const VALIDATING_WEBHOOK_CONFIGURATION_NAME = 'kruise-validating-webhook-configuration';

export const CA_KEY_NAME = 'ca-key.pem';
export const CA_CERT_NAME = 'ca-cert.pem';
export const SERVER_KEY_NAME = 'key.pem';
export const SERVER_KEY_NAME2 = 'tls.key';
export const SERVER_CERT_NAME = 'cert.pem';
export const SERVER_CERT_NAME2 = 'tls.crt';
export const EXTERNAL_CA_CERT = 'ca.crt';
export const EXTERNAL_CA_KEY = 'ca.key';
export const EXTERNAL_SERVER_CERT = 'tls.crt';
export const EXTERNAL_SERVER_KEY = 'tls.key';

/** The CRD groups whose conversion webhooks point at this manager. */
export const KRUISE_CRD_GROUPS: readonly string[] = [APPS_GROUP, POLICY_GROUP];

/** `<service>.<namespace>.svc`, the name a Service-mode serving certificate is issued for. */
export function serviceDNSName(namespace: string, service: string): string {
  return `${service}.${namespace}.svc`;
}

// ---------------------------------------------------------------------------------------------
// Certificates

export interface CertArtifacts {
  caCert: string;
  /** Absent for external certificates whose CA key is not shared. */
  caKey?: string;
  cert: string;
  key: string;
}

const DAY_MS = 86_400_000;

export interface RotationPolicy {
  /** Validity of a newly issued serving certificate; default 365 days. */
  servingValidDays?: number;
  /** Validity of a newly created CA; default 3650 days. */
  caValidDays?: number;
  /**
   * A serving certificate is re-issued once less than this fraction of its validity remains, or
   * less than minRemainingDays; defaults 1/3 and 30.
   */
  renewFraction?: number;
  minRemainingDays?: number;
  /** The CA is replaced when it expires within this many days; default 365 (upstream's one year). */
  caMinRemainingDays?: number;
}

function notAfterMs(cert: X509Certificate): number {
  return Date.parse(cert.validTo);
}

function notBeforeMs(cert: X509Certificate): number {
  return Date.parse(cert.validFrom);
}

/** Why the CA cannot keep signing, or undefined when it can. */
export function caProblem(caCertPem: string | undefined, caKeyPem: string | undefined, now: number, policy: RotationPolicy = {}): string | undefined {
  if (!caCertPem || !caKeyPem) return 'CA certificate or key missing';
  try {
    const ca = new X509Certificate(caCertPem);
    if (!ca.ca) return 'CA certificate is not a CA';
    if (!ca.checkPrivateKey(createPrivateKey(caKeyPem))) return 'CA key does not match the CA certificate';
    if (notAfterMs(ca) - now < (policy.caMinRemainingDays ?? 365) * DAY_MS) return 'CA certificate expires soon';
    if (notBeforeMs(ca) > now) return 'CA certificate is not valid yet';
  } catch (err) {
    return `CA unreadable: ${(err as Error).message}`;
  }
  return undefined;
}

/**
 * Why the serving certificate must be re-issued, or undefined when it is good: it must parse, match
 * its key, be signed by the CA, name dnsName (DNS or IP SAN) and have enough validity left.
 */
export function servingCertProblem(certs: Partial<CertArtifacts>, dnsName: string, now: number, policy: RotationPolicy = {}): string | undefined {
  if (!certs.cert || !certs.key || !certs.caCert) return 'serving certificate, key or CA missing';
  try {
    const cert = new X509Certificate(certs.cert);
    const ca = new X509Certificate(certs.caCert);
    if (!cert.checkPrivateKey(createPrivateKey(certs.key))) return 'serving key does not match the certificate';
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'serving certificate is not signed by the CA';
    const names = isIP(dnsName) ? cert.checkIP(dnsName) : cert.checkHost(dnsName, { wildcards: false });
    if (!names) return `serving certificate is not valid for ${dnsName}`;
    const from = notBeforeMs(cert);
    const to = notAfterMs(cert);
    if (from > now) return 'serving certificate is not valid yet';
    const remaining = to - now;
    const minRemaining = Math.max((to - from) * (policy.renewFraction ?? 1 / 3), (policy.minRemainingDays ?? 30) * DAY_MS);
    if (remaining < minRemaining) return 'serving certificate expires soon';
  } catch (err) {
    return `serving certificate unreadable: ${(err as Error).message}`;
  }
  return undefined;
}

/** Issues a serving certificate for dnsName, reusing the CA when it can still sign (as upstream does). */
export async function generateCerts(dnsName: string, now: number, existing?: Partial<CertArtifacts>, policy: RotationPolicy = {}): Promise<CertArtifacts> {
  const reuse = !caProblem(existing?.caCert, existing?.caKey, now, policy);
  const ca = reuse ? await loadCA(existing!.caCert!, existing!.caKey!) : await createCA('webhook-cert-ca', policy.caValidDays ?? 3650);
  const ip = isIP(dnsName) !== 0;
  const serving = await issueCert(ca, {
    commonName: dnsName,
    dnsNames: ip ? ['localhost'] : ['localhost', dnsName],
    ipAddresses: ip ? [dnsName] : [],
    server: true,
    validDays: policy.servingValidDays ?? 365,
  });
  return { caCert: ca.certPem, caKey: ca.keyPem, cert: serving.certPem, key: serving.keyPem };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : undefined);

function secretToCerts(secret: Secret): Partial<CertArtifacts> {
  const d = secret.data ?? {};
  return { caCert: unb64(d[CA_CERT_NAME]), caKey: unb64(d[CA_KEY_NAME]), cert: unb64(d[SERVER_CERT_NAME]), key: unb64(d[SERVER_KEY_NAME]) };
}

function certsToData(c: CertArtifacts): Record<string, string> {
  return {
    [CA_KEY_NAME]: b64(c.caKey ?? ''),
    [CA_CERT_NAME]: b64(c.caCert),
    [SERVER_KEY_NAME]: b64(c.key),
    [SERVER_KEY_NAME2]: b64(c.key),
    [SERVER_CERT_NAME]: b64(c.cert),
    [SERVER_CERT_NAME2]: b64(c.cert),
  };
}

export interface SecretRef {
  namespace: string;
  name: string;
}

/**
 * The self-managed certificates from the Secret, created when it is absent and re-issued when the
 * stored ones are invalid, name another host or are close to expiry. `changed` says whether this
 * call wrote the Secret. A lost race (another replica created or updated it first) re-reads theirs.
 */
export async function ensureSecretCerts(
  client: KubeClient, secret: SecretRef, dnsName: string, opts: { clock?: Clock; policy?: RotationPolicy; logger?: Logger } = {},
): Promise<{ certs: CertArtifacts; changed: boolean }> {
  if (!dnsName) throw new Error('dnsName should not be empty');
  const clock = opts.clock ?? realClock;
  const log = opts.logger ?? rootLogger;
  for (let attempt = 0; attempt < 3; attempt++) {
    let current: Secret | undefined;
    try {
      current = await client.get<Secret>(Secrets, secret.name, { namespace: secret.namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const now = clock.now();
    if (!current) {
      const certs = await generateCerts(dnsName, now, undefined, opts.policy);
      try {
        await client.create<Secret>(Secrets, { metadata: { name: secret.name, namespace: secret.namespace }, data: certsToData(certs) });
        log.info({ secret: `${secret.namespace}/${secret.name}`, dnsName }, 'created webhook certificates');
        return { certs, changed: true };
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        throw err;
      }
    }
    const stored = secretToCerts(current);
    const problem = servingCertProblem(stored, dnsName, now, opts.policy) ?? caProblem(stored.caCert, stored.caKey, now, opts.policy);
    if (!problem) return { certs: stored as CertArtifacts, changed: false };
    log.info({ secret: `${secret.namespace}/${secret.name}`, reason: problem }, 'cert is invalid or expiring, regenerating a new one');
    const certs = await generateCerts(dnsName, now, stored, opts.policy);
    try {
      await client.update<Secret>(Secrets, { ...current, metadata: { ...current.metadata, managedFields: undefined }, data: { ...current.data, ...certsToData(certs) } });
      return { certs, changed: true };
    } catch (err) {
      if ((err as { code?: number }).code === 409) continue;
      throw err;
    }
  }
  throw new Error(`could not settle the webhook certificates in ${secret.namespace}/${secret.name}: too many conflicting writers`);
}

/** External certificates from a Secret written by e.g. cert-manager (keys ca.crt, tls.crt, tls.key). */
export async function readExternalSecretCerts(client: KubeClient, secret: SecretRef): Promise<CertArtifacts> {
  const s = await client.get<Secret>(Secrets, secret.name, { namespace: secret.namespace });
  const d = s.data ?? {};
  const certs = { caCert: unb64(d[EXTERNAL_CA_CERT]), caKey: unb64(d[EXTERNAL_CA_KEY]), cert: unb64(d[EXTERNAL_SERVER_CERT]), key: unb64(d[EXTERNAL_SERVER_KEY]) };
  return requireComplete(certs, `secret ${secret.namespace}/${secret.name}`);
}

/** External certificates mounted as files (ca.crt, tls.crt, tls.key). */
export function readExternalDirCerts(dir: string): CertArtifacts {
  const read = (f: string) => (fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f), 'utf8') : undefined);
  return requireComplete({ caCert: read(EXTERNAL_CA_CERT), cert: read(EXTERNAL_SERVER_CERT), key: read(EXTERNAL_SERVER_KEY) }, dir);
}

function requireComplete(c: Partial<CertArtifacts>, where: string): CertArtifacts {
  if (!c.caCert || !c.cert || !c.key) throw new Error(`external certificates in ${where} need ${EXTERNAL_CA_CERT}, ${EXTERNAL_SERVER_CERT} and ${EXTERNAL_SERVER_KEY}`);
  return c as CertArtifacts;
}

/**
 * Writes the certificates into dir under all of upstream's names, each file atomically (temp +
 * rename) and only when its content changed, so the server's watcher sees real changes only.
 * Keys are written before certificates; a reader that sees a mismatched pair retries later.
 * Returns whether anything was written.
 */
export function writeCertsToDir(dir: string, certs: CertArtifacts): boolean {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files: [string, string, number][] = [
    [SERVER_KEY_NAME, certs.key, 0o600],
    [SERVER_KEY_NAME2, certs.key, 0o600],
    [SERVER_CERT_NAME, certs.cert, 0o644],
    [SERVER_CERT_NAME2, certs.cert, 0o644],
    [CA_CERT_NAME, certs.caCert, 0o644],
  ];
  if (certs.caKey) files.push([CA_KEY_NAME, certs.caKey, 0o600]);
  let wrote = false;
  for (const [name, content, mode] of files) {
    const target = path.join(dir, name);
    try {
      if (fs.readFileSync(target, 'utf8') === content) continue;
    } catch {
      // missing: write it
    }
    const tmp = path.join(dir, `.${name}.${randomBytes(4).toString('hex')}.tmp`);
    fs.writeFileSync(tmp, content, { mode });
    fs.renameSync(tmp, target);
    wrote = true;
  }
  return wrote;
}

// ---------------------------------------------------------------------------------------------
// Client configs and webhook configurations

export type ClientMode =
  /** The API server calls https://host:port/path (host may be an IP such as 127.0.0.1). */
  | { mode: 'url'; host: string; port: number }
  /** The API server calls the Service; port defaults to 443. */
  | { mode: 'service'; namespace: string; name: string; port?: number };

/** The DNS name (or IP) the serving certificate must carry for this client mode. */
export function servingNameFor(mode: ClientMode): string {
  return mode.mode === 'url' ? mode.host : serviceDNSName(mode.namespace, mode.name);
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export function clientConfigFor(mode: ClientMode, urlPath: string, caBundlePem?: string): WebhookClientConfig {
  const cc: WebhookClientConfig = mode.mode === 'url'
    ? { url: `https://${mode.host.includes(':') ? `[${mode.host}]` : mode.host}:${mode.port}${urlPath}` }
    : { service: { namespace: mode.namespace, name: mode.name, path: urlPath, port: mode.port ?? 443 } };
  if (caBundlePem) cc.caBundle = b64(caBundlePem);
  return cc;
}

export interface RuleWithOperations {
  apiGroups: string[];
  apiVersions: string[];
  operations: Operation[];
  resources: string[];
  scope: '*' | 'Cluster' | 'Namespaced';
}

export interface AdmissionWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules: RuleWithOperations[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  sideEffects: 'None';
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export interface WebhookConfiguration extends KubeObject {
  webhooks?: AdmissionWebhook[];
}

export interface WebhookConfigurationSet {
  mutating: WebhookConfiguration;
  validating: WebhookConfiguration;
}

export interface BuildOptions {
  clientMode: ClientMode;
  features: FeatureGates;
  /** PEM of the CA that signed the serving certificate; omitted → no caBundle (external injection). */
  caBundle?: string;
  mutatingName?: string;
  validatingName?: string;
  /** Default 10 (the API server's default); at most 30. */
  timeoutSeconds?: number;
  /** ANDed into every webhook's selectors, e.g. to confine webhooks to some namespaces. */
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  labels?: Record<string, string>;
}

// config/webhook/patch_manifests.yaml: pod webhooks skip the control plane's namespaces, and
// deletion protection of built-in kinds only sees objects labelled for it.
const controlPlaneExcluded: LabelSelector = { matchExpressions: [{ key: 'control-plane', operator: 'DoesNotExist' }] };
const deleteProtectionOnly: LabelSelector = { matchExpressions: [{ key: 'policy.kruise.io/delete-protection', operator: 'Exists' }] };
const upstreamSelectors: Record<string, { namespaceSelector?: LabelSelector; objectSelector?: LabelSelector }> = {
  'mpod.kb.io': { namespaceSelector: controlPlaneExcluded },
  'vpod.kb.io': { namespaceSelector: controlPlaneExcluded },
  'vpodeviction.kb.io': { namespaceSelector: controlPlaneExcluded },
  'vbuiltindeployment.kb.io': { objectSelector: deleteProtectionOnly },
  'vbuiltinreplicaset.kb.io': { objectSelector: deleteProtectionOnly },
  'vbuiltinstatefulset.kb.io': { objectSelector: deleteProtectionOnly },
  'vcustomresourcedefinition.kb.io': { objectSelector: deleteProtectionOnly },
  'vnamespace.kb.io': { objectSelector: deleteProtectionOnly },
};

/** Both selectors must hold: labels and expressions are concatenated. */
export function andSelectors(a: LabelSelector | undefined, b: LabelSelector | undefined): LabelSelector {
  const out: LabelSelector = {};
  const labels = { ...a?.matchLabels };
  for (const [k, v] of Object.entries(b?.matchLabels ?? {})) {
    if (k in labels && labels[k] !== v) throw new Error(`conflicting selectors for label ${k}: ${labels[k]} and ${v}`);
    labels[k] = v;
  }
  if (Object.keys(labels).length) out.matchLabels = labels;
  const exprs = [...(a?.matchExpressions ?? []), ...(b?.matchExpressions ?? [])];
  if (exprs.length) out.matchExpressions = structuredClone(exprs);
  return out;
}

const mutatingOperations = new Set<Operation>(['CREATE', 'UPDATE']);

function buildWebhook(type: WebhookType, reg: WebhookRegistration, opts: BuildOptions): AdmissionWebhook | undefined {
  const operations = type === 'mutate' ? reg.operations.filter((o) => mutatingOperations.has(o)) : [...reg.operations];
  if (!operations.length) return undefined;
  const name = webhookName(type, reg);
  const upstream = upstreamSelectors[name] ?? {};
  const wh: AdmissionWebhook = {
    name,
    clientConfig: clientConfigFor(opts.clientMode, webhookPath(type, reg), opts.caBundle),
    rules: [{ apiGroups: [reg.group], apiVersions: [...reg.versions], operations, resources: [reg.resource], scope: '*' }],
    failurePolicy: reg.failurePolicy ?? 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: andSelectors(upstream.namespaceSelector, opts.namespaceSelector),
    objectSelector: andSelectors(upstream.objectSelector, opts.objectSelector),
    sideEffects: 'None',
    timeoutSeconds: opts.timeoutSeconds ?? 10,
    admissionReviewVersions: ['v1'],
  };
  if (type === 'mutate') wh.reinvocationPolicy = 'Never';
  return wh;
}

/** The full webhook configurations for the enabled registrations, webhooks sorted by name. */
export function buildWebhookConfigurations(regs: readonly WebhookRegistration[], opts: BuildOptions): WebhookConfigurationSet {
  const mutating: AdmissionWebhook[] = [];
  const validating: AdmissionWebhook[] = [];
  for (const reg of enabledRegistrations(regs, opts.features)) {
    const m = reg.mutate ? buildWebhook('mutate', reg, opts) : undefined;
    const v = reg.validate ? buildWebhook('validate', reg, opts) : undefined;
    if (m) mutating.push(m);
    if (v) validating.push(v);
  }
  const byName = (a: AdmissionWebhook, b: AdmissionWebhook) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const list of [mutating, validating]) {
    const seen = new Set<string>();
    for (const w of list) {
      if (seen.has(w.name)) throw new Error(`two registrations produce the webhook ${w.name}`);
      seen.add(w.name);
    }
  }
  const meta = (name: string) => ({ name, ...(opts.labels ? { labels: { ...opts.labels } } : {}) });
  return {
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration',
      metadata: meta(opts.mutatingName ?? MUTATING_WEBHOOK_CONFIGURATION_NAME), webhooks: mutating.sort(byName),
    },
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration',
      metadata: meta(opts.validatingName ?? VALIDATING_WEBHOOK_CONFIGURATION_NAME), webhooks: validating.sort(byName),
    },
  };
}

/** Whether every field set in `want` has the same value in `have` (arrays: same length, item by item). */
export function isSubset(want: unknown, have: unknown): boolean {
  if (want === undefined) return true;
  if (Array.isArray(want)) {
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => isSubset(w, have[i]));
  }
  if (typeof want === 'object' && want !== null) {
    if (typeof have !== 'object' || have === null || Array.isArray(have)) return false;
    // The API server drops empty selectors' fields but keeps {}; an empty object matches an absent one.
    return Object.entries(want).every(([k, v]) => isSubset(v, (have as Record<string, unknown>)[k] ?? (isEmptyObject(v) ? {} : undefined)));
  }
  return want === have;
}

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}

/**
 * Creates each configuration, or replaces its webhooks when they differ from the desired ones
 * (other metadata, e.g. labels added by others, is kept). Returns the names written.
 */
export async function ensureWebhookConfigurations(client: KubeClient, desired: WebhookConfigurationSet): Promise<string[]> {
  const written: string[] = [];
  const pairs: [ResourceType, WebhookConfiguration][] = [[MutatingWebhookConfigurations, desired.mutating], [ValidatingWebhookConfigurations, desired.validating]];
  for (const [type, want] of pairs) {
    const name = want.metadata.name!;
    let have: WebhookConfiguration | undefined;
    try {
      have = await client.get<WebhookConfiguration>(type, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!have) {
      await client.create(type, want);
      written.push(name);
      continue;
    }
    if (isSubset(want.webhooks ?? [], have.webhooks ?? [])) continue;
    const labels = { ...have.metadata.labels, ...want.metadata.labels };
    await client.update(type, { ...have, metadata: { ...have.metadata, labels, managedFields: undefined }, webhooks: want.webhooks });
    written.push(name);
  }
  return written;
}

/**
 * External-certificate mode: the injector owns caBundle, so only check that every webhook we serve
 * trusts the external CA (upstream configuration.Ensure with EnableExternalCerts).
 */
export async function verifyWebhookCABundles(client: KubeClient, names: { mutating: string; validating: string }, servedPaths: ReadonlySet<string>, caBundlePem: string): Promise<void> {
  const want = b64(caBundlePem);
  for (const [type, name] of [[MutatingWebhookConfigurations, names.mutating], [ValidatingWebhookConfigurations, names.validating]] as const) {
    let cfg: WebhookConfiguration;
    try {
      cfg = await client.get<WebhookConfiguration>(type, name);
    } catch (err) {
      if (isNotFound(err)) throw new Error(`not found ${type.kind} ${name}`);
      throw err;
    }
    for (const wh of cfg.webhooks ?? []) {
      const p = wh.clientConfig.service?.path ?? (wh.clientConfig.url ? new URL(wh.clientConfig.url).pathname : undefined);
      if (!p || !servedPaths.has(p)) continue;
      if (wh.clientConfig.caBundle !== want) throw new Error(`caBundle of ${type.kind} ${name} does not match the external caBundle`);
    }
  }
}

interface CRD extends KubeObject {
  spec: {
    group: string;
    versions?: unknown[];
    conversion?: { strategy?: string; webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions?: string[] } };
  };
}

/**
 * Points the conversion webhook of every webhook-converted CRD in `groups` at /convert with the
 * CA bundle (upstream crd.Ensure). Returns the CRDs updated.
 */
export async function ensureCRDConversion(client: KubeClient, mode: ClientMode, caBundlePem: string, groups: readonly string[] = KRUISE_CRD_GROUPS): Promise<string[]> {
  const want = { clientConfig: clientConfigFor(mode, '/convert', caBundlePem), conversionReviewVersions: ['v1', 'v1beta1'] };
  const crds = await client.listAll<CRD>(CustomResourceDefinitions);
  const updated: string[] = [];
  for (const crd of crds.items) {
    const conv = crd.spec.conversion;
    if (!groups.includes(crd.spec.group) || !crd.spec.versions?.length || conv?.strategy !== 'Webhook') continue;
    const have = conv.webhook;
    if (have && isSubset(want.clientConfig, have.clientConfig) && !extraTarget(want.clientConfig, have.clientConfig)) continue;
    const next: CRD = structuredClone(crd);
    next.metadata.managedFields = undefined;
    next.spec.conversion = { ...conv, webhook: { ...want, clientConfig: { ...want.clientConfig } } };
    await client.update(CustomResourceDefinitions, next);
    updated.push(crd.metadata.name!);
  }
  return updated;
}

/** A URL left over next to a Service (or the reverse) would make the API server reject the object. */
function extraTarget(want: WebhookClientConfig, have: WebhookClientConfig | undefined): boolean {
  return (!want.url && !!have?.url) || (!want.service && !!have?.service);
}

// ---------------------------------------------------------------------------------------------
// The controller (pkg/webhook/util/controller/webhook_controller.go)

export interface WebhookCertControllerOptions {
  client: KubeClient;
  registrations: readonly WebhookRegistration[];
  features: FeatureGates;
  clientMode: ClientMode;
  /** Directory the HTTPS server reads tls.crt/tls.key from. */
  certDir: string;
  /** Secret holding the certificates; default kruise-system/kruise-webhook-certs. */
  secret?: SecretRef;
  /** External mode: read certificates from this Secret or directory instead of managing them. */
  external?: { secret: SecretRef } | { dir: string };
  mutatingName?: string;
  validatingName?: string;
  timeoutSeconds?: number;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  /** Whether to point the kruise CRDs' conversion webhooks at /convert; default true. */
  manageCRDs?: boolean;
  crdGroups?: readonly string[];
  /** Called after the cert dir changed (e.g. WebhookServer.reloadCertificate). */
  onCertsChanged?: (certs: CertArtifacts) => void;
  /** Resync period; default 1 min (upstream defaultResyncPeriod). */
  resyncMs?: number;
  policy?: RotationPolicy;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Keeps certificates, cert dir, webhook configurations and CRD conversion config in line, once a
 * resync period and whenever trigger() is called. `ready` resolves after the first full sync
 * (upstream's Inited channel), which the manager waits for before serving.
 */
export class WebhookCertController {
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private readonly opts: WebhookCertControllerOptions;
  private readonly clock: Clock;
  private readonly log: Logger;
  private wake: (() => void) | undefined;
  private pending = false;
  private lastCerts: CertArtifacts | undefined;

  constructor(opts: WebhookCertControllerOptions) {
    if (opts.external && !opts.features.EnableExternalCerts) throw new Error('external webhook certificates need the EnableExternalCerts feature gate');
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.log = (opts.logger ?? rootLogger).child({ controller: 'webhook-controller' });
    this.ready = new Promise((resolve) => (this.markReady = resolve));
  }

  /** The certificates of the last successful sync. */
  certificates(): CertArtifacts | undefined {
    return this.lastCerts;
  }

  /** Asks for a sync soon (e.g. from a watch on the Secret or the configurations). */
  trigger(): void {
    this.pending = true;
    this.wake?.();
  }

  /** One pass; throws on failure. */
  async sync(): Promise<void> {
    const o = this.opts;
    const certs = await this.obtainCerts();
    // Mounted external certificates may already be the server's cert dir (and read-only).
    const inPlace = !!o.external && 'dir' in o.external && path.resolve(o.external.dir) === path.resolve(o.certDir);
    if (!inPlace && writeCertsToDir(o.certDir, certs)) {
      this.log.info({ dir: o.certDir }, 'wrote webhook certificates');
      o.onCertsChanged?.(certs);
    }
    const names = { mutating: o.mutatingName ?? MUTATING_WEBHOOK_CONFIGURATION_NAME, validating: o.validatingName ?? VALIDATING_WEBHOOK_CONFIGURATION_NAME };
    if (o.external) {
      const served = new Set(enabledRegistrations(o.registrations, o.features).flatMap((r) => [
        ...(r.mutate ? [webhookPath('mutate', r)] : []), ...(r.validate ? [webhookPath('validate', r)] : []),
      ]));
      await verifyWebhookCABundles(o.client, names, served, certs.caCert);
    } else {
      const desired = buildWebhookConfigurations(o.registrations, {
        clientMode: o.clientMode, features: o.features, caBundle: certs.caCert, mutatingName: names.mutating, validatingName: names.validating,
        timeoutSeconds: o.timeoutSeconds, namespaceSelector: o.namespaceSelector, objectSelector: o.objectSelector,
      });
      const written = await ensureWebhookConfigurations(o.client, desired);
      if (written.length) this.log.info({ configurations: written }, 'updated webhook configurations');
    }
    if (o.manageCRDs ?? true) {
      const updated = await ensureCRDConversion(o.client, o.clientMode, certs.caCert, o.crdGroups);
      if (updated.length) this.log.info({ crds: updated }, 'updated CRD conversion webhooks');
    }
    this.lastCerts = certs;
    this.markReady();
  }

  /** Syncs until signal aborts: every resync period, on trigger(), and with backoff after failures. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      this.pending = false;
      let delay = this.opts.resyncMs ?? 60_000;
      try {
        await this.sync();
        failures = 0;
      } catch (err) {
        failures++;
        // The workqueue's per-item exponential backoff, capped well below the resync period.
        delay = Math.min(delay, 5 * 2 ** Math.min(failures, 20), 30_000);
        this.log.error({ err, failures }, 'failed to sync webhook certs and configurations');
      }
      if (this.pending) continue;
      await new Promise<void>((resolve) => {
        const timer = this.clock.setTimer(delay, done);
        const onAbort = () => done();
        signal.addEventListener('abort', onAbort, { once: true });
        this.wake = done;
        function done() {
          timer.cancel();
          signal.removeEventListener('abort', onAbort);
          resolve();
        }
      });
      this.wake = undefined;
    }
  }

  private async obtainCerts(): Promise<CertArtifacts> {
    const o = this.opts;
    if (o.external) {
      return 'dir' in o.external ? readExternalDirCerts(o.external.dir) : readExternalSecretCerts(o.client, o.external.secret);
    }
    const secret = o.secret ?? { namespace: DEFAULT_NAMESPACE, name: DEFAULT_SECRET_NAME };
    const { certs } = await ensureSecretCerts(o.client, secret, servingNameFor(o.clientMode), { clock: this.clock, policy: o.policy, logger: this.log });
    return certs;
  }
}
