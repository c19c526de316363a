// ControllerRevision naming and the hashes behind it, bit-for-bit with Kubernetes's
// pkg/controller/history so revisions (and the pod labels naming them) written by Kruise TS and by
// Go Kruise are interchangeable.

import { RAND_ALPHABET } from './rand.ts';

/** Label history.NewControllerRevision puts on each ControllerRevision: its bare hash. */
export const CONTROLLER_REVISION_HASH_KEY = 'controller.kubernetes.io/hash';

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

const toBytes = (data: Uint8Array | string) => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data);

function fnv1Update(hash: number, bytes: Uint8Array): number {
  for (const b of bytes) hash = (Math.imul(hash, FNV32_PRIME) ^ b) >>> 0;
  return hash;
}

/** 32-bit FNV-1 (multiply, then xor): Go's fnv.New32(), used for revision names. */
export function fnv1_32(data: Uint8Array | string): number {
  return fnv1Update(FNV32_OFFSET, toBytes(data));
}

/** 32-bit FNV-1a (xor, then multiply): Go's fnv.New32a(), used for pod-template and VCT hashes. */
export function fnv1a_32(data: Uint8Array | string): number {
  let hash = FNV32_OFFSET;
  for (const b of toBytes(data)) hash = Math.imul(hash ^ b, FNV32_PRIME) >>> 0;
  return hash;
}

/** apimachinery rand.SafeEncodeString: each code point c becomes RAND_ALPHABET[c mod 27]. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (const ch of s) out += RAND_ALPHABET[ch.codePointAt(0)! % RAND_ALPHABET.length];
  return out;
}

/**
 * history.HashControllerRevision: FNV-1 over the revision's raw data followed by the decimal text
 * of collisionCount (nothing at all when it is null/undefined — which hashes differently from 0),
 * printed in decimal and safe-encoded.
 */
export function hashControllerRevision(data: Uint8Array | string, collisionCount?: number | null): string {
  let hash = fnv1Update(FNV32_OFFSET, toBytes(data));
  if (collisionCount !== null && collisionCount !== undefined) hash = fnv1Update(hash, Buffer.from(String(collisionCount)));
  return safeEncodeString(String(hash));
}

/** `<prefix>-<hash>`, the prefix cut to 223 characters so the name stays within 253. */
export function controllerRevisionName(prefix: string, data: Uint8Array | string, collisionCount?: number | null): string {
  return `${prefix.slice(0, 223)}-${hashControllerRevision(data, collisionCount)}`;
}

/** The hash part of a revision name: whatever follows the last '-'. */
export function shortHash(revisionName: string): string {
  return revisionName.slice(revisionName.lastIndexOf('-') + 1);
}

/**
 * Whether a pod's revision label names the given revision: equal, or equal short hashes (pods
 * labelled under the CloneSetShortHash gate carry only the hash).
 */
export function equalToRevisionHash(podLabelValue: string | undefined, revisionName: string): boolean {
  const value = podLabelValue ?? '';
  return value === revisionName || shortHash(value) === shortHash(revisionName);
}

// ---------------------------------------------------------------------------------------------
// Go encoding/json output, because revision hashes cover the exact bytes Go Kruise would write.

// Go orders strings byte-wise over UTF-8, i.e. by code point (JS compares UTF-16 units).
export function compareCodePoints(a: string, b: string): number {
  const ai = a[Symbol.iterator]();
  const bi = b[Symbol.iterator]();
  for (;;) {
    const x = ai.next();
    const y = bi.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HTML_UNSAFE = /[<>&\u2028\u2029]/g;

function marshalString(s: string): string {
  // Go decodes a lone surrogate escape to U+FFFD; HTML-significant characters and the JS line
  // separators are escaped as \u00XX / \u20XX by json.Marshal.
  return JSON.stringify(s.replace(LONE_SURROGATE, '\uFFFD')).replace(
    HTML_UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function marshalValue(v: unknown): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(v)) throw new Error(`json: unsupported value: ${v}`);
      // Go's float formatting equals JS's number-to-string (same 1e-6 / 1e21 exponent switches), but keeps -0.
      return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint':
      return v.toString();
    case 'string':
      return marshalString(v);
  }
  if (Array.isArray(v)) return `[${v.map((x) => marshalValue(x) ?? 'null').join(',')}]`;
  if (v instanceof Date) return marshalString(v.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  const entries: string[] = [];
  for (const key of Object.keys(v as object).sort(compareCodePoints)) {
    const encoded = marshalValue((v as Record<string, unknown>)[key]);
    if (encoded !== undefined) entries.push(`${marshalString(key)}:${encoded}`);
  }
  return `{${entries.join(',')}}`;
}

/**
 * The bytes Go's json.Marshal writes for the same value decoded into map[string]interface{}:
 * keys sorted by code point, no whitespace, `<` `>` `&` U+2028 U+2029 escaped as \u003c etc.
 * Undefined members are dropped (absent in Go); Dates print like metav1.Time (RFC 3339, whole seconds, UTC).
 */
export function marshalGoJSON(value: unknown): string {
  return marshalValue(value) ?? 'null';
}
