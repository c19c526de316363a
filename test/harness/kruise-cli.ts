// How tests start the `kruise` CLI from source: Node arguments for `kruise <subcommand> …` through
// tsx, and the serving flags every test manager passes (loopback, ports chosen by the OS unless given).
import path from 'node:path';
import { repoRoot } from '../../src/cluster/binaries.ts';

/** The CLI's source entry; also what a test looks for in a process's command line. */
export const KRUISE_CLI = 'src/cli/kruise.ts';

/** Node arguments that run `kruise ...args` from source. */
export const kruiseArgs = (...args: string[]): string[] => ['--import', 'tsx', path.join(repoRoot, KRUISE_CLI), ...args];

/** `kruise start`'s webhook, metrics and health-probe listeners. */
export const servingFlags = (webhookPort: number | string, metricsAddr = '127.0.0.1:0', healthProbeAddr = '127.0.0.1:0'): string[] => [
  '--webhook-port',
  String(webhookPort),
  '--metrics-addr',
  metricsAddr,
  '--health-probe-addr',
  healthProbeAddr,
];
