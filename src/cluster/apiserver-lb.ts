// The one address in front of several kube-apiservers (`kruise cluster up --apiservers N`), as kind
// and kubeadm put a load balancer before an HA control plane: a TCP relay (TLS passes through, each
// API server presents the cluster's serving certificate) that sends each new connection to the next
// API server in turn, and to the one after it when that one does not accept the connection (stopped,
// restarting). A connection stays with its API server until either side closes it; the API servers
// move their clients with GOAWAY (`--goaway-chance`), and a client's next connection lands on
// another one.

import net from 'node:net';

export interface ApiServerBalancer {
  port: number;
  /** Connections sent to each backend (by port), for tests and figures. */
  connections: Map<number, number>;
  close(): Promise<void>;
}

/** How long a backend may take to accept a connection before the next one is tried. */
const CONNECT_TIMEOUT_MS = 2_000;

export async function startApiServerBalancer(opts: {
  port: number;
  backends: readonly number[];
  host?: string;
}): Promise<ApiServerBalancer> {
  const host = opts.host ?? '127.0.0.1';
  const connections = new Map<number, number>(opts.backends.map((p) => [p, 0]));
  let next = 0;
  const open = new Set<net.Socket>();

  /** Connects to the backends in turn from the next one; undefined when none accepts. */
  const connectBackend = async (): Promise<{ socket: net.Socket; port: number } | undefined> => {
    const first = next;
    next = (next + 1) % opts.backends.length;
    for (let i = 0; i < opts.backends.length; i++) {
      const port = opts.backends[(first + i) % opts.backends.length]!;
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
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
