// What a kubectl user sees under the default API versions (OpenKruise v1.8.2's: v1alpha1, and
// v1beta1 only for Advanced StatefulSet), with the manager working through the client's conversion
// at the wire: the three scripts issue #32 found broken under v1beta1, a rollout in place, and the
// garbage collector following v1alpha1 owner references. On a cluster of its own (the suite's
// shared cluster serves the v1beta1 set).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, Pod } from '../../src/apis/core-objects.ts';
import { CloneSets, CustomResourceDefinitions, Pods } from '../../src/runtime/resources.ts';
import { PatchType } from '../../src/runtime/client.ts';
import { runKubectlKruise } from '../../src/cli/kubectl/main.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const cluster = new OwnCluster(`${TEST_CLUSTER}-apiv`, 3, ['--feature-gates=ResourceDistributionGate=true'], 'openkruise-v1.8');
const ns = 'apiv';
type Json = Record<string, any>;

const getJson = async (args: string[]): Promise<Json> => JSON.parse(await cluster.kubectl(['get', ...args, '-o', 'json'])) as Json;
const apply = (obj: object) => cluster.kubectl(['apply', '-f', '-'], JSON.stringify(obj));
const zoneTerm = (zone: string) => ({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] });
const podTemplate = (app: string, image: string) => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'main', image }] } });
const cloneSetV1alpha1 = (name: string, replicas: number, updateStrategy: Json, more: Json = {}) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name, namespace: ns },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name, 'nginx:1.0'), updateStrategy, ...more },
});

before(async () => {
  await cluster.up();
  await cluster.kubectl(['create', 'namespace', ns]);
  await cluster.startManager();
});

after(() => cluster.down());

describe('the default API versions, as kubectl shows them', { concurrency: false }, () => {
  test("the CRDs serve what v1.8.2's serve; only Advanced StatefulSet converts", async () => {
    type CRD = KubeObject & { spec: { versions: Array<{ name: string; storage: boolean }>; conversion?: { strategy?: string } } };
    const crd = (name: string) => cluster.client.get<CRD>(CustomResourceDefinitions, name);
    const [cs, asts] = await Promise.all([crd('clonesets.apps.kruise.io'), crd('statefulsets.apps.kruise.io')]);
    assert.deepEqual(
      cs.spec.versions.map((v) => [v.name, v.storage]),
      [['v1alpha1', true]],
    );
    assert.equal(cs.spec.conversion?.strategy, 'None');
    assert.deepEqual(
      asts.spec.versions.map((v) => [v.name, v.storage]),
      [
        ['v1alpha1', false],
        ['v1beta1', true],
      ],
    );
  });

  test(
    'a UnitedDeployment with manualUpdate.partitions: its CloneSets show spec.updateStrategy.partition, it shows status.subsetReplicas',
    { timeout: 120_000 },
    async () => {
      await apply({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'UnitedDeployment',
        metadata: { name: 'ud', namespace: ns },
        spec: {
          replicas: 4,
          selector: { matchLabels: { app: 'ud' } },
          template: {
            cloneSetTemplate: {
              metadata: { labels: { app: 'ud' } },
              spec: { selector: { matchLabels: { app: 'ud' } }, template: podTemplate('ud', 'nginx:1.0') },
            },
          },
          topology: {
            subsets: [
              { name: 'subset-a', nodeSelectorTerm: zoneTerm('zone-a'), replicas: 2 },
              { name: 'subset-b', nodeSelectorTerm: zoneTerm('zone-b') },
            ],
          },
          updateStrategy: { type: 'Manual', manualUpdate: { partitions: { 'subset-a': 1 } } },
        },
      });
      // The script issue #32 found empty under v1beta1.
      const partitions = await waitFor('the subset CloneSets with their partitions', async () => {
        const out = await cluster.kubectl([
          '-n',
          ns,
          'get',
          'clonesets.apps.kruise.io',
          '-o',
          'jsonpath={..spec.updateStrategy.partition}',
        ]);
        return out.trim().split(/\s+/).length === 2 ? out.trim() : undefined;
      });
      assert.deepEqual(partitions.split(/\s+/).sort(), ['0', '1']);
      const ud = await waitFor(
        'status.subsetReplicas',
        async () => {
          const u = await getJson(['-n', ns, 'uniteddeployment', 'ud']);
          return u.status?.subsetReplicas?.['subset-a'] === 2 && u.status.subsetReplicas['subset-b'] === 2 ? u : undefined;
        },
        60_000,
      );
      assert.deepEqual(ud.status.subsetReplicas, { 'subset-a': 2, 'subset-b': 2 });
    },
  );

  // kubectl kruise's writes are JSON patches made between the CloneSet as the cluster serves it
  // before and after the change, sent at v1alpha1: only the fields a command changes move, and the
  // other client's writes (all the while) fail none of them.
  test('kubectl kruise scaledown/pause/set image/resume at v1alpha1 change only their fields', { timeout: 120_000 }, async () => {
    // Empty structs as OpenKruise's Go types store them: the controller's converted spec patch
    // (dropping the deleted pod from podsToDelete) leaves the one it does not touch.
    await apply(cloneSetV1alpha1('kk', 2, { type: 'ReCreate', maxUnavailable: 1, inPlaceUpdateStrategy: {} }, { scaleStrategy: {} }));
    await waitFor(
      '2 ready pods',
      async () => ((await getJson(['-n', ns, 'cloneset', 'kk'])).status?.readyReplicas === 2 ? true : undefined),
      90_000,
    );
    const before = await getJson(['-n', ns, 'cloneset', 'kk']);
    const pod = (await cluster.client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=kk' })).items[0]!.metadata.name!;
    let writing = true;
    let writes = 0;
    const writer = (async () => {
      while (writing) {
        await cluster.client.patch(
          CloneSets,
          'kk',
          { metadata: { annotations: { tick: String(++writes) } } },
          {
            namespace: ns,
            patchType: PatchType.Merge,
          },
        );
      }
    })();
    const kruise = async (...args: string[]) => {
      let err = '';
      const io = { out: () => undefined, err: (t: string) => void (err += t), isTTY: false };
      const code = await runKubectlKruise(['--kubeconfig', cluster.state.kubeconfig, '-n', ns, ...args], io);
      assert.equal(code, 0, `kubectl kruise ${args.join(' ')}: ${err}`);
    };
    let paused: Json;
    try {
      await kruise('scaledown', 'cloneset/kk', '--pods', pod);
      await kruise('rollout', 'pause', 'cloneset/kk');
      paused = await getJson(['-n', ns, 'cloneset', 'kk']);
      await kruise('set', 'image', 'cloneset/kk', 'main=nginx:1.1');
      await kruise('rollout', 'resume', 'cloneset/kk');
    } finally {
      writing = false;
      await writer;
    }
    assert.ok(writes >= 4, `the other client wrote ${writes} times during the 4 commands`);
    assert.equal(paused.spec.updateStrategy.paused, true);
    const after = await getJson(['-n', ns, 'cloneset', 'kk']);
    assert.equal(after.spec.template.spec.containers[0].image, 'nginx:1.1');
    assert.equal(after.spec.updateStrategy.paused, false);
    assert.equal(after.spec.replicas, 1);
    // Everything else of the spec as it was (scaleStrategy: the controller drops the deleted pod's name).
    const { template: _t, replicas: _r, scaleStrategy: _s, updateStrategy, ...rest } = after.spec;
    const { template: _bt, replicas: _br, scaleStrategy: _bs, updateStrategy: beforeStrategy, ...beforeRest } = before.spec;
    assert.deepEqual(rest, beforeRest);
    assert.deepEqual(beforeStrategy.inPlaceUpdateStrategy, {});
    assert.deepEqual({ ...updateStrategy, paused: undefined }, { ...beforeStrategy, paused: undefined });
    await cluster.kubectl(['-n', ns, 'delete', 'cloneset', 'kk', '--wait=true']);
  });

  test('a ResourceDistribution conflict lists failedNamespace', { timeout: 90_000 }, async () => {
    await cluster.kubectl(['create', 'namespace', 'apiv-conflict']);
    await cluster.kubectl(['-n', 'apiv-conflict', 'create', 'secret', 'generic', 'shared', '--from-literal=token=theirs']);
    await apply({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ResourceDistribution',
      metadata: { name: 'apiv-rd' },
      spec: {
        resource: {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'shared' },
          data: { token: Buffer.from('ours').toString('base64') },
        },
        targets: { includedNamespaces: { list: [{ name: 'apiv-conflict' }, { name: ns }] } },
      },
    });
    const conflict = await waitFor('ConflictOccurred', async () => {
      const rd = await getJson(['resourcedistribution', 'apiv-rd']);
      return rd.status?.conditions?.find((c: Json) => c.type === 'ConflictOccurred' && c.status === 'True');
    });
    assert.deepEqual(conflict.failedNamespace, ['apiv-conflict']);
    assert.equal(conflict.failedNamespaces, undefined);
    // The copy it made names its owner at the version the cluster serves.
    const copy = await getJson(['-n', ns, 'secret', 'shared']);
    assert.deepEqual(
      copy.metadata.ownerReferences.map((r: Json) => [r.apiVersion, r.kind]),
      [['apps.kruise.io/v1alpha1', 'ResourceDistribution']],
    );
  });

  test(
    'a CloneSet rolls in place through the converting client; its pods name a v1alpha1 owner and go with it',
    { timeout: 150_000 },
    async () => {
      const manifest = cloneSetV1alpha1('web', 3, { type: 'InPlaceIfPossible', partition: 1, maxUnavailable: 1 });
      await apply(manifest);
      const ready = async (updated: number) => {
        const cs = await getJson(['-n', ns, 'cloneset', 'web']);
        return cs.status?.observedGeneration === cs.metadata.generation &&
          cs.status.updatedReadyReplicas === updated &&
          cs.status.readyReplicas === 3
          ? cs
          : undefined;
      };
      await waitFor('3 ready pods', () => ready(3), 90_000);
      const pods = async () => (await cluster.client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=web' })).items;
      const before = new Set((await pods()).map((p) => p.metadata.uid));
      manifest.spec.template = podTemplate('web', 'nginx:2.0');
      await apply(manifest);
      const cs = await waitFor('2 of 3 updated in place (partition 1)', () => ready(2), 90_000);
      assert.equal(cs.apiVersion, 'apps.kruise.io/v1alpha1');
      assert.equal(cs.spec.updateStrategy.partition, 1);
      const after = await pods();
      assert.deepEqual(new Set(after.map((p) => p.metadata.uid)), before, 'in place: the same pods');
      assert.equal(after.filter((p) => p.spec?.containers[0]?.image === 'nginx:2.0').length, 2);
      for (const p of after) {
        assert.deepEqual(
          p.metadata.ownerReferences?.map((r) => [r.apiVersion, r.kind, r.controller]),
          [['apps.kruise.io/v1alpha1', 'CloneSet', true]],
        );
      }
      // The code's own view is still v1beta1.
      const hub = await cluster.client.get<KubeObject & { spec: Json }>(CloneSets, 'web', { namespace: ns });
      assert.equal(hub.spec.updateStrategy.rollingUpdate.partition, 1);
      await cluster.kubectl(['-n', ns, 'delete', 'cloneset', 'web', '--wait=true']);
      await waitFor('the garbage collector to delete the pods', async () => ((await pods()).length === 0 ? true : undefined), 60_000);
    },
  );
});
