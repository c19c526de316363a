// The webhook server's readiness as the API server sees it (upstream pkg/webhook/util/health).

import https from 'node:https';

/**
 * A readiness check for the manager's /readyz (upstream pkg/webhook/util/health): the webhook
 * server answers /healthz over TLS that verifies against the CA the API server is given.
 */
export function webhookReadinessCheck(opts: {
  port: number;
  host?: string;
  /** The name the serving certificate is issued for, when it is not host (service mode: <service>.<ns>.svc). */
  servername?: string;
  ca: () => string | Buffer;
  timeoutMs?: number;
}): () => Promise<void> {
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = https.request(
        {
          host: opts.host ?? 'localhost',
          port: opts.port,
          path: '/healthz',
          method: 'GET',
          ...(opts.servername ? { servername: opts.servername } : {}),
          ca: opts.ca(),
          timeout: opts.timeoutMs ?? 5_000,
        },
        (res) => {
          res.resume();
          if (res.statusCode === 200) resolve();
          else reject(new Error(`webhook server /healthz answered ${res.statusCode}`));
        },
      );
      req.on('timeout', () => req.destroy(new Error('webhook server /healthz timed out')));
      req.on('error', reject);
      req.end();
    });
}
