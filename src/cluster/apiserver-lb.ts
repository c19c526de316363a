// The one address in front of several kube-apiservers (`kruise cluster up --apiservers N`), as kind
// and kubeadm put a load balancer before an HA control plane: a TCP relay (TLS passes through, each
// API server presents the cluster's serving certificate) that sends each new connection to the next
// ready API server in turn, and to the one after it when that one does not accept the connection.
// Ready, as kind's haproxy checks it: `GET /readyz` answered 200, asked every second (a restarted API
// server accepts connections well before it has installed its paths, and answers 503 until then).
// When none is ready, any that accepts is used (a cluster starting up). A connection stays with its
// API server until either side closes it; the API servers move their clients with GOAWAY
// (`--goaway-chance`), and a client's next connection lands on another one.

import https from 'node:https';
import net from 'node:net';

export interface ApiServerBalancer {
  port: number;
  /** Connections sent to each backend (by port), for tests and figures. */
  connections: Map<number, number>;
  close(): Promise<void>;
}

/** How long a backend may take to accept a connection before the next one is tried. */
const CONNECT_TIMEOUT_MS = 2_000;
const READYZ_INTERVAL_MS = 1_000;

/** Whether the API server at port answers `GET /readyz` with 200 within a second. */
function readyz(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    // Anonymous, unverified: /readyz is public, and the relay does not vouch for the certificate.
    const req = https.get({ host, port, path: '/readyz', rejectUnauthorized: false, agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

export async function startApiServerBalancer(opts: {
  port: number;
  backends: readonly number[];
  host?: string;
}): Promise<ApiServerBalancer> {
  const host = opts.host ?? '127.0.0.1';
  const connections = new Map<number, number>(opts.backends.map((p) => [p, 0]));
  let next = 0;
  const open = new Set<net.Socket>();
  const ready = new Set<number>();
  const checkAll = () => Promise.all(opts.backends.map(async (p) => ((await readyz(host, p)) ? ready.add(p) : ready.delete(p))));
  const health = setInterval(() => void checkAll(), READYZ_INTERVAL_MS);
  await checkAll();

  /** Connects to the ready backends (all, when none is) in turn from the next one; undefined when none accepts. */
  const connectBackend = async (): Promise<{ socket: net.Socket; port: number } | undefined> => {
    const candidates = ready.size > 0 ? opts.backends.filter((p) => ready.has(p)) : opts.backends;
    const first = next++;
    for (let i = 0; i < candidates.length; i++) {
      const port = candidates[(first + i) % candidates.length]!;
      const socket = await new Promise<net.Socket | undefined>((resolve) => {
        const s = net.connect({ host, port });
        const timer = setTimeout(() => {
          s.destroy();
          resolve(undefined);
        }, CONNECT_TIMEOUT_MS);
        s.once('connect', () => {
          clearTimeout(timer);
          resolve(s);
        });
        s.once('error', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
      if (socket) return { socket, port };
    }
    return undefined;
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    open.add(client);
    client.on('error', () => {});
    client.on('close', () => open.delete(client));
    void connectBackend().then((backend) => {
      if (!backend || client.destroyed) {
        backend?.socket.destroy();
        client.destroy();
        return;
      }
      const { socket, port } = backend;
      connections.set(port, (connections.get(port) ?? 0) + 1);
      open.add(socket);
      socket.on('error', () => {});
      // Either side closing (or failing) ends both: the client sees its API server go away.
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
      });
      client.on('close', () => socket.destroy());
      client.pipe(socket);
      socket.pipe(client);
      client.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(health);
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
