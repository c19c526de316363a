// Reads a list's JSON body as it arrives and hands over each item as soon as it is complete, so that
// an informer's first list (50k pods: ~100 MB answered in one piece from the watch cache) is parsed
// while the API server is still sending it, and never held as one string.
//
// The API server writes a list as `{"kind":…,"apiVersion":…,"metadata":{…},"items":[{…},…]}`: the
// part before `"items":` is a complete object once closed, and each item is one JSON object whose
// end is found by counting braces outside strings. A body of any other shape (items first is fine;
// no `"items":[` within the first 64 KiB is not) is read whole and parsed at the end, as before.

/** The list's head (what precedes the items) is this far into its body at most. */
const HEAD_MAX_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const ITEMS_KEY = Buffer.from('"items":');
/** An item's metadata, as the API server writes it (compact): what precedes its opening brace. */
const METADATA_KEY = Buffer.from('"metadata":');
/** metadata.managedFields, as the API server writes it: the key and its array's opening bracket. */
const MANAGED_FIELDS_KEY = Buffer.from('"managedFields":[');

/** A list without its items: kind, apiVersion, metadata (resourceVersion, continue…). */
export type ListHead = Record<string, unknown> & { metadata?: { resourceVersion?: string; continue?: string } };

type Phase = 'head' | 'items' | 'tail' | 'whole';

export class ListBodyReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Once the items begin, buf is the start of this (grown to twice the largest item and chunk). */
  private scratch: Buffer = Buffer.alloc(0);
  /** The body so far, once it is to be read whole. */
  private whole: Buffer[] = [];
  /** The next byte of buf to look at. */
  private pos = 0;
  private phase: Phase = 'head';
  /** Where the item being read starts in buf (-1 between items), and how deep inside it pos is. */
  private itemStart = -1;
  private depth = 0;
  private inString = false;
  /** The byte before pos was a backslash inside a string. */
  private escaped = false;
  private head: ListHead | undefined;
  /** The object at depth 2 being read is the item's metadata. */
  private inMetadata = false;
  /** Where the item's `"managedFields":[…]` starts and ends (one past its `]`) in buf; -1: none (yet). */
  private cutFrom = -1;
  private cutTo = -1;

  constructor(
    /** Called once, with the head, as soon as the items begin (at the end for a body read whole). */
    private readonly onHead: (head: ListHead) => void,
    private readonly onItem: (item: unknown) => void,
    /**
     * Items come without metadata.managedFields, cut from their text before it is parsed: a
     * quarter of a pod's bytes, and the most objects per byte, which no cache reader needs.
     */
    private readonly opts: { dropManagedFields?: boolean } = {},
  ) {}

  push(chunk: Buffer): void {
    if (this.phase === 'whole') {
      this.whole.push(chunk);
      return;
    }
    if (this.phase === 'head') {
      this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
      this.readHead();
      if ((this.phase as Phase) === 'whole') this.whole.push(this.buf);
      if ((this.phase as Phase) !== 'items') return;
      // The items begin: from here on what is still needed is kept in scratch, ours to cut in.
      const rest = this.buf.subarray(this.pos);
      this.buf = this.scratch.subarray(0, 0);
      this.pos = 0;
      this.append(rest);
    } else {
      this.append(chunk);
    }
    if (this.phase === 'items') this.readItems();
    // Keep only what is still needed: the item being read (or nothing between items), or the tail.
    if (this.phase === 'items') {
      const keepFrom = this.itemStart >= 0 ? this.itemStart : this.pos;
      if (keepFrom > 0) {
        this.buf.copyWithin(0, keepFrom);
        this.buf = this.scratch.subarray(0, this.buf.length - keepFrom);
        this.pos -= keepFrom;
        if (this.itemStart >= 0) this.itemStart = 0;
        if (this.cutFrom >= 0) this.cutFrom -= keepFrom;
        if (this.cutTo >= 0) this.cutTo -= keepFrom;
      }
    }
  }

  /**
   * Puts chunk after buf, both in scratch (buf always starts there once the items begin): a copy of
   * each chunk into memory that is reused, where a new buffer for each cost more than the copying.
   */
  private append(chunk: Buffer): void {
    const length = this.buf.length + chunk.length;
    if (length > this.scratch.length) {
      const bigger = Buffer.allocUnsafe(Math.max(length, 2 * this.scratch.length));
      this.buf.copy(bigger);
      this.scratch = bigger;
    }
    chunk.copy(this.scratch, this.buf.length);
    this.buf = this.scratch.subarray(0, length);
  }

  /** The body has ended: returns the list's head (the tail's fields, if any, merged into it). */
  end(): ListHead {
    if (this.phase === 'head' || this.phase === 'whole') {
      const body = this.phase === 'head' ? this.buf : Buffer.concat(this.whole);
      const list = JSON.parse(body.toString('utf8')) as ListHead & { items?: unknown[] | null };
      const { items, ...head } = list;
      this.onHead(head);
      for (const item of items ?? []) {
        this.onItem(this.opts.dropManagedFields ? withoutManagedFields(item as { metadata?: object }) : item);
      }
      return head;
    }
    if (this.phase === 'items') throw new SyntaxError('list body ended inside its items');
    // `}` or `,"field":…}`: fields written after the items.
    const tail = this.buf.toString('utf8', this.pos).trim();
    const head = this.head!;
    if (tail !== '}') Object.assign(head, JSON.parse(`{${tail.slice(1)}`) as object);
    return head;
  }

  private readHead(): void {
    const key = this.buf.indexOf(ITEMS_KEY);
    if (key < 0) {
      if (this.buf.length > HEAD_MAX_BYTES) this.phase = 'whole';
      return;
    }
    let open = key + ITEMS_KEY.length;
    while (open < this.buf.length && isSpace(this.buf[open]!)) open++;
    if (open >= this.buf.length) return; // the `[` (or whatever comes) is in the next chunk
    if (this.buf[open] !== OPEN_BRACKET) {
      this.phase = 'whole'; // `"items":null`, or the key inside something else
      return;
    }
    const before = this.buf.toString('utf8', 0, key).trimEnd();
    try {
      this.head = JSON.parse(`${before.endsWith(',') ? before.slice(0, -1) : before}}`) as ListHead;
    } catch {
      this.phase = 'whole';
      return;
    }
    this.onHead(this.head);
    this.phase = 'items';
    this.pos = open + 1;
  }

  private readItems(): void {
    // One pass over the bytes with the state in locals: a call per string (indexOf for its closing
    // quote) cost more than the whole JSON.parse of the items at 50k pods.
    const b = this.buf;
    const n = b.length;
    const drop = this.opts.dropManagedFields === true;
    let { depth, inString, escaped, itemStart, inMetadata, cutFrom, cutTo } = this;
    let i = this.pos;
    for (; i < n; i++) {
      const c = b[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) {
        // A key of the item's metadata (a string value there never precedes a `:`): `"m` (no
        // other key of ObjectMeta starts so), then the whole key.
        if (drop && inMetadata && depth === 2 && cutFrom < 0 && (i + 1 >= n || b[i + 1] === 0x6d)) {
          const length = Math.min(MANAGED_FIELDS_KEY.length, n - i);
          if (b.compare(MANAGED_FIELDS_KEY, 0, length, i, i + length) === 0) {
            if (length < MANAGED_FIELDS_KEY.length) break; // the rest of it is in the next chunk
            cutFrom = i;
          }
        }
        inString = true;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth === 0) itemStart = i;
        else if (depth === 1 && drop) inMetadata = c === OPEN_BRACE && follows(b, i, METADATA_KEY);
        depth++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 0) {
          // The items' closing `]`: what follows is the tail.
          this.phase = 'tail';
          i++;
          break;
        }
        if (--depth === 0) {
          let end = i + 1;
          if (cutTo >= 0) {
            // Out with the key, its array and one comma beside it; the rest moves up in place.
            let from = cutFrom;
            let to = cutTo;
            if (b[from - 1] === COMMA) from--;
            else if (b[to] === COMMA) to++;
            b.copy(b, from, to, end);
            end -= to - from;
          }
          const item: unknown = JSON.parse(b.toString('utf8', itemStart, end));
          // Not cut from the text when not written compactly (`"metadata": {`).
          this.onItem(drop && cutTo < 0 ? withoutManagedFields(item as { metadata?: object }) : item);
          itemStart = -1;
          inMetadata = false;
          cutFrom = -1;
          cutTo = -1;
        } else if (depth === 2 && cutFrom >= 0 && cutTo < 0) {
          cutTo = i + 1;
        }
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    this.itemStart = itemStart;
    this.inMetadata = inMetadata;
    this.cutFrom = cutFrom;
    this.cutTo = cutTo;
    this.pos = i;
  }
}

/** The bytes just before position i are key. */
function follows(b: Buffer, i: number, key: Buffer): boolean {
  const at = i - key.length;
  return at >= 0 && b.compare(key, 0, key.length, at, i) === 0 && b[at - 1] !== BACKSLASH;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The object without metadata.managedFields (it was just parsed and is ours). A new metadata object
 * rather than `delete`, which would leave every cached object's metadata a slow dictionary (19 MiB
 * more heap at 50k pods).
 */
export function withoutManagedFields<T extends { metadata?: object }>(obj: T): T {
  if (typeof obj?.metadata === 'object' && obj.metadata && 'managedFields' in obj.metadata) {
    const { managedFields: _, ...metadata } = obj.metadata;
    obj.metadata = metadata;
  }
  return obj;
}
