// Webhooks and conversion without an outage when a manager dies (issue #11): two managers behind
// the local cluster's webhook proxy; the leader is SIGKILLed while a client creates, reads,
// patches, reads as v1alpha1 and deletes CloneSets every 200 ms, and not one call may fail. The
// take-over makes no CRD or webhook-configuration write (nothing differs); drift in the
// configuration is corrected at once; with every manager gone and deletion protection off, a
// namespace holding a CloneSet is still deleted. Own cluster: it kills managers.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { stopProcesses } from '../../src/cluster/processes.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { isNotFound } from '../../src/runtime/errors.ts';
import { CustomResourceDefinitions, Leases, Namespaces, ValidatingWebhookConfigurations } from '../../src/runtime/resources.ts';
import { findWebhookProxy, formatHostPort, WEBHOOK_BACKEND_LABEL } from '../../src/runtime/webhook/endpoint.ts';
import { clientLoop, leaseHolder, startManagerProcess, waitLeader, type ManagerProcess } from '../harness/managers.ts';

const CLUSTER = `${process.env.KRUISE_TS_TEST_CLUSTER ?? 'failover'}-failover-${process.pid}`;
type Config = KubeObject & { webhooks: Array<{ name: string; clientConfig: { url?: string } }> };
type CRD = KubeObject & { spec: { conversion?: { webhook?: { clientConfig?: { url?: string } } } } };

describe('webhooks and conversion survive the death of any manager', { concurrency: false }, () => {
  let state: ClusterState;
  let client: KubeClient;
  let proxyUrl: string;
  const managers: ManagerProcess[] = [];

  const vwc = () => client.get<Config>(ValidatingWebhookConfigurations, 'kruise-validating-webhook-configuration');
  const crd = () => client.get<CRD>(CustomResourceDefinitions, 'clonesets.apps.kruise.io');
  const backends = async () =>
    (await client.list(Leases, { namespace: 'kruise-system', labelSelector: WEBHOOK_BACKEND_LABEL })).items.map(
      (l) => (l as { spec?: { holderIdentity?: string } }).spec?.holderIdentity,
    );

  before(async () => {
    ({ state } = await up({ name: CLUSTER, nodes: 1, log: () => undefined }));
    client = fromKubeconfigFile(state.kubeconfig, { maxRetries: 0 });
    // The v1beta1 API versions: CloneSet is then served in two versions, converted by the managers.
    await installCRDs(client, { set: 'v1beta1' });
    const proxy = await findWebhookProxy(client);
    assert.ok(proxy, 'the local cluster runs a webhook proxy');
    proxyUrl = `https://${formatHostPort(proxy)}/`;
    managers.push(await startManagerProcess(state, 'manager-a', ['--api-versions', 'v1beta1']));
    await waitLeader(client, managers[0]!);
    managers.push(await startManagerProcess(state, 'manager-b', ['--api-versions', 'v1beta1']));
    // Both serve behind the proxy once both registered and the configuration names the proxy.
    for (const deadline = Date.now() + 90_000; ; await sleep(250)) {
      const [ids, cfg, c] = await Promise.all([backends(), vwc().catch(() => undefined), crd()]);
      if (ids.includes('manager-a') && ids.includes('manager-b') && cfg?.webhooks.every((w) => w.clientConfig.url?.startsWith(proxyUrl)))
        if (c.spec.conversion?.webhook?.clientConfig?.url === `${proxyUrl}convert`) break;
      assert.ok(Date.now() < deadline, `both managers never registered: ${JSON.stringify(ids)}`);
    }
    await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'loop' } });
  });

  after(async () => {
    await stopProcesses(
      managers.map((m) => m.proc.pid),
      5000,
    );
    await client?.close();
    await down(CLUSTER, { quiet: true, purge: true });
  });

  test('SIGKILL of the leader: zero failed Kruise calls, and the take-over writes no CRD or configuration', async () => {
    const [a] = managers as [ManagerProcess];
    assert.equal(await leaseHolder(client), 'manager-a');
    const before = { crd: (await crd()).metadata.resourceVersion, vwc: (await vwc()).metadata.resourceVersion };
    const loop = clientLoop(client, 'loop');
    await sleep(2_000);
    const killedAt = Date.now();
    process.kill(a.proc.pid, 'SIGKILL');
    while ((await leaseHolder(client)) !== 'manager-b') {
      assert.ok(Date.now() - killedAt < 30_000, 'manager-b must lead within 30 s');
      await sleep(250);
    }
    const takeover = (Date.now() - killedAt) / 1000;
    // The new leader's first sync has run once it logs leading and a few seconds passed.
    await sleep(5_000);
    const result = await loop.stop();
    process.stderr.write(`# take-over ${takeover.toFixed(1)}s; ${result.operations} Kruise calls, ${result.failures} failed\n`);
    assert.equal(result.failures, 0, result.errors.join('\n'));
    assert.ok(result.operations > 100, `the loop ran (${result.operations} calls)`);
    assert.equal((await crd()).metadata.resourceVersion, before.crd, 'no CRD write on take-over');
    assert.equal((await vwc()).metadata.resourceVersion, before.vwc, 'no configuration write on take-over');
  });

  test('drift in the webhook configuration is corrected at once by the leader', async () => {
    const cfg = await vwc();
    const want = cfg.webhooks.map((w) => w.clientConfig.url);
    const drifted = structuredClone(cfg);
    for (const w of drifted.webhooks) w.clientConfig.url = 'https://127.0.0.1:1/drifted';
    drifted.metadata.managedFields = undefined;
    await client.update(ValidatingWebhookConfigurations, drifted);
    const changedAt = Date.now();
    for (;;) {
      const now = (await vwc()).webhooks.map((w) => w.clientConfig.url);
      if (JSON.stringify(now) === JSON.stringify(want)) break;
      assert.ok(Date.now() - changedAt < 10_000, 'configuration not corrected within 10 s');
      await sleep(100);
    }
    process.stderr.write(`# drift corrected after ${((Date.now() - changedAt) / 1000).toFixed(1)}s\n`);
  });

  test('with every manager stopped and deletion protection off, a namespace holding a CloneSet is deleted', async () => {
    await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    await client.create(
      { group: 'apps.kruise.io', version: 'v1beta1', resource: 'clonesets', kind: 'CloneSet', namespaced: true },
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'CloneSet',
        metadata: { name: 'cs', namespace: 'doomed' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      } as KubeObject,
      { namespace: 'doomed' },
    );
    await stopProcesses(
      managers.map((m) => m.proc.pid),
      5000,
    );
    await client.delete(Namespaces, 'doomed');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const gone = await client.get(Namespaces, 'doomed').then(
        () => false,
        (err) => isNotFound(err),
      );
      if (gone) break;
      assert.ok(Date.now() < deadline, 'namespace still Terminating after 60 s with the manager down');
      await sleep(500);
    }
  });
});
