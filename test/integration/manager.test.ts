// The Kruise API machinery on the real control plane, through the manager started by the suite's
// global setup: every CRD installed, every example manifest applying unchanged, `kubectl get
// <shortName>` printing upstream's columns, invalid objects rejected with the field named, and
// v1alpha1 objects served as v1beta1 through the conversion webhook and back.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { kinds } from '../../src/apis/registry.ts';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { apply, kubectl, kubectlJson, createNamespace, deleteNamespace, waitFor } from '../harness/cluster.ts';
import { SUITE_WORKLOADSPREAD_WHITELIST, WORKLOADSPREAD_WHITELIST_KEY } from '../harness/custom-workloads.ts';

type Obj = any;
const examplesDir = path.join(repoRoot, 'examples');
const exampleFiles = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const exampleDocs = (file: string): Obj[] =>
  YAML.parseAllDocuments(readFileSync(path.join(examplesDir, file), 'utf8'))
    .map((d) => d.toJSON())
    .filter(Boolean);

// Namespaces the upstream examples name themselves.
const fixedNamespaces = [
  ...new Set(
    exampleFiles
      .flatMap(exampleDocs)
      .map((o) => o.metadata?.namespace)
      .filter(Boolean),
  ),
] as string[];

describe('Kruise API machinery through the manager', { concurrency: false }, () => {
  let ns: string;
  const created: string[] = [];

  before(async () => {
    ns = await createNamespace('api');
    for (const n of fixedNamespaces) {
      if (!(await kubectl(['get', 'namespaces', '-o', 'name'])).includes(`namespace/${n}\n`)) {
        await kubectl(['create', 'namespace', n]);
        created.push(n);
      }
    }
    // WorkloadSpread's TFJob example needs the custom-workload whitelist, as upstream documents.
    await apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kruise-configuration', namespace: 'kruise-system' },
      data: { [WORKLOADSPREAD_WHITELIST_KEY]: SUITE_WORKLOADSPREAD_WHITELIST },
    });
    // The ContainerRecreateRequest example targets this pod.
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pod-name', namespace: 'pod-namespace' },
      spec: {
        containers: [
          { name: 'app', image: 'nginx' },
          { name: 'sidecar', image: 'busybox' },
        ],
      },
    });
    await waitFor(
      'pod-namespace/pod-name Running',
      async () => (await kubectlJson(['-n', 'pod-namespace', 'get', 'pod', 'pod-name'])).status.phase === 'Running',
    );
  });

  after(async () => {
    for (const n of [...created, ns]) await deleteNamespace(n);
  });

  test('every CRD is installed and Established', async () => {
    const crds = await kubectlJson<{ items: Obj[] }>(['get', 'crd']);
    const ours = crds.items.filter((c) => c.spec.group === 'apps.kruise.io' || c.spec.group === 'policy.kruise.io');
    assert.equal(ours.length, kinds.length);
    for (const crd of ours) {
      assert.ok(
        crd.status.conditions.some((c: Obj) => c.type === 'Established' && c.status === 'True'),
        crd.metadata.name,
      );
      if (crd.spec.versions.length > 1) {
        assert.equal(crd.spec.conversion.strategy, 'Webhook', `${crd.metadata.name} converts through the manager`);
        assert.match(crd.spec.conversion.webhook.clientConfig.url, /^https:\/\/127\.0\.0\.1:\d+\/convert$/);
        assert.ok(crd.spec.conversion.webhook.clientConfig.caBundle);
      }
    }
  });

  // Each document is applied on its own, checked, and deleted again: the v1alpha1 and v1beta1
  // variants of one upstream example (same selector, same sidecar names) are alternatives, and
  // upstream refuses to hold both at once just as we do.
  for (const file of exampleFiles) {
    test(`examples/${file} applies unchanged`, async () => {
      for (const doc of exampleDocs(file)) {
        const [group, version] = doc.apiVersion.split('/');
        const def = kinds.find((k) => k.group === group && k.kind === doc.kind)!;
        const namespace = def.scope === 'Namespaced' ? (doc.metadata.namespace ?? ns) : undefined;
        const resource = `${def.plural}.${version}.${group}`;
        const where = namespace ? ['-n', namespace] : [];
        const nsArgs = namespace && !doc.metadata.namespace ? ['-n', namespace] : [];
        if (doc.spec?.scaleStrategy?.podsToDelete?.length) {
          // The scale-down example names pods of an existing CloneSet, and the webhook checks that
          // each exists and belongs to it (as upstream does): create that state first.
          const { podsToDelete, ...scaleStrategy } = doc.spec.scaleStrategy;
          await kubectl([...nsArgs, 'apply', '-f', '-'], JSON.stringify({ ...doc, spec: { ...doc.spec, scaleStrategy } }));
          const owner = await kubectlJson(['get', resource, doc.metadata.name, ...where]);
          for (const name of podsToDelete as string[]) {
            await apply(
              {
                apiVersion: 'v1',
                kind: 'Pod',
                metadata: {
                  name,
                  labels: doc.spec.template.metadata.labels,
                  ownerReferences: [
                    {
                      apiVersion: doc.apiVersion,
                      kind: doc.kind,
                      name: doc.metadata.name,
                      uid: owner.metadata.uid,
                      controller: true,
                      blockOwnerDeletion: true,
                    },
                  ],
                },
                spec: { containers: [{ name: 'c', image: 'nginx' }] },
              },
              namespace,
            );
          }
        }
        // The object as the API server stored it, from the apply itself: a controller may remove it
        // right after (the sample NodeImage names a node this cluster does not have).
        const live = JSON.parse(await kubectl([...nsArgs, 'apply', '-o', 'json', '-f', '-'], JSON.stringify(doc)));
        assert.equal(live.metadata.name, doc.metadata.name);
        assert.equal(live.apiVersion, doc.apiVersion, 'served back in the version it was written in');
        await kubectl(['delete', resource, doc.metadata.name, ...where, '--wait=true', '--ignore-not-found']);
      }
    });
  }

  test('kubectl get <shortName> prints the upstream columns', async () => {
    // kubectl prints no header for an empty list, so each kind gets one example object meanwhile.
    const header = async (resource: string) => (await kubectl(['get', resource, '-A'])).split('\n')[0]!.trim().split(/\s+/);
    const withExampleOf = async (kind: string, fn: () => Promise<void>) => {
      const doc = exampleFiles.flatMap(exampleDocs).find((d) => d.kind === kind)!;
      const nsArgs = doc.metadata.namespace ? [] : ['-n', ns];
      await kubectl([...nsArgs, 'apply', '-f', '-'], JSON.stringify(doc));
      try {
        await fn();
      } finally {
        await kubectl([...nsArgs, 'delete', '-f', '-'], JSON.stringify(doc));
      }
    };
    // Upstream's CloneSet and Advanced StatefulSet columns, spelled out.
    await withExampleOf('CloneSet', async () => {
      assert.deepEqual(await header('clone'), [
        'NAMESPACE',
        'NAME',
        'DESIRED',
        'UPDATED',
        'UPDATED_READY',
        'UPDATED_AVAILABLE',
        'READY',
        'TOTAL',
        'AGE',
      ]);
    });
    await withExampleOf('StatefulSet', async () => {
      assert.deepEqual(await header('asts'), ['NAMESPACE', 'NAME', 'DESIRED', 'CURRENT', 'UPDATED', 'READY', 'AGE']);
    });
    for (const def of kinds) {
      if (!def.shortNames.length) continue;
      const storage = def.versions.find((v) => v.name === def.hubVersion)!;
      const want = [
        ...(def.scope === 'Namespaced' ? ['NAMESPACE'] : []),
        'NAME',
        ...storage.printerColumns.filter((c) => !c.priority).map((c) => c.name.toUpperCase()),
      ];
      await withExampleOf(def.kind, async () => {
        // "sts" resolves to the built-in apps/v1 StatefulSet in kubectl, with upstream Kruise too.
        for (const short of def.shortNames.filter((n) => n !== 'sts')) assert.deepEqual(await header(short), want, `kubectl get ${short}`);
      });
    }
  });

  // One invalid object per kind; each must be refused with a message that names the field.
  const invalid: Array<[string, Obj]> = [
    [
      'CloneSet',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'CloneSet',
        metadata: { name: 'bad' },
        spec: {
          replicas: -1,
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
    ],
    [
      'StatefulSet',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'StatefulSet',
        metadata: { name: 'bad' },
        spec: {
          replicas: -1,
          serviceName: 's',
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
    ],
    [
      'DaemonSet',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'DaemonSet',
        metadata: { name: 'bad' },
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
    ],
    [
      'SidecarSet',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { name: `bad-${Date.now()}` },
        spec: { selector: { matchLabels: { a: 'b' } }, containers: [] },
      },
    ],
    [
      'BroadcastJob',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'BroadcastJob',
        metadata: { name: 'bad' },
        spec: { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'busybox' }] } } },
      },
    ],
    [
      'AdvancedCronJob',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'AdvancedCronJob',
        metadata: { name: 'bad' },
        spec: {
          schedule: 'not a schedule',
          template: {
            broadcastJobTemplate: {
              spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
            },
          },
        },
      },
    ],
    [
      'UnitedDeployment',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'UnitedDeployment',
        metadata: { name: 'bad' },
        spec: {
          replicas: -1,
          selector: { matchLabels: { a: 'b' } },
          template: {
            cloneSetTemplate: {
              metadata: { labels: { a: 'b' } },
              spec: {
                selector: { matchLabels: { a: 'b' } },
                template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
              },
            },
          },
          topology: { subsets: [{ name: 's1' }] },
        },
      },
    ],
    [
      'WorkloadSpread',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'WorkloadSpread',
        metadata: { name: 'bad' },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' }, subsets: [] },
      },
    ],
    // The mutating webhook (which reads the pod) runs before schema validation: target a real pod.
    [
      'ContainerRecreateRequest',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ContainerRecreateRequest',
        metadata: { name: 'bad', namespace: 'pod-namespace' },
        spec: { podName: 'pod-name', containers: 'app' },
      },
    ],
    [
      'ImagePullJob',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ImagePullJob',
        metadata: { name: 'bad' },
        spec: { image: 12, completionPolicy: { type: 'Always' } },
      },
    ],
    [
      'ImageListPullJob',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ImageListPullJob',
        metadata: { name: 'bad' },
        spec: { images: 'nginx', completionPolicy: { type: 'Always' } },
      },
    ],
    [
      'NodeImage',
      { apiVersion: 'apps.kruise.io/v1beta1', kind: 'NodeImage', metadata: { name: `bad-${Date.now()}` }, spec: { images: 'nginx' } },
    ],
    [
      'ResourceDistribution',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ResourceDistribution',
        metadata: { name: `bad-${Date.now()}` },
        spec: { resource: 'x', targets: {} },
      },
    ],
    [
      'PersistentPodState',
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'PersistentPodState',
        metadata: { name: 'bad' },
        spec: { targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'x' } },
      },
    ],
    [
      'PodProbeMarker',
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'PodProbeMarker',
        metadata: { name: 'bad' },
        spec: { selector: { matchLabels: { a: 'b' } }, probes: [] },
      },
    ],
    [
      'NodePodProbe',
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'NodePodProbe', metadata: { name: `bad-${Date.now()}` }, spec: { podProbes: 'x' } },
    ],
    [
      'EphemeralJob',
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'EphemeralJob',
        metadata: { name: 'bad' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { ephemeralContainers: [] }, replicas: -1 },
      },
    ],
    [
      'PodUnavailableBudget',
      {
        apiVersion: 'policy.kruise.io/v1beta1',
        kind: 'PodUnavailableBudget',
        metadata: { name: 'bad' },
        spec: { selector: { matchLabels: { a: 'b' } }, maxUnavailable: 1, minAvailable: 1 },
      },
    ],
  ];

  test('every kind is covered by the invalid-object table', () => {
    assert.deepEqual(invalid.map(([k]) => k).sort(), kinds.map((k) => k.kind).sort());
  });

  for (const [kind, obj] of invalid) {
    test(`an invalid ${kind} is rejected with a message naming the field`, async () => {
      await assert.rejects(
        kubectl(['create', ...(obj.metadata.namespace ? [] : ['-n', ns]), '-f', '-'], JSON.stringify(obj)),
        (err: Error & { stderr?: string }) => {
          const message = String(err.stderr ?? err.message);
          assert.match(message, /\bspec(\.[A-Za-z[\]0-9]+)*\b/, `no field named in: ${message}`);
          process.stderr.write(`# ${kind}: ${message.trim().split('\n').pop()}\n`);
          return true;
        },
      );
    });
  }

  test('a v1alpha1 CloneSet reads back as v1beta1 (through the conversion webhook) and round-trips', async () => {
    await apply(
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: {
          name: 'alpha',
          labels: { 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete': 'true' },
          annotations: { 'apps.kruise.io/image-predownload-parallelism': '5' },
        },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'alpha' } },
          template: { metadata: { labels: { app: 'alpha' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
          scaleStrategy: { disablePVCReuse: true },
          updateStrategy: { type: 'InPlaceIfPossible', partition: 1 },
        },
      },
      ns,
    );
    const alpha1 = await kubectlJson(['-n', ns, 'get', 'clonesets.v1alpha1.apps.kruise.io', 'alpha']);
    const beta = await kubectlJson(['-n', ns, 'get', 'clonesets.v1beta1.apps.kruise.io', 'alpha']);
    assert.equal(beta.apiVersion, 'apps.kruise.io/v1beta1');
    assert.equal(beta.spec.scaleStrategy.excludePreparingDelete, true, 'label → scaleStrategy.excludePreparingDelete');
    assert.equal(beta.spec.scaleStrategy.enablePVCReuse ?? false, false, 'disablePVCReuse: true → enablePVCReuse false');
    // v1beta1 nests the rolling-update knobs (spec §22): InPlaceIfPossible becomes podUpdatePolicy.
    assert.equal(beta.spec.updateStrategy.type, 'RollingUpdate');
    assert.equal(beta.spec.updateStrategy.rollingUpdate.podUpdatePolicy, 'InPlaceIfPossible');
    assert.equal(beta.spec.updateStrategy.rollingUpdate.partition, 1);
    assert.equal(
      beta.spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadParallelism,
      5,
      'annotation → imagePreDownloadParallelism',
    );
    const alpha2 = await kubectlJson(['-n', ns, 'get', 'clonesets.v1alpha1.apps.kruise.io', 'alpha']);
    assert.deepEqual(alpha2.spec, alpha1.spec);
    assert.deepEqual(alpha2.metadata.labels, alpha1.metadata.labels);

    // A write through v1beta1 is seen through v1alpha1.
    await kubectl([
      '-n',
      ns,
      'patch',
      'clonesets.v1beta1.apps.kruise.io',
      'alpha',
      '--type=merge',
      '-p',
      '{"spec":{"scaleStrategy":{"excludePreparingDelete":false}}}',
    ]);
    const alpha3 = await kubectlJson(['-n', ns, 'get', 'clonesets.v1alpha1.apps.kruise.io', 'alpha']);
    assert.notEqual(alpha3.metadata.labels?.['apps.kruise.io/cloneset-scaling-exclude-preparing-delete'], 'true');
    assert.equal(alpha3.spec.scaleStrategy.disablePVCReuse, true);
  });
});
