// CloneSet on the suite's shared manager: lifecycle hooks (preNormal / preDelete / inPlaceUpdate
// with labelsHandler, finalizersHandler and markPodNotReady, behaviour spec §3.9), container launch
// priority in in-place updates (§3.8), and specified deletion under maxUnavailable / maxSurge
// (§3.4–3.5) with the exact order of deletes and creates, as a pod watch sees it; env from
// metadata restarting only the containers that read it (§18.2, done by the suite's simulated daemon).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import { Pods, CloneSets } from '../../src/runtime/resources.ts';
import { SharedInformerFactory } from '../../src/runtime/informer-factory.ts';
import { unwrapDeleted } from '../../src/runtime/store.ts';
import type { Pod } from '../../src/controllers/cloneset/pods.ts';
import { apply, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf, waitSettled, type TestCloneSet } from './cloneset-helpers.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('csl');
});

after(async () => {
  // Drop test finalizers so the namespace can go.
  const all = await client.list<Pod>(Pods, { namespace: ns });
  for (const p of all.items) {
    if (p.metadata.finalizers?.length) await mergePod(p.metadata.name!, { metadata: { finalizers: null } }).catch(() => undefined);
  }
  await deleteNamespace(ns);
  await client.close();
});

const STATE = 'lifecycle.apps.kruise.io/state';
const mergePod = (name: string, patch: object) => client.patch<Pod>(Pods, name, patch, { namespace: ns, patchType: PatchType.Merge });
const getPod = (name: string) => client.get<Pod>(Pods, name, { namespace: ns });
const patchSpec = (name: string, spec: object) => client.patch(CloneSets, name, { spec }, { namespace: ns, patchType: PatchType.Merge });
const condition = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
const setKruisePodReady = (name: string, status: 'True' | 'False') =>
  client.patch(
    Pods,
    name,
    { status: { conditions: [{ type: 'KruisePodReady', status }] } },
    { namespace: ns, patchType: PatchType.StrategicMerge, subresource: 'status' },
  );

/** Holds that nothing about `name` changes for `ms`: `check` must stay true throughout. */
async function holds(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    assert.ok(await check(), what);
    await sleep(200);
  }
}

describe('CloneSet lifecycle hooks', { concurrency: 2 }, () => {
  test(
    'preNormal holds pods PreparingNormal until every hook finalizer is on; preDelete holds PreparingDelete (not ready) until its label and finalizer are gone',
    { timeout: 90_000 },
    async () => {
      const manifest = cloneSetManifest('hooks', { replicas: 2 });
      const tmpl = manifest.spec.template as { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
      tmpl.metadata.labels['example.io/block-deleting'] = 'true';
      tmpl.spec.readinessGates = [{ conditionType: 'KruisePodReady' }];
      (manifest.spec as Record<string, unknown>).lifecycle = {
        preNormal: { finalizersHandler: ['example.io/ready-blocker'] },
        preDelete: {
          labelsHandler: { 'example.io/block-deleting': 'true' },
          finalizersHandler: ['example.io/pre-delete'],
          markPodNotReady: true,
        },
      };
      await apply(manifest, ns);
      const pods = await waitFor('2 running pods', async () => {
        const ps = await podsOf(client, ns, 'hooks');
        return ps.length === 2 && ps.every(isReady) ? ps : undefined;
      });
      // preNormal: running and ready, but not Normal and so not available.
      await holds('pods stay PreparingNormal while the preNormal finalizer is missing', 1500, async () => {
        const ps = await podsOf(client, ns, 'hooks');
        return ps.every((p) => p.metadata.labels?.[STATE] === 'PreparingNormal');
      });
      assert.equal((await client.get<TestCloneSet>(CloneSets, 'hooks', { namespace: ns })).status.availableReplicas, 0);
      for (const p of pods)
        await mergePod(p.metadata.name!, { metadata: { finalizers: ['example.io/ready-blocker', 'example.io/pre-delete'] } });
      await waitSettled(client, ns, 'hooks', 2);
      assert.ok((await podsOf(client, ns, 'hooks')).every((p) => p.metadata.labels?.[STATE] === 'Normal'));

      // preDelete: scale in holds the chosen pod in PreparingDelete, KruisePodReady False.
      await patchSpec('hooks', { replicas: 1 });
      const victim = await waitFor('a pod in PreparingDelete', async () =>
        (await podsOf(client, ns, 'hooks')).find((p) => p.metadata.labels?.[STATE] === 'PreparingDelete'),
      );
      const name = victim.metadata.name!;
      const notReady = await waitFor('KruisePodReady False and the pod not Ready', async () => {
        const p = await getPod(name);
        return condition(p, 'KruisePodReady')?.status === 'False' && !isReady(p) ? p : undefined;
      });
      assert.match(condition(notReady, 'KruisePodReady')!.message!, /preDeleteHook/);
      await holds('the hooked pod is not deleted', 1500, async () => !(await getPod(name)).metadata.deletionTimestamp);
      // The label gone, the finalizer still hooks it.
      await mergePod(name, { metadata: { labels: { 'example.io/block-deleting': null } } });
      await holds('the pod with only the hook finalizer left is not deleted', 1500, async () => {
        const p = await getPod(name);
        return !p.metadata.deletionTimestamp && p.metadata.labels?.[STATE] === 'PreparingDelete';
      });
      await mergePod(name, { metadata: { finalizers: null } });
      await waitFor(`${name} deleted once released`, async () => {
        try {
          return !!(await getPod(name)).metadata.deletionTimestamp;
        } catch {
          return true;
        }
      });
      const left = await waitFor('one pod left', async () => {
        const ps = await podsOf(client, ns, 'hooks');
        return ps.length === 1 ? ps : undefined;
      });
      assert.notEqual(left[0].metadata.name, name);
      assert.equal(left[0].metadata.labels?.[STATE], 'Normal');
    },
  );

  test(
    'inPlaceUpdate hook: PreparingUpdate (KruisePodReady False) until the hook label is removed, then Updated (True), Normal once re-added',
    { timeout: 90_000 },
    async () => {
      const manifest = cloneSetManifest('ipuhook', { replicas: 1, podUpdatePolicy: 'InPlaceIfPossible' });
      const tmpl = manifest.spec.template as { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
      tmpl.metadata.labels['example.io/inplace-hook'] = 'true';
      tmpl.spec.readinessGates = [{ conditionType: 'KruisePodReady' }];
      (manifest.spec as Record<string, unknown>).lifecycle = {
        inPlaceUpdate: { labelsHandler: { 'example.io/inplace-hook': 'true' }, markPodNotReady: true },
      };
      await apply(manifest, ns);
      await waitSettled(client, ns, 'ipuhook', 1);
      const [pod] = await podsOf(client, ns, 'ipuhook');
      const name = pod.metadata.name!;
      assert.equal(condition(pod, 'KruisePodReady')?.status, 'True');

      await patchSpec('ipuhook', { template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } });
      const held = await waitFor('PreparingUpdate, KruisePodReady False, not Ready', async () => {
        const p = await getPod(name);
        return p.metadata.labels?.[STATE] === 'PreparingUpdate' && condition(p, 'KruisePodReady')?.status === 'False' && !isReady(p)
          ? p
          : undefined;
      });
      assert.match(condition(held, 'KruisePodReady')!.message!, /preUpdateHook/);
      await holds('the image is not changed while hooked', 1500, async () => {
        const p = await getPod(name);
        return p.spec?.containers[0].image === 'nginx:1.0' && p.metadata.labels?.[STATE] === 'PreparingUpdate';
      });

      await mergePod(name, { metadata: { labels: { 'example.io/inplace-hook': null } } });
      const updated = await waitFor(
        'updated in place: Updated, KruisePodReady True, Ready',
        async () => {
          const p = await getPod(name);
          return p.metadata.labels?.[STATE] === 'Updated' &&
            condition(p, 'KruisePodReady')?.status === 'True' &&
            isReady(p) &&
            p.status?.containerStatuses?.[0].image === 'nginx:2.0'
            ? p
            : undefined;
        },
        30_000,
      );
      assert.equal(updated.metadata.uid, pod.metadata.uid);
      await holds('Updated until the hook label is back', 1000, async () => (await getPod(name)).metadata.labels?.[STATE] === 'Updated');
      await mergePod(name, { metadata: { labels: { 'example.io/inplace-hook': 'true' } } });
      await waitFor('Normal once the hook label is back', async () => (await getPod(name)).metadata.labels?.[STATE] === 'Normal');
      await waitSettled(client, ns, 'ipuhook', 1);
    },
  );
});

describe('CloneSet in-place update with container launch priority', { concurrency: 2 }, () => {
  /**
   * Updates both images at once and watches the pod: the low-priority container's image may change
   * only once the high-priority one runs the new image and is ready.
   */
  async function rollsInTwoBatches(
    name: string,
    first: string,
    second: string,
    configure: (tmpl: { metadata: Record<string, any>; spec: Record<string, any> }) => void,
  ) {
    const manifest = cloneSetManifest(name, { replicas: 1, podUpdatePolicy: 'InPlaceIfPossible' });
    const tmpl = manifest.spec.template as { metadata: Record<string, any>; spec: Record<string, any> };
    configure(tmpl);
    await apply(manifest, ns);
    await waitSettled(client, ns, name, 1);
    const [pod] = await podsOf(client, ns, name);

    await patchSpec(name, {
      template: {
        spec: {
          containers: tmpl.spec.containers.map((c: { name: string; image: string }) => ({ ...c, image: c.image.replace(':1.0', ':2.0') })),
        },
      },
    });
    let sawFirstBatchAlone = false;
    await waitFor(
      `both containers of ${name} updated`,
      async () => {
        const p = await getPod(pod.metadata.name!);
        const spec = (c: string) => p.spec?.containers.find((x) => x.name === c)?.image ?? '';
        const status = (c: string) => p.status?.containerStatuses?.find((x) => x.name === c);
        if (spec(second).endsWith(':2.0')) {
          assert.ok(
            status(first)?.image?.endsWith(':2.0') && status(first)?.ready,
            `${second} changed before ${first} ran the new image and was ready: ${JSON.stringify(p.status?.containerStatuses)}`,
          );
        } else if (spec(first).endsWith(':2.0')) sawFirstBatchAlone = true;
        return status(first)?.image?.endsWith(':2.0') && status(second)?.image?.endsWith(':2.0') && isReady(p);
      },
      45_000,
      50,
    );
    assert.ok(sawFirstBatchAlone, `never saw ${first} updated without ${second}`);
    await waitSettled(client, ns, name, 1);
    const after = await getPod(pod.metadata.name!);
    assert.equal(after.metadata.uid, pod.metadata.uid);
    const state = JSON.parse(after.metadata.annotations!['apps.kruise.io/inplace-update-state']) as {
      containerBatchesRecord: Array<{ containers: string[]; timestamp: string }>;
    };
    assert.deepEqual(
      state.containerBatchesRecord.map((b) => b.containers),
      [[first], [second]],
    );
    assert.ok(state.containerBatchesRecord[0].timestamp <= state.containerBatchesRecord[1].timestamp);
  }

  test('KRUISE_CONTAINER_PRIORITY: the higher-priority container is updated first', { timeout: 90_000 }, async () => {
    await rollsInTwoBatches('prio', 'app', 'sidecar', (tmpl) => {
      tmpl.spec.containers = [
        { name: 'sidecar', image: 'busybox:1.0', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '-5' }] },
        { name: 'app', image: 'nginx:1.0', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }] },
      ];
    });
  });

  test('container-launch-priority: Ordered updates containers in declaration order', { timeout: 90_000 }, async () => {
    await rollsInTwoBatches('ordered', 'init', 'main', (tmpl) => {
      tmpl.metadata.annotations = { 'apps.kruise.io/container-launch-priority': 'Ordered' };
      tmpl.spec.containers = [
        { name: 'init', image: 'busybox:1.0' },
        { name: 'main', image: 'nginx:1.0' },
      ];
    });
  });
});

describe('CloneSet in-place update of env from metadata (InPlaceUpdateEnvFromMetadata, with the simulated kruise-daemon)', () => {
  test("changing an annotation read by one container's env restarts only that container, in place", { timeout: 90_000 }, async () => {
    const name = 'envmeta';
    const manifest = cloneSetManifest(name, { replicas: 1, podUpdatePolicy: 'InPlaceIfPossible' });
    const tmpl = manifest.spec.template as { metadata: Record<string, any>; spec: Record<string, any> };
    tmpl.metadata.annotations = { 'example.io/config': 'v1' };
    tmpl.spec.containers = [
      {
        name: 'reader',
        image: 'nginx:1.0',
        env: [{ name: 'CONFIG', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['example.io/config']" } } }],
      },
      { name: 'other', image: 'busybox:1.0' },
    ];
    await apply(manifest, ns);
    await waitSettled(client, ns, name, 1);
    const [before] = await podsOf(client, ns, name);
    const status = (p: Pod, c: string) => p.status?.containerStatuses?.find((x) => x.name === c);
    // The daemon reports the env hashes it started the containers with.
    await waitFor(
      'the runtime-containers-meta annotation',
      async () => !!(await getPod(before.metadata.name!)).metadata.annotations?.['apps.kruise.io/runtime-containers-meta'],
      30_000,
      200,
    );

    await patchSpec(name, { template: { metadata: { annotations: { 'example.io/config': 'v2' } } } });
    await waitSettled(client, ns, name, 1, { timeoutMs: 60_000 });
    const after = await getPod(before.metadata.name!);
    assert.equal(after.metadata.uid, before.metadata.uid, 'updated in place: same pod');
    assert.equal(after.metadata.annotations?.['example.io/config'], 'v2');
    assert.equal(
      status(after, 'reader')?.restartCount,
      (status(before, 'reader')?.restartCount ?? 0) + 1,
      'the container reading the annotation restarted once',
    );
    assert.notEqual(status(after, 'reader')?.containerID, status(before, 'reader')?.containerID);
    assert.equal(status(after, 'other')?.restartCount, status(before, 'other')?.restartCount, 'the other container kept running');
    assert.equal(status(after, 'other')?.containerID, status(before, 'other')?.containerID);
    assert.equal(condition(after, 'InPlaceUpdateReady')?.status, 'True');
  });

  test('changing the image and a label its env reads in one revision restarts the container once', { timeout: 90_000 }, async () => {
    const name = 'envimage';
    const manifest = cloneSetManifest(name, { replicas: 1, podUpdatePolicy: 'InPlaceIfPossible' });
    const tmpl = manifest.spec.template as { metadata: Record<string, any>; spec: Record<string, any> };
    tmpl.metadata.labels['example.io/version'] = 'v1';
    tmpl.spec.containers = [
      {
        name: 'app',
        image: 'nginx:1.0',
        env: [{ name: 'VERSION', valueFrom: { fieldRef: { fieldPath: "metadata.labels['example.io/version']" } } }],
      },
    ];
    await apply(manifest, ns);
    await waitSettled(client, ns, name, 1);
    const [before] = await podsOf(client, ns, name);
    const app = (p: Pod) => p.status?.containerStatuses?.find((x) => x.name === 'app');
    await waitFor(
      'the runtime-containers-meta annotation',
      async () => !!(await getPod(before.metadata.name!)).metadata.annotations?.['apps.kruise.io/runtime-containers-meta'],
      30_000,
      200,
    );

    await patchSpec(name, {
      template: {
        metadata: { labels: { 'example.io/version': 'v2' } },
        spec: { containers: [{ ...tmpl.spec.containers[0], image: 'nginx:2.0' }] },
      },
    });
    await waitSettled(client, ns, name, 1, { timeoutMs: 60_000 });
    const after = await getPod(before.metadata.name!);
    assert.equal(after.metadata.uid, before.metadata.uid, 'updated in place: same pod');
    assert.equal(app(after)?.image, 'nginx:2.0');
    assert.equal(condition(after, 'InPlaceUpdateReady')?.status, 'True');
    // The new image already starts the container with the new env: one restart, then no more.
    await holds(
      'the container restarted exactly once',
      5000,
      async () => (app(await getPod(before.metadata.name!))?.restartCount ?? 0) === (app(before)?.restartCount ?? 0) + 1,
    );
  });
});

/** Every pod event of a CloneSet in order, with the set of pods after it. */
class PodLog {
  readonly pods = new Map<string, Pod>();
  readonly log: Array<{ name: string; terminating: boolean; active: string[]; ready: string[] }> = [];
  private readonly abort = new AbortController();
  private readonly factory = new SharedInformerFactory(client, {});

  constructor(selector: string) {
    const informer = this.factory.informerFor<Pod>(Pods, { namespace: ns, labelSelector: selector });
    const seen = (p: Pod, gone = false) => {
      if (gone) this.pods.delete(p.metadata.name!);
      else this.pods.set(p.metadata.name!, p);
      const active = [...this.pods.values()].filter((x) => !x.metadata.deletionTimestamp);
      this.log.push({
        name: p.metadata.name!,
        terminating: gone || !!p.metadata.deletionTimestamp,
        active: active.map((x) => x.metadata.name!).sort(),
        ready: active
          .filter(isReady)
          .map((x) => x.metadata.name!)
          .sort(),
      });
    };
    informer.addEventHandler({ onAdd: (p) => seen(p), onUpdate: (_o, p) => seen(p), onDelete: (o) => seen(unwrapDeleted(o), true) });
  }

  async start() {
    this.factory.start(this.abort.signal);
    await this.factory.waitForCacheSync(this.abort.signal);
    return this;
  }

  stop() {
    this.abort.abort();
  }

  /** Index of the first entry after `from` that matches. */
  first(pred: (e: PodLog['log'][number]) => boolean, from = 0): number {
    for (let i = from; i < this.log.length; i++) if (pred(this.log[i])) return i;
    return -1;
  }
}

describe('CloneSet specified deletion under maxUnavailable / maxSurge, with one unavailable pod', { concurrency: 2 }, () => {
  /** 3 ready pods (each takes 2 s to start, so a replacement is visibly not ready), then pod-a made unavailable. */
  async function setUp(name: string, maxUnavailable: number, maxSurge: number) {
    const manifest = cloneSetManifest(name, { replicas: 3, maxUnavailable, maxSurge });
    const tmpl = manifest.spec.template as { metadata: Record<string, any>; spec: Record<string, any> };
    tmpl.metadata.annotations = { 'sim.kruise-ts.io/start-delay': '2s' };
    tmpl.spec.readinessGates = [{ conditionType: 'KruisePodReady' }];
    await apply(manifest, ns);
    await waitSettled(client, ns, name, 3);
    const [a, b, c] = (await podsOf(client, ns, name)).map((p) => p.metadata.name!);
    await setKruisePodReady(a, 'False');
    await waitFor(`${a} unavailable`, async () => {
      const cs = await client.get<TestCloneSet>(CloneSets, name, { namespace: ns });
      return !isReady(await getPod(a)) && cs.status.availableReplicas === 2;
    });
    const log = await new PodLog(`app=${name}`).start();
    return { a, b, c, log, original: new Set([a, b, c]) };
  }

  const specifiedDelete = (pod: string) => mergePod(pod, { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } });

  test('maxUnavailable 2 / maxSurge 1: pod-b is deleted at once, then its replacement created', { timeout: 60_000 }, async () => {
    const { b, log, original } = await setUp('mu2', 2, 1);
    try {
      await specifiedDelete(b);
      await waitFor(
        'a replacement ready',
        async () => {
          const ps = await podsOf(client, ns, 'mu2');
          return ps.length === 3 && !ps.some((p) => p.metadata.name === b) && ps.filter(isReady).length === 2;
        },
        30_000,
      );
      // The check above reads the API; the event log trails it on its watch: let it catch up.
      await waitFor(
        'the replacement in the event log',
        async () => log.first((e) => !original.has(e.name)) >= 0 && log.first((e) => e.name === b && e.terminating) >= 0,
        10_000,
      );
      const deleted = log.first((e) => e.name === b && e.terminating);
      const created = log.first((e) => !original.has(e.name));
      assert.ok(deleted >= 0 && created >= 0, JSON.stringify(log.log));
      assert.ok(deleted < created, `pod-b must be deleted before the replacement is created: ${JSON.stringify(log.log)}`);
      assert.ok(
        log.log.every((e) => e.active.length <= 3),
        'never more than 3 active pods',
      );
    } finally {
      log.stop();
    }
  });

  test(
    'maxUnavailable 1 / maxSurge 1: the replacement first, pod-b deleted only once it is Ready; deleting unavailable pod-a is immediate',
    { timeout: 60_000 },
    async () => {
      const { a, b, log, original } = await setUp('mu1', 1, 1);
      try {
        await specifiedDelete(b);
        await waitFor(
          `${b} replaced`,
          async () => {
            const ps = await podsOf(client, ns, 'mu1');
            return ps.length === 3 && !ps.some((p) => p.metadata.name === b) && ps.filter(isReady).length === 2;
          },
          30_000,
        );
        // The check above reads the API; the event log trails it on its watch: let it catch up.
        await waitFor(`${b}'s deletion in the event log`, async () => log.first((e) => e.name === b && e.terminating) >= 0, 10_000);
        const created = log.first((e) => !original.has(e.name));
        const deleted = log.first((e) => e.name === b && e.terminating);
        assert.ok(created >= 0 && deleted >= 0, JSON.stringify(log.log));
        assert.ok(created < deleted, `the replacement must come first: ${JSON.stringify(log.log)}`);
        const replacement = log.log[created].name;
        assert.ok(
          log.log[deleted].ready.includes(replacement),
          `pod-b deleted before ${replacement} was ready: ${JSON.stringify(log.log[deleted])}`,
        );
        assert.ok(
          log.log.every((e) => e.active.length <= 4),
          'never more than 4 active pods',
        );

        // The unavailable pod itself: no surge needed, deleted at once.
        const mark = log.log.length;
        await specifiedDelete(a);
        await waitFor(
          `${a} replaced`,
          async () => {
            const ps = await podsOf(client, ns, 'mu1');
            return ps.length === 3 && !ps.some((p) => p.metadata.name === a) && ps.every(isReady);
          },
          30_000,
        );
        // The check above reads the API; the event log trails it on its watch: let it catch up.
        await waitFor(`${a}'s deletion in the event log`, async () => log.first((e) => e.name === a && e.terminating, mark) >= 0, 10_000);
        const aDeleted = log.first((e) => e.name === a && e.terminating, mark);
        const aCreated = log.first((e) => !original.has(e.name) && e.name !== replacement, mark);
        assert.ok(
          aDeleted >= 0 && aCreated >= 0 && aDeleted < aCreated,
          `pod-a must be deleted before its replacement: ${JSON.stringify(log.log.slice(mark))}`,
        );
        assert.ok(
          log.log.slice(mark).every((e) => e.active.length <= 3),
          'no surge pod for the unavailable one',
        );
      } finally {
        log.stop();
      }
    },
  );
});
