// `kubectl-kruise`: the kubectl plugin for OpenKruise workloads (`kubectl kruise ...` once it is on
// the PATH). Exit code 0 on success, 1 on any error, printed as kubectl does: `error: ...`.
import { completionCommand } from './kubectl/completion.ts';
import { createCommand } from './kubectl/create.ts';
import { describeCommand, execCommand, exposeCommand } from './kubectl/misc.ts';
import { getCommand } from './kubectl/get.ts';
import { migrateCommand } from './kubectl/migrate.ts';
import { rootCommand } from './kubectl/program.ts';
import { rolloutCommand } from './kubectl/rollout.ts';
import { scaleCommand, scaledownCommand } from './kubectl/scale.ts';
import { describeError } from './kubectl/session.ts';
import { setCommand } from './kubectl/set.ts';

const program = rootCommand()
  .addCommand(getCommand())
  .addCommand(rolloutCommand())
  .addCommand(setCommand())
  .addCommand(scaleCommand())
  .addCommand(scaledownCommand())
  .addCommand(createCommand())
  .addCommand(migrateCommand())
  .addCommand(describeCommand())
  .addCommand(exposeCommand())
  .addCommand(execCommand());
program.addCommand(completionCommand(program));

// A reader that stops early (`... | head -1`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`error: ${describeError(err)}\n`);
  process.exit(1);
});
