// Registry credentials for a pull, from image pull Secrets (kubernetes.io/dockerconfigjson or the
// older kubernetes.io/dockercfg), matched to the image's registry the way docker config keys are:
// by host[:port], with any scheme or path on the key ignored and Docker Hub's aliases folded.
import type { Secret } from '../../apis/core-objects.ts';
import type { PullAuth } from '../runtime/types.ts';

/** The parts of a Secret the credentials come from. */
export type SecretLike = Pick<Secret, 'type' | 'data'>;

const DOCKER_HUB = 'docker.io';
const HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

/** The registry host of an image reference (`nginx` → docker.io, `127.0.0.1:5000/a/b:1` → 127.0.0.1:5000). */
export function registryOf(image: string): string {
  const slash = image.indexOf('/');
  if (slash < 0) return DOCKER_HUB;
  const first = image.slice(0, slash);
  // Docker's rule: the first component is a host only if it looks like one.
  if (first === 'localhost' || first.includes('.') || first.includes(':')) return HUB_ALIASES.has(first) ? DOCKER_HUB : first;
  return DOCKER_HUB;
}

function normalizeKey(key: string): string {
  const host = key.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  return HUB_ALIASES.has(host) ? DOCKER_HUB : host;
}

interface DockerAuthEntry {
  username?: string;
  password?: string;
  auth?: string;
  identitytoken?: string;
  registrytoken?: string;
}

function decodeJSON(b64: string | undefined): unknown {
  if (!b64) return undefined;
  try {
    return JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
}

function entries(secret: SecretLike): Record<string, DockerAuthEntry> {
  const json = decodeJSON(secret.data?.['.dockerconfigjson']) as { auths?: Record<string, DockerAuthEntry> } | undefined;
  if (json && typeof json.auths === 'object' && json.auths) return json.auths;
  const cfg = decodeJSON(secret.data?.['.dockercfg']);
  return cfg && typeof cfg === 'object' ? (cfg as Record<string, DockerAuthEntry>) : {};
}

function toPullAuth(server: string, e: DockerAuthEntry): PullAuth {
  let { username, password } = e;
  if (!username && e.auth) {
    const plain = Buffer.from(e.auth, 'base64').toString('utf8');
    const i = plain.indexOf(':');
    if (i > 0) [username, password] = [plain.slice(0, i), plain.slice(i + 1)];
  }
  const out: PullAuth = { serverAddress: server };
  if (username) out.username = username;
  if (password) out.password = password;
  if (e.auth) out.auth = e.auth;
  if (e.identitytoken) out.identityToken = e.identitytoken;
  if (e.registrytoken) out.registryToken = e.registrytoken;
  return out;
}

/** Every credential in the secrets that applies to image, in secret order; malformed data is skipped. */
export function authsForImage(image: string, secrets: readonly SecretLike[]): PullAuth[] {
  const registry = registryOf(image);
  const out: PullAuth[] = [];
  for (const s of secrets) {
    for (const [key, entry] of Object.entries(entries(s))) {
      if (entry && typeof entry === 'object' && normalizeKey(key) === registry) out.push(toPullAuth(registry, entry));
    }
  }
  return out;
}
