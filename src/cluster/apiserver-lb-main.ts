// Entry point of the local cluster's apiserver-lb component (see apiserver-lb.ts):
//   apiserver-lb-main.ts --config RUN_DIR/apiserver-lb.json   ({ "port": N, "backends": [N, …] })
// The config file lives in the cluster's run dir, which puts the run dir in the command line (how
// `kruise cluster down` finds the cluster's processes).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { logger } from '../runtime/log.ts';
import { startApiServerBalancer } from './apiserver-lb.ts';

const { values } = parseArgs({ options: { config: { type: 'string' } } });
if (!values.config) {
  process.stderr.write('usage: apiserver-lb-main.ts --config FILE\n');
  process.exit(2);
}
const config = JSON.parse(readFileSync(values.config, 'utf8')) as { port: number; backends: number[] };
const balancer = await startApiServerBalancer(config);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void balancer.close().finally(() => process.exit(0)));
}
logger.info({ port: balancer.port, backends: config.backends }, 'API server load balancer running');
