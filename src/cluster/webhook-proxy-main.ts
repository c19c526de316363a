// Entry point of the local cluster's webhook-proxy component (see webhook-proxy.ts):
//   webhook-proxy-main.ts --kubeconfig PATH --port N
import { parseArgs } from 'node:util';
import { fromKubeconfigFile } from '../runtime/client.ts';
import { logger } from '../runtime/log.ts';
import { WebhookProxy } from './webhook-proxy.ts';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' } } });
if (!values.kubeconfig || !values.port) {
  process.stderr.write('usage: webhook-proxy-main.ts --kubeconfig PATH --port N [--host 127.0.0.1]\n');
  process.exit(2);
}
const client = fromKubeconfigFile(values.kubeconfig);
const proxy = new WebhookProxy({ client, port: Number(values.port), host: values.host });
await proxy.start();
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void proxy.close().finally(async () => {
      await client.close();
      process.exit(0);
    });
  });
}
logger.info('webhook proxy running');
