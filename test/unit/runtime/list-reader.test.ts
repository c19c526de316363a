// ListBodyReader: a list body parsed item by item as it arrives, whatever the chunking.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ListBodyReader, type ListHead } from '../../../src/runtime/list-reader.ts';

/** Reads body in chunks of `size` bytes; returns what the reader handed over, in order. */
function read(body: string, size: number, opts: { dropManagedFields?: boolean } = {}) {
  const events: string[] = [];
  const items: unknown[] = [];
  const reader = new ListBodyReader(
    (head) => events.push(`head ${JSON.stringify(head)}`),
    (item) => {
      items.push(item);
      events.push('item');
    },
    opts,
  );
  const bytes = Buffer.from(body);
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
  const head: ListHead = reader.end();
  return { head, items, events };
}

const tricky = [
  { metadata: { name: 'a', annotations: { x: 'brace } ] { [ in a string', y: 'quote \\" and backslash \\\\', z: '\\\\' } } },
  { metadata: { name: 'ü-ñ 雪', labels: { e: '' } }, spec: { list: [1, [2, { deep: [] }], null, true], empty: {} } },
  { metadata: { name: 'c' }, data: { s: '"', t: '\\', u: '\\"}' } },
];

describe('ListBodyReader', () => {
  test('the API server shape: head first (with its continue token), then each item, at every chunk size', () => {
    const list = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'tok' }, items: tricky };
    const body = `${JSON.stringify(list)}\n`;
    for (let size = 1; size <= body.length; size++) {
      const { head, items, events } = read(body, size);
      assert.deepEqual(items, tricky, `chunks of ${size}`);
      assert.deepEqual(head, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'tok' } });
      assert.equal(events[0], `head ${JSON.stringify(head)}`, 'the head before any item');
    }
  });

  test('fields after the items are merged into the head; items first and empty lists work', () => {
    const after = '{"kind":"List","items":[{"a":1},{"b":2}],"metadata":{"resourceVersion":"7"}}';
    for (const size of [1, 3, 1000]) {
      const { head, items } = read(after, size);
      assert.deepEqual(items, [{ a: 1 }, { b: 2 }]);
      assert.deepEqual(head, { kind: 'List', metadata: { resourceVersion: '7' } });
    }
    assert.deepEqual(read('{"metadata":{},"items":[]}', 2), { head: { metadata: {} }, items: [], events: ['head {"metadata":{}}'] });
    assert.deepEqual(read('{ "metadata" : {} , "items" : [ { "x" : "y" } ] }', 4).items, [{ x: 'y' }], 'whitespace');
  });

  test('any other shape is read whole and parsed at the end', () => {
    for (const body of ['{"metadata":{"resourceVersion":"1"},"items":null}', '{"metadata":{"resourceVersion":"1"}}']) {
      const { head, items } = read(body, 5);
      assert.deepEqual(head, { metadata: { resourceVersion: '1' } });
      assert.deepEqual(items, []);
    }
    // No `"items":[` within the head's limit: the whole body, parsed at the end.
    const big = { metadata: { annotations: { pad: 'x'.repeat(70 * 1024) } }, items: [{ a: 1 }] };
    const { head, items } = read(JSON.stringify(big), 4096);
    assert.deepEqual(items, [{ a: 1 }]);
    assert.equal((head.metadata as { annotations: { pad: string } }).annotations.pad.length, 70 * 1024);
  });

  test('a body cut short or malformed throws', () => {
    assert.throws(() => read('{"metadata":{},"items":[{"a":1},{"b":', 4), /ended inside its items/);
    assert.throws(() => read('{"metadata":{},"items":[{"a":1,}]}', 4), SyntaxError);
    assert.throws(() => read('not json', 4), SyntaxError);
  });

  test('dropManagedFields: metadata.managedFields is left out wherever it stands, at every chunk size, and nothing else', () => {
    const mf = [{ manager: 'kubectl', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'k:{"name":"x"}': {} } }];
    const items = [
      { metadata: { name: 'middle', managedFields: mf, labels: { a: 'b' } }, spec: {} },
      { metadata: { managedFields: mf, name: 'first' } },
      { metadata: { name: 'last', managedFields: [] } },
      { metadata: { managedFields: mf } },
      // Not metadata's: kept.
      { metadata: { name: 'spec', annotations: { note: '"managedFields":[' } }, spec: { managedFields: [1] }, managedFields: [2] },
      { kind: 'X', metadata: { name: 'none' } },
    ];
    const want = [
      { metadata: { name: 'middle', labels: { a: 'b' } }, spec: {} },
      { metadata: { name: 'first' } },
      { metadata: { name: 'last' } },
      { metadata: {} },
      { metadata: { name: 'spec', annotations: { note: '"managedFields":[' } }, spec: { managedFields: [1] }, managedFields: [2] },
      { kind: 'X', metadata: { name: 'none' } },
    ];
    const body = JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '9' }, items });
    for (let size = 1; size <= body.length; size++) {
      assert.deepEqual(read(body, size, { dropManagedFields: true }).items, want, `chunks of ${size}`);
    }
    assert.deepEqual(read(body, 7).items, items, 'kept unless asked');
    // A body read whole, and one with whitespace (the cut is the compact form's; the rest still drops it).
    assert.deepEqual(read(JSON.stringify({ items }), 3, { dropManagedFields: true }).items, want);
    assert.deepEqual(read(JSON.stringify({ metadata: {}, items }, null, 1), 5, { dropManagedFields: true }).items, want);
  });

  test('a chunk is not changed by the reader (the cut is made in its own copy)', () => {
    const body = Buffer.from('{"metadata":{},"items":[{"metadata":{"name":"a","managedFields":[{"m":1}]}}]}');
    const copy = Buffer.from(body);
    const reader = new ListBodyReader(
      () => {},
      () => {},
      { dropManagedFields: true },
    );
    reader.push(body);
    reader.end();
    assert.deepEqual(body, copy);
  });
});
