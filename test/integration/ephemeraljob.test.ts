// EphemeralJob end to end on the local control plane (behaviour spec §17, issue #15's acceptance):
// a debug container is injected through the pods' ephemeralcontainers subresource into 3 of 5
// matched pods, one at a time (parallelism 1); the simulated kubelet (KWOK stages
// pod-ephemeral-start / pod-ephemeral-complete) runs and completes it; the job ends Succeeded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { EphemeralJobs, Pods } from '../../src/runtime/resources.ts';
import type { Pod } from '../../src/apis/core-objects.ts';
import { apply, componentLogs, createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

let client: KubeClient;
let ns: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('ejob');
});

after(async () => {
  await deleteNamespace(ns);
  await client.close();
});

const debugContainers = (p: Pod) => (p.spec?.ephemeralContainers ?? []).filter((c) => c.name === 'debug');

describe('EphemeralJob', () => {
  test('injects a debug container into 3 of 5 matched pods, parallelism 1, and succeeds', async () => {
    try {
      for (let i = 0; i < 5; i++) {
        await apply(
          {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `target-${i}`, labels: { app: 'target' } },
            spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
          },
          ns,
        );
        await sleep(1100); // distinct creation seconds: the job takes the oldest pods first
      }
      await waitFor('5 running pods', async () => {
        const list = await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=target' });
        return list.items.filter((p) => p.status?.phase === 'Running').length === 5 ? true : undefined;
      });

      let maxRunning = 0;
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          const list = await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=target' });
          const active = list.items.filter((p) => {
            if (debugContainers(p).length === 0) return false;
            const s = p.status?.ephemeralContainerStatuses?.find((c) => c.name === 'debug');
            return !s?.state?.terminated;
          });
          maxRunning = Math.max(maxRunning, active.length);
          await sleep(100);
        }
      })();

      await apply(
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'EphemeralJob',
          metadata: { name: 'debug' },
          spec: {
            selector: { matchLabels: { app: 'target' } },
            replicas: 3,
            parallelism: 1,
            template: {
              ephemeralContainers: [
                {
                  name: 'debug',
                  image: 'busybox:1.36',
                  command: ['sleep', '1'],
                  imagePullPolicy: 'IfNotPresent',
                  terminationMessagePolicy: 'File',
                },
              ],
            },
          },
        },
        ns,
      );
      const job = await waitFor(
        'EphemeralJob Succeeded',
        async () => {
          const j = await client.get<{ metadata: { uid?: string; finalizers?: string[] }; status?: Record<string, unknown> }>(
            EphemeralJobs,
            'debug',
            { namespace: ns },
          );
          return j.status?.phase === 'Succeeded' ? j : undefined;
        },
        45_000,
      );
      watching = false;
      await watcher;
      assert.deepEqual([job.status!.match, job.status!.succeeded, job.status!.running, job.status!.failed], [3, 3, 0, 0]);
      assert.ok(job.status!.completionTime);
      assert.deepEqual(job.metadata.finalizers, ['apps.kruise.io/ephemeralcontainers-cleanup']);
      assert.equal(maxRunning, 1, 'parallelism 1: never two debug containers unfinished at once');

      const pods = (await client.list<Pod>(Pods, { namespace: ns, labelSelector: 'app=target' })).items.sort((a, b) =>
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
      );
      assert.deepEqual(
        pods.map((p) => debugContainers(p).length),
        [1, 1, 1, 0, 0],
        'the three oldest pods',
      );
      for (const p of pods.slice(0, 3)) {
        const c = debugContainers(p)[0];
        assert.deepEqual(c.env, [{ name: 'KRUISE_EJOB_ID', value: job.metadata.uid }]);
        const s = p.status?.ephemeralContainerStatuses?.find((x) => x.name === 'debug');
        assert.equal(s?.state?.terminated?.exitCode, 0);
      }

      // Deleting the job drops the finalizer (ephemeral containers cannot be removed) and the job goes.
      await client.delete(EphemeralJobs, 'debug', { namespace: ns });
      await waitFor('EphemeralJob gone', async () => {
        try {
          await client.get(EphemeralJobs, 'debug', { namespace: ns });
          return undefined;
        } catch {
          return true;
        }
      });
    } catch (err) {
      console.error(componentLogs(40));
      throw err;
    }
  });
});
