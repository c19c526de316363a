// ContainerRecreateRequest, manager side, on the suite's shared manager (behaviour spec §11): the
// webhook's refusals and what it injects, and the controller's time limits, status mirroring,
// not-ready hold through KruisePodReady, release and TTL. Where the manager's own behaviour is
// under test the pods run on a node of their own that the suite's simulated kruise-daemon does not
// serve (it serves type=kwok nodes), and where the daemon would act the test writes the CRR status.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromKubeconfigFile, PatchType, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { isNotFound, StatusError } from '../../src/runtime/errors.ts';
import { Nodes, Pods, ContainerRecreateRequests } from '../../src/runtime/resources.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;
/** A simulated node without a daemon: CRRs there only ever see the manager. */
let noDaemonNode: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('crr');
  noDaemonNode = `no-daemon-${ns}`;
  await client.create(Nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: noDaemonNode,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: { type: 'no-daemon', 'kubernetes.io/hostname': noDaemonNode },
    },
    // Only this file's pods (bound by nodeName) may run here: other files' pods need a daemon.
    spec: { taints: [{ key: 'kruise-ts.io/test-only', value: ns, effect: 'NoSchedule' }] },
  } as KubeObject);
  await waitFor('the daemon-less node Ready', async () => {
    const n = await client.get<KubeObject & { status?: any }>(Nodes, noDaemonNode);
    return n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
  });
});

after(async () => {
  await deleteNamespace(ns);
  await client.delete(Nodes, noDaemonNode).catch(() => undefined);
  await client.close();
});

type Obj = KubeObject & { spec?: any; status?: any };

async function runningPod(name: string, opts: { gate?: boolean; daemon?: boolean } = {}): Promise<Obj> {
  await client.create(Pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      ...(opts.daemon ? {} : { nodeName: noDaemonNode }),
      containers: [
        {
          name: 'app',
          image: 'nginx:1.25',
          ports: [{ containerPort: 80 }],
          lifecycle: { preStop: { httpGet: { path: '/quit', port: 80 } } },
        },
        { name: 'sidecar', image: 'busybox:1.36' },
      ],
      ...(opts.gate ? { readinessGates: [{ conditionType: 'KruisePodReady' }] } : {}),
    },
  } as KubeObject);
  return waitFor(`pod ${name} running with container IDs`, async () => {
    const p = await client.get<Obj>(Pods, name, { namespace: ns });
    const statuses: any[] = p.status?.containerStatuses ?? [];
    return p.status?.phase === 'Running' && statuses.length === 2 && statuses.every((s) => s.containerID) ? p : undefined;
  });
}

const crrManifest = (name: string, podName: string, spec: Record<string, unknown> = {}, containers = ['app']) => ({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'ContainerRecreateRequest',
  metadata: { name, namespace: ns },
  spec: { podName, containers: containers.map((c) => ({ name: c })), ...spec },
});
const createCRR = (m: object) => client.create<Obj>(ContainerRecreateRequests, m as KubeObject);
const getCRR = (name: string) => client.get<Obj>(ContainerRecreateRequests, name, { namespace: ns });
const getPod = (name: string) => client.get<Obj>(Pods, name, { namespace: ns });
const patchCRRStatus = (name: string, status: object) =>
  client.patch(ContainerRecreateRequests, name, { status }, { namespace: ns, patchType: PatchType.Merge, subresource: 'status' });
const condition = (o: Obj, type: string) => (o.status?.conditions ?? []).find((c: any) => c.type === type);

async function refusal(m: object): Promise<string> {
  try {
    await createCRR(m);
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return err.message;
  }
  assert.fail('expected the webhook to refuse the CRR');
}

describe('ContainerRecreateRequest on the manager', { concurrency: 4 }, () => {
  test(
    'webhook: refusals name the rule; defaults, labels, preStop, ports and statusContext are injected; spec is immutable',
    { timeout: 60_000 },
    async () => {
      const pod = await runningPod('target', { daemon: true });
      assert.match(await refusal(crrManifest('r1', 'nope')), /no found Pod named nope/);
      assert.match(await refusal(crrManifest('r2', 'target', {}, ['nope'])), /container nope not found in Pod/);
      assert.match(await refusal(crrManifest('r3', 'target', {}, ['app', 'app'])), /can not recreate app multi times/);
      assert.match(
        await refusal(crrManifest('r4', 'target', { strategy: { terminationGracePeriodSeconds: -1 } })),
        /terminationGracePeriodSeconds must be non-negative integer/,
      );
      assert.match(
        await refusal(crrManifest('r5', 'target', { strategy: { unreadyGracePeriodSeconds: -5 } })),
        /unreadyGracePeriodSeconds must be non-negative integer/,
      );
      assert.match(
        await refusal(crrManifest('r6', 'target', { activeDeadlineSeconds: 2 })),
        /activeDeadlineSeconds can not be less than 3s/,
      );
      assert.match(
        await refusal(crrManifest('r7', 'target', { strategy: { failurePolicy: 'Retry' } })),
        /unknown failurePolicy Retry|Unsupported value/,
      );

      const crr = await createCRR(crrManifest('ok', 'target', { activeDeadlineSeconds: 300 }, ['app', 'sidecar']));
      assert.equal(crr.metadata.labels?.['crr.apps.kruise.io/active'], 'true');
      assert.equal(crr.metadata.labels?.['crr.apps.kruise.io/pod-uid'], pod.metadata.uid);
      assert.equal(crr.metadata.labels?.['crr.apps.kruise.io/node-name'], pod.spec.nodeName);
      assert.equal(crr.metadata.labels?.type, undefined);
      assert.deepEqual(crr.spec.strategy, { failurePolicy: 'Fail', terminationGracePeriodSeconds: 30 });
      const status = (n: string) => pod.status.containerStatuses.find((s: any) => s.name === n);
      assert.deepEqual(crr.spec.containers, [
        {
          name: 'app',
          preStop: { httpGet: { path: '/quit', port: 80, scheme: 'HTTP' } },
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          statusContext: { containerID: status('app').containerID, restartCount: 0 },
        },
        { name: 'sidecar', statusContext: { containerID: status('sidecar').containerID, restartCount: 0 } },
      ]);

      await assert.rejects(
        client.patch(
          ContainerRecreateRequests,
          'ok',
          { spec: { activeDeadlineSeconds: 100 } },
          { namespace: ns, patchType: PatchType.Merge },
        ),
        /spec of ContainerRecreateRequest is immutable/,
      );
      await assert.rejects(
        client.patch(
          ContainerRecreateRequests,
          'ok',
          { metadata: { labels: { 'crr.apps.kruise.io/pod-uid': 'x' } } },
          { namespace: ns, patchType: PatchType.Merge },
        ),
        /not allowed to update immutable label crr.apps.kruise.io\/pod-uid/,
      );
    },
  );

  test('activeDeadlineSeconds completes the CRR, drops the active label, and the TTL deletes it', { timeout: 60_000 }, async () => {
    await runningPod('deadline');
    const created = await createCRR(crrManifest('deadline', 'deadline', { activeDeadlineSeconds: 3, ttlSecondsAfterFinished: 3 }));
    const done = await waitFor(
      'CRR completed by its deadline',
      async () => {
        const c = await getCRR('deadline');
        return c.status?.phase === 'Completed' && !c.metadata.labels?.['crr.apps.kruise.io/active'] ? c : undefined;
      },
      20_000,
    );
    assert.equal(done.status.message, 'recreating has exceeded the activeDeadlineSeconds');
    const completedAfter = Date.parse(done.status.completionTime) - Date.parse(created.metadata.creationTimestamp!);
    assert.ok(completedAfter >= 3000 && completedAfter < 8000, `completed ${completedAfter}ms after creation`);
    await waitFor(
      'CRR deleted after ttlSecondsAfterFinished',
      async () =>
        getCRR('deadline').then(
          () => false,
          (err) => isNotFound(err),
        ),
      20_000,
    );
  });

  test('a CRR whose pod is deleted completes with "pod has gone"', { timeout: 60_000 }, async () => {
    await runningPod('doomed');
    await createCRR(crrManifest('doomed', 'doomed'));
    await client.delete(Pods, 'doomed', { namespace: ns });
    const done = await waitFor(
      'CRR completed',
      async () => {
        const c = await getCRR('doomed');
        return c.status?.phase === 'Completed' ? c : undefined;
      },
      20_000,
    );
    assert.equal(done.status.message, 'pod has gone');
  });

  test('without an answer from a daemon for one minute the CRR completes', { timeout: 120_000 }, async () => {
    await runningPod('silent');
    const created = await createCRR(crrManifest('silent', 'silent'));
    const done = await waitFor(
      'CRR completed for the silent daemon',
      async () => {
        const c = await getCRR('silent');
        return c.status?.phase === 'Completed' ? c : undefined;
      },
      90_000,
      1000,
    );
    assert.equal(done.status.message, 'daemon has not responded for a long time');
    const after = Date.parse(done.status.completionTime) - Date.parse(created.metadata.creationTimestamp!);
    assert.ok(after >= 59_000 && after < 70_000, `completed ${after}ms after creation`);
  });

  test(
    'Recreating (as a daemon would set it): pod held not-ready, snapshot mirrored, all released on completion',
    { timeout: 90_000 },
    async () => {
      await runningPod('held', { gate: true });
      await waitFor('KruisePodReady initialised and the pod Ready', async () => {
        const p = await getPod('held');
        return condition(p, 'KruisePodReady')?.status === 'True' && condition(p, 'Ready')?.status === 'True';
      });
      await createCRR(
        crrManifest('held', 'held', { activeDeadlineSeconds: 120, ttlSecondsAfterFinished: 2, strategy: { unreadyGracePeriodSeconds: 5 } }),
      );
      await patchCRRStatus('held', { phase: 'Recreating' });

      const held = await waitFor('PreRecreateGrace=True with the finalizer', async () => {
        const c = await getCRR('held');
        return condition(c, 'PreRecreateGrace')?.status === 'True' && c.metadata.finalizers?.includes('crr.apps.kruise.io/unready-acquired')
          ? c
          : undefined;
      });
      const graceSince = condition(held, 'PreRecreateGrace').lastTransitionTime;
      const notReady = await waitFor('pod not ready through KruisePodReady', async () => {
        const p = await getPod('held');
        return condition(p, 'KruisePodReady')?.status === 'False' && condition(p, 'Ready')?.status === 'False' ? p : undefined;
      });
      assert.deepEqual(JSON.parse(condition(notReady, 'KruisePodReady').message), [
        { userAgent: 'ContainerRecreateRequest', key: `${ns}/held` },
      ]);

      // The simulated kubelet restarts a container whose image changed: that is our recreated container.
      await client.patch(
        Pods,
        'held',
        { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } },
        { namespace: ns, patchType: PatchType.StrategicMerge },
      );
      const restarted = await waitFor('app restarted', async () => {
        const p = await getPod('held');
        const s = p.status.containerStatuses.find((x: any) => x.name === 'app');
        return s.restartCount === 1 ? s : undefined;
      });
      const synced = await waitFor(
        'containerStatusSnapshot mirrors the restarted container',
        async () => {
          const c = await getCRR('held');
          return c.status?.containerStatusSnapshot?.length ? c : undefined;
        },
        15_000,
      );
      assert.deepEqual(synced.status.containerStatusSnapshot, [
        { name: 'app', ready: true, restartCount: 1, containerID: restarted.containerID },
      ]);
      assert.equal(condition(synced, 'PreRecreateGrace').lastTransitionTime, graceSince, 'the grace condition is never re-stamped');

      await patchCRRStatus('held', { phase: 'Completed', completionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') });
      await waitFor('pod Ready again', async () => {
        const p = await getPod('held');
        return condition(p, 'KruisePodReady')?.status === 'True' && condition(p, 'Ready')?.status === 'True';
      });
      await waitFor(
        'CRR deleted after its TTL (finalizer released)',
        async () =>
          getCRR('held').then(
            () => false,
            (err) => isNotFound(err),
          ),
        20_000,
      );
    },
  );
});
