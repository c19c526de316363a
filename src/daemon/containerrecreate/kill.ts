// Killing a container the way the kubelet does (kuberuntime killContainer): run the preStop hook
// first, bounded by the termination grace period, then stop the container with whatever grace is
// left — the time spent in preStop counts against the grace, and at least 2 s always remain.
import type { Clock } from '../../util/clock.ts';
import type { ContainerRuntime } from '../runtime/types.ts';
import { errMessage } from '../../util/errors.ts';

/** The kubelet's minimumGracePeriodInSeconds. */
export const MIN_GRACE_SECONDS = 2;

export interface PreStopHandler {
  exec?: { command?: string[] };
  httpGet?: {
    host?: string;
    path?: string;
    port: number | string;
    scheme?: string;
    httpHeaders?: Array<{ name: string; value: string }>;
  };
  tcpSocket?: unknown;
}

export interface KillRequest {
  containerID: string;
  containerName: string;
  preStop?: PreStopHandler;
  /** The container's ports (named httpGet ports resolve against them). */
  ports?: Array<{ name?: string; containerPort: number }>;
  podIP?: string;
  graceSeconds: number;
}

/** GETs url within signal; resolves to the HTTP status. */
export type HttpGet = (url: string, headers: Record<string, string>, signal: AbortSignal) => Promise<number>;

export interface KillDeps {
  runtime: ContainerRuntime;
  clock: Clock;
  httpGet: HttpGet;
}

export interface PreStopOutcome {
  ok: boolean;
  message: string;
  tookMs: number;
}

/** Grace left for the stop after preStop took elapsedMs (whole seconds, like the kubelet). */
export function remainingGraceSeconds(graceSeconds: number, elapsedMs: number): number {
  return Math.max(MIN_GRACE_SECONDS, graceSeconds - Math.floor(elapsedMs / 1000));
}

/** The URL an httpGet preStop calls, or an error message when it cannot be formed. */
export function preStopUrl(
  h: NonNullable<PreStopHandler['httpGet']>,
  podIP: string | undefined,
  ports: KillRequest['ports'],
): { url: string } | { error: string } {
  const host = h.host || podIP;
  if (!host) return { error: 'pod has no IP for the httpGet preStop hook' };
  let port: number | undefined;
  if (typeof h.port === 'number') port = h.port;
  else if (/^\d+$/.test(h.port)) port = Number(h.port);
  else port = ports?.find((p) => p.name === h.port)?.containerPort;
  if (!port || port < 1 || port > 65535) return { error: `invalid httpGet preStop port ${JSON.stringify(h.port)}` };
  const scheme = (h.scheme ?? 'HTTP').toLowerCase();
  const path = !h.path ? '/' : h.path.startsWith('/') ? h.path : `/${h.path}`;
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return { url: `${scheme}://${hostPart}:${port}${path}` };
}

export const fetchHttpGet: HttpGet = async (url, headers, signal) => {
  const res = await fetch(url, { headers, signal, redirect: 'follow' });
  await res.body?.cancel();
  return res.status;
};

async function runPreStop(req: KillRequest, deps: KillDeps, signal: AbortSignal): Promise<string | undefined> {
  const h = req.preStop!;
  if (h.exec?.command?.length) {
    const r = await deps.runtime.execSync(req.containerID, h.exec.command, req.graceSeconds);
    return r.exitCode === 0 ? undefined : `exec preStop exited with ${r.exitCode}: ${(r.stderr || r.stdout).trim().slice(0, 256)}`;
  }
  if (h.httpGet) {
    const target = preStopUrl(h.httpGet, req.podIP, req.ports);
    if ('error' in target) return target.error;
    const headers = Object.fromEntries((h.httpGet.httpHeaders ?? []).map((x) => [x.name, x.value]));
    const status = await deps.httpGet(target.url, headers, signal);
    // The kubelet's HTTP handler counts 2xx and 3xx as success.
    return status >= 200 && status < 400 ? undefined : `httpGet preStop ${target.url} answered HTTP ${status}`;
  }
  // tcpSocket is accepted by the API but does nothing as a lifecycle hook (kubelet behaviour).
  return undefined;
}

/**
 * Runs preStop (if any) and stops the container. A failing preStop does not prevent the kill (as
 * in the kubelet); only a failed stop rejects.
 */
export async function killContainer(req: KillRequest, deps: KillDeps): Promise<PreStopOutcome | undefined> {
  let outcome: PreStopOutcome | undefined;
  let grace = req.graceSeconds;
  if (req.preStop && (req.preStop.exec?.command?.length || req.preStop.httpGet)) {
    const started = deps.clock.now();
    const ac = new AbortController();
    const failed = (err: unknown) => errMessage(err);
    // Both contenders settle on their own (the loser's rejection must not go unhandled).
    const message = await Promise.race([
      runPreStop(req, deps, ac.signal).catch(failed),
      deps.clock.sleep(req.graceSeconds * 1000, ac.signal).then(
        () => `preStop did not finish within ${req.graceSeconds}s`,
        () => undefined,
      ),
    ]);
    ac.abort();
    const tookMs = deps.clock.now() - started;
    outcome = { ok: message === undefined, message: message ?? 'preStop hook completed', tookMs };
    grace = remainingGraceSeconds(req.graceSeconds, tookMs);
  }
  await deps.runtime.stopContainer(req.containerID, grace);
  return outcome;
}
