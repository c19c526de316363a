// The local control plane behaves like a real cluster for what Kruise relies on: nodes with zones,
// native controllers (Deployment, GC, namespace deletion, Job), KWOK pods whose status follows
// in-place image changes and readiness gates, and admission webhooks served on 127.0.0.1.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCA, issueCert } from '../../src/util/pki.ts';
import { apply, kubectl, kubectlJson, createNamespace, deleteNamespace, waitFor } from '../harness/cluster.ts';

type Obj = any;
const condition = (o: Obj, type: string) => o.status?.conditions?.find((c: Obj) => c.type === type)?.status;

describe('local cluster', () => {
  let ns: string;
  before(async () => {
    ns = await createNamespace('cluster');
  });
  after(() => deleteNamespace(ns));

  test('kubectl get nodes lists the KWOK nodes Ready, spread over 3 zones', async () => {
    const nodes = await kubectlJson<{ items: Obj[] }>(['get', 'nodes', '-l', 'type=kwok']);
    assert.ok(nodes.items.length >= 3, `expected at least 3 nodes, got ${nodes.items.length}`);
    for (const n of nodes.items) {
      assert.equal(condition(n, 'Ready'), 'True', `${n.metadata.name} not Ready`);
      assert.equal(n.metadata.labels['kubernetes.io/hostname'], n.metadata.name);
    }
    const zones = new Set(nodes.items.map((n) => n.metadata.labels['topology.kubernetes.io/zone']));
    assert.deepEqual([...zones].sort(), ['zone-a', 'zone-b', 'zone-c']);
    const table = await kubectl(['get', 'nodes']);
    assert.match(table, /kwok-node-0\s+Ready/);
  });

  test('a Deployment becomes 3/3 available and deleting it garbage-collects its pods', async () => {
    await apply(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
        },
      },
      ns,
    );
    await waitFor(
      'deployment web 3/3 available',
      async () => {
        const d = await kubectlJson(['-n', ns, 'get', 'deployment', 'web']);
        return d.status?.availableReplicas === 3 && d.status?.readyReplicas === 3;
      },
      60_000,
    );
    const pods = await kubectlJson<{ items: Obj[] }>(['-n', ns, 'get', 'pods', '-l', 'app=web']);
    assert.equal(pods.items.length, 3);
    for (const p of pods.items) {
      assert.equal(p.status.phase, 'Running');
      assert.ok(p.spec.nodeName?.startsWith('kwok-node-'), 'scheduled to a KWOK node');
      assert.ok(p.status.podIP, 'has a pod IP');
      const cs = p.status.containerStatuses[0];
      assert.equal(cs.image, 'nginx:1.27');
      assert.match(cs.imageID, /^nginx@sha256:[0-9a-f]{64}$/);
      assert.match(cs.containerID, /^containerd:\/\/[0-9a-f]{64}$/);
      assert.equal(cs.restartCount, 0);
      assert.equal(cs.ready, true);
      assert.equal(cs.started, true);
    }
    await kubectl(['-n', ns, 'delete', 'deployment', 'web', '--wait=false']);
    await waitFor(
      'pods of web garbage-collected',
      async () => (await kubectlJson<{ items: Obj[] }>(['-n', ns, 'get', 'pods', '-l', 'app=web'])).items.length === 0,
      60_000,
    );
  });

  test('a Job completes', async () => {
    await apply(
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'once' },
        spec: {
          completions: 2,
          parallelism: 2,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
      ns,
    );
    const job = await waitFor(
      'job once complete',
      async () => {
        const j = await kubectlJson(['-n', ns, 'get', 'job', 'once']);
        return condition(j, 'Complete') === 'True' ? j : null;
      },
      60_000,
    );
    assert.equal(job.status.succeeded, 2);
  });

  test('a failing Job pod (sim.kruise-ts.io/exit-code) fails the Job', async () => {
    await apply(
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'fails' },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { annotations: { 'sim.kruise-ts.io/exit-code': '3' } },
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      },
      ns,
    );
    await waitFor('job fails', async () => condition(await kubectlJson(['-n', ns, 'get', 'job', 'fails']), 'Failed') === 'True', 60_000);
    const pods = await kubectlJson<{ items: Obj[] }>(['-n', ns, 'get', 'pods', '-l', 'job-name=fails']);
    assert.equal(pods.items[0].status.containerStatuses[0].state.terminated.exitCode, 3);
  });

  test("patching a running pod's image re-renders that container with a new imageID and containerID", async () => {
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'inplace' },
        spec: {
          containers: [
            { name: 'main', image: 'nginx:1.27' },
            { name: 'side', image: 'busybox:1.36' },
          ],
        },
      },
      ns,
    );
    const before = await waitFor('pod inplace Ready', async () => {
      const p = await kubectlJson(['-n', ns, 'get', 'pod', 'inplace']);
      return condition(p, 'Ready') === 'True' ? p : null;
    });
    const [main0, side0] = before.status.containerStatuses;
    await kubectl([
      '-n',
      ns,
      'patch',
      'pod',
      'inplace',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/containers/0/image', value: 'nginx:1.28' }]),
    ]);
    const after = await waitFor('main container restarted with nginx:1.28', async () => {
      const p = await kubectlJson(['-n', ns, 'get', 'pod', 'inplace']);
      const main = p.status.containerStatuses.find((c: Obj) => c.name === 'main');
      return main.image === 'nginx:1.28' ? p : null;
    });
    const main1 = after.status.containerStatuses.find((c: Obj) => c.name === 'main');
    const side1 = after.status.containerStatuses.find((c: Obj) => c.name === 'side');
    assert.notEqual(main1.imageID, main0.imageID);
    assert.notEqual(main1.containerID, main0.containerID);
    assert.equal(main1.restartCount, 1);
    assert.equal(main1.lastState.terminated.containerID, main0.containerID);
    assert.deepEqual(side1, side0, 'the unchanged container keeps its status');
    assert.equal(after.metadata.uid, before.metadata.uid);
    assert.equal(after.status.podIP, before.status.podIP);
  });

  test('a pod with a readiness gate stays NotReady until the gate condition is True', async () => {
    const gate = 'example.kruise-ts.io/gate';
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'gated' },
        spec: { readinessGates: [{ conditionType: gate }], containers: [{ name: 'c', image: 'nginx' }] },
      },
      ns,
    );
    await waitFor('pod gated Running', async () => (await kubectlJson(['-n', ns, 'get', 'pod', 'gated'])).status.phase === 'Running');
    // Give the simulator time to (wrongly) flip it; it must stay NotReady.
    await new Promise((r) => setTimeout(r, 1500));
    const stillGated = await kubectlJson(['-n', ns, 'get', 'pod', 'gated']);
    assert.equal(condition(stillGated, 'Ready'), 'False');
    assert.equal(condition(stillGated, 'ContainersReady'), 'True');

    const setGate = (status: string) =>
      kubectl([
        '-n',
        ns,
        'patch',
        'pod',
        'gated',
        '--subresource=status',
        '--type=strategic',
        '-p',
        JSON.stringify({ status: { conditions: [{ type: gate, status, lastTransitionTime: new Date().toISOString() }] } }),
      ]);
    await setGate('True');
    await waitFor('pod gated Ready', async () => condition(await kubectlJson(['-n', ns, 'get', 'pod', 'gated']), 'Ready') === 'True');
    await setGate('False');
    await waitFor(
      'pod gated NotReady again',
      async () => condition(await kubectlJson(['-n', ns, 'get', 'pod', 'gated']), 'Ready') === 'False',
    );
  });

  test('deleting a pod with a grace period and a finalizer finishes once the finalizer is removed', async () => {
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'held', finalizers: ['example.kruise-ts.io/hold'] },
        spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'nginx' }] },
      },
      ns,
    );
    await waitFor('pod held Running', async () => (await kubectlJson(['-n', ns, 'get', 'pod', 'held'])).status.phase === 'Running');
    await kubectl(['-n', ns, 'delete', 'pod', 'held', '--wait=false']);
    await new Promise((r) => setTimeout(r, 1000));
    const terminating = await kubectlJson(['-n', ns, 'get', 'pod', 'held']);
    assert.ok(terminating.metadata.deletionTimestamp, 'terminating, held by its finalizer');
    await kubectl(['-n', ns, 'patch', 'pod', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await waitFor('pod held gone', async () => !(await kubectl(['-n', ns, 'get', 'pods', '-o', 'name'])).includes('pod/held'));
  });

  test('deleting a namespace removes its objects', async () => {
    const doomed = `doomed-${Date.now().toString(36)}`;
    await kubectl(['create', 'namespace', doomed]);
    await waitFor('default SA', () => kubectl(['-n', doomed, 'get', 'sa', 'default', '-o', 'name']));
    await kubectl(['-n', doomed, 'create', 'configmap', 'cm', '--from-literal=a=b']);
    await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, doomed);
    await kubectl(['delete', 'namespace', doomed, '--wait=false']);
    await waitFor(
      'namespace gone',
      async () => !(await kubectl(['get', 'namespaces', '-o', 'name'])).includes(`namespace/${doomed}`),
      90_000,
    );
  });

  test('a ValidatingWebhookConfiguration on 127.0.0.1 is called and its denial reaches the client', async (t) => {
    const ca = await createCA('webhook-test-ca');
    const serving = await issueCert(ca, { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
    const calls: string[] = [];
    const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const review = JSON.parse(body);
        const name: string = review.request.name ?? review.request.object?.metadata?.name;
        calls.push(name);
        const allowed = !name.startsWith('deny-');
        res.setHeader('Content-Type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: {
              uid: review.request.uid,
              allowed,
              status: allowed ? undefined : { code: 403, message: `configmap ${name} is denied by the test webhook` },
            },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const whName = `deny-test-${ns}`;
    await apply({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: whName },
      webhooks: [
        {
          name: 'deny.kruise-ts.io',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
          clientConfig: { url: `https://127.0.0.1:${port}/validate`, caBundle: Buffer.from(ca.certPem).toString('base64') },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        },
      ],
    });
    t.after(() => kubectl(['delete', 'validatingwebhookconfiguration', whName]).then(() => undefined));
    // The API server picks the configuration up asynchronously: retry until the webhook is called.
    await waitFor(
      'allowed configmap created through the webhook',
      async () => {
        await kubectl(['-n', ns, 'create', 'configmap', `ok-${calls.length}`]);
        return calls.length > 0;
      },
      20_000,
      500,
    );
    await assert.rejects(kubectl(['-n', ns, 'create', 'configmap', 'deny-me']), (err: Error & { stderr?: string }) => {
      assert.match(
        String(err.stderr ?? err.message),
        /admission webhook "deny.kruise-ts.io" denied the request: configmap deny-me is denied by the test webhook/,
      );
      return true;
    });
    assert.ok(calls.includes('deny-me'));
  });
});
