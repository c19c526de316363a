// The kubectl-kruise command tree, and one run of it: from the plugin's process
// (src/cli/kubectl-kruise.ts) or inside another program with its own output (the integration
// tests run most commands this way: one Node process instead of one per call).
import { Command, CommanderError } from 'commander';
import { completionCommand } from './completion.ts';
import { createCommand } from './create.ts';
import { dashboardCommand } from './dashboard/command.ts';
import { getCommand } from './get.ts';
import { describeCommand, execCommand, exposeCommand } from './misc.ts';
import { migrateCommand } from './migrate.ts';
import { rootCommand } from './program.ts';
import { rolloutCommand } from './rollout.ts';
import { scaleCommand, scaledownCommand } from './scale.ts';
import { cliIO, describeError, withCliIO, type CliIO } from './session.ts';
import { setCommand } from './set.ts';

export function kubectlKruiseProgram(): Command {
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
    .addCommand(execCommand())
    .addCommand(dashboardCommand());
  return program.addCommand(completionCommand(program));
}

/** Every command (addCommand does not pass settings down): output to the run's IO, no process.exit. */
function configureTree(cmd: Command): void {
  cmd.exitOverride().configureOutput({
    writeOut: (text) => cliIO().out(text),
    writeErr: (text) => cliIO().err(text),
    outputError: (text, out) => out(text.startsWith('error:') ? text : `error: ${text}`),
  });
  for (const sub of cmd.commands) configureTree(sub);
}

/**
 * Runs `kubectl-kruise <args>` and resolves to its exit code: 0 on success, 1 on any error (printed
 * as `error: …`), or the code a command chose (exec passes on the remote command's). Output goes to
 * `io`, by default the process's stdout/stderr.
 */
export function runKubectlKruise(args: readonly string[], io?: CliIO): Promise<number> {
  const run = async (): Promise<number> => {
    const program = kubectlKruiseProgram();
    configureTree(program);
    try {
      await program.parseAsync([...args], { from: 'user' });
      return cliIO().exitCode ?? 0;
    } catch (err) {
      // Commander has already printed its own errors (unknown option, missing argument) and help.
      if (err instanceof CommanderError) return err.exitCode;
      cliIO().err(`error: ${describeError(err)}\n`);
      return 1;
    }
  };
  return io ? withCliIO(io, run) : run();
}
