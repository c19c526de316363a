// `kubectl kruise dashboard`: serves the read-only dashboard (server.ts) on a local port with the
// user's kubeconfig until interrupted.
import { Command } from 'commander';
import { withSession } from '../program.ts';
import { write } from '../session.ts';
import { startDashboard } from './server.ts';

export const DEFAULT_DASHBOARD_PORT = 3100;

export function dashboardCommand(): Command {
  return new Command('dashboard')
    .description(
      'serve a local, read-only web page of the Kruise workloads (rollout progress, pods by revision, partition and budget, events, the rollout plan of a change), updated live from watches',
    )
    .option('--port <port>', 'the local port (0: any free port)', String(DEFAULT_DASHBOARD_PORT))
    .option('--address <address>', 'the address to listen on', '127.0.0.1')
    .option('--feature-gates <gates>', "the manager's --feature-gates, for the rollout plans", '')
    .action(async function (this: Command) {
      await withSession(this, async (session, opts) => {
        const dashboard = await startDashboard(session, {
          port: Number(opts.port),
          address: String(opts.address),
          // Every namespace unless -n names one.
          namespace: session.namespaceExplicit && !session.allNamespaces ? session.namespace : undefined,
          featureGates: opts.featureGates,
        });
        write(`Kruise dashboard at ${dashboard.url} (read-only; Ctrl-C to stop)`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await dashboard.close();
      });
    });
}
