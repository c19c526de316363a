// Docker image reference syntax (distribution/reference ParseNormalizedNamed), enough to reject
// what kruise-daemon could never pull, with the library's error texts.
const alnum = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alnum}(?:${separator}${alnum})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const name = `(?:${host}(?::[0-9]+)?/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}';
const REFERENCE_RE = new RegExp(`^(${name})(?::${tag})?(?:@${digest})?$`);
const HEX64_RE = /^[a-f0-9]{64}$/;

/** The parse error of an image reference, or undefined when it is valid. */
export function imageReferenceError(ref: string): string | undefined {
  if (HEX64_RE.test(ref)) return `invalid repository name (${ref}), cannot specify 64-byte hexadecimal strings`;
  if (ref === '') return 'repository name must have at least one component';
  const m = REFERENCE_RE.exec(ref);
  if (!m) return REFERENCE_RE.test(ref.toLowerCase()) ? 'repository name must be lowercase' : 'invalid reference format';
  if (m[1]!.length > 255) return 'repository name must not be more than 255 characters';
  return undefined;
}
