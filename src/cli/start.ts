// `kruise start`: runs the manager in the foreground. With no --kubeconfig and no KUBECONFIG it first
// brings up (or reuses) the embedded local cluster and installs the CRDs there; with a kubeconfig it
// manages that cluster. Ctrl-C stops the manager, then the local cluster if this command started it
// and no other `kruise start` is using it (the last one to leave stops it then).
import { Command, InvalidArgumentError, type OptionValues } from 'commander';
import { DEFAULT_CLUSTER } from '../cluster/names.ts';
import { fromDefault, fromKubeconfigFile } from '../runtime/client.ts';
import { inCluster } from '../runtime/kubeconfig.ts';
import { logger, setLoggingFormat } from '../runtime/log.ts';
import { releaseWebhookConfigurations } from '../runtime/webhook/endpoint.ts';
import { startManager, type RunningManager } from '../manager/manager.ts';
import { addManagerFlags, managerConfig } from '../manager/options.ts';
import type { RunningDaemon } from '../daemon/daemon.ts';
import { DEFAULT_SIMULATED_NODE_SELECTOR } from '../daemon/options.ts';
import { optimizeForSizeFromNow } from './optimize-for-size.ts';

export function startCommand(): Command {
  const cmd = new Command('start').description('run the Kruise TS manager (controllers + webhooks)');
  addManagerFlags(cmd)
    .option('--cluster-name <name>', 'embedded local cluster to use when no kubeconfig is given', DEFAULT_CLUSTER)
    .option(
      '--nodes <n>',
      'simulated nodes of the embedded cluster',
      (v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number >= 1');
        return n;
      },
      3,
    )
    .option(
      '--real-nodes <n>',
      'real kubelet nodes of the embedded cluster (Linux, root; docs/local-cluster.md#real-nodes)',
      (v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number >= 0');
        return n;
      },
      0,
    )
    .option('--keep-cluster', 'leave the embedded cluster running after the manager stops')
    .option('--install-crds', 'install the CRDs before starting (always on for the embedded cluster)')
    .action(async (o: OptionValues) => {
      const cfg = managerConfig(o);
      if (cfg.loggingFormat) setLoggingFormat(cfg.loggingFormat);
      cfg.kubeconfig ??= process.env.KUBECONFIG || undefined;
      // No kubeconfig: in a pod (the Helm install) the service account's cluster, else the embedded one.
      const embedded = !cfg.kubeconfig && !inCluster();
      let startedCluster = false;
      let usingCluster = false;
      let manager: RunningManager | undefined;
      const daemons: RunningDaemon[] = [];
      const stopAll = async () => {
        for (const d of daemons.splice(0)) await d.stop();
        await manager?.stop();
        if (usingCluster && cfg.kubeconfig) {
          // The cluster may outlive this manager (--keep-cluster, another user): leave no webhook
          // configuration behind that would refuse its pods with nobody to answer.
          const client = fromKubeconfigFile(cfg.kubeconfig);
          await releaseWebhookConfigurations(client, cfg.leaderElectionNamespace)
            .catch((err: unknown) => logger.warn({ err }, 'could not remove the webhook configurations'))
            .finally(() => client.close());
          const { leave } = await import('../cluster/local-cluster.ts');
          await leave(o.clusterName, process.pid, { tearDown: startedCluster && !o.keepCluster });
        }
      };

      let realNodes: Array<{ name: string; socket: string }> = [];
      const startUp = async () => {
        // The local cluster and the CRD manifests (and the yaml parser they need) are imported only
        // when used: a manager in a pod or on a given cluster does not load them.
        if (embedded) {
          const { up, envLines } = await import('../cluster/local-cluster.ts');
          const { state, reused } = await up({ name: o.clusterName, nodes: o.nodes, realNodes: o.realNodes, user: process.pid });
          realNodes = state.realNodes ?? [];
          usingCluster = true;
          startedCluster = !reused;
          cfg.kubeconfig = state.kubeconfig;
          process.stderr.write(
            `\nThe local cluster is ready. In another shell:\n  ${envLines(state).join('\n  ')}\n  kubectl get nodes\n\n`,
          );
        }
        if (embedded || o.installCrds) {
          const client = cfg.kubeconfig ? fromKubeconfigFile(cfg.kubeconfig) : fromDefault();
          const { installCRDs } = await import('../manager/crds.ts');
          const n = await installCRDs(client, { set: cfg.apiVersions });
          await client.close();
          logger.info({ crds: n, apiVersions: cfg.apiVersions }, 'CRDs installed');
        }
        manager = await startManager(cfg);
        logger.info(
          {
            identity: manager.identity,
            webhookPort: manager.webhookPort,
            metricsPort: manager.metricsPort,
            healthPort: manager.healthPort,
          },
          'kruise-manager started',
        );
        // Only now: the initial lists, when the heap grows fastest, run at full speed.
        if (optimizeForSizeFromNow()) logger.info('V8 --optimize-for-size on now that the caches have synced');
        // The embedded cluster's KWOK nodes are simulated: kruise-daemon runs in this process for all
        // of them (its metrics show on the manager's endpoint, which shares the registry). Each real
        // node gets a real-mode daemon on its own containerd, as its DaemonSet pod would run.
        if (embedded) {
          // Imported only here: a manager on a real cluster does not load the daemon at all.
          const { startDaemon } = await import('../daemon/daemon.ts');
          const common = { kubeconfig: cfg.kubeconfig, addr: '0', maxWorkersForPullImage: -1, featureGates: cfg.featureGates };
          daemons.push(await startDaemon({ ...common, simulated: true, simulatedNodeSelector: DEFAULT_SIMULATED_NODE_SELECTOR }));
          for (const node of realNodes) {
            daemons.push(
              await startDaemon({
                ...common,
                nodeName: node.name,
                runtimeEndpoint: `unix://${node.socket}`,
                simulated: false,
                simulatedNodeSelector: DEFAULT_SIMULATED_NODE_SELECTOR,
              }),
            );
            logger.info({ node: node.name }, 'kruise-daemon started for real node');
          }
        }
      };
      const startingUp = startUp();

      // Handled from the start: a stop asked for during start-up lets it finish, then stops what
      // it started (killed mid-way, this process would leave the cluster and its files behind).
      let signals = 0;
      const shutdown = async (sig: string) => {
        if (signals++) process.exit(1); // a second Ctrl-C: stop now
        logger.info({ signal: sig }, 'shutting down');
        await startingUp.catch(() => undefined);
        await stopAll();
        process.exit(0);
      };
      process.on('SIGINT', () => void shutdown('SIGINT'));
      process.on('SIGTERM', () => void shutdown('SIGTERM'));

      try {
        await startingUp;
      } catch (err) {
        await stopAll();
        throw err;
      }
      await manager!.done;
    });
  return cmd;
}
