// Kubernetes objects read as protobuf (application/vnd.kubernetes.protobuf) into exactly the objects
// the API server's JSON gives: the same keys in the same order, empty fields left out where JSON
// leaves them out, quantities as strings, times as RFC 3339 whole seconds, int-or-strings as either.
// The descriptors are compiled by protobufjs from k8s.io/api's generated.proto
// (./kubernetes.generated.ts, hack/gen-protobuf.sh); each message's decoder is generated from its
// descriptor and its Go struct tags (JSON_LAYOUT, read by reflection at the same version) and reads
// with protobufjs's Reader straight into the JSON object.
//
// The API server sends one object as the magic "k8s\0" and a runtime.Unknown holding the type and
// the object's bytes; a list is one such object (the list message: its ListMeta, then its items); a
// watch is a stream of 4-byte big-endian lengths, each followed by a metav1.WatchEvent (bare: the
// stream serializer frames it without the envelope) whose object is "k8s\0" + Unknown.

import protobuf from 'protobufjs/light.js';
import { CUSTOM_JSON, DESCRIPTOR, JSON_LAYOUT } from './kubernetes.generated.ts';
import { FRAMING, PROTOBUF_KINDS } from './wire-roots.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from('k8s\0', 'latin1');
const OBJECT_META = 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta';

type Message = Record<string, unknown>;

/** The decoded TypeMeta of an envelope. */
export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

/** The envelope's payload is not what it should be (no magic, an encoding we do not read). */
export class ProtobufDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufDecodeError';
  }
}

/** An int64 as protobufjs hands it over: a number, or a Long where the long package is loaded. */
function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : (v as { toNumber(): number }).toNumber();
}

/**
 * A varint int64 or uint64 as a number, read in place: protobufjs's int64() builds a LongBits and a
 * Long for every one, and a pod's times (a dozen per watch event) are each one. Nine bytes hold every
 * value below 2^63; a tenth (a negative int64, a uint64 from 2^63) goes to protobufjs from the start.
 */
function readVarint64(r: protobuf.Reader, type: 'int64' | 'uint64'): number {
  const { buf, len } = r;
  let pos = r.pos;
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 9 && pos < len; i++) {
    const byte = buf[pos++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      r.pos = pos;
      return value;
    }
    scale *= 128;
  }
  return toNumber(r[type]());
}
const readInt64 = (r: protobuf.Reader) => readVarint64(r, 'int64');
const readUint64 = (r: protobuf.Reader) => readVarint64(r, 'uint64');

/** The last time written, kept: one pod's times (created, scheduled, its conditions) are mostly the same second. */
let lastTime = { seconds: NaN, json: '' };

/**
 * The messages with a JSON form of their own, as apimachinery's MarshalJSON writes them, read
 * straight off the wire (fields by number, as in k8s.io/apimachinery's generated.proto): a pod holds
 * a dozen times and quantities, and protobufjs's generic decode built a message object for each.
 */
const CUSTOM: Record<string, Decode> = {
  // metav1.Time {seconds = 1, nanos = 2}: whole seconds, UTC; the zero time (an empty message) is null.
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time': (r, length) => {
    const end = r.pos + length;
    let seconds = 0;
    let present = false;
    while (r.pos < end) {
      const t = r.uint32();
      const number = t >>> 3;
      if (number === 1) seconds = readInt64(r);
      else r.skipType(t & 7);
      present ||= number === 1 || number === 2;
    }
    if (!present) return null;
    if (seconds !== lastTime.seconds) lastTime = { seconds, json: `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z` };
    return lastTime.json;
  },
  // resource.Quantity {string = 1}: written on the wire as the canonical string, which is also its JSON.
  'k8s.io.apimachinery.pkg.api.resource.Quantity': (r, length) => {
    const end = r.pos + length;
    let value = '';
    while (r.pos < end) {
      const t = r.uint32();
      if (t >>> 3 === 1) value = strings.read(r);
      else r.skipType(t & 7);
    }
    return value || '0';
  },
  // intstr.IntOrString {type = 1, intVal = 2, strVal = 3}.
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': (r, length) => {
    const end = r.pos + length;
    let type = 0;
    let intVal = 0;
    let strVal = '';
    while (r.pos < end) {
      const t = r.uint32();
      switch (t >>> 3) {
        case 1:
          type = readInt64(r);
          break;
        case 2:
          intVal = r.int32();
          break;
        case 3:
          strVal = strings.read(r);
          break;
        default:
          r.skipType(t & 7);
      }
    }
    return type === 1 ? strVal : intVal;
  },
  // metav1.FieldsV1 {Raw = 1}: the managed fields' set, held as its JSON document.
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1': (r, length) => {
    const end = r.pos + length;
    let raw: Uint8Array | undefined;
    while (r.pos < end) {
      const t = r.uint32();
      if (t >>> 3 === 1) raw = r.bytes();
      else r.skipType(t & 7);
    }
    return raw && raw.length ? JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8')) : null;
  },
};

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/** Strings up to this long are shared between objects; longer ones (JSON in annotations) rarely repeat. */
const SHARED_MAX_LENGTH = 128;
/** Slots of the table of strings last read (a power of two). */
const SHARED_TABLE_SIZE = 1 << 16;

/**
 * Short strings read straight off the wire, one copy of each shared. Every string protobufjs reads
 * is a new one, where JSON.parse shares equal short strings: without sharing a 20k-pod cache held
 * 60 MiB instead of JSON's 43 (namespaces, node names, images, label keys and values, condition
 * types repeat in every pod). The table is looked up by the string's bytes before any string is
 * made: a repeated string (most of a pod's) costs a hash and a compare of its bytes, not a UTF-8
 * decode, a new string and a Map lookup. Each slot holds the string last read there, so a
 * string that stops coming back is replaced by one that does.
 */
class WireStrings {
  private readonly table: Array<string | undefined> = new Array<string | undefined>(SHARED_TABLE_SIZE).fill(undefined);

  /** The length-delimited string at the reader's position. */
  read = (r: protobuf.Reader): string => {
    const length = r.uint32();
    const start = r.pos;
    const end = start + length;
    if (end > r.len) throw new RangeError(`index out of range: ${start} + ${length} > ${r.len}`);
    r.pos = end;
    const buf = r.buf;
    if (length > SHARED_MAX_LENGTH) return utf8(buf, start, end);
    let hash = length;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ buf[i]!, 0x01000193);
    const slot = (hash ^ (hash >>> 16)) & (SHARED_TABLE_SIZE - 1);
    const known = this.table[slot];
    // As many UTF-16 units as bytes only if every character is ASCII: then equal units are equal bytes.
    if (known !== undefined && known.length === length) {
      let i = 0;
      while (i < length && known.charCodeAt(i) === buf[start + i]) i++;
      if (i === length) return known;
    }
    const s = utf8(buf, start, end);
    this.table[slot] = s;
    return s;
  };
}

/** UTF-8 bytes as a string, as protobufjs reads them: Node's own decoder for a Buffer. */
function utf8(buf: Uint8Array, start: number, end: number): string {
  // Buffer's undocumented utf8Slice, which protobufjs's BufferReader calls too: toString() without its argument checks.
  const nodeBuffer = buf as { utf8Slice?: (start: number, end: number) => string };
  return nodeBuffer.utf8Slice ? nodeBuffer.utf8Slice(start, end) : protobuf.util.utf8.read(buf, start, end);
}

/**
 * Strings that name one object only (its name, uid, resourceVersion, IPs, container IDs): never
 * shared, so not looked up — a miss costs a hash and a table entry each.
 */
const UNIQUE_STRINGS = new Set([
  'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta.name',
  'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta.uid',
  'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta.resourceVersion',
  'k8s.io.api.core.v1.PodStatus.podIP',
  'k8s.io.api.core.v1.PodIP.ip',
  'k8s.io.api.core.v1.ContainerStatus.containerID',
]);

const strings = new WireStrings();

/** A message's decoder: reads `length` bytes from the reader and returns the message's JSON form. */
type Decode = (r: protobuf.Reader, length: number) => unknown;

/** The Reader call that reads one value of a scalar type (int64s as numbers, bytes as base64). */
function scalarRead(type: string, fieldName = ''): string {
  if (type === 'int64') return 'I(r)';
  if (type === 'uint64') return 'U(r)';
  if (INT64.has(type)) return `N(r.${type}())`;
  if (type === 'string') return UNIQUE_STRINGS.has(fieldName) ? 'r.string()' : 'S(r)';
  if (type === 'bytes') return 'B(r.bytes())';
  return `r.${type}()`;
}

/** What Go writes for a scalar absent on the wire (the zero value). */
function zeroValue(type: string): string {
  if (type === 'string' || type === 'bytes') return "''";
  if (type === 'bool') return 'false';
  return '0';
}

/** Numeric scalars may come packed (one length-delimited run) when repeated. */
const PACKABLE = new Set(['double', 'float', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'bool', ...INT64]);

/** One protobufjs Root and the decoders of its messages into their JSON form. */
class Codec {
  readonly root: protobuf.Root;
  private readonly types = new Map<string, protobuf.Type>();
  private readonly decoders = new Map<protobuf.Type, Decode>();

  constructor(descriptor: protobuf.INamespace) {
    this.root = protobuf.Root.fromJSON(descriptor);
    this.root.resolveAll();
  }

  /** A message type by its full name (protobufjs's lookup walks the namespaces anew on every call: once per watch event three times). */
  type(name: string): protobuf.Type {
    let type = this.types.get(name);
    if (!type) this.types.set(name, (type = this.root.lookupType(name)));
    return type;
  }

  /** The JSON form of a whole message of `type` held in `bytes`. */
  decode(type: protobuf.Type, bytes: Uint8Array): unknown {
    return this.decoder(type)(protobuf.Reader.create(bytes), bytes.length);
  }

  /**
   * The decoder of `type`: the messages with a JSON form of their own through protobufjs's decode
   * and CUSTOM; every other one generated from its descriptor and JSON layout (generate()).
   */
  decoder(type: protobuf.Type): Decode {
    const known = this.decoders.get(type);
    if (known) return known;
    const name = type.fullName.slice(1);
    const custom = CUSTOM[name];
    if (custom) {
      this.decoders.set(type, custom);
      return custom;
    }
    const layout = JSON_LAYOUT[name];
    if (!layout) {
      const known = CUSTOM_JSON.includes(name) ? ' (a JSON form of its own that codec.ts does not know)' : '';
      throw new ProtobufDecodeError(`no JSON layout for ${name}${known}`);
    }
    // Set before the fields' decoders are made: a message may hold itself (and calls this until generated).
    const self: { decode?: Decode } = {};
    this.decoders.set(type, (r, length) => self.decode!(r, length));
    const fields = layout.flatMap(([id, key, flags]): GeneratedField[] => {
      const field = type.fieldsById[id];
      if (!field) return []; // left out of this codec's descriptor (managedFields)
      const valueType = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
      return [
        {
          field,
          key,
          omitEmpty: flags.includes('o'),
          omitZero: flags.includes('z'),
          nilable: flags.includes('n'),
          decoderOf: valueType instanceof protobuf.Type ? () => this.decoder(valueType) : undefined,
        },
      ];
    });
    const decode = (self.decode = generate(fields));
    this.decoders.set(type, decode);
    return decode;
  }
}

/** One field of a generated decoder, in the JSON layout's order. */
interface GeneratedField {
  field: protobuf.Field;
  /** '' : the field's own fields are written into its parent. */
  key: string;
  omitEmpty: boolean;
  omitZero: boolean;
  /** Go's field is a pointer, slice or map: absent on the wire, it is nil (JSON null). */
  nilable: boolean;
  /**
   * The decoder of a message field, or of a map's message values. Made on the field's first read:
   * a pod's descriptor holds every volume source, probe and security setting, most of which a
   * cluster's pods never carry. Generating all 134 decoders took 8 ms of a start's first pod list
   * (on the one thread the webhook server answers on); plain pods need 21–29 of them, 3 ms.
   */
  decoderOf: (() => Decode) | undefined;
}

/** A reader of no bytes: a struct absent on the wire is decoded from it (Go writes its zero value). */
const NOTHING = protobuf.Reader.create(new Uint8Array(0));

/**
 * A message's decoder, generated as protobufjs generates its own (`new Function`), but writing the
 * JSON object directly: the wire's fields into one local each, then the object in JSON's key order
 * with Go's omitempty and nil rules. protobufjs's decode builds a message object first, which a
 * second pass turned into JSON: twice the objects, and on a 50k-pod list the garbage collector's
 * work grew with them.
 */
function generate(fields: readonly GeneratedField[]): Decode {
  const reads: string[] = [];
  const writes: string[] = [];
  fields.forEach((f, i) => {
    const { field } = f;
    const v = `v${i}`;
    const set = (expr: string) => (f.key === '' ? `Object.assign(out, ${expr});` : `out[${JSON.stringify(f.key)}] = ${expr};`);
    const empty = f.omitEmpty ? '' : set('null');
    const one = f.decoderOf ? `D[${i}](r, r.uint32())` : scalarRead(field.type, field.fullName.slice(1));
    if (field.map) {
      // A map's value type is the field's type; its key type is its own.
      const keyType = (field as unknown as { keyType: string }).keyType;
      const zero = f.decoderOf ? `D[${i}](NOTHING, 0)` : zeroValue(field.type);
      reads.push(
        `case ${field.id}: { const e = r.uint32() + r.pos; let k = ${zeroValue(keyType)}, x; ` +
          `while (r.pos < e) { const u = r.uint32(); switch (u >>> 3) { case 1: k = ${scalarRead(keyType)}; break; case 2: x = ${one}; break; default: r.skipType(u & 7); } } ` +
          `(${v} ??= {})[k] = x === undefined ? ${zero} : x; break; }`,
      );
      writes.push(`if (${v} === undefined) { ${empty} } else { ${set(v)} }`);
    } else if (field.repeated) {
      const packed = !f.decoderOf && PACKABLE.has(field.type);
      reads.push(
        packed
          ? `case ${field.id}: ${v} ??= []; if ((t & 7) === 2) { const e = r.uint32() + r.pos; while (r.pos < e) ${v}.push(${one}); } else ${v}.push(${one}); break;`
          : `case ${field.id}: (${v} ??= []).push(${one}); break;`,
      );
      // A copy of the exact length: an array grown by push keeps room for 16 more (a pod has ~20).
      writes.push(`if (${v} === undefined) { ${empty} } else { ${set(`${v}.slice()`)} }`);
    } else {
      reads.push(`case ${field.id}: ${v} = ${one}; break;`);
      // A pointer, slice or map absent on the wire is nil in Go: JSON null, or nothing if omitted.
      const absent = f.nilable ? `if (${v} === undefined) { ${f.omitEmpty || f.omitZero ? '' : set('null')} } else ` : '';
      if (f.decoderOf) {
        // A struct (not a pointer) is always written, empty or not; JSON omits it only if omitzero.
        const keep = f.key !== '' && f.omitZero ? 'if (c !== null) ' : '';
        writes.push(`${absent}{ c = ${v} === undefined ? D[${i}](NOTHING, 0) : ${v}; ${keep}${set('c')} }`);
      } else {
        // omitempty leaves out a zero scalar, but not a pointer's (present: it was set).
        const skip = (f.omitEmpty || f.omitZero) && !f.nilable ? `if (c !== '' && c !== 0 && c !== false) ` : '';
        writes.push(`${absent}{ c = ${v} === undefined ? ${zeroValue(field.type)} : ${v}; ${skip}${set('c')} }`);
      }
    }
  });
  const body = [
    `let ${fields.map((_, i) => `v${i}`).join(', ') || '_'}, c;`,
    'const end = r.pos + length;',
    'while (r.pos < end) {',
    '  const t = r.uint32();',
    '  switch (t >>> 3) {',
    ...reads.map((line) => `    ${line}`),
    '    default: r.skipType(t & 7);',
    '  }',
    '}',
    'const out = {};',
    ...writes,
    'return out;',
  ];
  const factory = new Function('D', 'N', 'I', 'U', 'S', 'B', 'NOTHING', `return function (r, length) {\n${body.join('\n')}\n};`) as (
    decoders: ReadonlyArray<Decode | undefined>,
    toNumber: (v: unknown) => number,
    int64: (r: protobuf.Reader) => number,
    uint64: (r: protobuf.Reader) => number,
    readString: (r: protobuf.Reader) => string,
    base64: (b: Uint8Array) => string,
    nothing: protobuf.Reader,
  ) => Decode;
  // Each message field's decoder takes its place in D on the field's first read.
  const D: Array<Decode | undefined> = fields.map(
    (f, i) =>
      f.decoderOf &&
      ((r: protobuf.Reader, length: number) => {
        const decode = f.decoderOf!();
        D[i] = decode;
        return decode(r, length);
      }),
  );
  return factory(
    D,
    toNumber,
    readInt64,
    readUint64,
    strings.read,
    (b) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64'),
    NOTHING,
  );
}

/** The descriptors without ObjectMeta.managedFields: protobufjs then skips their bytes unread. */
function withoutManagedFields(descriptor: protobuf.INamespace): protobuf.INamespace {
  const copy = structuredClone(descriptor);
  let ns = copy as { nested?: Record<string, unknown> };
  const path = OBJECT_META.split('.');
  for (const part of path) ns = ns.nested![part] as typeof ns;
  delete (ns as unknown as { fields: Record<string, unknown> }).fields.managedFields;
  return copy;
}

let full: Codec | undefined;
let lean: Codec | undefined;

/** The codec of every field, or (withoutManagedFields) one that leaves metadata.managedFields out. */
function codec(withoutManagedFields_ = false): Codec {
  if (withoutManagedFields_) return (lean ??= new Codec(withoutManagedFields(DESCRIPTOR)));
  return (full ??= new Codec(DESCRIPTOR));
}

/**
 * Builds the codec a first protobuf answer would build (its protobufjs Root: 10–15 ms), for a caller
 * with a request in flight: the time is then taken from the wait for the answer, not added to it.
 */
export function prepareCodec(opts: { withoutManagedFields?: boolean } = {}): void {
  codec(opts.withoutManagedFields);
}

/** Whether lists and watches of this kind are read as protobuf. */
export function readsAsProtobuf(kind: string): boolean {
  return Object.hasOwn(PROTOBUF_KINDS, kind);
}

/** Whether a response's Content-Type is protobuf (a watch's carries `;stream=watch`). */
export function isProtobuf(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && value.split(';')[0]!.trim() === PROTOBUF_MEDIA_TYPE;
}

/** The TypeMeta and payload of "k8s\0" + runtime.Unknown. */
function unwrap(bytes: Uint8Array, c: Codec): { typeMeta: TypeMeta; raw: Uint8Array } {
  if (bytes.length < MAGIC.length || !MAGIC.equals(bytes.subarray(0, MAGIC.length))) {
    throw new ProtobufDecodeError('a protobuf object without the "k8s\\0" prefix');
  }
  const unknown = c.type(FRAMING.unknown).decode(bytes.subarray(MAGIC.length)) as unknown as Message;
  if (unknown.contentEncoding) throw new ProtobufDecodeError(`a protobuf object in encoding ${String(unknown.contentEncoding)}`);
  const tm = (unknown.typeMeta ?? {}) as Partial<TypeMeta>;
  return {
    typeMeta: { apiVersion: tm.apiVersion ?? '', kind: tm.kind ?? '' },
    raw: (unknown.raw as Uint8Array | undefined) ?? new Uint8Array(),
  };
}

/**
 * One object ("k8s\0" + Unknown) as its JSON form, kind and apiVersion first as the API server
 * writes them: one of PROTOBUF_KINDS, or a metav1.Status.
 */
export function decodeObject(bytes: Uint8Array, opts: { withoutManagedFields?: boolean } = {}): Message {
  const c = codec(opts.withoutManagedFields);
  const { typeMeta, raw } = unwrap(bytes, c);
  const name = typeMeta.kind === 'Status' ? FRAMING.status : PROTOBUF_KINDS[typeMeta.kind]?.object;
  if (!name) throw new ProtobufDecodeError(`a protobuf object of kind ${typeMeta.kind || '(none)'}, not read as protobuf`);
  const fields = c.decode(c.type(name), raw) as Message;
  return { kind: typeMeta.kind, apiVersion: typeMeta.apiVersion, ...fields };
}

/**
 * A protobuf error body (a metav1.Status) as the JSON the API server would have sent. Through the
 * codec without managedFields (a Status has no ObjectMeta, so both read it alike): the one the
 * manager's informers and pod writes have built already, where the full codec would be a second
 * protobufjs Root (10–15 ms and 1 MiB of heap) built at the first write refused, e.g. a 409.
 */
export function statusJson(bytes: Uint8Array): string {
  return JSON.stringify(decodeObject(bytes, { withoutManagedFields: true }));
}

// ---------------------------------------------------------------------------------------------
// Wire-level reading of the envelope and the list around the items: tags and lengths only.

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

/** A varint at pos: [value, the position after it], or undefined if it runs past end. */
function varint(b: Uint8Array, pos: number, end: number): [number, number] | undefined {
  let value = 0;
  let scale = 1;
  for (let i = pos; i < end; i++) {
    const byte = b[i]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, i + 1];
    scale *= 128;
  }
  return undefined;
}

/** A field at pos: its number, where its value starts and ends; undefined if not all arrived yet. */
function field(b: Uint8Array, pos: number, end: number): { number: number; start: number; end: number; wireType: number } | undefined {
  const tag = varint(b, pos, end);
  if (!tag) return undefined;
  const [key, at] = tag;
  const wireType = key % 8;
  const number = Math.floor(key / 8);
  switch (wireType) {
    case WIRE_VARINT: {
      const v = varint(b, at, end);
      return v && { number, start: at, end: v[1], wireType };
    }
    case WIRE_FIXED64:
      return at + 8 <= end ? { number, start: at, end: at + 8, wireType } : undefined;
    case WIRE_FIXED32:
      return at + 4 <= end ? { number, start: at, end: at + 4, wireType } : undefined;
    case WIRE_LEN: {
      const length = varint(b, at, end);
      if (!length) return undefined;
      // The header alone is complete: start/end are where the value would be.
      return { number, start: length[1], end: length[1] + length[0], wireType };
    }
    default:
      throw new ProtobufDecodeError(`unexpected protobuf wire type ${wireType}`);
  }
}

/** A list without its items: kind, apiVersion, metadata (resourceVersion, continue…). */
export type ProtobufListHead = Record<string, unknown> & { metadata?: { resourceVersion?: string; continue?: string } };

type ListPhase = 'magic' | 'envelope' | 'list';

/**
 * Reads a protobuf list body as it arrives and hands over each item as soon as all its bytes are
 * there, as ListBodyReader does for JSON: a 50k-pod list is never held whole. The list message is
 * the envelope's `raw` field; its ListMeta (field 1) comes before its items (field 2).
 */
export class ProtobufListReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Where bytes not read yet are kept between chunks (grown to fit). */
  private scratch: Buffer = Buffer.alloc(0);
  private pos = 0;
  private phase: ListPhase = 'magic';
  /** Bytes of the list message not read yet (phase 'list'). */
  private listRemaining = 0;
  private typeMeta: TypeMeta = { apiVersion: '', kind: '' };
  private head: ProtobufListHead | undefined;
  private readonly codec: Codec;
  private listType: protobuf.Type | undefined;
  private itemType: protobuf.Type | undefined;

  constructor(
    private readonly onHead: (head: ProtobufListHead) => void,
    private readonly onItem: (item: Message) => void,
    opts: { dropManagedFields?: boolean } = {},
  ) {
    this.codec = codec(opts.dropManagedFields);
  }

  push(chunk: Buffer): void {
    // Between chunks, buf is empty or the bytes not read yet, at the start of scratch.
    if (this.buf.length === 0) {
      this.buf = chunk; // read where it is
    } else {
      const length = this.buf.length + chunk.length;
      if (length > this.scratch.length) this.growScratch(length);
      chunk.copy(this.scratch, this.buf.length);
      this.buf = this.scratch.subarray(0, length);
    }
    this.pos = 0;
    this.read();
    const rest = this.buf.length - this.pos;
    if (rest > this.scratch.length) this.growScratch(rest);
    // Overlapping copies (buf in scratch) are fine: Buffer.copy moves as memmove does.
    if (rest > 0) this.buf.copy(this.scratch, 0, this.pos);
    this.buf = this.scratch.subarray(0, rest);
    this.pos = 0;
  }

  /** A larger scratch holding what buf holds (buf may be in the old one). */
  private growScratch(atLeast: number): void {
    const bigger = Buffer.allocUnsafeSlow(Math.max(atLeast, 2 * this.scratch.length));
    this.buf.copy(bigger, 0, this.pos);
    this.buf = bigger.subarray(0, this.buf.length - this.pos);
    this.pos = 0;
    this.scratch = bigger;
  }

  /** The body has ended: the list's head. */
  end(): ProtobufListHead {
    if (this.phase !== 'envelope' || this.buf.length !== 0) throw new ProtobufDecodeError('protobuf list body ended early');
    return this.giveHead();
  }

  private giveHead(metadata: Message = {}): ProtobufListHead {
    if (!this.head) {
      this.head = { kind: this.typeMeta.kind, apiVersion: this.typeMeta.apiVersion, metadata };
      this.onHead(this.head);
    }
    return this.head;
  }

  private read(): void {
    const b = this.buf;
    const n = b.length;
    for (;;) {
      if (this.phase === 'magic') {
        if (n - this.pos < MAGIC.length) return;
        if (!MAGIC.equals(b.subarray(this.pos, this.pos + MAGIC.length)))
          throw new ProtobufDecodeError('a protobuf list without the "k8s\\0" prefix');
        this.pos += MAGIC.length;
        this.phase = 'envelope';
      }
      if (this.phase === 'envelope') {
        const f = field(b, this.pos, n);
        if (!f) return;
        if (f.number === 2 && f.wireType === WIRE_LEN) {
          // The list message: read field by field from here.
          this.listRemaining = f.end - f.start;
          this.pos = f.start;
          this.phase = 'list';
          this.startList();
        } else {
          if (f.end > n) return;
          if (f.number === 1)
            this.typeMeta = this.codec
              .type('k8s.io.apimachinery.pkg.runtime.TypeMeta')
              .decode(b.subarray(f.start, f.end)) as unknown as TypeMeta;
          if (f.number === 3 && f.end > f.start) throw new ProtobufDecodeError('a protobuf list in an encoding other than identity');
          this.pos = f.end;
        }
        continue;
      }
      // phase 'list'
      if (this.listRemaining === 0) {
        this.giveHead();
        this.phase = 'envelope';
        continue;
      }
      const f = field(b, this.pos, Math.min(n, this.pos + this.listRemaining));
      if (!f || f.end > n) return;
      const bytes = b.subarray(f.start, f.end);
      if (f.number === 1 && f.wireType === WIRE_LEN) {
        const metaType = this.listType!.fieldsById[1]!.resolvedType as protobuf.Type;
        this.giveHead(this.codec.decode(metaType, bytes) as Message);
      } else if (f.number === 2 && f.wireType === WIRE_LEN) {
        this.giveHead();
        this.onItem(this.codec.decode(this.itemType!, bytes) as Message);
      }
      this.listRemaining -= f.end - this.pos;
      this.pos = f.end;
    }
  }

  private startList(): void {
    const kind = this.typeMeta.kind.replace(/List$/, '');
    const names = PROTOBUF_KINDS[kind];
    if (!names || this.typeMeta.kind !== `${kind}List`)
      throw new ProtobufDecodeError(`a protobuf list of kind ${this.typeMeta.kind || '(none)'}, not read as protobuf`);
    this.listType = this.codec.type(names.list);
    this.itemType = this.codec.type(names.object);
  }
}

/**
 * Splits a protobuf watch stream into its events: each a 4-byte big-endian length and a
 * metav1.WatchEvent ({type, object: "k8s\0" + Unknown}).
 */
export class ProtobufWatchDecoder {
  private buf: Buffer = Buffer.alloc(0);

  constructor(private readonly opts: { withoutManagedFields?: boolean } = {}) {}

  /** The events the chunk completes, each {type, object} with the object in its JSON form. */
  push(chunk: Buffer): Array<{ type: string; object: Message }> {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const events: Array<{ type: string; object: Message }> = [];
    let pos = 0;
    while (this.buf.length - pos >= 4) {
      const length = this.buf.readUInt32BE(pos);
      if (this.buf.length - pos - 4 < length) break;
      events.push(this.event(this.buf.subarray(pos + 4, pos + 4 + length)));
      pos += 4 + length;
    }
    this.buf = pos === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(pos);
    return events;
  }

  /** Bytes left that are not a whole event (the stream ended mid-event). */
  pending(): number {
    return this.buf.length;
  }

  private event(frame: Uint8Array): { type: string; object: Message } {
    // The framing messages are the same in both codecs: the one the objects need is the one built.
    const ev = codec(this.opts.withoutManagedFields).type(FRAMING.watchEvent).decode(frame) as unknown as {
      type?: string;
      object?: { raw?: Uint8Array };
    };
    return { type: ev.type ?? '', object: decodeObject(ev.object?.raw ?? new Uint8Array(), this.opts) };
  }
}
