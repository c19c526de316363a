// A CloneSet rollout survives its manager being SIGKILLed half-way: the restarted manager rebuilds
// everything from the API server and finishes with exactly the desired pods. This runs on a
// cluster of its own, because the suite's shared manager would otherwise keep reconciling while
// ours is dead.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, kubectl as clusterKubectl, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { isAlive, startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { CloneSets } from '../../src/controllers/cloneset/executor.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';

const CLUSTER = `${TEST_CLUSTER}-cs-restart`;
let state: ClusterState;
let client: KubeClient;
let manager: Started | undefined;
let startedCluster = false;

function startKruise(): Started {
  const logFile = path.join(state.runDir, 'logs', 'kruise-manager.log');
  return startProcess('kruise-manager', process.execPath, [
    '--import', 'tsx', path.join(repoRoot, 'src/cli/kruise.ts'), 'start',
    '--kubeconfig', state.kubeconfig, '--webhook-port', '0', '--enable-leader-election=false',
    '--metrics-addr', '0', '--health-probe-addr', '0',
  ], logFile, { ...process.env, KRUISE_LOG_LEVEL: 'info' });
}

async function waitForWebhooks(m: Started): Promise<void> {
  // The CloneSet webhooks must point at this manager before the API server accepts CloneSet writes.
  await waitFor('the manager to serve the CloneSet webhooks', async () => {
    if (m.exited) throw new Error(`manager exited: ${tail(m.logFile, 20)}`);
    await clusterKubectl(state, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify({ ...cloneSetManifest('probe'), metadata: { name: 'probe', namespace: 'default' } }));
    return true;
  }, 60_000, 250);
}

before(async () => {
  const r = await up({ name: CLUSTER, nodes: 2, log: () => undefined });
  state = r.state;
  startedCluster = !r.reused;
  client = fromKubeconfigFile(state.kubeconfig);
  await installCRDs(client);
});

after(async () => {
  if (manager && isAlive(manager.pid)) await stopProcesses([manager.pid], 5000);
  await client?.close();
  if (startedCluster && process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(CLUSTER, { quiet: true });
});

test('a manager SIGKILLed mid-rollout is restarted and completes it with no extra or missing pods', { timeout: 120_000 }, async () => {
  manager = startKruise();
  await waitForWebhooks(manager);
  const ns = 'default';
  const manifest = cloneSetManifest('restart', { replicas: 12, maxUnavailable: 2 });
  // Each new pod takes a moment to start, so the rollout spans several seconds.
  (manifest.spec.template.metadata as { annotations?: Record<string, string> }).annotations = { 'sim.kruise-ts.io/start-delay': '1s' };
  await clusterKubectl(state, ['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
  await waitSettled(client, ns, 'restart', 12, { timeoutMs: 60_000 });

  await client.patch(CloneSets, 'restart', { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } }, { namespace: ns, patchType: 'application/merge-patch+json' });
  await waitFor('the rollout under way', async () => {
    const cs = await client.get<TestCloneSet>(CloneSets, 'restart', { namespace: ns });
    return (cs.status.updatedReplicas ?? 0) >= 2 && cs.status.updatedReplicas < 10;
  }, 30_000, 50);
  process.kill(-manager.pid, 'SIGKILL');
  await waitFor('the manager to die', async () => !isAlive(manager!.pid) || manager!.exited !== undefined, 5000, 20);

  // While nobody reconciles, pods being deleted finish and nothing replaces them.
  await sleep(1000);
  manager = startKruise();

  let maxPods = 0;
  const names = new Set<string>();
  await waitFor('the rollout to complete after the restart', async () => {
    const pods = await podsOf(client, ns, 'restart');
    maxPods = Math.max(maxPods, pods.length);
    for (const p of pods) names.add(p.metadata.name!);
    const cs = await client.get<TestCloneSet>(CloneSets, 'restart', { namespace: ns });
    const s = cs.status;
    return s.observedGeneration === cs.metadata.generation && s.updatedReplicas === 12 && s.updatedReadyReplicas === 12
      && s.replicas === 12 && pods.length === 12 && pods.every(isReady) && s.currentRevision === s.updateRevision;
  }, 90_000, 100);
  assert.ok(maxPods <= 12, `saw ${maxPods} active pods, want at most 12`);

  await sleep(1500);
  const pods = await podsOf(client, ns, 'restart');
  assert.equal(pods.length, 12);
  assert.ok(pods.every((p) => p.spec?.containers[0].image === 'nginx:2.0'));
  const ids = new Set(pods.map((p) => p.metadata.labels?.['apps.kruise.io/cloneset-instance-id']));
  assert.equal(ids.size, 12);
  const all = await clusterKubectl(state, ['-n', ns, 'get', 'pods', '-l', 'app=restart', '-o', 'name']);
  assert.equal(all.trim().split('\n').length, 12, `pods in the API (terminating included): ${all}`);
});
