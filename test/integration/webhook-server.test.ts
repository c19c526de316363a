// The webhook server, its configuration builder and the Lease store against the real local control
// plane: kube-apiserver calls our HTTPS server on 127.0.0.1 (URL client mode), applies its JSON
// patches, shows its denials to kubectl and honours failurePolicy when it is down; two leader
// electors share one real Lease.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { FEATURE_GATE_DEFAULTS } from '../../src/apis/features.ts';
import { invalid } from '../../src/apis/field-errors.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { StatusError } from '../../src/runtime/errors.ts';
import { kruiseResource, MutatingWebhookConfigurations, ValidatingWebhookConfigurations } from '../../src/runtime/resources.ts';
import { LeaderElector } from '../../src/runtime/leaderelection.ts';
import { KubeLeaseStore } from '../../src/runtime/lease-store.ts';
import { WebhookServer } from '../../src/runtime/webhook/server.ts';
import { generateCerts, writeCertsToDir, type CertArtifacts } from '../../src/runtime/webhook/certs.ts';
import { buildWebhookConfigurations, ensureWebhookConfigurations } from '../../src/runtime/webhook/configuration.ts';
import type { WebhookRegistration } from '../../src/runtime/webhook/types.ts';
import { createNamespace, deleteNamespace, kubectl, kubectlJson, testCluster, waitFor } from '../harness/cluster.ts';

const silent = pino({ level: 'silent' });
const features = { ...FEATURE_GATE_DEFAULTS };
type Obj = any;

const stderrOf = (err: unknown) => String((err as { stderr?: string }).stderr ?? (err as Error).message);

describe('webhook server on the local cluster', () => {
  let ns: string;
  let client: KubeClient;
  let dir: string;
  let certs: CertArtifacts;
  let server: WebhookServer | undefined;
  let port: number;
  const mutatingName = () => `kruise-ts-mutating-${ns}`;
  const validatingName = () => `kruise-ts-validating-${ns}`;

  const configmaps = (failurePolicy: 'Fail' | 'Ignore'): WebhookRegistration => ({
    group: '',
    resource: 'configmaps',
    versions: ['v1'],
    operations: ['CREATE', 'UPDATE'],
    failurePolicy,
    mutate: (cm) => {
      cm.metadata.labels = { ...cm.metadata.labels, 'kruise-ts.io/defaulted': 'true' };
    },
    validate: (cm) => (cm.data?.bad !== undefined ? [invalid('data.bad', cm.data.bad, 'must not be set')] : []),
  });

  async function install(reg: WebhookRegistration): Promise<void> {
    const desired = buildWebhookConfigurations([reg], {
      clientMode: { mode: 'url', host: '127.0.0.1', port },
      features,
      caBundle: certs.caCert,
      timeoutSeconds: 5,
      mutatingName: mutatingName(),
      validatingName: validatingName(),
      // Only this test's namespace: other tests creating configmaps are not affected.
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    });
    await ensureWebhookConfigurations(client, desired);
  }

  before(async () => {
    ns = await createNamespace('whs');
    client = fromKubeconfigFile(testCluster().kubeconfig);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'whs-int-'));
    certs = await generateCerts('127.0.0.1', Date.now());
    writeCertsToDir(dir, certs);
    server = new WebhookServer({
      registrations: [configmaps('Fail')],
      features,
      tls: { certDir: dir },
      host: '127.0.0.1',
      port: 0,
      logger: silent,
    });
    await server.start();
    port = server.port();
    await install(configmaps('Fail'));
  });

  after(async () => {
    await client.delete(MutatingWebhookConfigurations, mutatingName()).catch(() => undefined);
    await client.delete(ValidatingWebhookConfigurations, validatingName()).catch(() => undefined);
    await server?.close();
    await client.close();
    await deleteNamespace(ns);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the mutating webhook's JSON patch is applied to created objects", async () => {
    // The API server picks new configurations up asynchronously.
    let n = 0;
    const cm = await waitFor(
      'a configmap defaulted by the webhook',
      async () => {
        const name = `probe-${n++}`;
        await kubectl(['-n', ns, 'create', 'configmap', name, '--from-literal=k=v']);
        const got = await kubectlJson<Obj>(['-n', ns, 'get', 'configmap', name]);
        return got.metadata.labels?.['kruise-ts.io/defaulted'] === 'true' ? got : undefined;
      },
      30_000,
      500,
    );
    assert.equal(cm.data.k, 'v');
  });

  it('the API server sends its reviews over HTTP/2, as it does to OpenKruise', async () => {
    let streams = 0;
    const count = () => streams++;
    diagnostics.subscribe('http2.server.stream.start', count);
    try {
      await kubectl(['-n', ns, 'create', 'configmap', 'over-h2', '--from-literal=k=v']);
    } finally {
      diagnostics.unsubscribe('http2.server.stream.start', count);
    }
    // One review per webhook: the mutating one and the validating one.
    assert.equal(streams, 2);
  });

  it('a validation denial reaches kubectl with the field error message', async () => {
    await waitFor(
      'the validating webhook to deny',
      async () => {
        try {
          await kubectl(['-n', ns, 'create', 'configmap', `bad-${Date.now()}`, '--from-literal=bad=1']);
          return false;
        } catch (err) {
          const text = stderrOf(err);
          assert.match(text, /admission webhook "vconfigmap\.kb\.io" denied the request: data\.bad: Invalid value: "1": must not be set/);
          return true;
        }
      },
      30_000,
      500,
    );
    // Updates go through both webhooks too.
    await kubectl(['-n', ns, 'create', 'configmap', 'upd', '--from-literal=k=v']);
    await assert.rejects(kubectl(['-n', ns, 'patch', 'configmap', 'upd', '--type=merge', '-p', '{"data":{"bad":"2"}}']), (err) =>
      /denied the request: data\.bad: Invalid value: "2"/.test(stderrOf(err)),
    );
  });

  it('with the server down, failurePolicy Fail rejects and Ignore lets requests through', async () => {
    await server!.close();
    server = undefined;
    await assert.rejects(kubectl(['-n', ns, 'create', 'configmap', 'down-fail']), (err) => /failed calling webhook/.test(stderrOf(err)));
    await install(configmaps('Ignore'));
    const cm = await waitFor(
      'a configmap admitted with the webhook down',
      async () => {
        const name = `down-ignore-${Date.now()}`;
        await kubectl(['-n', ns, 'create', 'configmap', name]);
        return kubectlJson<Obj>(['-n', ns, 'get', 'configmap', name]);
      },
      30_000,
      500,
    );
    assert.equal(cm.metadata.labels?.['kruise-ts.io/defaulted'], undefined, 'no mutation without the server');
  });
});

describe('Lease store on the local cluster', () => {
  let ns: string;
  let client: KubeClient;
  before(async () => {
    ns = await createNamespace('lease');
    client = fromKubeconfigFile(testCluster().kubeconfig);
  });
  after(async () => {
    await client.close();
    await deleteNamespace(ns);
  });

  it('exactly one of two electors leads; when its renewals stop, the other takes over in time', async () => {
    const timing = { leaseDuration: 3000, renewDeadline: 2000, retryPeriod: 500 };
    const leading = new Map<string, number>();
    const stopped = new Set<string>();
    const candidates = ['a', 'b'].map((id) => {
      const ac = new AbortController();
      const elector = new LeaderElector({
        store: new KubeLeaseStore({ client, namespace: ns, name: 'kruise-manager' }),
        identity: id,
        name: `kruise-manager-${ns}`,
        ...timing,
        logger: silent,
        callbacks: {
          onStartedLeading: () => {
            leading.set(id, Date.now());
          },
          onStoppedLeading: () => {
            stopped.add(id);
          },
        },
      });
      return { id, ac, elector, done: elector.run(ac.signal) };
    });
    try {
      await waitFor('a leader', async () => leading.size > 0, 15_000, 50);
      // Let several renewals happen: the other one must stay a follower.
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal(leading.size, 1);
      const first = candidates.find((c) => leading.has(c.id))!;
      const second = candidates.find((c) => c !== first)!;
      assert.equal(first.elector.isLeader(), true);
      assert.equal(second.elector.getLeader(), first.id);
      const lease = await kubectlJson<Obj>(['-n', ns, 'get', 'lease', 'kruise-manager']);
      assert.equal(lease.spec.holderIdentity, first.id);
      assert.match(lease.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

      const stopAt = Date.now();
      first.ac.abort();
      await first.done;
      assert.ok(stopped.has(first.id));
      await waitFor('the follower to take over', async () => leading.has(second.id), 15_000, 50);
      const tookMs = leading.get(second.id)! - stopAt;
      assert.ok(tookMs <= timing.leaseDuration + timing.renewDeadline, `takeover took ${tookMs} ms`);
      const after = await kubectlJson<Obj>(['-n', ns, 'get', 'lease', 'kruise-manager']);
      assert.equal(after.spec.holderIdentity, second.id);
      assert.equal(after.spec.leaseTransitions, 1, JSON.stringify(after.spec));
    } finally {
      for (const c of candidates) c.ac.abort();
      await Promise.all(candidates.map((c) => c.done));
    }
  });
});

// Issue #10: the suite's manager serves the real webhooks; objects of the wrong shape in the parts
// the CRD keeps schemaless (pod templates, claim templates, sidecar volumes) pass the API server's
// own schema and reach them, and are refused with 400 naming the field, not a 500.
describe("the manager's webhooks refuse wrongly shaped Kruise objects through the API server", () => {
  let ns: string;
  let client: KubeClient;
  before(async () => {
    ns = await createNamespace('shape');
    client = fromKubeconfigFile(testCluster().kubeconfig);
  });
  after(async () => {
    await client.close();
    await deleteNamespace(ns);
  });

  const podTemplate = (containers: unknown) => ({ metadata: { labels: { app: 'shape' } }, spec: { containers } });
  const cloneSet = (name: string, spec: Record<string, unknown>) => ({
    metadata: { name },
    spec: { replicas: 1, selector: { matchLabels: { app: 'shape' } }, template: podTemplate([{ name: 'app', image: 'nginx' }]), ...spec },
  });
  const cases: [string, string, Obj, string, string][] = [
    [
      'a CloneSet with containers[0].image: -1745',
      'CloneSet',
      cloneSet('image-number', { template: podTemplate([{ name: 'app', image: -1745 }]) }),
      'spec.template.spec.containers[0].image',
      'string',
    ],
    [
      'a CloneSet with template.spec: "1e9"',
      'CloneSet',
      cloneSet('spec-string', { template: { metadata: { labels: { app: 'shape' } }, spec: '1e9' } }),
      'spec.template.spec',
      'object',
    ],
    [
      'a CloneSet with volumeClaimTemplates: -1',
      'CloneSet',
      cloneSet('vct-number', { volumeClaimTemplates: -1 }),
      'spec.volumeClaimTemplates',
      'array',
    ],
    [
      'a SidecarSet with volumes: ""',
      'SidecarSet',
      {
        metadata: { name: `shape-volumes-${Date.now()}` },
        spec: { selector: { matchLabels: { app: 'shape' } }, containers: [{ name: 'sidecar', image: 'busybox' }], volumes: '' },
      },
      'spec.volumes',
      'array',
    ],
    [
      'a BroadcastJob with template: "%"',
      'BroadcastJob',
      { metadata: { name: 'template-percent' }, spec: { template: '%' } },
      'spec.template',
      'object',
    ],
  ];
  for (const [what, kind, object, field, type] of cases) {
    it(`${what} is denied with 400 naming ${field}`, async () => {
      const resource = kruiseResource(kind);
      const created = await client.create(resource, object, { namespace: resource.namespaced ? ns : undefined }).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (created === undefined) {
        await client.delete(resource, object.metadata.name, { namespace: resource.namespaced ? ns : undefined }).catch(() => undefined);
        assert.fail(`${what} was admitted`);
      }
      assert.ok(created instanceof StatusError, String(created));
      assert.equal(created.code, 400, created.message);
      assert.match(created.message, /^admission webhook "m[a-z]+\.kb\.io" denied the request: /);
      assert.ok(created.message.includes(`denied the request: ${field}: Invalid value: `), created.message);
      assert.ok(created.message.includes(`${field} in body must be of type ${type}`), created.message);
    });
  }
});
