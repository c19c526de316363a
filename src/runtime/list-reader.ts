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
const ITEMS_KEY = Buffer.from('"items":');

/** A list without its items: kind, apiVersion, metadata (resourceVersion, continue…). */
export type ListHead = Record<string, unknown> & { metadata?: { resourceVersion?: string; continue?: string } };

type Phase = 'head' | 'items' | 'tail' | 'whole';

export class ListBodyReader {
  private buf: Buffer = Buffer.alloc(0);
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

  constructor(
    /** Called once, with the head, as soon as the items begin (at the end for a body read whole). */
    private readonly onHead: (head: ListHead) => void,
    private readonly onItem: (item: unknown) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.phase === 'whole') {
      this.whole.push(chunk);
      return;
    }
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    if (this.phase === 'head') this.readHead();
    if ((this.phase as Phase) === 'whole') {
      this.whole.push(this.buf);
      return;
    }
    if (this.phase === 'items') this.readItems();
    // Keep only what is still needed: the item being read (or nothing between items), the tail,
    // or everything when the body is read whole or its head is not complete yet.
    if (this.phase === 'items') {
      const keepFrom = this.itemStart >= 0 ? this.itemStart : this.pos;
      if (keepFrom > 0) {
        this.buf = this.buf.subarray(keepFrom);
        this.pos -= keepFrom;
        if (this.itemStart >= 0) this.itemStart = 0;
      }
    }
  }

  /** The body has ended: returns the list's head (the tail's fields, if any, merged into it). */
  end(): ListHead {
    if (this.phase === 'head' || this.phase === 'whole') {
      const body = this.phase === 'head' ? this.buf : Buffer.concat(this.whole);
      const list = JSON.parse(body.toString('utf8')) as ListHead & { items?: unknown[] | null };
      const { items, ...head } = list;
      this.onHead(head);
      for (const item of items ?? []) this.onItem(item);
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
    let { depth, inString, escaped, itemStart } = this;
    let i = this.pos;
    for (; i < n; i++) {
      const c = b[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) {
        inString = true;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth === 0) itemStart = i;
        depth++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 0) {
          // The items' closing `]`: what follows is the tail.
          this.phase = 'tail';
          i++;
          break;
        }
        if (--depth === 0) {
          this.onItem(JSON.parse(b.toString('utf8', itemStart, i + 1)));
          itemStart = -1;
        }
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    this.itemStart = itemStart;
    this.pos = i;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
