// `kruise daemon`: runs kruise-daemon in the foreground — for one node over CRI (--node-name or
// NODE_NAME), or with --simulated for every simulated node of the local cluster. SIGINT/SIGTERM
// stop it; a runtime that cannot be reached fails the start with what was tried.
import { Command } from 'commander';
import { logger, setLoggingFormat } from '../runtime/log.ts';
import { startDaemon } from '../daemon/daemon.ts';
import { addDaemonFlags, daemonConfig } from '../daemon/options.ts';
import { optimizeForSizeFromNow } from './optimize-for-size.ts';

export function daemonCommand(): Command {
  const cmd = new Command('daemon').description(
    'run kruise-daemon (CRR execution, image pre-pulling, container meta) for a node, or --simulated for the local cluster',
  );
  addDaemonFlags(cmd).action(async (o: Record<string, unknown>) => {
    const cfg = daemonConfig(o);
    if (cfg.loggingFormat) setLoggingFormat(cfg.loggingFormat);
    const daemon = await startDaemon(cfg);
    logger.info({ port: daemon.port }, 'kruise-daemon serving /healthz and /metrics');
    optimizeForSizeFromNow();
    let signals = 0;
    const shutdown = async (sig: string) => {
      if (signals++) process.exit(1);
      logger.info({ signal: sig }, 'shutting down');
      await daemon.stop();
      process.exit(0);
    };
    process.on('SIGINT', () => void shutdown('SIGINT'));
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    await new Promise<never>(() => {});
  });
  return cmd;
}
