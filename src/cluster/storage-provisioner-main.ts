// Entry point of the local cluster's storage-provisioner component (see storage.ts):
//   storage-provisioner-main.ts --kubeconfig PATH --volume-root DIR
import { parseArgs } from 'node:util';
import { fromKubeconfigFile } from '../runtime/client.ts';
import { logger } from '../runtime/log.ts';
import { StorageProvisioner } from './storage.ts';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' }, 'volume-root': { type: 'string' } } });
if (!values.kubeconfig || !values['volume-root']) {
  process.stderr.write('usage: storage-provisioner-main.ts --kubeconfig PATH --volume-root DIR\n');
  process.exit(2);
}
const client = fromKubeconfigFile(values.kubeconfig);
const provisioner = new StorageProvisioner({ client, volumeRoot: values['volume-root'] });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void provisioner.close().finally(async () => {
      await client.close();
      process.exit(0);
    });
  });
}
await provisioner.start();
logger.info('storage provisioner running');
