// OpenKruise v1.8.2's kruise-manager as a test peer (docs/upstream-peer.md in the shared docs):
// on its own local cluster, so that its CRDs never meet ours, with upstream's CRDs and webhook
// configurations read from the Go module cache, and its webhooks served on 127.0.0.1. Test-only.
import { mkdirSync } from 'node:fs';
import { request } from 'node:https';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureUpstreamPeer } from '../../src/cluster/binaries.ts';
import { down, kubectl, up, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { freePorts, processesMentioning, startProcess, stopProcesses, tail } from '../../src/cluster/processes.ts';
import { TEST_CLUSTER } from './cluster.ts';

export const UPSTREAM_NAMESPACE = 'kruise-system';
// Upstream's kustomize namePrefix; its webhook controller looks for exactly these names.
const CONFIGURATIONS = {
  MutatingWebhookConfiguration: 'kruise-mutating-webhook-configuration',
  ValidatingWebhookConfiguration: 'kruise-validating-webhook-configuration',
};

export interface RunningPeer {
  cluster: ClusterState;
  version: string;
  webhookPort: number;
  /** Its Prometheus metrics, plain HTTP on 127.0.0.1. */
  metricsPort: number;
  pid: number;
  logFile: string;
  /** Removes the webhook configurations first (upstream's pod webhook fails closed), then stops the manager; the cluster stays. */
  stopManager(): Promise<void>;
  /** stopManager, then stops the cluster if it was started here. */
  stop(): Promise<void>;
}

/**
 * Starts upstream's kruise-manager on the cluster `<test cluster>-upstream` (created, or reused
 * when running) with the given feature gates, and resolves once its webhook configurations point
 * at it and its webhook server answers.
 */
export async function startUpstreamPeer(opts: { featureGates?: string; cluster?: string } = {}): Promise<RunningPeer> {
  const peer = await ensureUpstreamPeer();
  const name = opts.cluster ?? `${TEST_CLUSTER}-upstream`;
  const { state, reused } = await up({ name, nodes: 1 });
  const run = (args: string[], input?: string) => kubectl(state, args, input);
  // A manager left by an interrupted run serves stale certificates on another port.
  await stopProcesses(
    processesMentioning(state.kubeconfig).filter((pid) => processesMentioning(peer.kruiseManager).includes(pid)),
    5000,
  );

  await run(['create', 'namespace', UPSTREAM_NAMESPACE]).catch((e: Error) => {
    if (!/AlreadyExists/.test(e.message)) throw e;
  });
  // Created, not applied: on a reused cluster the manager has already pointed the CRD conversion
  // and the webhook configurations at itself by URL, which re-applying the Service form would break.
  const createMissing = (docs: string) =>
    run(['create', '-f', '-'], docs).catch((e: Error & { stderr?: string }) => {
      const problems = (e.stderr ?? e.message)
        .split('\n')
        .filter((l) => l.trim() && !/AlreadyExists|already exists/.test(l) && !l.startsWith('Command failed'));
      if (problems.length) throw e;
      return '';
    });
  await createMissing(await run(['kustomize', path.join(peer.moduleDir, 'config/crd')]));
  const webhookDocs = (await run(['kustomize', path.join(peer.moduleDir, 'config/webhook')])).replace(
    /^ {2}name: (mutating|validating)-webhook-configuration$/gm,
    '  name: kruise-$1-webhook-configuration',
  );
  await createMissing(webhookDocs);

  const [webhookPort, metrics, probes, pprof] = await freePorts(4);
  const certDir = path.join(state.runDir, 'kruise-peer-certs');
  mkdirSync(certDir, { recursive: true });
  const logFile = path.join(state.runDir, 'logs', 'kruise-peer.log');
  const manager = startProcess(
    'kruise-peer',
    peer.kruiseManager,
    [
      `--kubeconfig=${state.kubeconfig}`,
      `--metrics-addr=127.0.0.1:${metrics}`,
      `--health-probe-addr=127.0.0.1:${probes}`,
      `--pprof-addr=127.0.0.1:${pprof}`,
      '--enable-leader-election=false',
      `--feature-gates=${opts.featureGates ?? ''}`,
    ],
    logFile,
    {
      ...process.env,
      KUBECONFIG: state.kubeconfig,
      POD_NAMESPACE: UPSTREAM_NAMESPACE,
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_PORT: String(webhookPort),
      WEBHOOK_CERT_DIR: certDir,
    },
  );

  const stopManager = async () => {
    for (const [kind, configName] of Object.entries(CONFIGURATIONS)) {
      await run(['delete', kind, configName, '--ignore-not-found']).catch(() => undefined);
    }
    await stopProcesses([manager.pid], 10_000);
  };
  const stop = async () => {
    await stopManager();
    if (!reused && process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(name, { quiet: true });
  };

  const ours = (url?: string) => !!url?.startsWith(`https://127.0.0.1:${webhookPort}/`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (manager.exited) {
      await stop();
      throw new Error(
        `upstream kruise-manager exited (${JSON.stringify(manager.exited)}); last lines of ${logFile}:\n${tail(logFile, 30)}`,
      );
    }
    const pointed = await Promise.all(
      Object.entries(CONFIGURATIONS).map(async ([kind, configName]) => {
        const cfg = JSON.parse(await run(['get', kind, configName, '-o', 'json'])) as {
          webhooks: Array<{ clientConfig: { url?: string; caBundle?: string } }>;
        };
        return cfg.webhooks.every((w) => ours(w.clientConfig.url) && !!w.clientConfig.caBundle);
      }),
    ).then(
      (all) => all.every(Boolean),
      () => false,
    );
    if (pointed && (await answers(webhookPort))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`upstream kruise-manager's webhooks did not come up within 180s; last lines of ${logFile}:\n${tail(logFile, 30)}`);
    }
    await sleep(500);
  }
  return { cluster: state, version: peer.version, webhookPort, metricsPort: metrics, pid: manager.pid, logFile, stopManager, stop };
}

/** Whether the webhook server takes TLS connections and answers HTTP (any status). */
async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', method: 'GET', rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
