// SidecarSet and the pod webhook end to end on the suite's manager (spec §6, §19): injection at pod
// creation into a Deployment's, a CloneSet's and a bare pod's pods, kube-system and non-matching
// pods untouched, and an in-place sidecar upgrade of 10 pods under maxUnavailable and partition.
// SidecarSets are cluster-scoped: each one here also selects this test's namespace only (or a
// label no other test uses), so concurrent tests never see these sidecars.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pod, KubeObject } from '../../src/apis/core-objects.ts';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import { Pods, SidecarSets } from '../../src/runtime/resources.ts';
import { SharedInformerFactory } from '../../src/runtime/informer-factory.ts';
import { apply, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest } from './cloneset-helpers.ts';

let client: KubeClient;
let ns: string;
const sidecarSetsToDelete: string[] = [];

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('ss');
});

after(async () => {
  for (const name of sidecarSetsToDelete) await client.delete(SidecarSets, name).catch(() => undefined);
  await client.delete(Pods, `kube-system-${ns}`, { namespace: 'kube-system', gracePeriodSeconds: 0 }).catch(() => undefined);
  await deleteNamespace(ns);
  await client.close();
});

type SidecarSetObj = KubeObject & { spec?: any; status?: any };

async function createSidecarSet(name: string, spec: Record<string, unknown>): Promise<void> {
  await client.create(SidecarSets, { apiVersion: 'apps.kruise.io/v1beta1', kind: 'SidecarSet', metadata: { name }, spec });
  sidecarSetsToDelete.push(name);
  // The pod webhook reads SidecarSets from the manager's cache: wait until the controller saw it.
  await waitFor(`SidecarSet ${name} observed`, async () => {
    const s = await client.get<SidecarSetObj>(SidecarSets, name);
    return s.status?.observedGeneration === s.metadata.generation && s.status?.latestRevision;
  });
}

const bare = (name: string, labels: Record<string, string>, namespace = ns) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels },
  spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
});

const containerNames = (p: Pod) => p.spec!.containers.map((c) => c.name);
const image = (p: Pod, c: string) => p.spec!.containers.find((x) => x.name === c)?.image;
const statusImage = (p: Pod, c: string) => p.status?.containerStatuses?.find((x) => x.name === c)?.image;
const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

describe('SidecarSet', { concurrency: 1 }, () => {
  test('injects into the pods of a Deployment, a CloneSet and a bare pod, in place; non-matching and kube-system pods are untouched', async () => {
    const name = `web-${ns}`;
    await createSidecarSet(name, {
      selector: { matchLabels: { app: 'web' } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      containers: [
        { name: 'log-agent', image: 'busybox:1.36', podInjectPolicy: 'BeforeAppContainer' },
        { name: 'metrics', image: 'busybox:1.36', podInjectPolicy: 'AfterAppContainer' },
      ],
    });
    // The same SidecarSet shape, but matching every namespace by a label unique to this test.
    const everywhere = `all-${ns}`;
    await createSidecarSet(everywhere, {
      selector: { matchLabels: { 'sidecar-test': ns } },
      containers: [{ name: 'probe', image: 'busybox:1.36' }],
    });

    await client.create(Pods, bare('bare', { app: 'web' }));
    await client.create(Pods, bare('other', { app: 'db' }));
    await client.create(Pods, bare(`kube-system-${ns}`, { 'sidecar-test': ns }, 'kube-system'));
    await client.create(Pods, bare('labelled', { 'sidecar-test': ns }));
    await apply(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web-deploy' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web', via: 'deployment' } },
          template: {
            metadata: { labels: { app: 'web', via: 'deployment' } },
            spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
          },
        },
      },
      ns,
    );
    const cs = cloneSetManifest('web-cs', { replicas: 2 });
    cs.spec.selector.matchLabels = { app: 'web', via: 'cloneset' } as never;
    cs.spec.template.metadata.labels = { app: 'web', via: 'cloneset' } as never;
    await apply(cs, ns);

    const pods = await waitFor('2 Deployment pods and 2 CloneSet pods', async () => {
      const list = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=web' })).items;
      return list.length === 5 && list;
    });
    for (const p of pods) {
      assert.deepEqual(containerNames(p), ['log-agent', 'main', 'metrics'], p.metadata.name);
      assert.deepEqual(p.spec!.containers[0]!.env, [{ name: 'IS_INJECTED', value: 'true' }]);
      assert.equal(p.metadata.annotations?.['kruise.io/sidecarset-injected-list'], name);
      const hash = JSON.parse(p.metadata.annotations!['kruise.io/sidecarset-hash']!);
      assert.equal(hash[name].sidecarSetName, name);
      assert.deepEqual(hash[name].sidecarList, ['log-agent', 'metrics']);
    }
    // CloneSet pods also carry the KruisePodReady readiness gate (pods of Kruise workloads only).
    const csPod = pods.find((p) => p.metadata.labels?.via === 'cloneset')!;
    assert.ok(csPod.spec!.readinessGates?.some((g) => g.conditionType === 'KruisePodReady'));
    assert.ok(!pods.find((p) => p.metadata.name === 'bare')!.spec!.readinessGates);

    const other = await client.get<Pod>(Pods, 'other', { namespace: ns });
    assert.deepEqual(containerNames(other), ['main']);
    assert.equal(other.metadata.annotations?.['kruise.io/sidecarset-hash'], undefined);
    const system = await client.get<Pod>(Pods, `kube-system-${ns}`, { namespace: 'kube-system' });
    assert.deepEqual(containerNames(system), ['main'], 'kube-system is outside the pod webhook');
    const labelled = await client.get<Pod>(Pods, 'labelled', { namespace: ns });
    assert.deepEqual(containerNames(labelled), ['probe', 'main']);

    // Injected pods run: the simulated kubelet starts the sidecars too.
    await waitFor('CloneSet pods ready', async () => {
      const list = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'via=cloneset' })).items;
      return list.length === 2 && list.every(isReady);
    });
    const s = await waitFor('status counts the 5 pods', async () => {
      const obj = await client.get<SidecarSetObj>(SidecarSets, name);
      return obj.status?.matchedPods === 5 && obj.status.readyPods === 5 && obj;
    });
    assert.equal(s.status.updatedPods, 5);
  });

  test('a canary SidecarSet replaces its base in the pods it matches; the others keep the base', async () => {
    const base = `tracer-${ns}`;
    const scope = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } };
    await createSidecarSet(base, {
      selector: { matchLabels: { 'canary-test': ns } },
      ...scope,
      containers: [{ name: 'tracer', image: 'tracer:1.0' }],
    });
    await client.create(SidecarSets, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: {
        name: `${base}-canary`,
        annotations: { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': base },
      },
      spec: {
        selector: { matchLabels: { 'canary-test': ns, track: 'canary' } },
        ...scope,
        containers: [{ name: 'tracer', image: 'tracer:2.0' }],
        updateStrategy: { type: 'NotUpdate' },
      },
    });
    sidecarSetsToDelete.push(`${base}-canary`);
    // The pod webhook reads SidecarSets from its own cache: wait until a dry-run pod shows the canary.
    const canaryPod = bare('canary', { 'canary-test': ns, track: 'canary' });
    await waitFor('the canary injected by the webhook', async () => {
      const probe = await client.create<Pod>(Pods, canaryPod, { dryRun: true });
      return image(probe, 'tracer') === 'tracer:2.0';
    });
    const [inCanary, stable] = await Promise.all([
      client.create<Pod>(Pods, canaryPod),
      client.create<Pod>(Pods, bare('stable', { 'canary-test': ns })),
    ]);
    assert.deepEqual(containerNames(inCanary), ['tracer', 'main']);
    assert.equal(image(inCanary, 'tracer'), 'tracer:2.0');
    assert.equal(inCanary.metadata.annotations?.['kruise.io/sidecarset-injected-list'], `${base}-canary`);
    assert.equal(image(stable, 'tracer'), 'tracer:1.0');
    assert.equal(stable.metadata.annotations?.['kruise.io/sidecarset-injected-list'], base);
  });

  test('resourcesPolicy: the injected sidecar gets resources computed from the app containers; no target refuses the pod', async () => {
    const name = `res-${ns}`;
    // targetContainersNameRegex left out: the CRD defaults it to ".*".
    await createSidecarSet(name, {
      selector: { matchLabels: { 'resources-test': ns } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      containers: [
        {
          name: 'proxy',
          image: 'busybox:1.36',
          resourcesPolicy: {
            targetContainersMode: 'sum',
            resourcesExpr: { limits: { cpu: 'max(cpu*50%, 50m)', memory: 'memory*25%' }, requests: { cpu: 'cpu*50%', memory: '64Mi' } },
          },
        },
      ],
    });
    const stored = await client.get<SidecarSetObj>(SidecarSets, name);
    assert.equal(stored.spec.containers[0].resourcesPolicy.targetContainersNameRegex, '.*');
    const container = (n: string, cpu: string, memory: string) => ({
      name: n,
      image: 'nginx:1.0',
      resources: { limits: { cpu, memory }, requests: { cpu: '100m' } },
    });
    const created = await client.create<Pod>(Pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sized', namespace: ns, labels: { 'resources-test': ns } },
      spec: { containers: [container('app', '200m', '256Mi'), container('worker', '400m', '768Mi')] },
    } as unknown as Pod);
    const proxy = created.spec!.containers.find((c) => c.name === 'proxy');
    assert.deepEqual(proxy?.resources, { limits: { cpu: '300m', memory: '256Mi' }, requests: { cpu: '100m', memory: '64Mi' } });

    await client.patch(
      SidecarSets,
      name,
      [{ op: 'replace', path: '/spec/containers/0/resourcesPolicy/targetContainersNameRegex', value: '^nothing$' }],
      { patchType: PatchType.JSON },
    );
    await waitFor('the webhook sees the new regex', async () => {
      const err = await client.create(Pods, bare('refused', { 'resources-test': ns })).then(
        () => undefined,
        (e: Error) => e,
      );
      if (!err) await client.delete(Pods, 'refused', { namespace: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
      return err?.message.includes('no containers match the regex pattern "^nothing$"');
    });
  });

  test('an image change upgrades 10 pods in place, never more than maxUnavailable at once; partition 4 keeps 4 on the old image', async () => {
    const name = `upgrade-${ns}`;
    await createSidecarSet(name, {
      selector: { matchLabels: { app: 'upgrade' } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      containers: [{ name: 'agent', image: 'busybox:1.36' }],
      updateStrategy: { maxUnavailable: 2, partition: 4 },
    });
    for (let i = 0; i < 10; i++) await client.create(Pods, bare(`up-${i}`, { app: 'upgrade' }));
    const list = () => client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=upgrade' }).then((l) => l.items);
    const before = await waitFor('10 ready pods with the sidecar', async () => {
      const pods = await list();
      return pods.length === 10 && pods.every((p) => isReady(p) && image(p, 'agent') === 'busybox:1.36') && pods;
    });
    await waitFor('status: 10 matched, ready', async () => {
      const s = await client.get<SidecarSetObj>(SidecarSets, name);
      return s.status?.matchedPods === 10 && s.status.readyPods === 10;
    });

    await client.patch(
      SidecarSets,
      name,
      { spec: { containers: [{ name: 'agent', image: 'busybox:1.37' }] } },
      { patchType: 'application/merge-patch+json' },
    );

    // Watch the rollout: a pod is unavailable from its image patch until it runs the new image and is ready.
    let maxUnavailableSeen = 0;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const pods = await list();
      const unavailable = pods.filter((p) => !isReady(p) || image(p, 'agent') !== statusImage(p, 'agent')).length;
      maxUnavailableSeen = Math.max(maxUnavailableSeen, unavailable);
      const s = await client.get<SidecarSetObj>(SidecarSets, name);
      if (s.status?.updatedPods === 6 && s.status.updatedReadyPods === 6 && s.status.observedGeneration === s.metadata.generation) break;
      if (Date.now() > deadline) throw new Error(`rollout did not reach 6 updated: ${JSON.stringify(s.status)}`);
      await sleep(150);
    }
    // Nothing more moves past the partition.
    await sleep(2000);
    const pods = await list();
    assert.ok(maxUnavailableSeen <= 2, `at most maxUnavailable=2 pods unavailable at once, saw ${maxUnavailableSeen}`);
    assert.equal(pods.filter((p) => image(p, 'agent') === 'busybox:1.37').length, 6);
    assert.equal(pods.filter((p) => image(p, 'agent') === 'busybox:1.36').length, 4);
    const byName = new Map(before.map((p) => [p.metadata.name, p]));
    for (const p of pods) {
      const old = byName.get(p.metadata.name)!;
      assert.equal(p.metadata.uid, old.metadata.uid, 'upgraded in place');
      assert.deepEqual(
        p.spec!.containers.find((c) => c.name === 'main'),
        old.spec!.containers.find((c) => c.name === 'main'),
      );
      assert.equal(p.status!.containerStatuses!.find((c) => c.name === 'main')!.restartCount, 0);
    }
    const upgradable = pods.find((p) => image(p, 'agent') === 'busybox:1.37')!;
    const cond = upgradable.status!.conditions!.find((c) => c.type === 'SidecarSetUpgradable');
    assert.equal(cond?.status, 'True');

    // partition 0: the rest follow.
    await client.patch(SidecarSets, name, { spec: { updateStrategy: { partition: 0 } } }, { patchType: 'application/merge-patch+json' });
    await waitFor(
      'all 10 upgraded and ready',
      async () => {
        const s = await client.get<SidecarSetObj>(SidecarSets, name);
        return s.status?.updatedReadyPods === 10 && s.status.matchedPods === 10;
      },
      120_000,
    );
  });

  test('hot upgrade: the new image goes to the idle container, which works (and the old one resets) only once ready; the pod is never NotReady', async () => {
    const name = `hot-${ns}`;
    const hotSidecar = (image: string) => ({
      name: 'mesh',
      image,
      upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'mesh:empty' },
    });
    await createSidecarSet(name, {
      selector: { matchLabels: { app: 'hot' } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      containers: [hotSidecar('mesh:1.0')],
    });
    await client.create(Pods, bare('hot-0', { app: 'hot' }));
    const injected = await waitFor('the hot pod runs mesh-1', async () => {
      const p = await client.get<Pod>(Pods, 'hot-0', { namespace: ns });
      return isReady(p) && statusImage(p, 'mesh-1') === 'mesh:1.0' && p;
    });
    assert.deepEqual(containerNames(injected), ['mesh-1', 'mesh-2', 'main']);
    assert.equal(image(injected, 'mesh-2'), 'mesh:empty');
    assert.equal(injected.metadata.annotations?.['kruise.io/sidecarset-working-hotupgrade-container'], '{"mesh":"mesh-1"}');
    assert.deepEqual(
      injected.spec!.containers[0]!.env!.map((e) => e.name),
      ['IS_INJECTED', 'SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT'],
    );

    // Every state of the pod from here on, as a watch delivers it.
    const states: Pod[] = [];
    const abort = new AbortController();
    const factory = new SharedInformerFactory(client, {});
    const informer = factory.informerFor<Pod>(Pods, { namespace: ns, labelSelector: 'app=hot' });
    informer.addEventHandler({
      onAdd: (p) => void states.push(p),
      onUpdate: (_o, p) => void states.push(p),
    });
    factory.start(abort.signal);
    try {
      await factory.waitForCacheSync(abort.signal);
      await client.patch(
        SidecarSets,
        name,
        { spec: { containers: [hotSidecar('mesh:2.0')] } },
        { patchType: 'application/merge-patch+json' },
      );
      const done = await waitFor(
        'mesh-2 works on mesh:2.0 and mesh-1 is back on the empty image',
        async () => {
          const p = await client.get<Pod>(Pods, 'hot-0', { namespace: ns });
          return (
            image(p, 'mesh-1') === 'mesh:empty' && statusImage(p, 'mesh-1') === 'mesh:empty' && statusImage(p, 'mesh-2') === 'mesh:2.0' && p
          );
        },
        60_000,
      );
      await waitFor('status: updated and ready', async () => {
        const s = await client.get<SidecarSetObj>(SidecarSets, name);
        return s.status?.updatedReadyPods === 1 && s.status.matchedPods === 1;
      });
      assert.equal(done.metadata.uid, injected.metadata.uid);
      const a = done.metadata.annotations!;
      assert.equal(a['kruise.io/sidecarset-working-hotupgrade-container'], '{"mesh":"mesh-2"}');
      assert.equal(a['version.sidecarset.kruise.io/mesh-1'], '0');
      assert.equal(a['versionalt.sidecarset.kruise.io/mesh-2'], '0');
      assert.ok(Number(a['version.sidecarset.kruise.io/mesh-2']) > 1, 'mesh-2 carries the SidecarSet resourceVersion');

      await sleep(500);
      const serving = (p: Pod) =>
        p.status?.containerStatuses?.filter((c) => c.name.startsWith('mesh-') && c.ready && c.image !== 'mesh:empty').map((c) => c.image) ??
        [];
      for (const p of states) {
        assert.ok(isReady(p), `the pod is Ready at rv ${p.metadata.resourceVersion}`);
        assert.ok(serving(p).length >= 1, `a mesh container serves at rv ${p.metadata.resourceVersion}`);
      }
      const firstReset = states.findIndex((p) => image(p, 'mesh-1') === 'mesh:empty');
      const newRunning = states.findIndex((p) => statusImage(p, 'mesh-2') === 'mesh:2.0');
      assert.ok(
        newRunning >= 0 && firstReset > newRunning,
        `mesh-1 reset (state ${firstReset}) after mesh-2 ran mesh:2.0 (state ${newRunning})`,
      );
      // The working container switches only after the new one is ready (spec §6.3 step 5): until
      // then the annotation names mesh-1, and it moves in the write that resets mesh-1.
      const working = (p: Pod) => p.metadata.annotations?.['kruise.io/sidecarset-working-hotupgrade-container'];
      const newReady = states.findIndex((p) =>
        p.status?.containerStatuses?.some((c) => c.name === 'mesh-2' && c.image === 'mesh:2.0' && c.ready),
      );
      const firstSwitch = states.findIndex((p) => working(p) === '{"mesh":"mesh-2"}');
      assert.ok(newReady >= 0 && firstSwitch > newReady, `switched (state ${firstSwitch}) after mesh-2 was ready (state ${newReady})`);
      assert.equal(firstSwitch, firstReset, 'the switch and the reset are one write');
      for (const p of states.slice(0, firstSwitch)) assert.equal(working(p), '{"mesh":"mesh-1"}');
    } finally {
      abort.abort();
    }
  });
});
