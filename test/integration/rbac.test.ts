// The manager and the daemon under exactly the shipped roles (config/rbac/), as ServiceAccount
// tokens on a cluster of their own: the namespaces exist (the installation creates them), the
// manager installs its webhook configurations and runs a CloneSet rollout, a CRR and an
// ImagePullJob with the simulated daemon, and neither process may ever be refused (no
// "forbidden" in their logs). Then --metrics-secure against the real API server: no token 401, a
// token without the right 403, one bound to kruise-metrics-reader 200.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { freePorts, startProcess, stopProcesses, type Started } from '../../src/cluster/processes.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { CloneSets, ContainerRecreateRequests, Events, ImagePullJobs } from '../../src/runtime/resources.ts';
import { SUITE_FEATURE_GATES, TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const [metricsPort, daemonPort] = await freePorts(2);
const cluster = new OwnCluster(`${TEST_CLUSTER}-rbac`, 2);
let daemon: Started | undefined;

before(async () => {
  await cluster.up();
});

after(async () => {
  if (daemon) await stopProcesses([daemon.pid], 5000);
  await cluster.down();
});

/** A kubeconfig of the cluster that authenticates as kruise-system/<serviceAccount>'s token. */
async function tokenKubeconfig(namespace: string, serviceAccount: string): Promise<{ file: string; token: string }> {
  const token = (await cluster.kubectl(['-n', namespace, 'create', 'token', serviceAccount, '--duration=1h'])).trim();
  const admin = parse(fs.readFileSync(cluster.state.kubeconfig, 'utf8'));
  const file = path.join(cluster.state.runDir, `${serviceAccount}.kubeconfig`);
  fs.writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: admin.clusters,
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [{ name: serviceAccount, context: { cluster: admin.clusters[0].name, user: serviceAccount } }],
      'current-context': serviceAccount,
    }),
    { mode: 0o600 },
  );
  return { file, token };
}

function metricsStatus(port: number, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get(
        {
          host: '127.0.0.1',
          port,
          path: '/metrics',
          rejectUnauthorized: false,
          headers: token ? { authorization: `Bearer ${token}` } : {},
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      )
      .on('error', reject);
  });
}

const forbiddenLines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => /forbidden/i.test(l));

test('manager and daemon under the shipped roles: rollout, CRR, ImagePullJob, webhooks, no Forbidden', { timeout: 240_000 }, async () => {
  const { client } = cluster;
  // What the installation creates before the manager starts (the roles may not create namespaces).
  for (const ns of ['kruise-system', 'kruise-daemon-config']) await cluster.kubectl(['create', 'namespace', ns]);
  for (const file of ['manager.yaml', 'daemon.yaml', 'metrics-reader.yaml']) {
    await cluster.kubectl(['apply', '-f', path.join(repoRoot, 'config', 'rbac', file)]);
  }
  const manager = await tokenKubeconfig('kruise-system', 'kruise-manager');
  const daemonKc = await tokenKubeconfig('kruise-system', 'kruise-daemon');

  cluster.managerArgs.push(
    '--kubeconfig',
    manager.file,
    '--enable-leader-election=true',
    '--feature-gates',
    SUITE_FEATURE_GATES,
    '--nodeimage-creation-delay=0s',
    '--metrics-secure=true',
    '--metrics-addr',
    `127.0.0.1:${metricsPort}`,
  );
  const managerProc = await cluster.startManager();
  daemon = startProcess(
    'kruise-daemon',
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(repoRoot, 'src/cli/kruise.ts'),
      'daemon',
      '--simulated',
      '--kubeconfig',
      daemonKc.file,
      '--addr',
      `127.0.0.1:${daemonPort}`,
      '--metrics-secure',
    ],
    path.join(cluster.state.runDir, 'logs', 'kruise-daemon.log'),
    { ...process.env, KRUISE_LOG_LEVEL: 'info' },
  );

  const ns = 'default';
  // A CloneSet created, rolled out in place of its pods (ReCreate), and its events written.
  await cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(cloneSetManifest('rbac', { replicas: 3, maxUnavailable: 1 })));
  await waitSettled(client, ns, 'rbac', 3, { timeoutMs: 60_000 });
  await client.patch(
    CloneSets,
    'rbac',
    { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } } },
    { namespace: ns, patchType: 'application/merge-patch+json' },
  );
  await waitFor(
    'the rollout to finish',
    async () => {
      const cs = await client.get<TestCloneSet>(CloneSets, 'rbac', { namespace: ns });
      return cs.status.updatedReadyReplicas === 3 && cs.status.currentRevision === cs.status.updateRevision;
    },
    90_000,
    250,
  );
  const events = await client.list<KubeObject & { regarding?: { name?: string } }>(Events, { namespace: ns });
  assert.ok(
    events.items.some((e) => e.regarding?.name === 'rbac'),
    'the CloneSet events went through events.k8s.io',
  );

  // A ContainerRecreateRequest, completed by the daemon and the manager together.
  const pod = await waitFor(
    'a running pod of the new revision',
    async () =>
      (await podsOf(client, ns, 'rbac')).find((p) => !p.metadata.deletionTimestamp && p.spec?.containers[0]?.image === 'nginx:2.0'),
    30_000,
    250,
  );
  await cluster.kubectl(
    ['-n', ns, 'create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'rbac-crr' },
      spec: { podName: pod.metadata.name, containers: [{ name: 'main' }], activeDeadlineSeconds: 120, ttlSecondsAfterFinished: 600 },
    }),
  );
  await waitFor(
    'the CRR to complete',
    async () =>
      (await client.get<KubeObject & { status?: { phase?: string } }>(ContainerRecreateRequests, 'rbac-crr', { namespace: ns })).status
        ?.phase === 'Completed',
    60_000,
    250,
  );

  // An ImagePullJob pulled on every node (NodeImages written by the manager, statuses by the daemon).
  await cluster.kubectl(
    ['-n', ns, 'create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name: 'rbac-pull' },
      spec: { image: 'busybox:1.36', completionPolicy: { type: 'Always' } },
    }),
  );
  await waitFor(
    'the ImagePullJob to succeed on both nodes',
    async () => {
      const job = await client.get<KubeObject & { status?: { succeeded?: number; completionTime?: string } }>(ImagePullJobs, 'rbac-pull', {
        namespace: ns,
      });
      return job.status?.succeeded === 2 && !!job.status.completionTime;
    },
    90_000,
    500,
  );

  assert.ok(!managerProc.exited && !daemon.exited, 'both processes still running');
  assert.deepEqual(forbiddenLines(managerProc.logFile), [], 'the manager was refused something');
  assert.deepEqual(forbiddenLines(daemon.logFile), [], 'the daemon was refused something');

  // Secure metrics against the real API server's TokenReview and SubjectAccessReview.
  await cluster.kubectl(['-n', 'kruise-system', 'create', 'serviceaccount', 'prometheus']);
  await cluster.kubectl([
    'create',
    'clusterrolebinding',
    'prometheus-kruise-metrics',
    '--clusterrole=kruise-metrics-reader',
    '--serviceaccount=kruise-system:prometheus',
  ]);
  const prometheus = (await cluster.kubectl(['-n', 'kruise-system', 'create', 'token', 'prometheus'])).trim();
  for (const port of [metricsPort!, daemonPort!]) {
    assert.equal(await metricsStatus(port), 401, `port ${port} without a token`);
    assert.equal(await metricsStatus(port, manager.token), 403, `port ${port} with a token not allowed /metrics`);
    assert.equal(await metricsStatus(port, prometheus), 200, `port ${port} with kruise-metrics-reader`);
  }
});
