// A pod template as Go holds it (decoded into k8s.io/api v0.30.10's corev1.PodTemplateSpec, the
// version OpenKruise v1.8.2 is built with), and two things computed from that:
//  * goPodTemplateRoundTrip: the JSON Go writes back (what v1.8.2's webhook patch leaves stored);
//  * computePodTemplateHash: Kubernetes' controller.ComputeHash(template, collisionCount) — the
//    hash v1.8.2 names Advanced DaemonSet revisions with (`<ds>-<hash>`, and the
//    `controller-revision-hash` label pods carry).
//
// ComputeHash, bit for bit: FNV-32a over hashutil.DeepHashObject's print of the Go
// corev1.PodTemplateSpec (go-spew `%#v` with DisableMethods, SortKeys, SpewKeys), then, when the
// collision count is set, its 4 little-endian bytes padded to 8; the sum in decimal, safe-encoded.
//
// The struct printed is the template as the controller holds it: decoded from the stored JSON into
// k8s.io/api v0.30.10 types (src/util/go-pod-template-types.ts, generated from Go). So every Go
// field is printed, zero or not, in declaration order, with its Go type: `Name:(string)agent`
// (strings unquoted), `(*int64)<nil>`, `(*int64)30`, `([]v1.Volume)<nil>` (absent or null) vs
// `([]string)[]` (an empty JSON list), maps with keys sorted bytewise, slice elements and map
// entries without types. Quantities print their internals, which depend on the stored text
// (resource.ParseQuantity keeps the text only when it is already canonical on the int64 path).

import { formatQuantity, parseQuantity, tryParseQuantity } from '../apis/quantity.ts';
import { GO_POD_TEMPLATE_TYPES, type GoTypeDesc } from './go-pod-template-types.ts';
import { compareCodePoints, fnv1a_32, marshalGoJSON, safeEncodeString } from './revision.ts';
import { isJsonObject, type JsonObject } from '../apis/json.ts';

function desc(type: string): GoTypeDesc {
  const d = GO_POD_TEMPLATE_TYPES[type];
  if (!d) throw new Error(`no Go layout for ${type}`);
  return d;
}

const MAX_INT64 = (1n << 63n) - 1n;
const ZERO_TIME = '{Time:(time.Time){wall:(uint64)0 ext:(int64)0 loc:(*time.Location)<nil>}}';

/**
 * resource.Quantity as decoded from JSON (UnmarshalJSON → ParseQuantity of the trimmed text):
 * int64Amount{value, scale} on Go's fast path, with the text kept when it is canonical; "0" is its
 * own case. Absent, null or unparsable: the zero Quantity.
 */
function printQuantity(v: unknown): string {
  const zero = { value: '0', scale: 0, dec: '(*inf.Dec)<nil>', s: '', format: '' };
  let q = zero;
  if (typeof v === 'string' || typeof v === 'number') {
    const text = String(v).trim();
    try {
      const parsed = parseQuantity(text);
      q = parsed.decimal
        ? { ...zero, dec: printInfDec(parsed.unscaled, parsed.exponent), format: parsed.format }
        : {
            value: text === '0' ? '0' : parsed.unscaled.toString(),
            scale: parsed.exponent,
            dec: zero.dec,
            s: parsed.text ?? '',
            format: parsed.format,
          };
    } catch {
      q = zero;
    }
  }
  return (
    `{i:(resource.int64Amount){value:(int64)${q.value} scale:(resource.Scale)${q.scale}} ` +
    `d:(resource.infDecAmount){Dec:${q.dec}} s:(string)${q.s} Format:(resource.Format)${q.format}}`
  );
}

/**
 * An inf.Dec off Go's int64 path (huge or sub-nano values): unscaled × 10^-scale with the scale
 * ParseQuantity leaves (rounded to nano), the magnitude as big.nat's 64-bit words, low first.
 */
function printInfDec(unscaled: bigint, exponent: number): string {
  const neg = unscaled < 0n;
  let abs = neg ? -unscaled : unscaled;
  // Round(…, 9) leaves every non-zero value at scale 9; a binary value capped at 2^63-1 has scale 0.
  let scale = -exponent;
  if (abs !== 0n && !(abs === MAX_INT64 && exponent === 0)) {
    abs *= 10n ** BigInt(exponent + 9);
    scale = 9;
  }
  const words: string[] = [];
  while (abs > 0n) {
    words.push((abs & 0xffffffffffffffffn).toString());
    abs >>= 64n;
  }
  return `(*inf.Dec){unscaled:(big.Int){neg:(bool)${neg} abs:(big.nat)[${words.join(' ')}]} scale:(inf.Scale)${scale}}`;
}

/** intstr.IntOrString.UnmarshalJSON: a JSON string is Type 1 (String), anything else an int32. */
function printIntOrString(v: unknown): string {
  const isString = typeof v === 'string';
  const int = typeof v === 'number' ? v : 0;
  return `{Type:(intstr.Type)${isString ? 1 : 0} IntVal:(int32)${int} StrVal:(string)${isString ? v : ''}}`;
}

const SPECIAL: Record<string, (v: unknown) => string> = {
  quantity: printQuantity,
  intOrString: printIntOrString,
  // A set time prints time.Local's internals (the controller's zone); templates carry null.
  time: () => ZERO_TIME,
  fieldsV1: (v) => `{Raw:([]uint8)${v === undefined || v === null ? '<nil>' : `[${Buffer.from(marshalGoJSON(v)).join(' ')}]`}}`,
};

/** spew's `%#v` of a value of Go type `type` decoded from JSON `v`; `typed` = print the `(type)` prefix. */
function print(type: string, v: unknown, typed: boolean): string {
  const d = desc(type);
  const prefix = typed ? `(${type})` : '';
  if (d.p !== undefined) {
    if (v === undefined || v === null) return typed ? `(${type})<nil>` : '<nil>';
    return (typed ? `(${type})` : '<*>') + print(d.p, v, false);
  }
  if (d.x !== undefined) return prefix + SPECIAL[d.x](v);
  if (d.s !== undefined) {
    const o = isJsonObject(v) ? v : {};
    return `${prefix}{${d.s.map(([goName, key, t]) => `${goName}:${print(t, key === '' ? o : o[key], true)}`).join(' ')}}`;
  }
  if (d.l !== undefined) {
    if (!Array.isArray(v)) return `${prefix}<nil>`;
    return `${prefix}[${v.map((x) => print(d.l!, x, false)).join(' ')}]`;
  }
  if (d.m !== undefined) {
    if (!isJsonObject(v)) return `${prefix}<nil>`;
    const [keyType, valueType] = d.m;
    const entries = Object.keys(v)
      .sort(compareCodePoints)
      .map((k) => `${print(keyType, k, false)}:${print(valueType, v[k], false)}`);
    return `${prefix}map[${entries.join(' ')}]`;
  }
  switch (d.b) {
    case 'string':
      return prefix + (typeof v === 'string' ? v : '');
    case 'bool':
      return prefix + (v === true ? 'true' : 'false');
    default:
      return prefix + (typeof v === 'number' && Number.isInteger(v) ? String(v) : '0');
  }
}

/** hashutil.DeepHashObject's text for a pod template: spew `%#v` of the decoded v1.PodTemplateSpec. */
export function goPodTemplateDump(template: unknown): string {
  return print('v1.PodTemplateSpec', template, true);
}

/**
 * hashutil.DeepHashObject(fnv.New32a(), []byte(text)): spew prints a byte slice as
 * `([]uint8)[b0 b1 …]` (decimal bytes of the UTF-8 text), and the hash is FNV-32a of that print.
 * Kubernetes and OpenKruise hash JSON this way (kubelet's HashContainer, the env-from-metadata hash,
 * CloneSet's volumeClaimTemplates hash).
 */
export function deepHashBytes(text: string): number {
  return fnv1a_32(`([]uint8)[${Buffer.from(text, 'utf8').join(' ')}]`);
}

/**
 * controller.ComputeHash: the hash v1.8.2 names an Advanced DaemonSet revision by. A null/absent
 * collisionCount adds nothing (it hashes differently from 0).
 */
export function computePodTemplateHash(template: unknown, collisionCount?: number | null): string {
  const dump = Buffer.from(goPodTemplateDump(template), 'utf8');
  const bytes =
    collisionCount === null || collisionCount === undefined ? dump : Buffer.concat([dump, littleEndianUint32Of8(collisionCount)]);
  return safeEncodeString(String(fnv1a_32(bytes)));
}

/** binary.LittleEndian.PutUint32 into an 8-byte slice, as ComputeHash writes it. */
function littleEndianUint32Of8(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

// ---------------------------------------------------------------------------------------------
// encoding/json's Marshal of the decoded struct.

const ROUND_TRIP_SPECIAL: Record<string, (v: unknown) => unknown> = {
  // A zero Quantity (absent, or null) marshals as "0"; otherwise its kept or canonical text.
  quantity: (v) => {
    if (v === undefined || v === null) return '0';
    const q = typeof v === 'string' || typeof v === 'number' ? tryParseQuantity(String(v).trim()) : undefined;
    return q ? formatQuantity(q) : v;
  },
  intOrString: (v) => v ?? 0,
  time: (v) => v ?? null,
  fieldsV1: (v) => v ?? null,
};

/**
 * A value Go would refuse to decode into the type (the webhook answers 400 there): the round trip
 * keeps it as sent, so that validation names the field.
 */
function undecodable(d: GoTypeDesc, v: unknown): boolean {
  if (v === undefined || v === null || d.p !== undefined || d.x !== undefined) return false;
  if (d.s !== undefined || d.m !== undefined) return !isJsonObject(v);
  if (d.l !== undefined) return !Array.isArray(v);
  if (d.b === 'string') return typeof v !== 'string';
  if (d.b === 'bool') return typeof v !== 'boolean';
  return !Number.isInteger(v);
}

/** Whether encoding/json's omitempty drops the decoded value (structs are never empty). */
function isEmpty(d: GoTypeDesc, v: unknown): boolean {
  if (undecodable(d, v)) return false;
  if (d.p !== undefined) return v === undefined || v === null;
  if (d.l !== undefined) return !Array.isArray(v) || v.length === 0;
  if (d.m !== undefined) return !isJsonObject(v) || Object.keys(v).length === 0;
  if (d.b !== undefined) return v === undefined || v === null || v === '' || v === false || v === 0;
  return false;
}

function roundTrip(type: string, v: unknown): unknown {
  const d = desc(type);
  if (undecodable(d, v)) return v;
  if (d.p !== undefined) return v === undefined || v === null ? null : roundTrip(d.p, v);
  if (d.x !== undefined) return ROUND_TRIP_SPECIAL[d.x](v);
  if (d.s !== undefined) {
    const o = isJsonObject(v) ? v : {};
    const out: JsonObject = {};
    for (const [, key, t, omitEmpty] of d.s) {
      if (key === '') {
        Object.assign(out, roundTrip(t, o));
        continue;
      }
      if (omitEmpty === '1' && isEmpty(desc(t), o[key])) continue;
      out[key] = roundTrip(t, o[key]);
    }
    return out;
  }
  if (d.l !== undefined) return Array.isArray(v) ? v.map((x) => roundTrip(d.l!, x)) : null;
  if (d.m !== undefined) {
    if (!isJsonObject(v)) return null;
    const valueType = d.m[1];
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundTrip(valueType, x)]));
  }
  if (v !== undefined && v !== null) return v;
  return d.b === 'string' ? '' : d.b === 'bool' ? false : 0;
}

/**
 * The template as Go decodes and re-marshals it: fields unknown to k8s.io/api v0.30.10 dropped,
 * omitempty fields dropped when empty (`args: []`, `nodeSelector: {}`), quantities in their
 * kept-or-canonical text, zero structs written (`creationTimestamp: null`). v1.8.2's Advanced
 * DaemonSet webhook answers with a patch to exactly this, so it is what the API server stores —
 * and what the revision hash is computed over.
 */
export function goPodTemplateRoundTrip(template: unknown): JsonObject {
  return roundTrip('v1.PodTemplateSpec', template) as JsonObject;
}
