// The local cluster's API server load balancer (`kruise cluster up --apiservers N`): new connections
// go to each backend in turn, skip a backend that does not accept, and end with their backend.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startApiServerBalancer } from '../../../src/cluster/apiserver-lb.ts';
import { freePorts } from '../../../src/cluster/processes.ts';

/** A backend that answers every connection with its own name, then keeps it open; stop() drops all, as a stopped process does. */
async function backend(name: string, port: number): Promise<{ stop(): void }> {
  const open = new Set<net.Socket>();
  const server = net.createServer((s) => {
    open.add(s);
    s.on('error', () => {});
    s.write(name);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    stop() {
      server.close();
      for (const s of open) s.destroy();
    },
  };
}

/** Connects through the balancer; the name of the backend that answered, and the socket. */
function ask(port: number): Promise<{ name: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('data', (d) => resolve({ name: d.toString(), socket }));
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('closed without an answer')));
  });
}

test('connections go round the API servers, skip one that is down, and close with their backend', async () => {
  const [a, b, c, lbPort] = await freePorts(4);
  const servers = [await backend('a', a!), await backend('b', b!), await backend('c', c!)];
  const lb = await startApiServerBalancer({ port: lbPort!, backends: [a!, b!, c!] });
  const sockets: net.Socket[] = [];
  try {
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { name, socket } = await ask(lb.port);
      names.push(name);
      sockets.push(socket);
    }
    assert.deepEqual(names, ['a', 'b', 'c', 'a', 'b', 'c']);

    // b stops (a restart): its connections end, and new ones go to a and c only.
    const closed = [sockets[1]!, sockets[4]!].map((s) => new Promise((r) => s.once('close', r)));
    servers[1]!.stop();
    await Promise.all(closed);
    const after: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { name, socket } = await ask(lb.port);
      after.push(name);
      sockets.push(socket);
    }
    assert.ok(!after.includes('b'), after.join());
    assert.deepEqual(new Set(after), new Set(['a', 'c']));
    assert.equal(lb.connections.get(b!), 2);
  } finally {
    for (const s of sockets) s.destroy();
    await lb.close();
    for (const s of servers) s.stop();
  }
});

test('no API server accepting: the connection is closed', async () => {
  const [a, lbPort] = await freePorts(2);
  const lb = await startApiServerBalancer({ port: lbPort!, backends: [a!] });
  try {
    await assert.rejects(ask(lb.port), /closed without an answer/);
  } finally {
    await lb.close();
  }
});

test('an API server whose /readyz fails (accepting connections, paths not installed) gets no new connection', async () => {
  const { createCA, issueCert } = await import('../../../src/util/pki.ts');
  const https = await import('node:https');
  const ca = await createCA('lb-test');
  const cert = await issueCert(ca, { commonName: 'kube-apiserver', ipAddresses: ['127.0.0.1'], server: true });
  const [a, b, lbPort] = await freePorts(3);
  const servers = [
    { port: a!, name: 'a', ready: false },
    { port: b!, name: 'b', ready: true },
  ].map(({ port, name, ready }) => {
    const server = https.createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
      if (req.url === '/readyz') res.writeHead(ready ? 200 : 503).end();
      else res.end(name);
    });
    server.listen(port, '127.0.0.1');
    return server;
  });
  await new Promise((r) => setTimeout(r, 50));
  const lb = await startApiServerBalancer({ port: lbPort!, backends: [a!, b!] });
  try {
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      names.push(
        await new Promise<string>((resolve, reject) => {
          https
            .get({ host: '127.0.0.1', port: lb.port, path: '/', ca: ca.certPem, servername: 'kube-apiserver', agent: false }, (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve(body));
            })
            .on('error', reject);
        }),
      );
    }
    assert.deepEqual(names, ['b', 'b', 'b', 'b']);
  } finally {
    await lb.close();
    for (const s of servers) s.close();
  }
});
