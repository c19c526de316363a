// `kruise`: the Kruise TS command line (manager start-up, the local cluster, storage-version migration).
import { Command } from 'commander';
import { clusterCommand } from './cluster.ts';
import { daemonCommand } from './daemon.ts';
import { startCommand } from './start.ts';
import { storageVersionCommand } from './storage-version.ts';
import { errMessage } from '../util/errors.ts';

const program = new Command('kruise')
  .description('Kruise TS: OpenKruise workloads and policies, in TypeScript')
  .showHelpAfterError()
  .addCommand(startCommand())
  .addCommand(daemonCommand())
  .addCommand(clusterCommand())
  .addCommand(storageVersionCommand());

// A reader that stops early (`kruise cluster status | head -1`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`error: ${errMessage(err)}\n`);
  process.exit(1);
});
