// The protobuf codec against answers recorded from the real API server (v1.36.3;
// test/integration/protobuf-wire.test.ts records them with KRUISE_TS_UPDATE_FIXTURES=1): a pod list
// as protobuf decodes to the JSON list of the same snapshot, key for key, whatever the chunking; the
// watch stream's frames and an error Status likewise; KubeClient asks for protobuf for pods and
// nodes only, and reads whichever format the server answers in.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import protobuf from 'protobufjs/light.js';
import { KubeClient, PatchType } from '../../../src/runtime/client.ts';
import { withoutManagedFields } from '../../../src/runtime/list-reader.ts';
import { ConfigMaps, Nodes, Pods } from '../../../src/runtime/resources.ts';
import { DESCRIPTOR } from '../../../src/runtime/protobuf/kubernetes.generated.ts';
import {
  ProtobufDecodeError,
  ProtobufListReader,
  ProtobufWatchDecoder,
  decodeObject,
  statusJson,
  type ProtobufListHead,
} from '../../../src/runtime/protobuf/codec.ts';

const fixtures = path.join(import.meta.dirname, '..', '..', 'fixtures', 'protobuf');
const listPb = readFileSync(path.join(fixtures, 'pod-list.pb'));
const listJson = readFileSync(path.join(fixtures, 'pod-list.json'), 'utf8');
const statusPb = readFileSync(path.join(fixtures, 'status.pb'));
const statusText = readFileSync(path.join(fixtures, 'status.json'), 'utf8');
const want = JSON.parse(listJson) as { kind: string; apiVersion: string; metadata: object; items: Array<Record<string, unknown>> };

function assertSame(got: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(got, expected, what);
  assert.equal(JSON.stringify(got), JSON.stringify(expected), `${what}: same keys in the same order`);
}

function readList(bytes: Buffer, size: number, opts: { dropManagedFields?: boolean } = {}) {
  const items: unknown[] = [];
  const heads: ProtobufListHead[] = [];
  const reader = new ProtobufListReader(
    (h) => heads.push(h),
    (i) => items.push(i),
    opts,
  );
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
  const head = reader.end();
  return { head, heads, items };
}

// The wire's own messages, encoded by protobufjs to build watch streams from the recorded pods.
const root = protobuf.Root.fromJSON(DESCRIPTOR);
const Unknown = root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
const WatchEvent = root.lookupType('k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent');
const PodList = root.lookupType('k8s.io.api.core.v1.PodList');
const Pod = root.lookupType('k8s.io.api.core.v1.Pod');
const MAGIC = Buffer.from('k8s\0', 'latin1');

function envelope(kind: string, raw: Uint8Array): Buffer {
  return Buffer.concat([MAGIC, Unknown.encode({ typeMeta: { apiVersion: 'v1', kind }, raw }).finish()]);
}

/** The recorded pods, each as the API server sends one object: "k8s\0" + Unknown. */
function podObjects(): Buffer[] {
  const { raw } = Unknown.decode(listPb.subarray(MAGIC.length)) as unknown as { raw: Uint8Array };
  const list = PodList.decode(raw) as unknown as { items: object[] };
  return list.items.map((p) => envelope('Pod', Pod.encode(p).finish()));
}

function frame(type: string, object: Uint8Array): Buffer {
  const ev = Buffer.from(WatchEvent.encode({ type, object: { raw: object } }).finish());
  const length = Buffer.alloc(4);
  length.writeUInt32BE(ev.length);
  return Buffer.concat([length, ev]);
}

describe('protobuf lists', () => {
  test('a recorded pod list decodes to the JSON list of the same snapshot, whatever the chunking', () => {
    assert.equal(want.items.length, 2);
    for (const size of [1, 3, 64, 1000, listPb.length]) {
      const { head, heads, items } = readList(listPb, size);
      assertSame(items, want.items, `items (chunks of ${size})`);
      assertSame(head, { kind: want.kind, apiVersion: want.apiVersion, metadata: want.metadata }, 'head');
      assert.equal(heads.length, 1);
    }
  });

  test('without managedFields: skipped unread, the rest as JSON without them', () => {
    const { items } = readList(listPb, 100, { dropManagedFields: true });
    const expected = (JSON.parse(listJson) as typeof want).items.map((i) => withoutManagedFields(i as { metadata?: object }));
    assert.ok(want.items.every((i) => (i.metadata as { managedFields?: unknown }).managedFields));
    assertSame(items, expected, 'items without managedFields');
  });

  test('a body cut short, or without the magic prefix, fails', () => {
    const reader = new ProtobufListReader(
      () => {},
      () => {},
    );
    reader.push(listPb.subarray(0, listPb.length - 10));
    assert.throws(() => reader.end(), ProtobufDecodeError);
    assert.throws(
      () =>
        new ProtobufListReader(
          () => {},
          () => {},
        ).push(Buffer.from('{"kind":"PodList"}')),
      ProtobufDecodeError,
    );
  });
});

describe('protobuf objects and watch streams', () => {
  test('an error Status reads as the JSON the API server writes', () => {
    assertSame(JSON.parse(statusJson(statusPb)), JSON.parse(statusText), 'Status');
  });

  test('watch frames split anywhere decode to the events JSON gives (kind and apiVersion first)', () => {
    const pods = podObjects();
    const stream = Buffer.concat([
      frame('ADDED', pods[0]!),
      frame('MODIFIED', pods[1]!),
      frame('ERROR', statusPb),
      frame('DELETED', pods[0]!),
    ]);
    const expected = [
      { type: 'ADDED', object: { kind: 'Pod', apiVersion: 'v1', ...want.items[0] } },
      { type: 'MODIFIED', object: { kind: 'Pod', apiVersion: 'v1', ...want.items[1] } },
      { type: 'ERROR', object: JSON.parse(statusText) },
      { type: 'DELETED', object: { kind: 'Pod', apiVersion: 'v1', ...want.items[0] } },
    ];
    for (const size of [1, 5, 333, stream.length]) {
      const decoder = new ProtobufWatchDecoder();
      const events = [];
      for (let i = 0; i < stream.length; i += size) events.push(...decoder.push(stream.subarray(i, i + size)));
      assertSame(events, expected, `events (chunks of ${size})`);
      assert.equal(decoder.pending(), 0);
    }
    const cut = new ProtobufWatchDecoder();
    assert.equal(cut.push(stream.subarray(0, 10)).length, 0);
    assert.ok(cut.pending() > 0, 'an event cut short is left pending');
  });

  test('strings read the same whether seen before or not: ASCII, non-ASCII, invalid UTF-8, long, and many distinct ones', () => {
    const labels: Record<string, string> = { app: 'web', 'ünï/cödé': 'välue-✓', emoji: '🚀', long: 'x'.repeat(200), same: 'web' };
    // Enough distinct values that table slots are shared and replaced.
    for (let i = 0; i < 5000; i++) labels[`k${i}`] = `v${i % 1000}`;
    const pod = (name: string) => envelope('Pod', Pod.encode({ metadata: { name, namespace: 'default', labels } }).finish());
    for (const name of ['a', 'b', 'c']) {
      const got = decodeObject(pod(name)) as { metadata: { name: string; labels: Record<string, string> } };
      assert.equal(got.metadata.name, name);
      assert.deepStrictEqual(got.metadata.labels, labels);
    }
    // A byte that is not UTF-8 reads as U+FFFD, as Buffer's decoder writes it, and does not match the ASCII string of the same length.
    const bad = Pod.encode({ metadata: { name: 'x', namespace: 'default' } }).finish();
    const namespaceAt = Buffer.from(bad).indexOf('default');
    const invalid = Buffer.from(bad);
    invalid[namespaceAt] = 0xff;
    assert.equal((decodeObject(envelope('Pod', invalid)) as { metadata: { namespace: string } }).metadata.namespace, '\ufffdefault');
    assert.equal((decodeObject(envelope('Pod', bad)) as { metadata: { namespace: string } }).metadata.namespace, 'default');
  });

  test('int64s read in place as protobufjs reads them: one to nine bytes, and negative ones (ten bytes) through protobufjs', () => {
    for (const value of [1, 127, 128, 300, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1, -1, -(2 ** 40)]) {
      const bytes = Pod.encode({
        metadata: {
          name: 'p',
          generation: value,
          deletionGracePeriodSeconds: value,
          creationTimestamp: { seconds: Math.abs(value) % 2 ** 33 },
        },
      }).finish();
      const got = decodeObject(envelope('Pod', bytes)) as {
        metadata: { generation: number; deletionGracePeriodSeconds: number; creationTimestamp: string };
      };
      assert.equal(got.metadata.generation, value);
      assert.equal(got.metadata.deletionGracePeriodSeconds, value);
      assert.equal(got.metadata.creationTimestamp, `${new Date((Math.abs(value) % 2 ** 33) * 1000).toISOString().slice(0, 19)}Z`);
    }
    // A varint cut short fails as protobufjs's own read does.
    const whole = Pod.encode({ metadata: { generation: 2 ** 40 } }).finish();
    assert.throws(() => decodeObject(envelope('Pod', whole.subarray(0, whole.length - 1))));
  });

  test('objects of kinds not read as protobuf, or without the prefix, are refused', () => {
    assert.throws(() => decodeObject(envelope('ConfigMap', new Uint8Array())), /kind ConfigMap/);
    assert.throws(() => decodeObject(Pod.encode({}).finish()), ProtobufDecodeError);
  });
});

describe('KubeClient', () => {
  /** A server answering pod lists in the format asked for, and everything else as JSON. */
  async function server(protobufAnswers: boolean) {
    const seen: IncomingHttpHeaders[] = [];
    const srv = createServer((req, res) => {
      seen.push(req.headers);
      const accept = req.headers.accept ?? '';
      if (req.url!.startsWith('/api/v1/namespaces/default/pods')) {
        // One pod, answering writes in the format asked for (GETs ask for JSON).
        const pb = protobufAnswers && accept.startsWith('application/vnd.kubernetes.protobuf');
        res.writeHead(200, { 'content-type': pb ? 'application/vnd.kubernetes.protobuf' : 'application/json' });
        res.end(pb ? podObjects()[0] : JSON.stringify({ kind: 'Pod', apiVersion: 'v1', ...want.items[0] }));
      } else if (req.url!.startsWith('/api/v1/namespaces/bad/pods')) {
        const pb = protobufAnswers && accept.startsWith('application/vnd.kubernetes.protobuf');
        res.writeHead(400, { 'content-type': pb ? 'application/vnd.kubernetes.protobuf' : 'application/json' });
        res.end(pb ? statusPb : statusText);
      } else if (req.url!.startsWith('/api/v1/pods') && protobufAnswers && accept.startsWith('application/vnd.kubernetes.protobuf')) {
        res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf' });
        res.end(listPb);
      } else if (req.url!.startsWith('/api/v1/pods')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(listJson);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: {}, items: [] }));
      }
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const client = new KubeClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, qps: 0 });
    return { seen, client, close: () => new Promise((resolve) => srv.close(resolve)) };
  }

  test('pods and nodes ask for protobuf (JSON accepted), other kinds for JSON; either answer reads the same', async () => {
    const results = [];
    for (const protobufAnswers of [true, false]) {
      const { seen, client, close } = await server(protobufAnswers);
      try {
        results.push(await client.list(Pods));
        assert.equal(seen.at(-1)!.accept, 'application/vnd.kubernetes.protobuf, application/json');
        await client.list(Nodes);
        assert.equal(seen.at(-1)!.accept, 'application/vnd.kubernetes.protobuf, application/json');
        await client.list(ConfigMaps);
        assert.equal(seen.at(-1)!.accept, 'application/json');
        // An error answered in protobuf is the same StatusError.
        await assert.rejects(client.list(Pods, { namespace: 'bad' }), (err: Error & { code?: number; status?: object }) => {
          assert.equal(err.code, 400);
          assert.deepEqual(err.status, JSON.parse(statusText));
          return true;
        });
      } finally {
        await client.close();
        await close();
      }
    }
    assertSame(results[0], results[1], 'the list from protobuf and from JSON');
  });

  test("a pod write asks for protobuf and reads its answer without managedFields, in either format; a GET's answer stays whole JSON", async () => {
    const pod = want.items[0] as { metadata: { name: string; managedFields?: unknown } };
    const { managedFields, ...metadata } = pod.metadata;
    assert.ok(managedFields, 'the recorded pod has managedFields');
    const lean = { kind: 'Pod', apiVersion: 'v1', ...pod, metadata };
    for (const protobufAnswers of [true, false]) {
      const { seen, client, close } = await server(protobufAnswers);
      try {
        const patched = await client.patch(
          Pods,
          pod.metadata.name,
          { metadata: { labels: { a: 'b' } } },
          { namespace: 'default', patchType: PatchType.StrategicMerge },
        );
        assert.equal(seen.at(-1)!.accept, 'application/vnd.kubernetes.protobuf, application/json');
        assertSame(patched, lean, `the patched pod (answered as ${protobufAnswers ? 'protobuf' : 'JSON'})`);
        assertSame(await client.create(Pods, { metadata: { name: 'x', namespace: 'default' } }), lean, 'the created pod');
        assertSame(await client.delete(Pods, pod.metadata.name, { namespace: 'default' }), lean, 'the deleted pod');
        const got = await client.get(Pods, pod.metadata.name, { namespace: 'default' });
        assert.equal(seen.at(-1)!.accept, 'application/json');
        assert.deepEqual(got, { kind: 'Pod', apiVersion: 'v1', ...pod });
      } finally {
        await client.close();
        await close();
      }
    }
  });
});
