// What users read back from objects Kruise TS writes, on the suite's manager and simulated daemon:
// every metav1.Time at whole seconds (RFC 3339, as the API server writes its own), MicroTime with
// six fractional digits, and no conversion annotation on objects that have nothing to carry.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { Pods, CloneSets, ContainerRecreateRequests, ImagePullJobs, NodeImages } from '../../src/runtime/resources.ts';
import { CONVERSION_RESIDUAL_ANNOTATION } from '../../src/apis/conversion/index.ts';
import { createNamespace, deleteNamespace, kubectlJson, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf } from './cloneset-helpers.ts';

type Obj = KubeObject & { spec?: any; status?: any };
const META_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('times');
});
after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

/** Every string under a key ending in Time/At/Timestamp (metadata's own excluded), with its path. */
function timesIn(value: unknown, path = ''): [string, string][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    typeof v === 'string' && /(Time|At|Timestamp)$/.test(k) ? [[`${path}.${k}`, v] as [string, string]] : timesIn(v, `${path}.${k}`),
  );
}

function assertMetaTimes(what: string, value: unknown, atLeast: string[]): void {
  const times = timesIn(value);
  for (const p of atLeast)
    assert.ok(
      times.some(([path]) => path.endsWith(p)),
      `${what}: no ${p} in ${JSON.stringify(value)}`,
    );
  for (const [path, t] of times) assert.match(t, META_TIME, `${what} ${path}`);
}

describe('times written by Kruise TS', { concurrency: 3 }, () => {
  test('ImagePullJob and NodeImage status', { timeout: 90_000 }, async () => {
    const image = 'registry.example/times:1.0';
    await client.create(ImagePullJobs, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ImagePullJob',
      metadata: { name: 'pull', namespace: ns },
      spec: { image, selector: { names: ['kwok-node-0'] }, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 } },
    } as KubeObject);
    const job = await waitFor(
      'ImagePullJob completed',
      async () => {
        const j = await client.get<Obj>(ImagePullJobs, 'pull', { namespace: ns });
        return j.status?.completionTime ? j : undefined;
      },
      60_000,
    );
    assertMetaTimes('ImagePullJob', job.status, ['.startTime', '.completionTime']);
    const ni = await client.get<Obj>(NodeImages, 'kwok-node-0');
    const tag = ni.status?.imageStatuses?.['registry.example/times']?.tags?.find((t: any) => t.tag === '1.0');
    assertMetaTimes('NodeImage tag status', tag, ['.startTime', '.completionTime']);
    assertMetaTimes('NodeImage status', ni.status, ['.syncAt']);
    assertMetaTimes('NodeImage spec', ni.spec, ['.createdAt']);
  });

  test('ContainerRecreateRequest status', { timeout: 90_000 }, async () => {
    await client.create(Pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'target', namespace: ns },
      spec: { nodeSelector: { type: 'kwok' }, containers: [{ name: 'app', image: 'nginx:1.25' }] },
    } as KubeObject);
    await waitFor(
      'pod running',
      async () => {
        const p = await client.get<Obj>(Pods, 'target', { namespace: ns });
        return p.status?.phase === 'Running' && p.status?.containerStatuses?.[0]?.containerID;
      },
      60_000,
    );
    await client.create(ContainerRecreateRequests, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'crr', namespace: ns },
      spec: { podName: 'target', containers: [{ name: 'app' }], strategy: { minStartedSeconds: 0 } },
    } as KubeObject);
    const crr = await waitFor(
      'CRR completed',
      async () => {
        const c = await client.get<Obj>(ContainerRecreateRequests, 'crr', { namespace: ns });
        return c.status?.completionTime ? c : undefined;
      },
      60_000,
    );
    assert.equal(crr.status.phase, 'Completed');
    assertMetaTimes('CRR status', crr.status, ['.completionTime']);
    assertMetaTimes('recreated pod status', (await client.get<Obj>(Pods, 'target', { namespace: ns })).status, ['.startedAt']);
  });

  test(
    'CloneSet in-place update: pod annotations and conditions; no residual annotation in either version',
    { timeout: 120_000 },
    async () => {
      const manifest = cloneSetManifest('web', { podUpdatePolicy: 'InPlaceIfPossible', image: 'nginx:1.0' });
      // as a Go client sends it: empty structs as {}
      (manifest.spec as Record<string, unknown>).scaleStrategy = {};
      await client.create(CloneSets, { ...manifest, metadata: { name: 'web', namespace: ns } } as KubeObject);
      await waitFor('pod ready', async () => (await podsOf(client, ns, 'web')).filter(isReady).length === 1, 60_000);
      await client.patch(
        CloneSets,
        'web',
        { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.1' }] } } } },
        { namespace: ns, patchType: PatchType.Merge },
      );
      const pod = await waitFor(
        'pod updated in place and ready',
        async () => {
          const [p] = await podsOf(client, ns, 'web');
          return p?.spec?.containers?.[0]?.image === 'nginx:1.1' &&
            isReady(p) &&
            p.metadata.annotations?.['apps.kruise.io/inplace-update-state']
            ? p
            : undefined;
        },
        60_000,
      );
      const state = JSON.parse(pod.metadata.annotations!['apps.kruise.io/inplace-update-state']!);
      assertMetaTimes('in-place update state', state, ['.updateTimestamp']);
      const inPlaceReady = pod.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady');
      assertMetaTimes('InPlaceUpdateReady condition', inPlaceReady, ['.lastTransitionTime']);
      const cs = await client.get<Obj>(CloneSets, 'web', { namespace: ns });
      assertMetaTimes('CloneSet status', cs.status, []);

      const beta = await kubectlJson(['-n', ns, 'get', 'clonesets.v1beta1.apps.kruise.io', 'web']);
      const alpha = await kubectlJson(['-n', ns, 'get', 'clonesets.v1alpha1.apps.kruise.io', 'web']);
      assert.equal(alpha.apiVersion, 'apps.kruise.io/v1alpha1');
      assert.equal(alpha.spec.updateStrategy.type, 'InPlaceIfPossible');
      for (const read of [beta, alpha]) {
        assert.equal(
          read.metadata.annotations?.[CONVERSION_RESIDUAL_ANNOTATION],
          undefined,
          `${read.apiVersion}: ${JSON.stringify(read.metadata.annotations)}`,
        );
      }
    },
  );

  test('leader election Lease: MicroTime', async () => {
    const leases = await kubectlJson<{ items: Obj[] }>(['-n', 'kruise-system', 'get', 'leases']);
    const ours = leases.items.filter((l) => l.spec?.renewTime);
    assert.ok(ours.length > 0, 'a Lease in kruise-system');
    for (const l of ours) {
      assert.match(l.spec.renewTime, MICRO_TIME);
      assert.match(l.spec.acquireTime, MICRO_TIME);
    }
  });
});
