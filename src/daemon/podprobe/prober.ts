// Running one probe (upstream pkg/daemon/podprobe/prober.go, the kubelet's probers): exec through
// the container runtime (CRI ExecSync on a real node), tcpSocket and httpGet against the pod IP.
// Every outcome is Succeeded or Failed with a message (the command's output, or why it failed);
// the message is cut to 1024 bytes as upstream.
import https from 'node:https';
import net from 'node:net';
import { http } from '../../util/node-http.ts';
import type { ProbeState } from '../../apis/apps/podprobemarker.ts';
import type { Probe } from '../../apis/core.ts';
import type { ContainerRuntime } from '../runtime/types.ts';
import { MAX_MESSAGE_LENGTH, probeTiming } from './plan.ts';

export interface ProbeOutcome {
  state: Extract<ProbeState, 'Succeeded' | 'Failed'>;
  message: string;
}

export interface ProbeRequest {
  probe: Probe;
  containerID: string;
  podIP: string;
  runtime: ContainerRuntime;
}

const cut = (s: string) => {
  const b = Buffer.from(s, 'utf8');
  return b.length <= MAX_MESSAGE_LENGTH ? s : b.subarray(0, MAX_MESSAGE_LENGTH).toString('utf8');
};
const failed = (message: string): ProbeOutcome => ({ state: 'Failed', message: cut(message) });

export async function runProbe(req: ProbeRequest): Promise<ProbeOutcome> {
  const { probe } = req;
  const { timeoutSeconds } = probeTiming(probe);
  try {
    if (probe.exec) {
      const r = await req.runtime.execSync(req.containerID, probe.exec.command ?? [], timeoutSeconds);
      const output = `${r.stdout}${r.stderr}`;
      return {
        state: r.exitCode === 0 ? 'Succeeded' : 'Failed',
        message: cut(r.exitCode === 0 ? output : output || `command exited with ${r.exitCode}`),
      };
    }
    if (probe.tcpSocket) {
      const host = probe.tcpSocket.host || req.podIP;
      const port = Number(probe.tcpSocket.port);
      await tcpConnect(host, port, timeoutSeconds * 1000);
      return { state: 'Succeeded', message: '' };
    }
    if (probe.httpGet) {
      const h = probe.httpGet;
      const host = h.host || req.podIP;
      const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
      const path = !h.path ? '/' : h.path.startsWith('/') ? h.path : `/${h.path}`;
      const url = `${(h.scheme ?? 'HTTP').toLowerCase()}://${hostPart}:${Number(h.port)}${path}`;
      const headers = Object.fromEntries((h.httpHeaders ?? []).map((x) => [x.name, x.value]));
      const status = await httpStatus(url, headers, timeoutSeconds * 1000);
      // The kubelet's HTTP prober: 2xx and 3xx succeed.
      return status >= 200 && status < 400 ? { state: 'Succeeded', message: '' } : failed(`HTTP probe failed with statuscode: ${status}`);
    }
    return failed('missing probe handler');
  } catch (err) {
    return failed((err as Error).message ?? String(err));
  }
}

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`dial tcp ${host}:${port}: i/o timeout`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`dial tcp ${host}:${port}: ${err.message}`));
    });
  });
}

/** GET url; the kubelet does not verify serving certificates of HTTPS probes. */
function httpStatus(url: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { headers, timeout: timeoutMs, ...(mod === https ? { rejectUnauthorized: false } : {}) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () =>
      req.destroy(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)),
    );
    req.once('error', reject);
  });
}
