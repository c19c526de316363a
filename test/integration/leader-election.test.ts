// Two kruise managers against one cluster: exactly one leads; both serve webhooks; after the leader
// is killed with SIGKILL the other leads within LeaseDuration + RenewDeadline (15 s + 10 s) and
// points the API server's webhook configuration at itself, while its own webhooks never stop
// answering. Runs on its own cluster so the suite's shared manager is not involved.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import path from 'node:path';
import { up, down, kubectl, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { freePorts, startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile } from '../../src/runtime/client.ts';
import { kruiseArgs, servingFlags } from '../harness/kruise-cli.ts';

const CLUSTER = `leader-${process.pid}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One AdmissionReview to a manager's CloneSet validating webhook; resolves true when answered. */
function review(port: number): Promise<boolean> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u1',
      operation: 'CREATE',
      namespace: 'default',
      name: 'x',
      kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet' },
      resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'clonesets' },
      userInfo: {},
      object: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'CloneSet',
        metadata: { name: 'x', namespace: 'default' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
    },
  });
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate-apps-kruise-io-cloneset',
        method: 'POST',
        rejectUnauthorized: false,
        timeout: 2000,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => {
          try {
            resolve(res.statusCode === 200 && JSON.parse(data).response?.uid === 'u1');
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

describe('two managers: leader election and webhooks on every replica', { concurrency: false }, () => {
  let state: ClusterState;
  const managers = new Map<string, { proc: Started; webhookPort: number }>();

  async function holder(): Promise<string | undefined> {
    const lease = JSON.parse(
      await kubectl(state, ['-n', 'kruise-system', 'get', 'lease', 'kruise-manager', '-o', 'json']).catch(() => '{}'),
    );
    return lease.spec?.holderIdentity || undefined;
  }

  before(async () => {
    ({ state } = await up({ name: CLUSTER, nodes: 1, log: () => undefined }));
    const client = fromKubeconfigFile(state.kubeconfig);
    await installCRDs(client);
    await client.close();
    const ports = await freePorts(6);
    for (const [i, id] of ['manager-a', 'manager-b'].entries()) {
      const [webhookPort, metricsPort, healthPort] = ports.slice(i * 3, i * 3 + 3) as [number, number, number];
      const proc = startProcess(
        id,
        process.execPath,
        kruiseArgs(
          'start',
          '--kubeconfig',
          state.kubeconfig,
          '--identity',
          id,
          ...servingFlags(webhookPort, `127.0.0.1:${metricsPort}`, `127.0.0.1:${healthPort}`),
        ),
        path.join(state.runDir, 'logs', `${id}.log`),
      );
      managers.set(id, { proc, webhookPort });
      // Let the first one take the lease before the second starts, so "who leads" is not a race.
      if (i === 0) {
        // Generous: a manager's start-up (tsx compiling the tree) is slow on a loaded machine.
        const deadline = Date.now() + 90_000;
        while ((await holder()) !== id) {
          if (proc.exited || Date.now() > deadline)
            throw new Error(
              `manager-a did not lead (${proc.exited ? `exited ${JSON.stringify(proc.exited)}` : 'still running'}): ${tail(proc.logFile, 20)}`,
            );
          await sleep(200);
        }
      }
    }
  });

  after(async () => {
    await stopProcesses(
      [...managers.values()].map((m) => m.proc.pid),
      5000,
    );
    await down(CLUSTER, { quiet: true, purge: true });
  });

  test('exactly one leads while both serve their webhooks', async () => {
    for (const [id, m] of managers) {
      const deadline = Date.now() + 90_000;
      for (;;) {
        if (await review(m.webhookPort).catch(() => false)) break;
        if (m.proc.exited || Date.now() > deadline) throw new Error(`${id} webhook never answered: ${tail(m.proc.logFile, 20)}`);
        await sleep(200);
      }
    }
    assert.equal(await holder(), 'manager-a');
    // manager-b keeps retrying and never takes a valid lease. Once it is trying, the lease must stay
    // manager-a's for a window that spans at least one of its retries (retryPeriod 2 s × jitter < 2.2):
    // that nothing changes during the window is what is tested.
    const b = managers.get('manager-b')!;
    const trying = Date.now() + 30_000;
    while (!/attempting to acquire leader lease/.test(tail(b.proc.logFile, 200))) {
      if (b.proc.exited || Date.now() > trying) throw new Error(`manager-b never tried to lead: ${tail(b.proc.logFile, 20)}`);
      await sleep(100);
    }
    for (const windowEnd = Date.now() + 4_500; Date.now() < windowEnd; await sleep(250)) {
      assert.equal(await holder(), 'manager-a');
    }
    assert.doesNotMatch(tail(managers.get('manager-b')!.proc.logFile, 200), /became leader/);
  });

  test('SIGKILL of the leader: the other leads within LeaseDuration + RenewDeadline, its webhooks never stop', async () => {
    const a = managers.get('manager-a')!;
    const b = managers.get('manager-b')!;
    let answered = 0;
    let failed = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        if (await review(b.webhookPort).catch(() => false)) answered++;
        else failed++;
        await sleep(200);
      }
    })();

    const killedAt = Date.now();
    process.kill(a.proc.pid, 'SIGKILL');
    while ((await holder()) !== 'manager-b') {
      assert.ok(Date.now() - killedAt < 25_000, 'manager-b must lead within 25 s');
      await sleep(250);
    }
    const failover = (Date.now() - killedAt) / 1000;
    process.stderr.write(`# leader failover after SIGKILL: ${failover.toFixed(1)}s\n`);

    // The new leader points the API server's webhooks at itself: an invalid CloneSet is refused.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const denied = await kubectl(
        state,
        ['create', '-f', '-'],
        JSON.stringify({
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'CloneSet',
          metadata: { name: 'bad', namespace: 'default' },
          spec: {
            selector: { matchLabels: { a: 'b' } },
            template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
          },
        }),
      ).then(
        () => 'created',
        (err: { stderr?: string }) => String(err.stderr),
      );
      if (/admission webhook "vcloneset.kb.io" denied the request/.test(denied)) break;
      assert.ok(Date.now() < deadline, `the webhook configuration never reached manager-b: ${denied}`);
      await sleep(500);
    }
    polling = false;
    await poller;
    assert.ok(answered > 10, `manager-b answered ${answered} reviews`);
    assert.equal(failed, 0, "manager-b's webhook failed during the failover");
  });
});
