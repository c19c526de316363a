// Webhook certificates as kruise-manager manages them (pkg/webhook/util/writer):
//
// - self-managed certs: a CA and a serving certificate kept in the Secret kruise-webhook-certs of
//   the manager's namespace (keys ca-cert.pem, ca-key.pem, cert.pem/tls.crt, key.pem/tls.key),
//   created when absent and re-issued when invalid or close to expiry; every replica copies them
//   into its cert dir, which the HTTPS server watches;
// - external certs (feature gate EnableExternalCerts, e.g. cert-manager): the Secret (keys ca.crt,
//   tls.crt, tls.key) or a mounted directory is only read.
//
// What points the API server at the webhook server lives beside this file: configuration.ts
// (Mutating/ValidatingWebhookConfigurations), crd-conversion.ts (CRD conversion webhooks), and
// cert-controller.ts, which keeps all of them in line.

import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { createCA, issueCert, loadCA } from '../../util/pki.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import type { Secret } from '../../apis/core-objects.ts';
import type { KubeClient } from '../client.ts';
import { isAlreadyExists, isNotFound } from '../errors.ts';
import { Secrets } from '../resources.ts';
import { logger as rootLogger, type Logger } from '../log.ts';

// ---------------------------------------------------------------------------------------------
// Names (pkg/webhook/util/writer/certwriter.go, writer/external.go)

export const DEFAULT_NAMESPACE = 'kruise-system';
export const DEFAULT_SECRET_NAME = 'kruise-webhook-certs';

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
export function caProblem(
  caCertPem: string | undefined,
  caKeyPem: string | undefined,
  now: number,
  policy: RotationPolicy = {},
): string | undefined {
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
export function servingCertProblem(
  certs: Partial<CertArtifacts>,
  dnsName: string,
  now: number,
  policy: RotationPolicy = {},
): string | undefined {
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
export async function generateCerts(
  dnsName: string,
  now: number,
  existing?: Partial<CertArtifacts>,
  policy: RotationPolicy = {},
): Promise<CertArtifacts> {
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

/** The certificates a self-managed Secret holds (fields absent where the Secret lacks them). */
export function secretToCerts(secret: Secret): Partial<CertArtifacts> {
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
  client: KubeClient,
  secret: SecretRef,
  dnsName: string,
  opts: { clock?: Clock; policy?: RotationPolicy; logger?: Logger; beforeWrite?: () => Promise<void> } = {},
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
      await opts.beforeWrite?.();
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
    await opts.beforeWrite?.();
    try {
      await client.update<Secret>(Secrets, {
        ...current,
        metadata: { ...current.metadata, managedFields: undefined },
        data: { ...current.data, ...certsToData(certs) },
      });
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
  const certs = {
    caCert: unb64(d[EXTERNAL_CA_CERT]),
    caKey: unb64(d[EXTERNAL_CA_KEY]),
    cert: unb64(d[EXTERNAL_SERVER_CERT]),
    key: unb64(d[EXTERNAL_SERVER_KEY]),
  };
  return requireComplete(certs, `secret ${secret.namespace}/${secret.name}`);
}

/** External certificates mounted as files (ca.crt, tls.crt, tls.key). */
export function readExternalDirCerts(dir: string): CertArtifacts {
  const read = (f: string) => (fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f), 'utf8') : undefined);
  return requireComplete({ caCert: read(EXTERNAL_CA_CERT), cert: read(EXTERNAL_SERVER_CERT), key: read(EXTERNAL_SERVER_KEY) }, dir);
}

function requireComplete(c: Partial<CertArtifacts>, where: string): CertArtifacts {
  if (!c.caCert || !c.cert || !c.key)
    throw new Error(`external certificates in ${where} need ${EXTERNAL_CA_CERT}, ${EXTERNAL_SERVER_CERT} and ${EXTERNAL_SERVER_KEY}`);
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
