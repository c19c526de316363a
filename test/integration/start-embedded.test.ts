// `kruise start` on the embedded cluster, as users run it (one process: cluster, CRDs, manager,
// simulated daemon), on a cluster of its own: what start-up provides (the namespaces upstream's
// installation creates, a private webhook cert dir removed on exit), and starts following each
// other on one --cluster-name: the next one started as soon as the previous one is told to stop.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { down, readState } from '../../src/cluster/local-cluster.ts';
import { freePorts, startProcess, tail, type Started } from '../../src/cluster/processes.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { Namespaces, Secrets, ImagePullJobs } from '../../src/runtime/resources.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { kruiseArgs, servingFlags } from '../harness/kruise-cli.ts';

const NAME = `${TEST_CLUSTER}-embedded`;
const DAEMON_NS = 'kruise-daemon-config';
const ROUNDS = 2;

let logDir: string;
before(async () => {
  logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kruise-start-test-'));
  await down(NAME, { quiet: true, purge: true });
});
after(async () => {
  await down(NAME, { quiet: true, purge: true });
  fs.rmSync(logDir, { recursive: true, force: true });
});

interface Start extends Started {
  certDir?: string;
}

async function kruiseStart(i: number): Promise<Start> {
  const [webhookPort] = await freePorts(1);
  return startProcess(
    `kruise-start-${i}`,
    process.execPath,
    kruiseArgs('start', '--cluster-name', NAME, '--nodes', '1', ...servingFlags(webhookPort), '--feature-gates', 'ImagePullJobGate=true'),
    path.join(logDir, `start-${i}.log`),
    { ...process.env, KRUISE_LOG_LEVEL: 'info' },
  );
}

function logLines(s: Started): Array<Record<string, any>> {
  if (!fs.existsSync(s.logFile)) return [];
  return fs
    .readFileSync(s.logFile, 'utf8')
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, any>];
      } catch {
        return [];
      }
    });
}

/** Waits for the manager of `s` to have started; records its webhook cert dir. */
async function managerStarted(s: Start): Promise<void> {
  await waitFor(
    `${s.name}: kruise-manager started`,
    async () => {
      if (s.exited) throw new Error(`${s.name} exited (${JSON.stringify(s.exited)}):\n${tail(s.logFile, 30)}`);
      return logLines(s).some((l) => l.msg === 'kruise-manager started');
    },
    240_000,
    250,
  ).catch((err) => {
    throw new Error(`${err.message}\nlast lines of ${s.logFile}:\n${tail(s.logFile, 30)}`);
  });
  s.certDir = logLines(s).find((l) => l.msg === 'webhook certificate directory')?.dir;
  assert.ok(s.certDir, 'the cert dir is logged');
  assert.equal(fs.statSync(s.certDir).mode & 0o777, 0o700, `${s.certDir} is private`);
  assert.ok(fs.readdirSync(s.certDir).length > 0, 'certificates written');
}

async function stopped(s: Start): Promise<void> {
  await waitFor(`${s.name} to exit`, async () => s.exited, 90_000, 100);
  assert.equal(s.exited!.code, 0, `${s.name} exit: ${JSON.stringify(s.exited)}\n${tail(s.logFile, 30)}`);
  assert.equal(fs.existsSync(s.certDir!), false, `${s.certDir} removed on exit`);
}

describe('kruise start on the embedded cluster', () => {
  let current: Start;
  let client: KubeClient;

  test(
    "creates the namespaces upstream's installation provides; pull secrets are copied without errors",
    { timeout: 300_000 },
    async () => {
      current = await kruiseStart(0);
      await managerStarted(current);
      client = fromKubeconfigFile(readState(NAME)!.kubeconfig);
      try {
        for (const ns of ['kruise-system', DAEMON_NS]) assert.equal((await client.get<KubeObject>(Namespaces, ns)).metadata.name, ns);
        await client.create(Secrets, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'reg', namespace: 'default' },
          type: 'kubernetes.io/dockerconfigjson',
          data: {
            '.dockerconfigjson': Buffer.from(
              JSON.stringify({ auths: { 'registry.example': { auth: Buffer.from('u:p').toString('base64') } } }),
            ).toString('base64'),
          },
        } as KubeObject);
        await client.create(ImagePullJobs, {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'ImagePullJob',
          metadata: { name: 'pull', namespace: 'default' },
          spec: { image: 'registry.example/app:1.0', pullSecrets: ['reg'], completionPolicy: { type: 'Never' } },
        } as KubeObject);
        await waitFor(
          `a pull secret copied into ${DAEMON_NS}`,
          async () => (await client.list<KubeObject>(Secrets, { namespace: DAEMON_NS })).items.length > 0,
          60_000,
        );
      } finally {
        await client.close();
      }
      const complaints = logLines(current).filter(
        (l) => ['warn', 'error', 'fatal'].includes(l.level) && JSON.stringify(l).includes(DAEMON_NS),
      );
      assert.deepEqual(complaints, []);
    },
  );

  test(
    `a start right after the previous one is stopped finds a usable cluster (${ROUNDS} rounds); the last one out stops it`,
    { timeout: 900_000 },
    async () => {
      assert.ok(current, 'the first start is running');
      for (let i = 1; i <= ROUNDS; i++) {
        const previous = current;
        process.kill(previous.pid, 'SIGTERM');
        current = await kruiseStart(i);
        await managerStarted(current);
        await stopped(previous);
        assert.ok(readState(NAME), `round ${i}: the cluster is still up for ${current.name}`);
      }
      process.kill(current.pid, 'SIGTERM');
      await stopped(current);
      assert.equal(readState(NAME), null, 'the cluster was stopped by the last start to leave');
    },
  );
});
