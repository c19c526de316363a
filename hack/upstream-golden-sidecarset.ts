// Regenerates test/fixtures/upstream-v1.8.2/sidecarset-golden.json: a few SidecarSets and pods
// created through upstream OpenKruise v1.8.2 (its webhooks and controller, on a local cluster of its
// own), and what upstream stored for them — the SidecarSets' hash annotations and defaulted specs,
// the injected pods (container order, env, volumes, annotations) and, for the hot-upgrade
// SidecarSet, the pod after an image change has gone all the way through (new container working,
// the old one reset to the empty image). test/unit/sidecarset-golden.test.ts checks Kruise TS
// against it. Test tooling only.
//
//   KRUISE_TS_TEST_CLUSTER=<name> node_modules/.bin/node --import tsx hack/upstream-golden-sidecarset.ts
//
// (The peer runs on the cluster <name>-upstream, created when missing and removed afterwards
// unless KRUISE_TS_KEEP_CLUSTER=1.)
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { format } from 'prettier';
import { kubectl } from '../src/cluster/local-cluster.ts';
import { startUpstreamPeer } from '../test/harness/upstream-peer.ts';

const NAMESPACE = 'golden-ss';
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/upstream-v1.8.2/sidecarset-golden.json');

type Obj = {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  spec?: { containers: Array<{ name: string; image: string }> };
  status?: { latestRevision?: string; conditions?: Array<{ type: string; status: string }> };
};

const nsSelector = { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE } };

/** SidecarSets as a user writes them (v1alpha1, the version v1.8.2 serves). */
const SIDECARSETS = [
  {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'basic' },
    spec: {
      selector: { matchLabels: { golden: 'basic' } },
      namespaceSelector: nsSelector,
      containers: [
        {
          name: 'log-agent',
          image: 'busybox:1.36',
          command: ['sleep', '999d'],
          env: [{ name: 'OD_NAME', value: 'sidecar_name' }],
          transferEnv: [
            { sourceContainerName: 'main', envName: 'OD_NAME' },
            { sourceContainerName: 'main', envNames: ['ZONE'] },
          ],
          volumeMounts: [{ name: 'log-volume', mountPath: '/var/log' }],
          resources: { limits: { cpu: '100m', memory: '64Mi' } },
        },
        { name: 'metrics', image: 'busybox:1.36', podInjectPolicy: 'AfterAppContainer', shareVolumePolicy: { type: 'enabled' } },
      ],
      volumes: [
        { name: 'log-volume', emptyDir: {} },
        { name: 'unused', emptyDir: {} },
      ],
      imagePullSecrets: [{ name: 'registry-a' }, { name: 'shared' }],
      patchPodMetadata: [{ annotations: { 'golden.kruise.io/patched': 'yes' }, patchPolicy: 'Overwrite' }],
    },
  },
  {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'hot' },
    spec: {
      selector: { matchLabels: { golden: 'hot' } },
      namespaceSelector: nsSelector,
      containers: [
        {
          name: 'mesh',
          image: 'mesh:1.0',
          env: [{ name: 'MESH', value: 'on' }],
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'mesh:empty' },
        },
      ],
    },
  },
  {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'native' },
    spec: {
      selector: { matchLabels: { golden: 'native' } },
      namespaceSelector: nsSelector,
      updateStrategy: { type: 'NotUpdate' },
      initContainers: [
        { name: 'prepare', image: 'busybox:1.36', command: ['true'] },
        { name: 'proxy', image: 'proxy:1.0', restartPolicy: 'Always', ports: [{ containerPort: 15001 }] },
      ],
      containers: [{ name: 'agent', image: 'busybox:1.36', podInjectPolicy: 'AfterAppContainer' }],
    },
  },
];

const podOf = (name: string, golden: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { golden } },
  spec: {
    initContainers: [{ name: 'app-init', image: 'busybox:1.36', command: ['true'] }],
    containers: [
      {
        name: 'main',
        image: 'nginx:1.0',
        env: [
          { name: 'OD_NAME', value: 'od_name' },
          { name: 'ZONE', value: 'z1' },
        ],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
    imagePullSecrets: [{ name: 'shared' }],
  },
});
const PODS = [podOf('basic-pod', 'basic'), podOf('hot-pod', 'hot'), podOf('native-pod', 'native')];

// patchPodMetadata without a whitelist ConfigMap.
const FEATURE_GATES = 'SidecarSetPatchPodMetadataDefaultsAllowed=true';
const peer = await startUpstreamPeer({ featureGates: FEATURE_GATES });
const run = (args: string[], input?: string) => kubectl(peer.cluster, args, input);
const getJson = async <T = Obj>(args: string[]): Promise<T> => JSON.parse(await run([...args, '-o', 'json'])) as T;
const waitUntil = async <T>(what: string, probe: () => Promise<T | false | undefined>, ms = 120_000): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => false as const);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(1000);
  }
};
try {
  await run(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true']);
  for (const s of SIDECARSETS) await run(['delete', 'sidecarsets.apps.kruise.io', s.metadata.name, '--ignore-not-found']);
  await run(['create', 'namespace', NAMESPACE]);
  for (const s of SIDECARSETS) await run(['create', '-f', '-'], JSON.stringify(s));
  // The pod webhook reads SidecarSets from its cache, the controller records latestRevision.
  const stored = await waitUntil('SidecarSets synced', async () => {
    const all = await Promise.all(SIDECARSETS.map((s) => getJson(['get', 'sidecarsets.apps.kruise.io', s.metadata.name])));
    return all.every((s) => s.status?.latestRevision) && all;
  });
  await sleep(2000);
  const injected: Obj[] = [];
  for (const p of PODS)
    injected.push(JSON.parse(await run(['-n', NAMESPACE, 'create', '-o', 'json', '-f', '-'], JSON.stringify(p))) as Obj);

  // Hot upgrade through upstream's controller: mesh:1.0 → mesh:2.0 until the old container is reset.
  await waitUntil('hot pod running', async () => {
    const p = await getJson(['-n', NAMESPACE, 'get', 'pod', 'hot-pod']);
    return p.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
  });
  await run([
    'patch',
    'sidecarsets.apps.kruise.io',
    'hot',
    '--type=json',
    '-p',
    '[{"op":"replace","path":"/spec/containers/0/image","value":"mesh:2.0"}]',
  ]);
  const hotUpgraded = await waitUntil('hot upgrade done', async () => {
    const p = await getJson(['-n', NAMESPACE, 'get', 'pod', 'hot-pod']);
    const images = Object.fromEntries((p.spec?.containers ?? []).map((c) => [c.name, c.image]));
    return images['mesh-1'] === 'mesh:empty' && images['mesh-2'] === 'mesh:2.0' && p;
  });
  const hotAfter = await getJson(['get', 'sidecarsets.apps.kruise.io', 'hot']);

  const golden = {
    peer: peer.version,
    regenerate: 'KRUISE_TS_TEST_CLUSTER=<name> node_modules/.bin/node --import tsx hack/upstream-golden-sidecarset.ts',
    featureGates: FEATURE_GATES,
    sidecarSets: SIDECARSETS.map((input, i) => ({
      input,
      stored: { metadata: { annotations: stored[i]!.metadata.annotations }, spec: stored[i]!.spec, status: stored[i]!.status },
    })),
    pods: PODS.map((input, i) => ({
      input,
      injected: { metadata: { annotations: injected[i]!.metadata.annotations }, spec: injected[i]!.spec },
    })),
    hotUpgrade: {
      sidecarSet: {
        metadata: { annotations: hotAfter.metadata.annotations, resourceVersion: hotAfter.metadata.resourceVersion },
        status: hotAfter.status,
      },
      pod: { metadata: { annotations: hotUpgraded.metadata.annotations }, spec: hotUpgraded.spec, status: hotUpgraded.status },
    },
  };
  writeFileSync(out, await format(JSON.stringify(golden), { parser: 'json', filepath: out }));
  process.stdout.write(`wrote ${out}\n`);
} finally {
  await peer.stop();
}
