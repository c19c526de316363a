// Listen addresses in the upstream `[host]:port` flag form (--metrics-addr, --health-probe-addr,
// the daemon's --addr), shared by the manager and the daemon.

/** ":8080" → {host: undefined, port: 8080}; "127.0.0.1:0" → {host, port 0}; "0" disables. */
export function parseAddr(addr: string): { host?: string; port: number } | null {
  if (addr === '0') return null;
  const i = addr.lastIndexOf(':');
  const port = Number(addr.slice(i + 1));
  if (i < 0 || !Number.isInteger(port)) throw new Error(`invalid address ${JSON.stringify(addr)}: want [host]:port`);
  const host = addr.slice(0, i).replace(/^\[|\]$/g, '');
  return { host: host || undefined, port };
}
