// Container launch priority end to end on the suite cluster (spec §18.1): the pod webhook gives
// every container of an `Ordered` pod a barrier env, KWOK holds them waiting, the manager's
// containerlaunchpriority controller releases one key of `<pod>-barrier` at a time, and the
// simulated daemon starts each container only once its key exists — so the second container
// starts only after the first is running and ready.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Pod } from '../../src/apis/core-objects.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { ConfigMaps, Pods } from '../../src/runtime/resources.ts';
import { SharedInformerFactory } from '../../src/runtime/informer-factory.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('clp');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

const running = (p: Pod, c: string) => {
  const s = p.status?.containerStatuses?.find((x) => x.name === c);
  return !!s?.state?.running && !!s.ready;
};

describe('container launch priority', () => {
  test('two containers start in order: the second only after the first runs and its barrier key exists', async () => {
    const states: Pod[] = [];
    const keysSeen: string[][] = [];
    const abort = new AbortController();
    const factory = new SharedInformerFactory(client, {});
    const pods = factory.informerFor<Pod>(Pods, { namespace: ns });
    const cms = factory.informerFor<ConfigMap>(ConfigMaps, { namespace: ns });
    // Every pod state, with the barrier keys that existed when it was seen.
    const seen = (p: Pod) => {
      states.push(p);
      keysSeen.push(Object.keys(cms.lister.get(ns, 'ordered-barrier')?.data ?? {}));
    };
    pods.addEventHandler({ onAdd: (p) => void seen(p), onUpdate: (_o, p) => void seen(p) });
    factory.start(abort.signal);
    try {
      await factory.waitForCacheSync(abort.signal);
      const created = await client.create<Pod>(Pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ordered', namespace: ns, annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' } },
        spec: {
          containers: [
            { name: 'first', image: 'proxy:1.0' },
            { name: 'second', image: 'app:1.0' },
          ],
        },
      });
      assert.deepEqual(
        created.spec!.containers.map((c) => c.env?.find((e) => e.name === 'KRUISE_CONTAINER_BARRIER')?.valueFrom?.configMapKeyRef?.key),
        ['p_0', 'p_-1'],
      );
      const done = await waitFor(
        'both containers running, the pod Ready and marked completed',
        async () => {
          const p = await client.get<Pod>(Pods, 'ordered', { namespace: ns });
          const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
          return (
            running(p, 'first') &&
            running(p, 'second') &&
            ready &&
            p.metadata.annotations?.['apps.kruise.io/container-launch-priority-completed'] === 'true' &&
            p
          );
        },
        60_000,
      );
      const barrier = await client.get<ConfigMap>(ConfigMaps, 'ordered-barrier', { namespace: ns });
      assert.deepEqual(Object.keys(barrier.data ?? {}).sort(), ['p_-1', 'p_0']);
      assert.equal(barrier.metadata.ownerReferences?.[0]?.uid, done.metadata.uid);

      // Held first: KWOK started neither container before the barrier opened.
      const started = states.findIndex((p) => (p.status?.containerStatuses?.length ?? 0) > 0);
      assert.ok(started >= 0);
      assert.ok(!running(states[started]!, 'first') && !running(states[started]!, 'second'), 'both held at start');
      const firstRuns = states.findIndex((p) => running(p, 'first'));
      const secondRuns = states.findIndex((p) => running(p, 'second'));
      assert.ok(firstRuns > started && secondRuns > firstRuns, `first at state ${firstRuns}, second at ${secondRuns}`);
      states.forEach((p, i) => {
        if (running(p, 'second')) assert.ok(running(p, 'first'), `second never runs without first (state ${i})`);
      });
      assert.ok(keysSeen[secondRuns]!.includes('p_-1'), 'second started once p_-1 existed');
      const startedAt = (c: string) => Date.parse(done.status!.containerStatuses!.find((x) => x.name === c)!.state!.running!.startedAt!);
      assert.ok(startedAt('second') >= startedAt('first'));
    } finally {
      abort.abort();
    }
  });
});
