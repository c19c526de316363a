// KubeClient over TLS: one HTTP/2 connection for every request and watch when the server offers h2,
// HTTP/1.1 when it does not; a new connection after GOAWAY; requests the server refused (GOAWAY,
// REFUSED_STREAM) sent again, those it processed not; timeouts and aborts on streams.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http2 from 'node:http2';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createCA, issueCert } from '../../../src/util/pki.ts';
import { KubeClient, type WatchEvent } from '../../../src/runtime/client.ts';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { Namespaces } from '../../../src/runtime/resources.ts';
import { newTransport } from '../../../src/runtime/transport.ts';

interface Pki {
  ca: string;
  cert: string;
  key: string;
}

type Handler = (req: IncomingMessage | http2.Http2ServerRequest, res: ServerResponse | http2.Http2ServerResponse) => void;

/** An API server stand-in: namespaces by name, and a watch that sends one event per namespace asked for. */
function answer(versions: string[]): Handler {
  return (req, answer) => {
    // The HTTP/2 compatibility response has these methods of the HTTP/1.1 one.
    const res = answer as ServerResponse;
    versions.push(req.httpVersion);
    const url = new URL(req.url!, 'https://x');
    res.setHeader('content-type', 'application/json');
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200);
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'w', resourceVersion: '1' } } }) + '\n');
      return; // held open, as a watch is
    }
    if (url.pathname.endsWith('/silent')) return; // never answers
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: url.pathname.split('/').pop() } }));
  };
}

async function listen(server: https.Server | http2.Http2SecureServer): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('transport', () => {
  let pki: Pki;
  before(async () => {
    const ca = await createCA('test-ca');
    const server = await issueCert(ca, { commonName: 'kube-apiserver', ipAddresses: ['127.0.0.1'], server: true });
    pki = { ca: ca.certPem, cert: server.certPem, key: server.keyPem };
  });

  let h2: http2.Http2SecureServer;
  let h2Url: string;
  const h2Versions: string[] = [];
  const sessions: http2.ServerHttp2Session[] = [];
  before(async () => {
    h2 = http2.createSecureServer({ key: pki.key, cert: pki.cert, allowHTTP1: true }, answer(h2Versions));
    h2.on('session', (s) => sessions.push(s));
    h2Url = await listen(h2);
  });
  after(() => {
    for (const s of sessions) s.destroy();
    h2.close();
  });

  const client = (server: string, opts: { requestTimeoutMs?: number } = {}) =>
    new KubeClient({ server, tls: { ca: pki.ca }, qps: 0, ...opts });

  test('every request and watch of a client and its derived clients shares one HTTP/2 connection', async () => {
    const before = sessions.length;
    h2Versions.length = 0;
    const c = client(h2Url);
    const other = c.withOwnLimit({ userAgent: 'other', qps: 0, burst: 1 });
    try {
      const aborts = new AbortController();
      const watches = Array.from({ length: 5 }, async () => {
        for await (const ev of c.watch<KubeObject>(Namespaces, { signal: aborts.signal })) return ev as WatchEvent<KubeObject>;
      });
      const names = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((n, i) => (i % 2 ? other : c).get(Namespaces, n)));
      assert.deepEqual(
        names.map((n) => n.metadata.name),
        ['a', 'b', 'c', 'd', 'e', 'f'],
      );
      const events = await Promise.all(watches);
      assert.deepEqual(
        events.map((e) => e?.type),
        ['ADDED', 'ADDED', 'ADDED', 'ADDED', 'ADDED'],
      );
      aborts.abort();
      assert.equal(sessions.length - before, 1, 'one connection');
      assert.deepEqual(new Set(h2Versions), new Set(['2.0']));
      assert.equal(h2Versions.length, 11);
    } finally {
      await c.close();
    }
  });

  test('more streams than the server allows on a connection go on further connections', async () => {
    const versions: string[] = [];
    const small = http2.createSecureServer({ key: pki.key, cert: pki.cert, settings: { maxConcurrentStreams: 2 } }, answer(versions));
    const opened: http2.ServerHttp2Session[] = [];
    small.on('session', (s) => opened.push(s));
    const c = client(await listen(small));
    try {
      const aborts = new AbortController();
      // Watches hold their streams: five of them and two requests need four connections of two.
      const first: Array<Promise<string>> = [];
      const watches = Array.from({ length: 5 }, () => {
        let seen!: (type: string) => void;
        first.push(new Promise((r) => (seen = r)));
        return (async () => {
          for await (const ev of c.watch<KubeObject>(Namespaces, { signal: aborts.signal })) seen(ev.type);
        })().catch(() => {});
      });
      assert.deepEqual(await Promise.all(first), ['ADDED', 'ADDED', 'ADDED', 'ADDED', 'ADDED']);
      const names = await Promise.all(['a', 'b'].map((n) => c.get(Namespaces, n)));
      assert.deepEqual(
        names.map((n) => n.metadata.name),
        ['a', 'b'],
      );
      assert.equal(opened.length, 4, 'the watches on three connections, the requests on the third and a fourth');
      aborts.abort();
      await Promise.all(watches);
    } finally {
      await c.close();
      for (const s of opened) s.destroy();
      small.close();
    }
  });

  test('a new connection once the server has sent GOAWAY', async () => {
    const c = client(h2Url);
    try {
      await c.get(Namespaces, 'one');
      const first = sessions.at(-1)!;
      await new Promise<void>((r) => first.close(r));
      assert.equal((await c.get(Namespaces, 'two')).metadata.name, 'two');
      assert.notEqual(sessions.at(-1), first, 'a second connection');
    } finally {
      await c.close();
    }
  });

  test('a connection reset during its TLS handshake is made again at once: nothing was sent on it', async () => {
    // A TCP front that resets the first connection (an API server stopping behind a load balancer)
    // and passes the next one to the real server.
    let accepted = 0;
    const front = net.createServer((socket) => {
      if (accepted++ === 0) {
        socket.resetAndDestroy();
        return;
      }
      const upstream = net.connect(Number(new URL(h2Url).port), '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const c = new KubeClient({
      server: `https://127.0.0.1:${(front.address() as AddressInfo).port}`,
      tls: { ca: pki.ca },
      qps: 0,
      maxRetries: 0,
    });
    try {
      // A create: the stand-in answers a POST to the collection with a Namespace named after it.
      assert.equal((await c.create<KubeObject>(Namespaces, { metadata: { name: 'made' } })).kind, 'Namespace');
      assert.equal(accepted, 2, 'the reset connection, then one that carried the request');
    } finally {
      await c.close();
      front.close();
    }
  });

  test('a 503 with Retry-After is retried on a new connection: a shutting-down API server may never send its GOAWAY', async () => {
    // kube-apiserver answers this on a connection whose TLS handshake straddled the start of its
    // shutdown, to every request, without GOAWAY, until it exits.
    const stopping = http2.createSecureServer({ key: pki.key, cert: pki.cert });
    const opened: http2.ServerHttp2Session[] = [];
    stopping.on('session', (s) => opened.push(s));
    stopping.on('stream', (stream, _headers) => {
      if (stream.session === opened[0]) {
        stream.respond({ ':status': 503, 'retry-after': '0', 'content-type': 'application/json' });
        stream.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: 'apiserver is shutting down',
            reason: 'ServiceUnavailable',
            code: 503,
          }),
        );
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'served' } }));
    });
    const c = new KubeClient({ server: await listen(stopping), tls: { ca: pki.ca }, qps: 0, maxRetries: 1 });
    try {
      assert.equal((await c.get(Namespaces, 'served')).metadata.name, 'served');
      assert.equal(opened.length, 2, 'the stopping server, then a new connection');
    } finally {
      await c.close();
      for (const s of opened) s.destroy();
      stopping.close();
    }
  });

  test(
    'a request whose connection drops before its answer fails (its stream reset with CANCEL, no error event)',
    { timeout: 10_000 },
    async () => {
      const dropping = http2.createSecureServer({ key: pki.key, cert: pki.cert });
      // Every stream of a connection that drops closes with CANCEL; so does one the server resets so.
      dropping.on('stream', (stream) => stream.close(http2.constants.NGHTTP2_CANCEL));
      const url = await listen(dropping);
      const c = new KubeClient({ server: url, tls: { ca: pki.ca }, qps: 0, maxRetries: 0 });
      try {
        await assert.rejects(c.get(Namespaces, 'cut'), /the HTTP\/2 stream closed before a response \(code 8\)/);
        const watching = (async () => {
          for await (const ev of c.watch<KubeObject>(Namespaces, {})) return ev;
        })();
        await assert.rejects(watching, /closed before a response/);
      } finally {
        await c.close();
        dropping.close();
      }
    },
  );

  describe('requests the server refused before processing them are sent again, idempotent or not', () => {
    /**
     * A server whose `refuse` decides, per stream, to refuse it (before reading it) or to answer;
     * it records every stream it sees and every request it processes.
     */
    async function refusing(refuse: (stream: http2.ServerHttp2Stream, path: string, seen: number) => boolean) {
      const seen: string[] = [];
      const processed: string[] = [];
      const server = http2.createSecureServer({ key: pki.key, cert: pki.cert });
      const opened: http2.ServerHttp2Session[] = [];
      server.on('session', (s) => opened.push(s));
      server.on('stream', (stream, headers) => {
        stream.on('error', () => {});
        const path = `${headers[':method']} ${headers[':path']}`;
        seen.push(path);
        if (refuse(stream, path, seen.length)) return;
        processed.push(path);
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        if (String(headers[':path']).includes('watch=true')) {
          stream.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'w', resourceVersion: '8' } } }) + '\n');
          return;
        }
        stream.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }));
      });
      const url = await listen(server);
      // maxRetries 0: only the transport may send a request twice.
      const c = new KubeClient({ server: url, tls: { ca: pki.ca }, qps: 0, maxRetries: 0 });
      const done = async () => {
        await c.close();
        for (const s of opened) s.destroy();
        server.close();
      };
      return { c, seen, processed, opened, done };
    }

    test('RST_STREAM(REFUSED_STREAM): a create is sent again and processed once', async () => {
      const s = await refusing((stream, _path, n) => n === 1 && (stream.close(http2.constants.NGHTTP2_REFUSED_STREAM), true));
      try {
        await s.c.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
        assert.deepEqual(s.seen, ['POST /api/v1/namespaces', 'POST /api/v1/namespaces']);
        assert.deepEqual(s.processed, ['POST /api/v1/namespaces']);
        assert.equal(s.opened.length, 1, 'the same connection: it still takes streams');
      } finally {
        await s.done();
      }
    });

    for (const [what, code] of [
      ['a graceful GOAWAY', http2.constants.NGHTTP2_NO_ERROR],
      ['a GOAWAY with an error code', http2.constants.NGHTTP2_INTERNAL_ERROR],
    ] as const) {
      test(`a stream above ${what}'s last-stream-id: an update is sent again on a new connection`, async () => {
        const s = await refusing((stream, _path, n) => {
          if (n !== 2) return false;
          stream.session!.goaway(code, stream.id! - 2);
          return true;
        });
        try {
          await s.c.get(Namespaces, 'first');
          await s.c.update(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', resourceVersion: '1' } });
          assert.deepEqual(s.seen, ['GET /api/v1/namespaces/first', 'PUT /api/v1/namespaces/n', 'PUT /api/v1/namespaces/n']);
          assert.deepEqual(s.processed, ['GET /api/v1/namespaces/first', 'PUT /api/v1/namespaces/n']);
          assert.equal(s.opened.length, 2);
        } finally {
          await s.done();
        }
      });
    }

    test('a refused watch is sent again from the same resourceVersion', async () => {
      const s = await refusing((stream, _path, n) => n === 1 && (stream.close(http2.constants.NGHTTP2_REFUSED_STREAM), true));
      try {
        for await (const ev of s.c.watch<KubeObject>(Namespaces, { resourceVersion: '7' })) {
          assert.equal(ev.type, 'ADDED');
          break;
        }
        assert.equal(s.seen.length, 2);
        assert.equal(s.seen[0], s.seen[1]);
        assert.match(s.seen[1]!, /watch=true.*resourceVersion=7|resourceVersion=7.*watch=true/);
      } finally {
        await s.done();
      }
    });

    test('a request the server processed is not sent again when its connection then goes away', async () => {
      // The server takes the create (its stream is at the GOAWAY's last-stream-id) and drops the
      // connection before answering: the client cannot know the outcome, so it must not repeat it.
      const s = await refusing((stream) => {
        stream.session!.goaway(http2.constants.NGHTTP2_INTERNAL_ERROR, stream.id!);
        return true;
      });
      try {
        await assert.rejects(s.c.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }));
        assert.deepEqual(s.seen, ['POST /api/v1/namespaces']);
      } finally {
        await s.done();
      }
    });

    test('a server that keeps refusing: given up after six retries, with a growing wait', async () => {
      const seen: number[] = [];
      const server = http2.createSecureServer({ key: pki.key, cert: pki.cert });
      server.on('stream', (stream) => {
        stream.on('error', () => {});
        seen.push(Date.now());
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      });
      const url = await listen(server);
      const transport = newTransport(new URL(url), { ca: pki.ca }, { retryBackoffMs: 10 });
      const c = new KubeClient({ server: url, qps: 0, maxRetries: 0 }, transport);
      try {
        await assert.rejects(c.get(Namespaces, 'n'), /refused the request before processing it/);
        assert.equal(seen.length, 7, 'the first attempt and six retries');
        // Waits of 0, 10, 20, 40, 80, 160 ms (+ up to 10 % jitter) between them.
        assert.ok(seen.at(-1)! - seen[0]! >= 310, `${seen.at(-1)! - seen[0]!}ms`);
      } finally {
        transport.close();
        server.close();
      }
    });
  });

  test('a server that does not offer h2 is spoken to over HTTP/1.1', async () => {
    const versions: string[] = [];
    const h1 = https.createServer({ key: pki.key, cert: pki.cert }, answer(versions));
    const url = await listen(h1);
    const c = client(url);
    try {
      const [a, b] = await Promise.all([c.get(Namespaces, 'a'), c.get(Namespaces, 'b')]);
      assert.equal(a.metadata.name, 'a');
      assert.equal(b.metadata.name, 'b');
      assert.deepEqual(versions, ['1.1', '1.1']);
    } finally {
      await c.close();
      h1.closeAllConnections();
      h1.close();
    }
  });

  test('a request without an answer times out; an aborted watch ends', async () => {
    const c = client(h2Url, { requestTimeoutMs: 200 });
    try {
      await assert.rejects(c.get(Namespaces, 'silent'), /no answer from the API server within 200ms/);
      const aborts = new AbortController();
      const events: string[] = [];
      const watching = (async () => {
        for await (const ev of c.watch<KubeObject>(Namespaces, { signal: aborts.signal })) events.push(ev.type);
      })();
      // The watch's quiet body outlives the request timeout; only the abort ends it.
      await new Promise((r) => setTimeout(r, 400));
      aborts.abort();
      await assert.rejects(watching, { name: 'AbortError' });
      assert.deepEqual(events, ['ADDED']);
    } finally {
      await c.close();
    }
  });

  test('a connection whose peer stops answering is dropped after an unanswered PING', async () => {
    // A TCP relay to the server that can go silent, as a dropped flow does.
    let silent = false;
    const relay = net.createServer((inbound) => {
      const outbound = net.connect((h2.address() as AddressInfo).port, '127.0.0.1');
      inbound.on('data', (d) => silent || outbound.write(d));
      outbound.on('data', (d) => silent || inbound.write(d));
      inbound.on('close', () => outbound.destroy());
      outbound.on('close', () => inbound.destroy());
      inbound.on('error', () => {});
      outbound.on('error', () => {});
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const server = `https://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const transport = newTransport(new URL(server), { ca: pki.ca }, { pingIntervalMs: 150 });
    const c = new KubeClient({ server, qps: 0 }, transport);
    try {
      const events: string[] = [];
      const watching = (async () => {
        for await (const ev of c.watch<KubeObject>(Namespaces)) {
          events.push(ev.type);
          silent = true;
        }
      })();
      await assert.rejects(watching, /did not answer an HTTP\/2 PING within 150ms/);
      assert.deepEqual(events, ['ADDED']);
      silent = false;
      assert.equal((await c.get(Namespaces, 'again')).metadata.name, 'again', 'a new connection');
    } finally {
      transport.close();
      relay.close();
    }
  });

  test('an idle connection does not keep the process alive', async () => {
    // A child that makes one request and never closes its client exits on its own.
    const script = `
      import { KubeClient } from ${JSON.stringify(new URL('../../../src/runtime/client.ts', import.meta.url).href)};
      import { Namespaces } from ${JSON.stringify(new URL('../../../src/runtime/resources.ts', import.meta.url).href)};
      const c = new KubeClient({ server: ${JSON.stringify(h2Url)}, tls: { ca: ${JSON.stringify(pki.ca)} }, qps: 0 });
      console.log((await c.get(Namespaces, 'child')).metadata.name);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 20_000,
    });
    assert.equal(stdout.trim(), 'child');
  });
});
