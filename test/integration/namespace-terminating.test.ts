// A CloneSet whose namespace is being deleted, on the suite's manager: once its pods are gone the
// API server refuses every creation there ("being terminated"), and the controller stops creating
// quietly instead of retrying into the refusal with an error line each time. A validating
// admission policy keeps the CloneSet itself from the namespace controller meanwhile, so the
// namespace stays Terminating with the CloneSet in it for as long as the test looks.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { CloneSets } from '../../src/runtime/resources.ts';
import { apply, createNamespace, kubectl, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, isReady, podsOf } from './cloneset-helpers.ts';

let client: KubeClient;
let ns: string;
let policy: string;

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('terminating');
  policy = `keep-clonesets-${ns}`;
});

after(async () => {
  await kubectl(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', policy, '--ignore-not-found']).catch(
    () => undefined,
  );
  await kubectl(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  await client.close();
});

test('a CloneSet in a namespace being deleted stops creating pods, with one log line', { timeout: 180_000 }, async () => {
  await client.create(CloneSets, { ...cloneSetManifest('web', { replicas: 2 }), metadata: { name: 'web', namespace: ns } } as KubeObject);
  await waitFor('2 ready pods', async () => (await podsOf(client, ns, 'web')).filter(isReady).length === 2, 60_000);

  await apply({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: policy },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: ['apps.kruise.io'], apiVersions: ['*'], operations: ['DELETE'], resources: ['clonesets'] }],
      },
      validations: [{ expression: 'false', message: 'kept for the test' }],
    },
  });
  await apply({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policy },
    spec: {
      policyName: policy,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
    },
  });
  await waitFor(
    'the policy in force',
    async () =>
      await kubectl(['-n', ns, 'delete', 'cloneset', 'web', '--dry-run=server']).then(
        () => false,
        (err) => /kept for the test/.test(String(err)),
      ),
    30_000,
    500,
  );

  const logFile = path.join(testCluster().runDir, 'logs', 'kruise-manager.log');
  const offset = fs.statSync(logFile).size;
  await kubectl(['delete', 'namespace', ns, '--wait=false']);
  await waitFor('the pods deleted by the namespace controller', async () => (await podsOf(client, ns, 'web')).length === 0, 60_000);
  // Time for a retry storm to show: the controller's backoff starts at milliseconds.
  await sleep(10_000);

  const cs = await client.get<KubeObject & { status?: any }>(CloneSets, 'web', { namespace: ns });
  assert.equal(cs.metadata.deletionTimestamp, undefined, 'the CloneSet is still there, not being deleted');
  const lines = fs
    .readFileSync(logFile, 'utf8')
    .slice(offset)
    .split('\n')
    .filter((l) => l.includes(ns));
  const aboutIt = lines.filter((l) => /terminat/i.test(l));
  assert.ok(
    aboutIt.length >= 1 && aboutIt.length <= 1,
    `one line about the namespace being terminated, got ${aboutIt.length}:\n${aboutIt.join('\n')}`,
  );
  const problems = lines.filter((l) => /"level":"(warn|error|fatal)"/.test(l));
  assert.deepEqual(problems, []);
  assert.ok(!(cs.status?.conditions ?? []).some((c: any) => c.type === 'FailedScale'), JSON.stringify(cs.status?.conditions));
});
