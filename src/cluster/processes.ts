// Starting and stopping the cluster's component processes. Every component runs in its own process
// group, detached from the caller so a cluster can outlive `kruise cluster up`, and every one of
// them has the cluster's run dir in its command line: that is how `down` finds and stops them even
// after a crash lost the recorded pids, without ever touching an unrelated process.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Started {
  name: string;
  pid: number;
  logFile: string;
  child: ChildProcess;
  exited?: { code: number | null; signal: string | null };
}

export function startProcess(name: string, bin: string, args: string[], logFile: string, env?: NodeJS.ProcessEnv): Started {
  const fd = openSync(logFile, 'a');
  const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd], env: env ?? process.env });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${name} (${bin})`);
  const started: Started = { name, pid: child.pid, logFile, child };
  child.on('exit', (code, signal) => (started.exited = { code, signal }));
  return started;
}

export function tail(file: string, lines = 30, keep: (line: string) => boolean = () => true): string {
  if (!existsSync(file)) return '(no log)';
  const text = readFileSync(file, 'utf8').trimEnd().split('\n').filter(keep);
  return text.slice(-lines).join('\n');
}

/** The pids of live processes whose command line mentions marker (a run dir path). */
export function processesMentioning(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(marker)) pids.push(pid);
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after graceMs for what is still running. Resolves when all are gone. */
export async function stopProcesses(pids: number[], graceMs = 10_000): Promise<void> {
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig); // the process group, so children of a component go too
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  for (const pid of pids) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pids.some(isAlive) && Date.now() < deadline) await sleep(100);
  for (const pid of pids.filter(isAlive)) signal(pid, 'SIGKILL');
  while (pids.some((p) => isAlive(p) && !isZombie(p))) await sleep(50);
}

function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** count distinct free TCP ports on 127.0.0.1, held open together so none is handed out twice. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export async function assertPortFree(port: number, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', () =>
      reject(
        new Error(`port ${port} on 127.0.0.1 (${what}) is already in use by another process: stop that process or choose another port`),
      ),
    );
    s.listen(port, '127.0.0.1', () => s.close(() => resolve()));
  });
}
