// Docker image references (distribution/reference): validation with the library's error texts, for
// the admission webhooks, and normalisation to the `name` + `tag` pair NodeImages are keyed by, for
// the image pre-pulling controllers and the node daemon. Both must agree on the key: a NodeImage
// written by one and read by the other under a different name would never match.
const alnum = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alnum}(?:${separator}${alnum})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const name = `(?:${host}(?::[0-9]+)?/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}';
const REFERENCE_RE = new RegExp(`^(${name})(?::(${tag}))?(?:@(${digest}))?$`);
const HEX64_RE = /^[a-f0-9]{64}$/;

const DEFAULT_DOMAIN = 'docker.io';
const LEGACY_DEFAULT_DOMAIN = 'index.docker.io';
const OFFICIAL_REPO_PREFIX = 'library/';

/** The parse error of an image reference, or undefined when it is valid. */
export function imageReferenceError(ref: string): string | undefined {
  if (HEX64_RE.test(ref)) return `invalid repository name (${ref}), cannot specify 64-byte hexadecimal strings`;
  if (ref === '') return 'repository name must have at least one component';
  const m = REFERENCE_RE.exec(ref);
  if (!m) return REFERENCE_RE.test(ref.toLowerCase()) ? 'repository name must be lowercase' : 'invalid reference format';
  if (m[1]!.length > 255) return 'repository name must not be more than 255 characters';
  return undefined;
}

export interface ImageNameTag {
  /** Fully qualified repository, e.g. `docker.io/library/nginx`. */
  name: string;
  /** The tag; the digest (`sha256:…`) for digest-only references; `latest` when neither is given. */
  tag: string;
}

/**
 * ParseNormalizedNamed + TagNameOnly: `nginx` → docker.io/library/nginx:latest,
 * `foo/bar:1` → docker.io/foo/bar:1, `reg:5000/x@sha256:…` keeps its registry. Throws on a reference
 * kruise-daemon could not pull.
 */
export function normalizeImageRef(ref: string): ImageNameTag {
  if (HEX64_RE.test(ref)) throw new Error(`invalid repository name (${ref}), cannot specify 64-byte hexadecimal strings`);
  const slash = ref.indexOf('/');
  let domain = DEFAULT_DOMAIN;
  let remainder = ref;
  const first = slash < 0 ? '' : ref.slice(0, slash);
  // The first component is a registry only if it looks like a host (has '.' or ':', or is
  // localhost) or has capitals, which repository paths never do.
  if (slash >= 0 && (/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first)) {
    domain = first === LEGACY_DEFAULT_DOMAIN ? DEFAULT_DOMAIN : first;
    remainder = ref.slice(slash + 1);
  }
  if (domain === DEFAULT_DOMAIN && !remainder.includes('/')) remainder = OFFICIAL_REPO_PREFIX + remainder;
  const repoPart = remainder.replace(/[:@].*$/, '');
  if (repoPart.toLowerCase() !== repoPart) throw new Error(`invalid reference format: repository name (${repoPart}) must be lowercase`);
  const full = `${domain}/${remainder}`;
  const err = imageReferenceError(full);
  if (err) throw new Error(`invalid reference format: ${err}`);
  const m = REFERENCE_RE.exec(full)!;
  return { name: m[1]!, tag: m[2] ?? m[3] ?? 'latest' };
}
