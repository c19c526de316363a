// Kubernetes objects read as protobuf (application/vnd.kubernetes.protobuf) into exactly the objects
// the API server's JSON gives: the same keys in the same order, empty fields left out where JSON
// leaves them out, quantities as strings, times as RFC 3339 whole seconds, int-or-strings as either.
// The messages are decoded by protobufjs from descriptors compiled from k8s.io/api's
// generated.proto (./kubernetes.generated.ts, hack/gen-protobuf.sh); how each becomes JSON follows
// its Go struct tags (JSON_LAYOUT), read by reflection at the same version.
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
type Convert = (value: unknown) => unknown;

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

function isEmptyObject(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/** The last time written, kept: one pod's times (created, scheduled, its conditions) are mostly the same second. */
let lastTime = { seconds: NaN, json: '' };

/** metav1.Time: whole seconds, UTC; the zero time (an empty message) is null. */
function timeJson(m: Message): string | null {
  if (!Object.hasOwn(m, 'seconds') && !Object.hasOwn(m, 'nanos')) return null;
  const seconds = toNumber(m.seconds);
  if (seconds !== lastTime.seconds) lastTime = { seconds, json: `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z` };
  return lastTime.json;
}

/** The messages with a JSON form of their own, as apimachinery's MarshalJSON writes them. */
const CUSTOM: Record<string, Convert> = {
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time': (m) => timeJson(m as Message),
  // Written on the wire as the canonical string, which is also its JSON.
  'k8s.io.apimachinery.pkg.api.resource.Quantity': (m) => (m as Message).string || '0',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': (m) => {
    const v = m as Message;
    return toNumber(v.type) === 1 ? v.strVal : toNumber(v.intVal);
  },
  // The managed fields' set, held as its JSON document.
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1': (m) => {
    const raw = (m as Message).Raw as Uint8Array | undefined;
    return raw && raw.length ? JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8')) : null;
  },
};

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/** Strings up to this long are shared between objects; longer ones (JSON in annotations) rarely repeat. */
const INTERNED_MAX_LENGTH = 128;
/** Strings a generation of the intern table holds before the older one is dropped. */
const INTERN_GENERATION_SIZE = 1 << 16;

/**
 * One copy of each short string recently decoded. Every string protobufjs reads is a new one, where
 * JSON.parse shares equal short strings: without this a 20k-pod cache held 60 MiB instead of JSON's
 * 43 (namespaces, node names, images, label values and condition types repeat in every pod). Two
 * generations bound the table: a string not seen for a generation's worth of new ones is dropped.
 */
class StringInterner {
  private young = new Map<string, string>();
  private old = new Map<string, string>();

  intern = (s: string): string => {
    if (s.length > INTERNED_MAX_LENGTH) return s;
    const young = this.young.get(s);
    if (young !== undefined) return young;
    const seen = this.old.get(s) ?? s;
    if (this.young.size >= INTERN_GENERATION_SIZE) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(seen, seen);
    return seen;
  };
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

const strings = new StringInterner();

function scalarConvert(field: protobuf.Field): Convert | undefined {
  const { type } = field;
  if (INT64.has(type)) return toNumber;
  if (type === 'string') return UNIQUE_STRINGS.has(field.fullName.slice(1)) ? undefined : (strings.intern as Convert);
  if (type === 'bytes') return (b) => Buffer.from(b as Uint8Array).toString('base64');
  return undefined;
}

/** How one field of a message becomes JSON. */
interface FieldPlan {
  name: string;
  /** '' : the field's own fields are written into its parent. */
  key: string;
  omitEmpty: boolean;
  omitZero: boolean;
  /** Go's field is a pointer, slice or map: absent on the wire, it is nil (JSON null). */
  nilable: boolean;
  repeated: boolean;
  map: boolean;
  message: boolean;
  /** Converts one value (a message, an int64, bytes); undefined: taken as it is. */
  value: Convert | undefined;
}

/** One protobufjs Root and the JSON converters of its messages. */
class Codec {
  readonly root: protobuf.Root;
  private readonly converters = new Map<protobuf.Type, Convert>();

  constructor(descriptor: protobuf.INamespace) {
    this.root = protobuf.Root.fromJSON(descriptor);
    this.root.resolveAll();
  }

  private readonly types = new Map<string, protobuf.Type>();

  /** A message type by its full name (protobufjs's lookup walks the namespaces anew on every call: once per watch event three times). */
  type(name: string): protobuf.Type {
    let type = this.types.get(name);
    if (!type) this.types.set(name, (type = this.root.lookupType(name)));
    return type;
  }

  /** The JSON form of a decoded message of `type`. */
  converter(type: protobuf.Type): Convert {
    let c = this.converters.get(type);
    if (c) return c;
    const name = type.fullName.slice(1);
    const custom = CUSTOM[name];
    if (custom) {
      this.converters.set(type, custom);
      return custom;
    }
    const layout = JSON_LAYOUT[name];
    if (!layout) {
      const known = CUSTOM_JSON.includes(name) ? ' (a JSON form of its own that codec.ts does not know)' : '';
      throw new ProtobufDecodeError(`no JSON layout for ${name}${known}`);
    }
    // Set before the fields are planned: a message may hold itself (and calls this until compiled).
    const self: { compiled?: Convert } = {};
    c = (m) => self.compiled!(m);
    this.converters.set(type, c);
    const plans = layout.flatMap(([id, key, flags]): FieldPlan[] => {
      const field = type.fieldsById[id];
      if (!field) return []; // left out of this codec's descriptor (managedFields)
      const message = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
      return [
        {
          name: field.name,
          key,
          omitEmpty: flags.includes('o'),
          omitZero: flags.includes('z'),
          nilable: flags.includes('n'),
          repeated: field.repeated,
          map: field.map,
          message: message !== undefined,
          value: message ? this.converter(message) : scalarConvert(field),
        },
      ];
    });
    const compiled = (self.compiled = compile(plans));
    this.converters.set(type, compiled);
    return compiled;
  }
}

/**
 * One message's converter as straight-line code, one statement per field in JSON order (a 50k-pod
 * list runs it ~3 million times: an interpreter over the plans took as long as protobufjs's decode).
 * Absent on the wire, a field is protobufjs's default (on the message's prototype): '' / 0 / false,
 * an empty list or map; present means an own property.
 */
function compile(plans: readonly FieldPlan[]): Convert {
  const body = ['const out = {};', 'let v, c;'];
  plans.forEach((f, i) => {
    const get = `m[${JSON.stringify(f.name)}]`;
    const set = (expr: string) => (f.key === '' ? `Object.assign(out, ${expr});` : `out[${JSON.stringify(f.key)}] = ${expr};`);
    const value = `fns[${i}]`;
    const empty = f.omitEmpty ? '' : set('null');
    if (f.repeated) {
      body.push(`v = ${get};`, `if (!v || v.length === 0) { ${empty} } else { ${set(f.value ? `v.map(${value})` : 'v')} }`);
    } else if (f.map) {
      const convert = f.value ? `c = {}; for (const k in v) c[k] = ${value}(v[k]); ${set('c')}` : set('v');
      body.push(`v = ${get};`, `if (!v || isEmptyObject(v)) { ${empty} } else { ${convert} }`);
    } else {
      // A pointer, slice or map absent on the wire is nil in Go: JSON null, or nothing if omitted.
      const absent = f.nilable
        ? `if (!hasOwn(m, ${JSON.stringify(f.name)})) { ${f.omitEmpty || f.omitZero ? '' : set('null')} } else `
        : '';
      if (f.message) {
        // A struct (not a pointer) is always written, empty or not; JSON omits it only if omitzero.
        const keep = f.key !== '' && f.omitZero ? 'if (c !== null) ' : '';
        body.push(`${absent}{ c = ${value}(hasOwn(m, ${JSON.stringify(f.name)}) ? ${get} : {}); ${keep}${set('c')} }`);
      } else {
        const converted = f.value ? `${value}(${get})` : get;
        // omitempty leaves out a zero scalar, but not a pointer's (present: it was set).
        const skip = (f.omitEmpty || f.omitZero) && !f.nilable ? `if (c !== '' && c !== 0 && c !== false) ` : '';
        body.push(`${absent}{ c = ${converted}; ${skip}${set('c')} }`);
      }
    }
  });
  body.push('return out;');
  const factory = new Function('fns', 'isEmptyObject', 'hasOwn', `return function (m) {\n${body.join('\n')}\n};`) as (
    fns: ReadonlyArray<Convert | undefined>,
    isEmpty: typeof isEmptyObject,
    hasOwn: typeof Object.hasOwn,
  ) => Convert;
  return factory(
    plans.map((f) => f.value),
    isEmptyObject,
    Object.hasOwn,
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
  const type = c.type(name);
  const fields = c.converter(type)(type.decode(raw)) as Message;
  return { kind: typeMeta.kind, apiVersion: typeMeta.apiVersion, ...fields };
}

/** A protobuf error body (a metav1.Status) as the JSON the API server would have sent. */
export function statusJson(bytes: Uint8Array): string {
  return JSON.stringify(decodeObject(bytes));
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
        this.giveHead(this.codec.converter(metaType)(metaType.decode(bytes)) as Message);
      } else if (f.number === 2 && f.wireType === WIRE_LEN) {
        this.giveHead();
        const item = this.itemType!;
        this.onItem(this.codec.converter(item)(item.decode(bytes)) as Message);
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
