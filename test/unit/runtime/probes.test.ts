import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { Counter, Registry } from 'prom-client';
import { apiServerReachable, MetricsServer, ProbeServer, ping } from '../../../src/runtime/probes.ts';

const silent = pino({ level: 'silent' });

async function get(port: number, p: string): Promise<{ status: number; text: string; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${p}`);
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

describe('ProbeServer', () => {
  let probes: ProbeServer;
  let ready = false;
  before(async () => {
    probes = new ProbeServer({ port: 0, host: '127.0.0.1', logger: silent, checkTimeoutMs: 50 });
    probes.addHealthzCheck('ping', ping);
    probes.addReadyzCheck('ping', ping);
    probes.addReadyzCheck('webhook', () => {
      if (!ready) throw new Error('webhook server not serving');
    });
    probes.addReadyzCheck('slow', () => (ready ? undefined : new Promise(() => {})));
    await probes.start();
  });
  after(() => probes.close());

  it('/healthz is ok when every check passes', async () => {
    assert.deepEqual(await get(probes.port(), '/healthz'), { status: 200, text: 'ok', type: 'text/plain' });
  });

  it('/readyz fails (500) listing the failed checks, with the reason withheld; hung checks time out', async () => {
    const r = await get(probes.port(), '/readyz');
    assert.equal(r.status, 500);
    assert.equal(r.text, '[+]ping ok\n[-]slow failed: reason withheld\n[-]webhook failed: reason withheld\nreadyz check failed\n');
    const one = await get(probes.port(), '/readyz/webhook');
    assert.deepEqual([one.status, one.text], [500, 'internal server error: webhook server not serving\n']);
    const excluded = await get(probes.port(), '/readyz?exclude=webhook&exclude=slow');
    assert.equal(excluded.status, 200);
  });

  it('/readyz passes once the checks do; verbose lists them', async () => {
    ready = true;
    assert.equal((await get(probes.port(), '/readyz')).status, 200);
    const v = await get(probes.port(), '/readyz?verbose');
    assert.equal(v.text, '[+]ping ok\n[+]slow ok\n[+]webhook ok\nreadyz check passed\n');
    assert.equal((await get(probes.port(), '/readyz/nope')).status, 404);
    assert.equal((await get(probes.port(), '/other')).status, 404);
  });

  it('rejects duplicate and malformed check names', () => {
    assert.throws(() => probes.addReadyzCheck('ping', ping), /already added/);
    assert.throws(() => probes.addReadyzCheck('a/b', ping), /invalid check name/);
  });
});

describe('MetricsServer', () => {
  it('serves the registry at /metrics in the Prometheus text format', async () => {
    const registry = new Registry();
    new Counter({ name: 'kruise_test_total', help: 'test', registers: [registry] }).inc(3);
    const server = new MetricsServer({ port: 0, host: '127.0.0.1', registry, logger: silent });
    await server.start();
    try {
      const r = await get(server.port(), '/metrics');
      assert.equal(r.status, 200);
      assert.match(r.type!, /^text\/plain; version=0\.0\.4/);
      assert.match(r.text, /^kruise_test_total 3$/m);
      assert.equal((await get(server.port(), '/')).status, 404);
    } finally {
      await server.close();
    }
  });

  it('defaults to the shared runtime registry', async () => {
    const server = new MetricsServer({ port: 0, host: '127.0.0.1', logger: silent });
    await server.start();
    try {
      assert.match((await get(server.port(), '/metrics')).text, /# HELP leader_election_master_status/);
    } finally {
      await server.close();
    }
  });
});

describe('ProbeServer with metrics (one port, as kruise-daemon --addr)', () => {
  it('serves /healthz and the registry at /metrics; without the option /metrics is 404', async () => {
    const registry = new Registry();
    new Counter({ name: 'kruise_daemon_test_total', help: 'test', registers: [registry] }).inc(2);
    const both = new ProbeServer({ port: 0, host: '127.0.0.1', logger: silent, metrics: registry });
    both.addHealthzCheck('ping', ping);
    const plain = new ProbeServer({ port: 0, host: '127.0.0.1', logger: silent });
    await both.start();
    await plain.start();
    try {
      assert.equal((await get(both.port(), '/healthz')).text, 'ok');
      assert.match((await get(both.port(), '/metrics')).text, /^kruise_daemon_test_total 2$/m);
      assert.equal((await get(plain.port(), '/metrics')).status, 404);
    } finally {
      await both.close();
      await plain.close();
    }
  });
});

describe('apiServerReachable (the manager readiness check "apiserver")', () => {
  it('any HTTP answer is reachable; a refused connection or silence past the timeout is not', async () => {
    const { StatusError } = await import('../../../src/runtime/errors.ts');
    await apiServerReachable(async () => {
      throw new StatusError({ kind: 'Status', code: 403, message: 'forbidden' });
    })();
    await apiServerReachable(async () => ({}))();
    await assert.rejects(
      async () =>
        apiServerReachable(async () => {
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
        })(),
      /the API server is unreachable: connect ECONNREFUSED/,
    );
    const silent = (signal: AbortSignal) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    await assert.rejects(async () => apiServerReachable(silent, 30)(), /the API server is unreachable/);
  });
});

describe('slow and junk clients on the metrics and probe ports', () => {
  it('never stop either server: junk is answered 400, half-sent requests hold no one up', async () => {
    const metrics = new MetricsServer({ port: 0, host: '127.0.0.1', registry: new Registry(), logger: silent });
    const probes = new ProbeServer({ port: 0, host: '127.0.0.1', logger: silent });
    probes.addReadyzCheck('ping', ping);
    await Promise.all([metrics.start(), probes.start()]);
    const sockets: Socket[] = [];
    try {
      for (const port of [metrics.port(), probes.port()]) {
        // 50 clients that stop half-way through their headers, as a slowloris does.
        for (let i = 0; i < 50; i++) {
          const s = connect(port, '127.0.0.1');
          s.on('error', () => {});
          s.write('GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ');
          sockets.push(s);
        }
        // Bytes that are no HTTP at all.
        const junk = connect(port, '127.0.0.1');
        sockets.push(junk);
        const answer = await new Promise<string>((resolve, reject) => {
          let text = '';
          junk.on('data', (d) => (text += d));
          junk.on('close', () => resolve(text));
          junk.on('error', reject);
          junk.write('\u0000\u0001 not http \r\n\r\n');
        });
        assert.match(answer, /^HTTP\/1\.1 400/);
      }
      assert.equal((await get(metrics.port(), '/metrics')).status, 200);
      assert.equal((await get(probes.port(), '/readyz')).status, 200);
    } finally {
      for (const s of sockets) s.destroy();
      await Promise.all([metrics.close(), probes.close()]);
    }
  });
});
