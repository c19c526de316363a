// The kubectl-kruise command tree and its global flags (kubectl's: -n, -A, --context,
// --kubeconfig), usable anywhere on the command line.
import { Command, type OptionValues } from 'commander';
import { openSession, type GlobalOptions, type Session } from './session.ts';

/** Runs a command body with a session built from the global flags; the client is closed after. */
export async function withSession(
  cmd: Command,
  body: (session: Session, opts: GlobalOptions & OptionValues) => Promise<void>,
): Promise<void> {
  const opts = cmd.optsWithGlobals<GlobalOptions & OptionValues>();
  const session = openSession(opts);
  try {
    await body(session, opts);
  } finally {
    await session.close();
  }
}

export function rootCommand(): Command {
  return new Command('kubectl-kruise')
    .description(
      'kubectl plugin for OpenKruise workloads (Kruise TS): rollout, set, scale, scaledown, create, migrate, exec, expose, describe, dashboard',
    )
    .option('-n, --namespace <namespace>', 'the namespace scope for this request')
    .option('-A, --all-namespaces', 'list across all namespaces (read commands)')
    .option('--context <name>', 'the name of the kubeconfig context to use')
    .option('--kubeconfig <path>', 'path to the kubeconfig file to use for CLI requests')
    .showHelpAfterError();
}
