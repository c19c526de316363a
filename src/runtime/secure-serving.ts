// Secure metrics as current kubebuilder scaffolds serve them (controller-runtime's
// filters.WithAuthenticationAndAuthorization): HTTPS, the caller's bearer token checked with a
// TokenReview (401 when it is missing or not valid) and the caller's right to `get` the
// nonResourceURL of the request checked with a SubjectAccessReview (403 when not allowed).
// Nothing is cached: a scrape every few seconds costs two small API calls.
import fs from 'node:fs';
import path from 'node:path';
import { createCA, issueCert, type KeyPair } from '../util/pki.ts';
import type { KubeClient } from './client.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import { SubjectAccessReviews, TokenReviews } from './resources.ts';
import { errMessage } from '../util/errors.ts';

export type AuthDecision = { status: 200 } | { status: 401 | 403 | 500; message: string };

/** Decides whether the bearer of an Authorization header may `get` path. */
export type RequestAuthorizer = (authorization: string | undefined, path: string) => Promise<AuthDecision>;

interface TokenReview extends KubeObject {
  status?: {
    authenticated?: boolean;
    error?: string;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  };
}

interface SubjectAccessReview extends KubeObject {
  status?: { allowed?: boolean; reason?: string };
}

/** TokenReview + SubjectAccessReview against the API server (delegated authn/authz). */
export function delegatedAuthorizer(client: Pick<KubeClient, 'create'>): RequestAuthorizer {
  return async (authorization, urlPath) => {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return { status: 401, message: 'Unauthorized' };
    try {
      const review = await client.create<TokenReview>(TokenReviews, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        metadata: {},
        spec: { token },
      } as TokenReview);
      const user = review.status?.user;
      if (!review.status?.authenticated || !user?.username) return { status: 401, message: 'Unauthorized' };
      const sar = await client.create<SubjectAccessReview>(SubjectAccessReviews, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          nonResourceAttributes: { path: urlPath, verb: 'get' },
        },
      } as SubjectAccessReview);
      if (!sar.status?.allowed) {
        return { status: 403, message: `Forbidden: user "${user.username}" cannot get path "${urlPath}"` };
      }
      return { status: 200 };
    } catch (err) {
      return { status: 500, message: `authorization failed: ${errMessage(err)}` };
    }
  };
}

/**
 * The serving certificate: `<dir>/<certName>` and `<dir>/<keyName>` when a directory is given
 * (kubebuilder's --metrics-cert-path, e.g. a cert-manager Secret), else a self-signed one made at
 * start-up, as controller-runtime does (scrapers then skip verification or pin it).
 */
export async function servingCertificate(
  opts: { certDir?: string; certName?: string; keyName?: string; hosts?: string[] } = {},
): Promise<KeyPair> {
  if (opts.certDir) {
    return {
      certPem: fs.readFileSync(path.join(opts.certDir, opts.certName ?? 'tls.crt'), 'utf8'),
      keyPem: fs.readFileSync(path.join(opts.certDir, opts.keyName ?? 'tls.key'), 'utf8'),
    };
  }
  const ca = await createCA('kruise-metrics-ca', 365);
  const hosts = opts.hosts ?? ['localhost', '127.0.0.1'];
  const ips = hosts.filter((h) => /^[\d.]+$|:/.test(h));
  return issueCert(ca, {
    commonName: 'kruise-metrics',
    dnsNames: hosts.filter((h) => !ips.includes(h)),
    ipAddresses: ips,
    server: true,
    validDays: 365,
  });
}
