// Global setup of `node --test`: one local cluster for the whole run, shared by every integration
// test file (each isolates itself in its own namespace). A cluster that was already running is
// reused and left running; one started here is stopped at the end.
import { up, down } from '../src/cluster/local-cluster.ts';
import { TEST_CLUSTER } from './harness/cluster.ts';

let startedHere = false;

export async function globalSetup(): Promise<void> {
  if (process.env.KRUISE_TS_SKIP_CLUSTER === '1') return;
  const { reused } = await up({ name: TEST_CLUSTER, nodes: 3 });
  startedHere = !reused;
}

export async function globalTeardown(): Promise<void> {
  if (startedHere && process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(TEST_CLUSTER, { quiet: true });
}
