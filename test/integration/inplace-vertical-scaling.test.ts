// In-place vertical scaling (gate InPlaceWorkloadVerticalScaling) on a cluster and manager of its
// own: a template change of container cpu/memory resizes the pods of a CloneSet, an Advanced
// StatefulSet and an Advanced DaemonSet in place through pods/resize (same pod UIDs; the KWOK stage
// `pod-resize` plays the kubelet and reports the new resources), a RestartContainer resizePolicy
// restarts the container in the same pod, and a change that moves the pod to another QoS class
// recreates it. The suite's shared manager runs without the gate.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/apis/core-objects.ts';
import type { ResourceRequirements } from '../../src/apis/core.ts';
import { Pods } from '../../src/runtime/resources.ts';
import { marshalGoJSON } from '../../src/util/revision.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady } from './cloneset-helpers.ts';
import { stsManifest } from './statefulset-helpers.ts';
import { OwnCluster } from './cloneset-own-cluster.ts';

const cluster = new OwnCluster(`${TEST_CLUSTER}-vpa`, 1, ['--feature-gates', 'InPlaceWorkloadVerticalScaling=true']);
const ns = 'default';
// Names of this run: a reused cluster may still hold an earlier run's pods.
const run = Date.now().toString(36).slice(-5);
const CS = `cs-resize-${run}`;
const STS = `sts-resize-${run}`;
const DS = `ds-resize-${run}`;
const CS_QOS = `cs-qos-${run}`;

before(async () => {
  await cluster.up();
  await cluster.startManager();
});
after(() => cluster.down());

const SMALL: ResourceRequirements = { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '1', memory: '1Gi' } };
const LARGE: ResourceRequirements = { requests: { cpu: '200m', memory: '200Mi' }, limits: { cpu: '1', memory: '1Gi' } };
// requests = limits: Guaranteed, where SMALL is Burstable.
const GUARANTEED: ResourceRequirements = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };

const apply = (manifest: object) => cluster.kubectl(['-n', ns, 'apply', '-f', '-'], JSON.stringify(manifest));
const setResources = (kind: string, name: string, resources: ResourceRequirements) =>
  cluster.kubectl([
    '-n',
    ns,
    'patch',
    kind,
    name,
    '--type=json',
    '-p',
    JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/resources', value: resources }]),
  ]);

/** The main container of a workload's template, with resources (and a resize policy). */
function withResources<T extends { spec: { template: { spec: { containers: object[] } } } }>(m: T, resizePolicy?: object[]): T {
  const c = m.spec.template.spec.containers[0] as Record<string, unknown>;
  c.resources = SMALL;
  if (resizePolicy) c.resizePolicy = resizePolicy;
  return m;
}

async function podsOf(app: string): Promise<Pod[]> {
  const list = await cluster.client.list<Pod>(Pods, { namespace: ns, labelSelector: `app=${app}` });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** Waits until `count` pods of `app` run with `resources` in spec and status, all Ready and out of any in-place update. */
function waitResources(app: string, count: number, resources: ResourceRequirements): Promise<Pod[]> {
  const want = marshalGoJSON(resources);
  return waitFor(
    `${count} pods of ${app} running with ${want}`,
    async () => {
      const pods = await podsOf(app);
      const done = (p: Pod) =>
        marshalGoJSON(p.spec?.containers[0]?.resources) === want &&
        marshalGoJSON(p.status?.containerStatuses?.[0]?.resources) === want &&
        isReady(p) &&
        (p.metadata.labels?.['lifecycle.apps.kruise.io/state'] ?? 'Normal') === 'Normal' &&
        p.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.status !== 'False';
      return pods.length === count && pods.every(done) ? pods : undefined;
    },
    60_000,
    250,
  );
}

const uids = (pods: readonly Pod[]) => pods.map((p) => p.metadata.uid).sort();
const restarts = (pods: readonly Pod[]) => pods.map((p) => p.status?.containerStatuses?.[0]?.restartCount);

describe('InPlaceWorkloadVerticalScaling', { concurrency: 4 }, () => {
  test('CloneSet: a cpu/memory change resizes the pods in place, containers keep running', async () => {
    await apply(withResources(cloneSetManifest(CS, { replicas: 2, podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1 })));
    const before = await waitResources(CS, 2, SMALL);
    await setResources('clonesets.apps.kruise.io', CS, LARGE);
    const after = await waitResources(CS, 2, LARGE);
    assert.deepEqual(uids(after), uids(before), 'the same pods');
    assert.deepEqual(restarts(after), [0, 0], 'no container restarted');
    assert.ok(after.every((p) => JSON.parse(p.metadata.annotations!['apps.kruise.io/inplace-update-state']).updateResources));
  });

  test('Advanced StatefulSet: a RestartContainer resize policy restarts the container in the same pod', async () => {
    const policy = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
    await apply(
      withResources(
        stsManifest(STS, {
          replicas: 2,
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
        }),
        policy,
      ),
    );
    const before = await waitResources(STS, 2, SMALL);
    await setResources('statefulsets.apps.kruise.io', STS, LARGE);
    const after = await waitResources(STS, 2, LARGE);
    assert.deepEqual(uids(after), uids(before), 'the same pods');
    assert.deepEqual(restarts(after), [1, 1], 'memory changed: the container restarted once');
  });

  test('Advanced DaemonSet: InPlaceIfPossible resizes the pod in place', async () => {
    await apply(
      withResources({
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'DaemonSet',
        metadata: { name: DS },
        spec: {
          selector: { matchLabels: { app: DS } },
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 1 } },
          template: { metadata: { labels: { app: DS } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
        },
      }),
    );
    const before = await waitResources(DS, 1, SMALL);
    await setResources('daemonsets.apps.kruise.io', DS, LARGE);
    const after = await waitResources(DS, 1, LARGE);
    assert.deepEqual(uids(after), uids(before), 'the same pod');
    assert.deepEqual(restarts(after), [0]);
  });

  test('CloneSet: a change of QoS class (Burstable → Guaranteed) cannot resize: the pods are recreated', async () => {
    await apply(withResources(cloneSetManifest(CS_QOS, { replicas: 2, podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1 })));
    const before = await waitResources(CS_QOS, 2, SMALL);
    await setResources('clonesets.apps.kruise.io', CS_QOS, GUARANTEED);
    const after = await waitResources(CS_QOS, 2, GUARANTEED);
    assert.ok(
      after.every((p) => !uids(before).includes(p.metadata.uid)),
      'new pods',
    );
    assert.ok(after.every((p) => p.status?.qosClass === 'Guaranteed'));
  });
});
