// A one-replica manager on the fake API server, as the manager tests start it: every port on 0 and
// a leader election that settles in a fraction of a second.
import { Command } from 'commander';
import { addManagerFlags, managerConfig, type ManagerConfig } from '../../../src/manager/options.ts';
import { fakeKubeconfig, type FakeApiServer } from '../runtime/fake-apiserver.ts';

/** The config of `kruise start` with identity `solo` (plus `extra` flags), and its directory to remove afterwards. */
export function soloManagerConfig(server: FakeApiServer, prefix: string, extra: string[] = []): { config: ManagerConfig; dir: string } {
  const { dir, kubeconfig } = fakeKubeconfig(server, prefix);
  const cmd = addManagerFlags(new Command('start')).parse(
    [
      '--kubeconfig',
      kubeconfig,
      '--metrics-addr=0',
      '--health-probe-addr=0',
      '--webhook-port=0',
      '--webhook-cert-dir',
      dir,
      '--leader-election-lease-duration=1500ms',
      '--leader-election-renew-deadline=1s',
      '--leader-election-retry-period=100ms',
      '--identity=solo',
      ...extra,
    ],
    { from: 'user' },
  );
  return { config: managerConfig(cmd.opts()), dir };
}
