// Global setup of `node --test`. Node loads this file with its own type stripping (not tsx), so it
// imports only Node built-ins and runs the real work (test/harness/suite-setup.ts) in a tsx child:
// one local cluster for the whole run, shared by every integration test file (each isolates itself
// in its own namespace), with the CRDs installed and one Kruise TS manager running against it. A
// cluster that was already running is reused and left running; one started here is stopped at the
// end; the manager always belongs to the run.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const script = path.join(import.meta.dirname, 'harness', 'suite-setup.ts');
let env: { startedCluster: boolean; managerPid: number } | undefined;

function run(args: string[]): string {
  return execFileSync(process.execPath, ['--import', 'tsx', script, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

export async function globalSetup(): Promise<void> {
  if (process.env.KRUISE_TS_SKIP_CLUSTER === '1') return;
  env = JSON.parse(run(['up']).trim().split('\n').pop()!);
}

export async function globalTeardown(): Promise<void> {
  if (env) run(['down', String(env.startedCluster), String(env.managerPid)]);
}
