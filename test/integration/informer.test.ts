// A shared informer keeps a correct cache against the real API server across a watch that expires
// (410 Gone → relist), an API server restart, and 10k rapid updates: after each, its cache equals a
// fresh list. Runs on its own cluster (watch cache off for configmaps, compaction every second) so
// that a resumed watch really hits a compacted resourceVersion, and so restarting the API server
// does not disturb other test files.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { up, down, restartComponent, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { isGone } from '../../src/runtime/errors.ts';
import { ConfigMaps, Namespaces } from '../../src/runtime/resources.ts';
import { SharedIndexInformer } from '../../src/runtime/informer.ts';
import type { RuntimeLogger } from '../../src/runtime/reflector.ts';
import { TcpProxy } from '../harness/tcp-proxy.ts';
import { waitFor } from '../harness/cluster.ts';

type ConfigMap = KubeObject & { data?: Record<string, string> };
const CLUSTER = `informer-${process.pid}`;
const ns = 'informer-test';

/** A logger that records messages, so the test can see the reflector relist on 410. */
function recordingLogger(): RuntimeLogger & { messages: string[] } {
  const messages: string[] = [];
  const rec = (_: object, msg: string) => {
    messages.push(msg);
  };
  return { messages, debug: rec, info: rec, warn: rec, error: rec };
}

function snapshot(items: readonly ConfigMap[]): Map<string, string> {
  return new Map(items.map((o) => [o.metadata!.name!, JSON.stringify({ rv: o.metadata!.resourceVersion, data: o.data ?? {} })]));
}

async function assertCacheMatchesList(informer: SharedIndexInformer<ConfigMap>, client: KubeClient, what: string) {
  await waitFor(
    `${what}: cache equals a fresh list`,
    async () => {
      const fresh = await client.listAll<ConfigMap>(ConfigMaps, { namespace: ns });
      const want = snapshot(fresh.items);
      const got = snapshot(informer.lister.list(ns) as ConfigMap[]);
      if (want.size !== got.size) return false;
      for (const [k, v] of want) if (got.get(k) !== v) return false;
      return true;
    },
    60_000,
    250,
  );
}

describe('shared informer on the real API server', { concurrency: false }, () => {
  let state: ClusterState;
  let writer: KubeClient;
  let watcherClient: KubeClient;
  let informer: SharedIndexInformer<ConfigMap>;
  let proxy: TcpProxy;
  const log = recordingLogger();
  const abort = new AbortController();

  before(async () => {
    ({ state } = await up({
      name: CLUSTER,
      nodes: 1,
      log: () => undefined,
      extraArgs: { 'kube-apiserver': ['--watch-cache-sizes=configmaps#0', '--etcd-compaction-interval=1s'] },
    }));
    writer = fromKubeconfigFile(state.kubeconfig, { qps: 2000, burst: 2000 });
    await writer.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (let i = 0; i < 20; i++) {
      await writer.create<ConfigMap>(
        ConfigMaps,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: '0' } },
        { namespace: ns },
      );
    }
    proxy = new TcpProxy(state.ports.apiserver);
    const port = await proxy.start();
    watcherClient = fromKubeconfigFile(state.kubeconfig, { server: `https://127.0.0.1:${port}` });
    informer = new SharedIndexInformer<ConfigMap>(watcherClient, ConfigMaps, {
      namespace: ns,
      logger: log,
      reflector: { backoff: { initialMs: 100, maxMs: 1000 } },
    });
    void informer.run(abort.signal);
    await informer.waitForSync();
  });

  after(async () => {
    abort.abort();
    await proxy?.close();
    await watcherClient?.close();
    await writer?.close();
    await down(CLUSTER, { quiet: true, purge: true });
  });

  test('initial sync equals a fresh list', async () => {
    // kube-controller-manager adds kube-root-ca.crt to every namespace.
    assert.equal(informer.lister.list(ns).filter((o) => o.metadata!.name!.startsWith('cm-')).length, 20);
    await assertCacheMatchesList(informer, writer, 'initial');
  });

  test('a watch resumed from a compacted resourceVersion gets 410 and relists without losing anything', async () => {
    proxy.disconnect();
    const resumeFrom = informer.lastSyncResourceVersion();
    // While the informer is cut off: updates, deletes and creates, then let compaction pass them.
    for (let i = 0; i < 20; i += 2) {
      await writer.patch(ConfigMaps, `cm-${i}`, { data: { v: 'while-disconnected' } }, { namespace: ns, patchType: PatchType.Merge });
    }
    for (let i = 1; i < 6; i += 2) await writer.delete(ConfigMaps, `cm-${i}`, { namespace: ns });
    await writer.create<ConfigMap>(
      ConfigMaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-new' }, data: { v: 'new' } },
      { namespace: ns },
    );
    // A watch from resourceVersion N reads etcd from revision N+1: only once that revision is
    // compacted does the resumed watch get 410 (a list at exactly N+1 fails from then on).
    const firstMissed = String(Number(resumeFrom) + 1);
    await waitFor(
      `revision ${firstMissed}, where the watch resumes, to be compacted`,
      async () => {
        try {
          await writer.list(ConfigMaps, { namespace: ns, resourceVersion: firstMissed, resourceVersionMatch: 'Exact', limit: 1 });
          return false;
        } catch (err) {
          if (isGone(err)) return true;
          throw err;
        }
      },
      30_000,
      200,
    );
    const before410 = log.messages.filter((m) => m.includes('relisting')).length;
    proxy.restore();
    await assertCacheMatchesList(informer, writer, 'after 410');
    assert.ok(
      log.messages.filter((m) => m.includes('relisting')).length > before410,
      `expected a 410 relist; reflector said: ${log.messages.slice(-5).join(' | ')}`,
    );
    assert.equal(informer.lister.get(ns, 'cm-1'), undefined);
    assert.equal((informer.lister.get(ns, 'cm-new') as ConfigMap).data?.v, 'new');
  });

  test('the cache stays correct across an API server restart', async () => {
    await restartComponent(CLUSTER, 'kube-apiserver');
    await writer.patch(ConfigMaps, 'cm-0', { data: { v: 'after-restart' } }, { namespace: ns, patchType: PatchType.Merge });
    await writer.delete(ConfigMaps, 'cm-7', { namespace: ns });
    await assertCacheMatchesList(informer, writer, 'after restart');
    assert.equal((informer.lister.get(ns, 'cm-0') as ConfigMap).data?.v, 'after-restart');
  });

  test('10k rapid updates: the cache ends equal to a fresh list, with every final value', async () => {
    const names = Array.from({ length: 50 }, (_, i) => `rapid-${i}`);
    for (const name of names) {
      await writer.create<ConfigMap>(
        ConfigMaps,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: '0' } },
        { namespace: ns },
      );
    }
    const updatesPerObject = 200; // 50 × 200 = 10,000 updates
    const began = Date.now();
    await Promise.all(
      names.map(async (name) => {
        for (let n = 1; n <= updatesPerObject; n++) {
          await writer.patch(ConfigMaps, name, { data: { n: String(n) } }, { namespace: ns, patchType: PatchType.Merge });
        }
      }),
    );
    const seconds = (Date.now() - began) / 1000;
    await assertCacheMatchesList(informer, writer, 'after 10k updates');
    for (const name of names) assert.equal((informer.lister.get(ns, name) as ConfigMap).data?.n, String(updatesPerObject));
    process.stderr.write(`# 10k updates written in ${seconds.toFixed(1)}s (${(10_000 / seconds).toFixed(0)}/s); cache converged\n`);
  });
});
