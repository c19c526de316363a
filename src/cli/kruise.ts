// `kruise`: the Kruise TS command line (manager start-up, the local cluster, storage-version migration,
// the sharded manager's hand-back).
import { Command } from 'commander';
import { errMessage } from '../util/errors.ts';
import { enableCompileCache } from './compile-cache.ts';

enableCompileCache();

// Each subcommand's module is imported only when it is the one invoked: the manager does not load
// the daemon, the local-cluster builder or the migration tool (≈5 MiB of RSS and their start-up).
// Help and an unknown or missing subcommand load them all, so every command is listed.
const SUBCOMMANDS: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./start.ts')).startCommand(),
  daemon: async () => (await import('./daemon.ts')).daemonCommand(),
  cluster: async () => (await import('./cluster.ts')).clusterCommand(),
  'storage-version': async () => (await import('./storage-version.ts')).storageVersionCommand(),
  sharding: async () => (await import('./sharding.ts')).shardingCommand(),
};

const program = new Command('kruise').description('Kruise TS: OpenKruise workloads and policies, in TypeScript').showHelpAfterError();

// A reader that stops early (`kruise cluster status | head -1`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const invoked = process.argv[2];
const load = Object.hasOwn(SUBCOMMANDS, invoked) ? [SUBCOMMANDS[invoked]] : Object.values(SUBCOMMANDS);
Promise.all(load.map((make) => make()))
  .then((commands) => {
    for (const command of commands) program.addCommand(command);
    return program.parseAsync(process.argv);
  })
  .catch((err: unknown) => {
    process.stderr.write(`error: ${errMessage(err)}\n`);
    process.exit(1);
  });
