// The pod webhook pipeline: handler order, the fast path, SidecarSet injection (§6.2), container
// launch priority (§18.1), KruisePodReady (§18.5), enhanced liveness (§18.4), and the webhook
// configuration's safety choices.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import { admit } from '../../../src/runtime/webhook/admission.ts';
import type { AdmissionCache } from '../../../src/runtime/webhook/types.ts';
import { buildWebhookConfigurations } from '../../../src/runtime/webhook/configuration.ts';
import { allRegistrations } from '../../../src/webhooks/index.ts';
import {
  initializeContainerLaunchPriority,
  injectSidecarSets,
  mutatePod,
  registrations,
  sidecarSetsToInject,
  type SidecarSetInjectionInputs,
} from '../../../src/webhooks/pod/index.ts';
import { mutateSidecarSet } from '../../../src/webhooks/sidecarset/index.ts';
import {
  formatUpgradeSpecs,
  parseUpgradeSpecs,
  sidecarSetRevisionData,
  sidecarSetRevisionName,
  type StoredSidecarSet,
} from '../../../src/util/sidecarset.ts';

const features: FeatureGates = { ...FEATURE_GATE_DEFAULTS };
const NOW = new Date('2026-11-23T10:00:00.123Z');

function pod(over: Partial<Pod['metadata']> = {}, containers: any[] = [{ name: 'main', image: 'nginx:1' }]): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'default', labels: { app: 'web' }, ...over },
    spec: { containers },
  } as Pod;
}

/** A SidecarSet as stored: defaulted and hashed by its own webhook. */
function sidecarSet(name: string, spec: Record<string, any>, extra: Record<string, any> = {}): StoredSidecarSet {
  const s: any = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name, uid: `uid-${name}`, ...extra.metadata },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    ...(extra.status ? { status: extra.status } : {}),
  };
  mutateSidecarSet(s, { operation: 'CREATE', apiVersion: 'apps.kruise.io/v1beta1', userInfo: {}, dryRun: false, features });
  return s;
}

function inputs(sets: StoredSidecarSet[], over: Partial<SidecarSetInjectionInputs> = {}): SidecarSetInjectionInputs {
  return { sidecarSets: sets, namespace: undefined, revisionsOf: () => [], sortByName: false, now: NOW, random: () => 0.5, ...over };
}

function inject(p: Pod, sets: StoredSidecarSet[], over: Partial<SidecarSetInjectionInputs> = {}): boolean {
  const i = inputs(sets, over);
  return injectSidecarSets(p, sidecarSetsToInject(p, i), i);
}

function fakeCache(objects: Record<string, any[]>): AdmissionCache {
  return {
    list: async (_v, kind) => (objects[kind] ?? []) as any,
    get: async (_v, kind, name) => (objects[kind] ?? []).find((o) => o.metadata.name === name),
  };
}

const names = (p: Pod) => p.spec!.containers.map((c) => c.name);

describe('SidecarSet injection', () => {
  test('a canary SidecarSet matching the pod replaces its base; pods the canary does not match get the base', () => {
    const base = sidecarSet('mesh', { containers: [{ name: 'mesh', image: 'mesh:1' }] });
    const canary = sidecarSet(
      'mesh-canary',
      {
        selector: { matchLabels: { app: 'web', canary: 'true' } },
        containers: [{ name: 'mesh', image: 'mesh:2' }],
        updateStrategy: { type: 'NotUpdate' },
      },
      { metadata: { annotations: { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': 'mesh' } } },
    );
    const inCanary = pod({ labels: { app: 'web', canary: 'true' } });
    assert.deepEqual(
      sidecarSetsToInject(inCanary, inputs([base, canary])).map((s) => s.metadata.name),
      ['mesh-canary'],
    );
    inject(inCanary, [base, canary]);
    assert.equal(inCanary.spec!.containers.find((c) => c.name === 'mesh')?.image, 'mesh:2');
    assert.equal(inCanary.metadata.annotations?.['kruise.io/sidecarset-injected-list'], 'mesh-canary');
    assert.deepEqual(
      sidecarSetsToInject(pod(), inputs([base, canary])).map((s) => s.metadata.name),
      ['mesh'],
    );
    // The annotation must say "true": anything else is an ordinary SidecarSet.
    canary.metadata.annotations!['apps.kruise.io/sidecarset-canary'] = 'false';
    assert.deepEqual(
      sidecarSetsToInject(pod({ labels: { app: 'web', canary: 'true' } }), inputs([base, canary])).map((s) => s.metadata.name),
      ['mesh', 'mesh-canary'],
    );
  });
  test('BeforeAppContainer sidecars go first, AfterAppContainer last, with IS_INJECTED and without sidecar-only fields', () => {
    const p = pod();
    const changed = inject(p, [
      sidecarSet('log', {
        containers: [
          { name: 'before', image: 'b:1' },
          { name: 'after', image: 'a:1', podInjectPolicy: 'AfterAppContainer' },
        ],
      }),
    ]);
    assert.equal(changed, true);
    assert.deepEqual(names(p), ['before', 'main', 'after']);
    const before = p.spec!.containers[0]!;
    assert.deepEqual(before.env, [{ name: 'IS_INJECTED', value: 'true' }]);
    assert.equal((before as any).podInjectPolicy, undefined);
    assert.equal((before as any).upgradeStrategy, undefined);
    assert.equal((before as any).shareVolumePolicy, undefined);
    assert.equal(before.imagePullPolicy, 'IfNotPresent');
  });

  test('non-matching pods, paused injection, empty selectors and unmatched namespaceSelector inject nothing', () => {
    const other = pod({ labels: { app: 'db' } });
    assert.equal(inject(other, [sidecarSet('s', { containers: [{ name: 'c', image: 'c:1' }] })]), false);
    assert.deepEqual(names(other), ['main']);
    assert.equal(other.metadata.annotations, undefined);

    const paused = pod();
    assert.equal(
      inject(paused, [sidecarSet('s', { containers: [{ name: 'c', image: 'c:1' }], injectionStrategy: { paused: true } })]),
      false,
    );

    const empty = pod();
    assert.equal(inject(empty, [sidecarSet('s', { selector: {}, containers: [{ name: 'c', image: 'c:1' }] })]), false);

    const nsSel = sidecarSet('s', { namespaceSelector: { matchLabels: { mesh: 'on' } }, containers: [{ name: 'c', image: 'c:1' }] });
    assert.equal(inject(pod(), [nsSel], { namespace: { metadata: { name: 'default', labels: { mesh: 'off' } } } }), false);
    assert.equal(inject(pod(), [nsSel], { namespace: undefined }), false);
    const inMesh = pod();
    assert.equal(inject(inMesh, [nsSel], { namespace: { metadata: { name: 'default', labels: { mesh: 'on' } } } }), true);
    assert.deepEqual(names(inMesh), ['c', 'main']);
  });

  test('hash annotations: a map per SidecarSet, bit-exact with Go (sorted keys, field order, whole-second time)', () => {
    const s = sidecarSet(
      'log',
      {
        containers: [
          { name: 'b', image: 'b:1' },
          { name: 'a', image: 'a:1' },
        ],
      },
      { status: { matchedPods: 0, updatedPods: 0, readyPods: 0, latestRevision: 'log-7c5b9d' } },
    );
    const s2 = sidecarSet('agent', { containers: [{ name: 'x', image: 'x:1' }] });
    const p = pod();
    inject(p, [s, s2]);
    const a = p.metadata.annotations!;
    const hash = s.metadata.annotations!['kruise.io/sidecarset-hash'];
    const hash2 = s2.metadata.annotations!['kruise.io/sidecarset-hash'];
    assert.equal(
      a['kruise.io/sidecarset-hash'],
      `{"agent":{"updateTimestamp":"2026-11-23T10:00:00Z","hash":"${hash2}","sidecarSetName":"agent","sidecarList":["x"]},` +
        `"log":{"updateTimestamp":"2026-11-23T10:00:00Z","hash":"${hash}","sidecarSetName":"log","sidecarList":["a","b"],"controllerRevision":"log-7c5b9d"}}`,
    );
    const without = s.metadata.annotations!['kruise.io/sidecarset-hash-without-image'];
    assert.match(
      a['kruise.io/sidecarset-hash-without-image']!,
      new RegExp(
        `"log":\\{"updateTimestamp":"2026-11-23T10:00:00Z","hash":"${without}","sidecarSetName":"log","sidecarList":\\["a","b"\\]\\}`,
      ),
    );
    assert.equal(a['kruise.io/sidecarset-injected-list'], 'agent,log');
    // The SidecarSet order decides the before-app order.
    assert.deepEqual(names(p), ['b', 'a', 'x', 'main']);
  });

  test('older map[string]string hash records are read and kept', () => {
    const specs = parseUpgradeSpecs('{"old":"abc"}');
    assert.deepEqual(specs.old, { updateTimestamp: null, hash: 'abc', sidecarSetName: 'old', sidecarList: null });
    assert.equal(formatUpgradeSpecs(specs), '{"old":{"updateTimestamp":null,"hash":"abc","sidecarSetName":"old","sidecarList":null}}');
  });

  test('init containers sorted by name after the pod’s, native sidecars listed; volumes and pull secrets merged', () => {
    const p = pod({}, [{ name: 'main', image: 'nginx:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }]);
    p.spec!.initContainers = [{ name: 'app-init', image: 'i:1' }];
    p.spec!.volumes = [
      { name: 'data', emptyDir: {} },
      { name: 'shared', emptyDir: {} },
    ];
    p.spec!.imagePullSecrets = [{ name: 'mine' }];
    const s = sidecarSet('s', {
      initContainers: [
        { name: 'z-init', image: 'z:1' },
        { name: 'a-native', image: 'n:1', restartPolicy: 'Always' },
      ],
      containers: [
        {
          name: 'c',
          image: 'c:1',
          volumeMounts: [
            { name: 'shared', mountPath: '/s' },
            { name: 'cfg', mountPath: '/cfg' },
          ],
        },
      ],
      volumes: [
        { name: 'shared', hostPath: { path: '/x' } },
        { name: 'cfg', configMap: { name: 'cfg' } },
        { name: 'unused', emptyDir: {} },
      ],
      imagePullSecrets: [{ name: 'mine' }, { name: 'sidecar-registry' }],
    });
    inject(p, [s]);
    assert.deepEqual(
      p.spec!.initContainers!.map((c) => c.name),
      ['app-init', 'a-native', 'z-init'],
    );
    // The pod's volume of the same name wins; unreferenced SidecarSet volumes are not injected.
    assert.deepEqual(p.spec!.volumes, [
      { name: 'data', emptyDir: {} },
      { name: 'shared', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'cfg', defaultMode: 420 } },
    ]);
    assert.deepEqual(p.spec!.imagePullSecrets, [{ name: 'mine' }, { name: 'sidecar-registry' }]);
    assert.match(p.metadata.annotations!['kruise.io/sidecarset-hash']!, /"sidecarList":\["a-native","c"\]/);
  });

  test('a sidecar named like an existing container replaces it in place', () => {
    const p = pod({}, [
      { name: 'main', image: 'nginx:1' },
      { name: 'proxy', image: 'old:1' },
    ]);
    inject(p, [sidecarSet('s', { containers: [{ name: 'proxy', image: 'new:1' }] })]);
    assert.deepEqual(names(p), ['main', 'proxy']);
    assert.equal(p.spec!.containers[1]!.image, 'new:1');
  });

  test('EnableSortSidecarContainerByName sorts the before-app sidecars', () => {
    const p = pod();
    inject(
      p,
      [
        sidecarSet('s', {
          containers: [
            { name: 'zz', image: 'z:1' },
            { name: 'aa', image: 'a:1' },
          ],
        }),
      ],
      { sortByName: true },
    );
    assert.deepEqual(names(p), ['aa', 'zz', 'main']);
  });

  test('transferEnv (by name and from a label) and shared volume mounts with subPathExpr envs; the sidecar’s own env wins', () => {
    const p = pod({ labels: { app: 'web', main: 'main' } }, [
      {
        name: 'main',
        image: 'nginx:1',
        env: [
          { name: 'OD_NAME', value: 'od_name' },
          { name: 'POD_NAME', value: 'web-1' },
          { name: 'ZONE', value: 'z1' },
        ],
        volumeMounts: [{ name: 'logs', mountPath: '/logs', subPathExpr: 'x/$(POD_NAME)' }],
      },
    ]);
    inject(p, [
      sidecarSet('s', {
        containers: [
          {
            name: 'agent',
            image: 'agent:1',
            env: [{ name: 'OD_NAME', value: 'sidecar_name' }],
            shareVolumePolicy: { type: 'enabled' },
            transferEnv: [
              { sourceContainerName: 'main', envName: 'OD_NAME' },
              { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['main']" } }, envNames: ['ZONE', 'MISSING'] },
            ],
          },
        ],
      }),
    ]);
    const agent = p.spec!.containers[0]!;
    assert.deepEqual(agent.env, [
      { name: 'OD_NAME', value: 'sidecar_name' },
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'ZONE', value: 'z1' },
      { name: 'POD_NAME', value: 'web-1' },
    ]);
    assert.deepEqual(agent.volumeMounts, [{ name: 'logs', mountPath: '/logs', subPathExpr: 'x/$(POD_NAME)' }]);
  });

  test('hot upgrade: <name>-1 works with the image, <name>-2 idles with the empty image, versions in annotations and envs', () => {
    const p = pod();
    inject(p, [
      sidecarSet('mesh', {
        containers: [{ name: 'envoy', image: 'envoy:1', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } }],
      }),
    ]);
    assert.deepEqual(names(p), ['envoy-1', 'envoy-2', 'main']);
    assert.equal(p.spec!.containers[0]!.image, 'envoy:1');
    assert.equal(p.spec!.containers[1]!.image, 'empty:1');
    assert.deepEqual(p.spec!.containers[1]!.env!.slice(-2), [
      {
        name: 'SIDECARSET_VERSION',
        valueFrom: { fieldRef: { fieldPath: "metadata.annotations['version.sidecarset.kruise.io/envoy-2']" } },
      },
      {
        name: 'SIDECARSET_VERSION_ALT',
        valueFrom: { fieldRef: { fieldPath: "metadata.annotations['versionalt.sidecarset.kruise.io/envoy-2']" } },
      },
    ]);
    const a = p.metadata.annotations!;
    assert.equal(a['version.sidecarset.kruise.io/envoy-1'], '1');
    assert.equal(a['versionalt.sidecarset.kruise.io/envoy-1'], '0');
    assert.equal(a['version.sidecarset.kruise.io/envoy-2'], '0');
    assert.equal(a['versionalt.sidecarset.kruise.io/envoy-2'], '1');
    assert.equal(a['kruise.io/sidecarset-working-hotupgrade-container'], '{"envoy":"envoy-1"}');
    assert.match(a['kruise.io/sidecarset-hash']!, /"sidecarList":\["envoy"\]/);
  });

  test('patchPodMetadata: Retain keeps, Overwrite sets, MergePatchJson merges', () => {
    const p = pod({ annotations: { keep: 'mine', over: 'mine', merged: '{"a":1,"b":{"c":2}}' } });
    inject(p, [
      sidecarSet('s', {
        containers: [{ name: 'c', image: 'c:1' }],
        patchPodMetadata: [
          { annotations: { keep: 'theirs', added: 'x' }, patchPolicy: 'Retain' },
          { annotations: { over: 'theirs' }, patchPolicy: 'Overwrite' },
          { annotations: { merged: '{"b":{"d":3},"a":null}', fresh: '{"z":1}' }, patchPolicy: 'MergePatchJson' },
        ],
      }),
    ]);
    const a = p.metadata.annotations!;
    assert.equal(a.keep, 'mine');
    assert.equal(a.added, 'x');
    assert.equal(a.over, 'theirs');
    assert.equal(a.merged, '{"b":{"c":2,"d":3}}');
    assert.equal(a.fresh, '{"z":1}');
  });

  test('injectionStrategy.revision injects the recorded revision (Always), or by partition probability (Partial)', () => {
    const old = sidecarSet('s', { containers: [{ name: 'c', image: 'c:1' }] });
    const revisionName = sidecarSetRevisionName(old, undefined);
    const revision: any = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: revisionName,
        namespace: 'kruise-system',
        labels: { 'kruise.io/sidecarset-name': 's', 'apps.kruise.io/sidecarset-custom-version': 'v1' },
        annotations: { ...old.metadata.annotations },
      },
      data: sidecarSetRevisionData(old),
      revision: 1,
    };
    const latest = sidecarSet('s', { containers: [{ name: 'c', image: 'c:2' }], injectionStrategy: { revision: { revisionName } } });
    const p = pod();
    inject(p, [latest], { revisionsOf: () => [revision] });
    assert.equal(p.spec!.containers[0]!.image, 'c:1');
    assert.match(
      p.metadata.annotations!['kruise.io/sidecarset-hash']!,
      new RegExp(`"hash":"${old.metadata.annotations!['kruise.io/sidecarset-hash']}".*"controllerRevision":"${revisionName}"`),
    );

    const byVersion = sidecarSet('s', {
      containers: [{ name: 'c', image: 'c:2' }],
      injectionStrategy: { revision: { customVersion: 'v1' } },
    });
    const p2 = pod();
    inject(p2, [byVersion], { revisionsOf: () => [revision] });
    assert.equal(p2.spec!.containers[0]!.image, 'c:1');

    const partial = sidecarSet('s', {
      containers: [{ name: 'c', image: 'c:2' }],
      injectionStrategy: { revision: { revisionName, policy: 'Partial' } },
      updateStrategy: { partition: '30%' },
    });
    const low = pod();
    inject(low, [partial], { revisionsOf: () => [revision], random: () => 0.2 });
    assert.equal(low.spec!.containers[0]!.image, 'c:1');
    const high = pod();
    inject(high, [partial], { revisionsOf: () => [revision], random: () => 0.9 });
    assert.equal(high.spec!.containers[0]!.image, 'c:2');

    assert.throws(() => inject(pod(), [latest], { revisionsOf: () => [] }), /not found/);
  });
});

describe('container launch priority', () => {
  const two = () =>
    pod({}, [
      { name: 'a', image: 'a' },
      { name: 'b', image: 'b' },
    ]);
  const barrier = (p: Pod) =>
    p.spec!.containers.map((c) => c.env?.find((e) => e.name === 'KRUISE_CONTAINER_BARRIER')?.valueFrom?.configMapKeyRef);

  test('Ordered: 0, -1, … in container order', () => {
    const p = two();
    p.metadata.annotations = { 'apps.kruise.io/container-launch-priority': 'Ordered' };
    assert.equal(initializeContainerLaunchPriority(p, Math.random), true);
    assert.deepEqual(barrier(p), [
      { name: 'web-1-barrier', key: 'p_0' },
      { name: 'web-1-barrier', key: 'p_-1' },
    ]);
  });

  test('from KRUISE_CONTAINER_PRIORITY; equal or absent priorities and single containers change nothing; invalid ones are refused', () => {
    const p = two();
    p.spec!.containers[1]!.env = [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }];
    assert.equal(initializeContainerLaunchPriority(p, Math.random), true);
    assert.deepEqual(barrier(p), [
      { name: 'web-1-barrier', key: 'p_0' },
      { name: 'web-1-barrier', key: 'p_10' },
    ]);

    assert.equal(initializeContainerLaunchPriority(two(), Math.random), false);
    const equal = two();
    for (const c of equal.spec!.containers) c.env = [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '3' }];
    assert.equal(initializeContainerLaunchPriority(equal, Math.random), false);
    assert.equal(initializeContainerLaunchPriority(pod(), Math.random), false);

    const bad = two();
    bad.spec!.containers[0]!.env = [{ name: 'KRUISE_CONTAINER_PRIORITY', value: 'high' }];
    assert.throws(() => initializeContainerLaunchPriority(bad, Math.random), /KRUISE_CONTAINER_PRIORITY/);
  });

  test('a pod with only generateName is named here, for its barrier ConfigMap', () => {
    const p = two();
    delete p.metadata.name;
    p.metadata.generateName = 'web-';
    p.metadata.annotations = { 'apps.kruise.io/container-launch-priority': 'Ordered' };
    initializeContainerLaunchPriority(p, () => 0);
    assert.equal(p.metadata.name, 'web-bbbbb');
    assert.equal(barrier(p)[0]!.name, 'web-bbbbb-barrier');
  });
});

describe('pod mutating pipeline', () => {
  const owned = (p: Pod) => {
    p.metadata.ownerReferences = [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'u', controller: true }];
    return p;
  };

  test('handlers run in upstream order: readiness gate, SidecarSet injection, launch priority, enhanced liveness', async () => {
    const p = owned(
      pod({ annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered', 'apps.kruise.io/using-enhanced-liveness': 'true' } }),
    );
    p.spec!.containers[0]!.livenessProbe = { tcpSocket: { port: 80 } } as any;
    const cache = fakeCache({ SidecarSet: [sidecarSet('s', { containers: [{ name: 'c', image: 'c:1' }] })] });
    const changed = await mutatePod(p, { features: { ...features, EnhancedLivenessProbe: true }, cache, now: NOW, random: Math.random });
    assert.deepEqual(changed, [
      'KruisePodReady readiness gate',
      'SidecarSet injection',
      'container launch priority',
      'enhanced liveness probe',
    ]);
    assert.deepEqual(p.spec!.readinessGates, [{ conditionType: 'KruisePodReady' }]);
    // Launch priority numbers the injected sidecar first.
    assert.equal(p.spec!.containers[0]!.env!.at(-1)!.valueFrom!.configMapKeyRef!.key, 'p_0');
    assert.equal(p.spec!.containers[1]!.env!.at(-1)!.valueFrom!.configMapKeyRef!.key, 'p_-1');
    assert.equal(p.spec!.containers[1]!.livenessProbe, undefined);
    assert.equal(
      p.metadata.annotations!['apps.kruise.io/container-probe-context'],
      '[{"name":"main","livenessProbe":{"tcpSocket":{"port":80}}}]',
    );
  });

  test('readiness gate: only pods of Kruise workloads, or all with KruisePodReadinessGate', async () => {
    const bare = pod();
    assert.deepEqual(await mutatePod(bare, { features, now: NOW, random: Math.random }), []);
    assert.deepEqual(await mutatePod(bare, { features: { ...features, KruisePodReadinessGate: true }, now: NOW, random: Math.random }), [
      'KruisePodReady readiness gate',
    ]);
    const deployment = pod({ ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r', uid: 'u', controller: true }] });
    assert.deepEqual(await mutatePod(deployment, { features, now: NOW, random: Math.random }), []);
  });

  test('through admit: a pod nothing applies to gets no patch; a matched one gets one JSON patch', async () => {
    const review = (p: Pod, ns = 'default') => ({
      uid: 'u1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: ns,
      operation: 'CREATE',
      userInfo: {},
      object: p,
    });
    const cache = fakeCache({ SidecarSet: [sidecarSet('s', { containers: [{ name: 'c', image: 'c:1' }] })] });
    const regs = registrations.filter((r) => r.mutate);
    const fast = await admit('mutate', regs, review(pod({ labels: { app: 'db' } })), { features, cache });
    assert.deepEqual(fast, { uid: 'u1', allowed: true });
    const res = await admit('mutate', regs, review(pod()), { features, cache });
    assert.equal(res.allowed, true);
    const ops = JSON.parse(Buffer.from(res.patch!, 'base64').toString()) as Array<{ op: string; path: string; value: any }>;
    assert.ok(
      ops.some(
        (o) =>
          (o.op === 'add' && o.path === '/spec/containers/1') ||
          (o.path === '/spec/containers/0' && o.value?.name === 'c') ||
          o.path === '/spec/containers',
      ),
    );
    assert.ok(ops.some((o) => o.path === '/metadata/annotations'));
  });

  test('a cache that cannot answer fails the request with an error, never an unmutated pod', async () => {
    const cache: AdmissionCache = {
      list: async () => {
        throw new Error('the cache of SidecarSet has not synced yet');
      },
      get: async () => undefined,
    };
    const res = await admit(
      'mutate',
      registrations.filter((r) => r.mutate),
      {
        uid: 'u2',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        namespace: 'default',
        operation: 'CREATE',
        userInfo: {},
        object: pod(),
      },
      { features, cache },
    );
    assert.equal(res.allowed, false);
  });
});

describe('pod webhook configuration', () => {
  const cfg = buildWebhookConfigurations(allRegistrations, {
    clientMode: { mode: 'url', host: '127.0.0.1', port: 9876 },
    features,
    managerNamespace: 'kruise-system',
  });
  const mpod = cfg.mutating.webhooks!.find((w) => w.name === 'mpod.kb.io')!;
  const vpod = cfg.validating.webhooks!.find((w) => w.name === 'vpod.kb.io')!;
  const evict = cfg.validating.webhooks!.find((w) => w.name === 'vpodeviction.kb.io')!;

  test('/mutate-pod: pods CREATE, Fail, 10 s, kube-system / the manager namespace / control-plane namespaces excluded', () => {
    assert.equal(mpod.clientConfig.url, 'https://127.0.0.1:9876/mutate-pod');
    assert.deepEqual(mpod.rules, [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: '*' }]);
    assert.equal(mpod.failurePolicy, 'Fail');
    assert.equal(mpod.timeoutSeconds, 10);
    // Like every webhook, the configured timeout (the chart's webhookConfiguration.timeoutSeconds).
    const configured = buildWebhookConfigurations(allRegistrations, {
      clientMode: { mode: 'url', host: '127.0.0.1', port: 9876 },
      features,
      managerNamespace: 'kruise-system',
      timeoutSeconds: 30,
    });
    assert.deepEqual(
      [...configured.mutating.webhooks!, ...configured.validating.webhooks!]
        .filter((w) => w.rules![0]!.resources![0]!.startsWith('pods'))
        .map((w) => [w.name, w.timeoutSeconds]),
      [
        ['mpod.kb.io', 30],
        ['vpod.kb.io', 30],
        ['vpodeviction.kb.io', 30],
      ],
    );
    assert.deepEqual(mpod.namespaceSelector, {
      matchExpressions: [
        { key: 'control-plane', operator: 'DoesNotExist' },
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kruise-system'] },
      ],
    });
  });

  test('/validate-pod: pods DELETE and pods/eviction CREATE (UPDATE only with PodUnavailableBudgetUpdateGate), Fail as upstream', () => {
    assert.equal(vpod.clientConfig.url, 'https://127.0.0.1:9876/validate-pod');
    assert.deepEqual(vpod.rules[0]!.operations, ['DELETE']);
    const withUpdate = buildWebhookConfigurations(allRegistrations, {
      clientMode: { mode: 'url', host: '127.0.0.1', port: 9876 },
      features: { ...features, PodUnavailableBudgetUpdateGate: true },
    }).validating.webhooks!.find((w) => w.name === 'vpod.kb.io')!;
    assert.deepEqual(withUpdate.rules[0]!.operations, ['UPDATE', 'DELETE']);
    assert.deepEqual(evict.rules[0]!.resources, ['pods/eviction']);
    assert.equal(vpod.failurePolicy, 'Fail');
    assert.equal(evict.failurePolicy, 'Fail');
    assert.deepEqual(vpod.namespaceSelector, mpod.namespaceSelector);
  });

  test('off with the PodWebhook gate', () => {
    const off = buildWebhookConfigurations(allRegistrations, {
      clientMode: { mode: 'url', host: '127.0.0.1', port: 1 },
      features: { ...features, PodWebhook: false },
    });
    assert.equal(
      off.mutating.webhooks!.some((w) => w.name === 'mpod.kb.io'),
      false,
    );
  });
});
