import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { pino } from 'pino';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import { FakeClock } from '../../../src/util/clock.ts';
import { KubeClient } from '../../../src/runtime/client.ts';
import { WebhookCertController } from '../../../src/runtime/webhook/cert-controller.ts';
import { caProblem, ensureSecretCerts, generateCerts, servingCertProblem, writeCertsToDir } from '../../../src/runtime/webhook/certs.ts';
import {
  andSelectors,
  buildWebhookConfigurations,
  ensureWebhookConfigurations,
  isSubset,
  type ClientMode,
} from '../../../src/runtime/webhook/configuration.ts';
import { ensureCRDConversion } from '../../../src/runtime/webhook/crd-conversion.ts';
import type { WebhookRegistration } from '../../../src/runtime/webhook/types.ts';
import { allRegistrations } from '../../../src/webhooks/index.ts';
import { FakeApiServer, useFakeApiServer } from './fake-apiserver.ts';
import { leaseFence, leaseHeld, NotLeaseHolderError } from '../../../src/runtime/lease-fence.ts';

const silent = pino({ level: 'silent' });
const features: FeatureGates = { ...FEATURE_GATE_DEFAULTS };
const SECRETS = '/v1/secrets';
const MWC = 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const CRDS = 'apiextensions.k8s.io/v1/customresourcedefinitions';
const DAY = 86_400_000;

const regs: WebhookRegistration[] = [
  {
    group: 'apps.kruise.io',
    resource: 'clonesets',
    versions: ['v1alpha1', 'v1beta1'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    mutate: () => {},
    validate: () => [],
  },
  { group: '', resource: 'pods', versions: ['v1'], operations: ['CREATE'], mutate: () => {} },
  { group: '', resource: 'pods', versions: ['v1'], operations: ['UPDATE', 'DELETE'], validate: () => [] },
  { group: '', resource: 'pods/eviction', versions: ['v1'], operations: ['CREATE'], validate: () => [], failurePolicy: 'Ignore' },
  { group: 'apps', resource: 'deployments', versions: ['v1'], operations: ['DELETE'], validate: () => [] },
  {
    group: 'apps.kruise.io',
    resource: 'imagepulljobs',
    versions: ['v1beta1'],
    operations: ['CREATE'],
    validate: () => [],
    gate: 'ImagePullJobGate',
  },
];

const urlMode: ClientMode = { mode: 'url', host: '127.0.0.1', port: 9876 };
const svcMode: ClientMode = { mode: 'service', namespace: 'kruise-system', name: 'kruise-webhook-service' };

describe('certificate generation and validity', () => {
  it('issues a serving cert for an IP or a service name, signed by a reusable CA', async () => {
    const now = Date.now();
    const a = await generateCerts('127.0.0.1', now);
    assert.equal(servingCertProblem(a, '127.0.0.1', now), undefined);
    assert.match(servingCertProblem(a, '10.0.0.1', now)!, /not valid for 10.0.0.1/);
    assert.equal(caProblem(a.caCert, a.caKey, now), undefined);
    const b = await generateCerts('kruise-webhook-service.kruise-system.svc', now, a);
    assert.equal(b.caCert, a.caCert, 'a valid CA is kept');
    assert.equal(servingCertProblem(b, 'kruise-webhook-service.kruise-system.svc', now), undefined);
    assert.match(servingCertProblem({ ...b, key: a.key }, 'kruise-webhook-service.kruise-system.svc', now)!, /key does not match/);
    const other = await generateCerts('127.0.0.1', now);
    assert.match(servingCertProblem({ ...a, caCert: other.caCert }, '127.0.0.1', now)!, /not signed by the CA/);
  });

  it('rotation thresholds: serving cert with < 1/3 of its validity or < 30 days left; CA within a year of expiry', async () => {
    const now = Date.now();
    const c = await generateCerts('127.0.0.1', now);
    assert.equal(servingCertProblem(c, '127.0.0.1', now + 240 * DAY), undefined);
    assert.match(servingCertProblem(c, '127.0.0.1', now + 250 * DAY)!, /expires soon/);
    assert.match(servingCertProblem(c, '127.0.0.1', now + 340 * DAY, { renewFraction: 0.1 })!, /expires soon/, 'under 30 days left');
    assert.equal(servingCertProblem(c, '127.0.0.1', now + 300 * DAY, { renewFraction: 0.1, minRemainingDays: 30 }), undefined);
    assert.match(caProblem(c.caCert, c.caKey, now + 9.1 * 365 * DAY)!, /expires soon/);
    assert.match(caProblem(c.cert, c.key, now)!, /not a CA/);
  });
});

describe('self-managed Secret', () => {
  let api: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    api = s;
    client = c;
  });

  it('creates kruise-webhook-certs with upstream keys, then reuses it, then rotates near expiry keeping the CA', async () => {
    const secret = { namespace: 'kruise-system', name: 'kruise-webhook-certs' };
    const first = await ensureSecretCerts(client, secret, '127.0.0.1', { logger: silent });
    assert.equal(first.changed, true);
    const stored = api.getObject(SECRETS, 'kruise-system/kruise-webhook-certs')!;
    assert.deepEqual(Object.keys(stored.data).sort(), ['ca-cert.pem', 'ca-key.pem', 'cert.pem', 'key.pem', 'tls.crt', 'tls.key']);
    assert.equal(Buffer.from(stored.data['tls.crt'], 'base64').toString(), first.certs.cert);

    const again = await ensureSecretCerts(client, secret, '127.0.0.1', { logger: silent });
    assert.equal(again.changed, false);
    assert.equal(again.certs.cert, first.certs.cert);

    const clock = new FakeClock(Date.now() + 300 * DAY);
    const rotated = await ensureSecretCerts(client, secret, '127.0.0.1', { logger: silent, clock });
    assert.equal(rotated.changed, true);
    assert.notEqual(rotated.certs.cert, first.certs.cert);
    assert.equal(rotated.certs.caCert, first.certs.caCert);

    const renamed = await ensureSecretCerts(client, secret, 'kruise-webhook-service.kruise-system.svc', { logger: silent });
    assert.equal(renamed.changed, true);
    assert.ok(new X509Certificate(renamed.certs.cert).checkHost('kruise-webhook-service.kruise-system.svc'));
  });

  it('a lost update race re-reads the winner', async () => {
    const secret = { namespace: 'kruise-system', name: 'race' };
    await ensureSecretCerts(client, secret, '127.0.0.1', { logger: silent });
    api.failNext((r) => r.method === 'PUT' && r.path.endsWith('/secrets/race'), 409, {
      kind: 'Status',
      code: 409,
      reason: 'Conflict',
      message: 'modified',
    });
    const res = await ensureSecretCerts(client, secret, '10.1.1.1', { logger: silent });
    assert.equal(res.changed, true);
    assert.equal(servingCertProblem(res.certs, '10.1.1.1', Date.now()), undefined);
  });
});

describe('cert dir', () => {
  it('writes all upstream file names, keys private, and only rewrites on change', async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'certs-')), 'nested');
    const certs = await generateCerts('127.0.0.1', Date.now());
    assert.equal(writeCertsToDir(dir, certs), true);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['ca-cert.pem', 'ca-key.pem', 'cert.pem', 'key.pem', 'tls.crt', 'tls.key']);
    assert.equal(fs.statSync(path.join(dir, 'tls.key')).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(path.join(dir, 'tls.crt'), 'utf8'), certs.cert);
    assert.equal(writeCertsToDir(dir, certs), false);
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  });
});

describe('webhook configurations', () => {
  it('builds mutating and validating configurations in URL mode', () => {
    const { mutating, validating } = buildWebhookConfigurations(regs, { clientMode: urlMode, features, caBundle: 'CA PEM' });
    assert.equal(mutating.metadata.name, 'kruise-mutating-webhook-configuration');
    assert.equal(validating.metadata.name, 'kruise-validating-webhook-configuration');
    assert.deepEqual(
      mutating.webhooks!.map((w) => w.name),
      ['mcloneset.kb.io', 'mpod.kb.io'],
    );
    assert.deepEqual(
      validating.webhooks!.map((w) => w.name),
      ['vbuiltindeployment.kb.io', 'vcloneset.kb.io', 'vpod.kb.io', 'vpodeviction.kb.io'],
    );
    const mc = mutating.webhooks![0]!;
    assert.deepEqual(mc, {
      name: 'mcloneset.kb.io',
      clientConfig: { url: 'https://127.0.0.1:9876/mutate-apps-kruise-io-cloneset', caBundle: Buffer.from('CA PEM').toString('base64') },
      rules: [
        {
          apiGroups: ['apps.kruise.io'],
          apiVersions: ['v1alpha1', 'v1beta1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['clonesets'],
          scope: '*',
        },
      ],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      sideEffects: 'None',
      timeoutSeconds: 10,
      admissionReviewVersions: ['v1'],
      reinvocationPolicy: 'Never',
    });
    const vc = validating.webhooks!.find((w) => w.name === 'vcloneset.kb.io')!;
    assert.deepEqual(vc.rules[0]!.operations, ['CREATE', 'UPDATE', 'DELETE']);
    const ev = validating.webhooks!.find((w) => w.name === 'vpodeviction.kb.io')!;
    assert.equal(ev.clientConfig.url, 'https://127.0.0.1:9876/validate-pod');
    assert.equal(ev.failurePolicy, 'Ignore');
    assert.deepEqual(ev.rules[0]!.resources, ['pods/eviction']);
    assert.deepEqual(ev.namespaceSelector, { matchExpressions: [{ key: 'control-plane', operator: 'DoesNotExist' }] });
    assert.deepEqual(validating.webhooks!.find((w) => w.name === 'vbuiltindeployment.kb.io')!.objectSelector, {
      matchExpressions: [{ key: 'policy.kruise.io/delete-protection', operator: 'Exists' }],
    });
  });

  it('Service mode, gates, extra selectors and names', () => {
    const { mutating, validating } = buildWebhookConfigurations(regs, {
      clientMode: svcMode,
      features: { ...features, ImagePullJobGate: true },
      mutatingName: 'm',
      validatingName: 'v',
      timeoutSeconds: 30,
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ns1' } },
    });
    assert.equal(mutating.metadata.name, 'm');
    const pod = mutating.webhooks!.find((w) => w.name === 'mpod.kb.io')!;
    assert.deepEqual(pod.clientConfig, {
      service: { namespace: 'kruise-system', name: 'kruise-webhook-service', path: '/mutate-pod', port: 443 },
    });
    assert.deepEqual(pod.namespaceSelector, {
      matchLabels: { 'kubernetes.io/metadata.name': 'ns1' },
      matchExpressions: [{ key: 'control-plane', operator: 'DoesNotExist' }],
    });
    assert.equal(pod.timeoutSeconds, 30);
    assert.ok(validating.webhooks!.some((w) => w.name === 'vimagepulljob.kb.io'));
    assert.throws(() => andSelectors({ matchLabels: { a: '1' } }, { matchLabels: { a: '2' } }), /conflicting/);
  });

  it('Kruise registers DELETE only with deletion protection on (ResourcesDeletionProtection)', () => {
    const deleting = (f: typeof features) =>
      buildWebhookConfigurations(allRegistrations, { clientMode: urlMode, features: f })
        .validating.webhooks!.filter((w) => w.rules.some((r) => r.operations.includes('DELETE')))
        .map((w) => w.name);
    // vpod.kb.io judges pod DELETE for PodUnavailableBudget and WorkloadSpread (either gate).
    const off = { ResourcesDeletionProtection: false, PodUnavailableBudgetDeleteGate: false, WorkloadSpread: false };
    assert.deepEqual(deleting({ ...features, ...off }), []);
    assert.deepEqual(deleting({ ...features, ...off, PodUnavailableBudgetDeleteGate: true }), ['vpod.kb.io']);
    assert.deepEqual(deleting({ ...features, ...off, WorkloadSpread: true }), ['vpod.kb.io']);
    // ...but never a pod already terminating: the kubelet's final removal needs no manager.
    const vpod = buildWebhookConfigurations(allRegistrations, { clientMode: urlMode, features }).validating.webhooks!.find(
      (w) => w.name === 'vpod.kb.io',
    )!;
    assert.deepEqual(vpod.matchConditions, [{ name: 'not-terminating', expression: '!has(oldObject.metadata.deletionTimestamp)' }]);
    assert.deepEqual(deleting({ ...features, ...off, ResourcesDeletionProtection: true }), [
      'vbuiltindeployment.kb.io',
      'vbuiltinreplicaset.kb.io',
      'vbuiltinstatefulset.kb.io',
      'vcloneset.kb.io',
      'vcustomresourcedefinition.kb.io',
      'vingress.kb.io',
      'vnamespace.kb.io',
      'vservice.kb.io',
      'vstatefulset.kb.io',
      'vuniteddeployment.kb.io',
    ]);
    // Built-in kinds: only objects carrying the label reach the webhook.
    const builtin = buildWebhookConfigurations(allRegistrations, {
      clientMode: urlMode,
      features: { ...features, ResourcesDeletionProtection: true },
    }).validating.webhooks!.filter((w) => /^v(builtin|namespace|service|ingress|customresourcedefinition)/.test(w.name));
    assert.equal(builtin.length, 7);
    for (const w of builtin) {
      assert.deepEqual(w.objectSelector, { matchExpressions: [{ key: 'policy.kruise.io/delete-protection', operator: 'Exists' }] }, w.name);
      assert.equal(w.failurePolicy, 'Fail');
    }
    // The webhook itself stays: CREATE and UPDATE are validated either way.
    const vcloneset = buildWebhookConfigurations(allRegistrations, { clientMode: urlMode, features }).validating.webhooks!.find(
      (w) => w.name === 'vcloneset.kb.io',
    )!;
    assert.deepEqual(vcloneset.rules[0]!.operations, ['CREATE', 'UPDATE']);
  });

  it('isSubset ignores server-side defaults and empty selectors', () => {
    assert.ok(isSubset({ a: 1, s: {}, l: [{ x: 1 }] }, { a: 1, b: 2, l: [{ x: 1, y: 2 }] }));
    assert.ok(!isSubset({ l: [1, 2] }, { l: [1] }));
    assert.ok(!isSubset({ a: { b: 1 } }, { a: { b: 2 } }));
  });
});

describe('reconciling against the API', () => {
  let api: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    api = s;
    client = c;
  });

  it('creates the configurations, leaves equal ones alone, updates changed ones keeping labels', async () => {
    const desired = buildWebhookConfigurations(regs, { clientMode: urlMode, features, caBundle: 'CA1' });
    assert.deepEqual(await ensureWebhookConfigurations(client, desired), [
      'kruise-mutating-webhook-configuration',
      'kruise-validating-webhook-configuration',
    ]);
    assert.deepEqual(await ensureWebhookConfigurations(client, desired), []);
    const existing = api.getObject(MWC, 'kruise-mutating-webhook-configuration')!;
    api.put(MWC, { ...existing, metadata: { ...existing.metadata, labels: { owner: 'helm' } } });
    const next = buildWebhookConfigurations(regs, { clientMode: urlMode, features, caBundle: 'CA2' });
    assert.deepEqual(await ensureWebhookConfigurations(client, next), [
      'kruise-mutating-webhook-configuration',
      'kruise-validating-webhook-configuration',
    ]);
    const stored = api.getObject(MWC, 'kruise-mutating-webhook-configuration')!;
    assert.deepEqual(stored.metadata.labels, { owner: 'helm' });
    assert.equal(stored.webhooks[0].clientConfig.caBundle, Buffer.from('CA2').toString('base64'));
    assert.ok(api.getObject(VWC, 'kruise-validating-webhook-configuration'));
  });

  it('with create: false (service mode: the installation owns them) a missing configuration stays missing', async () => {
    // Names of their own: the other cases here share the fake API server's configurations.
    const names = { mutatingName: 'installed-mutating', validatingName: 'installed-validating' };
    const desired = buildWebhookConfigurations(regs, { clientMode: urlMode, features, caBundle: 'CA1', ...names });
    assert.deepEqual(await ensureWebhookConfigurations(client, desired, undefined, { create: false }), []);
    assert.equal(api.getObject(MWC, 'installed-mutating'), undefined);
    // An installed, empty configuration is filled in.
    api.put(MWC, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'installed-mutating' },
    });
    assert.deepEqual(await ensureWebhookConfigurations(client, desired, undefined, { create: false }), ['installed-mutating']);
    assert.ok(api.getObject(MWC, 'installed-mutating')!.webhooks.length > 0);
    assert.equal(api.getObject(VWC, 'installed-validating'), undefined);
  });

  it('external certificates (EnableExternalCerts): read from the Secret, never written; the webhooks and CRD conversion carry the external CA', async () => {
    const external = await generateCerts('kruise-webhook-service.kruise-system.svc', Date.now());
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    api.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'kruise-system', name: 'cert-manager-certs' },
      data: { 'ca.crt': b64(external.caCert), 'tls.crt': b64(external.cert), 'tls.key': b64(external.key) },
    });
    // The chart's configurations start empty (the injector annotation on them changes nothing here).
    api.put(MWC, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'ext-m' } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-ext-'));
    const secret = { namespace: 'kruise-system', name: 'cert-manager-certs' };
    const ctl = new WebhookCertController({
      client,
      registrations: regs,
      features: { ...features, EnableExternalCerts: true },
      clientMode: svcMode,
      certDir: dir,
      secret,
      external: { secret },
      mutatingName: 'ext-m',
      validatingName: 'ext-v',
      createConfigurations: false,
      logger: silent,
    });
    const secretWrites = () => api.requests.filter((r) => r.method !== 'GET' && r.path.includes('/secrets')).length;
    const before = secretWrites();
    await ctl.sync();
    assert.equal(secretWrites(), before, 'the external Secret is only read');
    assert.equal(fs.readFileSync(path.join(dir, 'tls.crt'), 'utf8'), external.cert);
    const webhooks = api.getObject(MWC, 'ext-m')!.webhooks as Array<{ clientConfig: { caBundle: string } }>;
    assert.ok(webhooks.length > 0);
    for (const wh of webhooks) assert.equal(wh.clientConfig.caBundle, b64(external.caCert));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('points webhook-converted kruise CRDs at /convert', async () => {
    const crd = (name: string, group: string, strategy: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name },
      spec: { group, names: { kind: 'X' }, versions: [{ name: 'v1beta1' }], conversion: { strategy } },
    });
    api.put(CRDS, crd('clonesets.apps.kruise.io', 'apps.kruise.io', 'Webhook'));
    api.put(CRDS, crd('podunavailablebudgets.policy.kruise.io', 'policy.kruise.io', 'Webhook'));
    api.put(CRDS, crd('podprobemarkers.apps.kruise.io', 'apps.kruise.io', 'None'));
    api.put(CRDS, crd('foos.example.com', 'example.com', 'Webhook'));
    const updated = await ensureCRDConversion(client, svcMode, 'CA');
    assert.deepEqual(updated.sort(), ['clonesets.apps.kruise.io', 'podunavailablebudgets.policy.kruise.io']);
    assert.deepEqual(api.getObject(CRDS, 'clonesets.apps.kruise.io')!.spec.conversion, {
      strategy: 'Webhook',
      webhook: {
        clientConfig: {
          service: { namespace: 'kruise-system', name: 'kruise-webhook-service', path: '/convert', port: 443 },
          caBundle: Buffer.from('CA').toString('base64'),
        },
        conversionReviewVersions: ['v1', 'v1beta1'],
      },
    });
    assert.deepEqual(await ensureCRDConversion(client, svcMode, 'CA'), []);
    const url = await ensureCRDConversion(client, urlMode, 'CA');
    assert.equal(url.length, 2);
    const cc = api.getObject(CRDS, 'clonesets.apps.kruise.io')!.spec.conversion.webhook.clientConfig;
    assert.deepEqual(Object.keys(cc).sort(), ['caBundle', 'url']);
    assert.equal(cc.url, 'https://127.0.0.1:9876/convert');
  });

  it('WebhookCertController syncs Secret, cert dir, configurations and CRDs, and becomes ready', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-'));
    let reloaded = 0;
    const ctl = new WebhookCertController({
      client,
      registrations: regs,
      features,
      clientMode: urlMode,
      certDir: dir,
      secret: { namespace: 'kruise-system', name: 'ctl-certs' },
      mutatingName: 'ctl-m',
      validatingName: 'ctl-v',
      logger: silent,
      onCertsChanged: () => reloaded++,
    });
    const ac = new AbortController();
    const running = ctl.run(ac.signal);
    await ctl.ready;
    const certs = ctl.certificates()!;
    assert.equal(fs.readFileSync(path.join(dir, 'tls.crt'), 'utf8'), certs.cert);
    assert.equal(reloaded, 1);
    assert.equal(api.getObject(VWC, 'ctl-v')!.webhooks[0].clientConfig.caBundle, Buffer.from(certs.caCert).toString('base64'));
    assert.equal(
      api.getObject(CRDS, 'clonesets.apps.kruise.io')!.spec.conversion.webhook.clientConfig.caBundle,
      Buffer.from(certs.caCert).toString('base64'),
    );
    ctl.trigger();
    ac.abort();
    await running;
    assert.equal(reloaded, 1, 'unchanged certs are not rewritten');
    assert.throws(
      () => new WebhookCertController({ client, registrations: regs, features, clientMode: urlMode, certDir: dir, external: { dir } }),
      /EnableExternalCerts/,
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('with a fence that refuses, WebhookCertController writes nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-fenced-'));
    const before = api.requests.filter((r) => r.method !== 'GET').length;
    const ctl = new WebhookCertController({
      client,
      registrations: regs,
      features,
      clientMode: { ...urlMode, port: 1 },
      certDir: dir,
      secret: { namespace: 'kruise-system', name: 'fenced-certs' },
      mutatingName: 'fenced-m',
      validatingName: 'fenced-v',
      logger: silent,
      beforeWrite: async () => {
        throw new NotLeaseHolderError('not the holder');
      },
    });
    await assert.rejects(ctl.sync(), NotLeaseHolderError);
    assert.equal(api.requests.filter((r) => r.method !== 'GET').length, before, 'no write reached the API server');
    assert.equal(api.getObject(MWC, 'fenced-m'), undefined);
    assert.equal(api.getObject(SECRETS, 'kruise-system/fenced-certs'), undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('verify() writes nothing: false while anything is out of line, then true and ready once a pass has put it in line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-verify-'));
    const make = () =>
      new WebhookCertController({
        client,
        registrations: regs,
        features,
        clientMode: { ...urlMode, port: 2 },
        certDir: dir,
        secret: { namespace: 'kruise-system', name: 'verify-certs' },
        mutatingName: 'verify-m',
        validatingName: 'verify-v',
        logger: silent,
      });
    const writes = () => api.requests.filter((r) => r.method !== 'GET').length;
    const before = writes();
    assert.equal(await make().verify(), false, 'no Secret, no configurations yet');
    assert.equal(writes(), before, 'no write reached the API server');
    assert.equal(api.getObject(MWC, 'verify-m'), undefined);
    await make().sync();
    const afterSync = writes();
    const verified = make();
    let ready = false;
    void verified.ready.then(() => (ready = true));
    assert.equal(await verified.verify(), true);
    await Promise.resolve();
    assert.ok(ready, 'ready without a pass of its own');
    assert.equal(writes(), afterSync);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stopped while a sync is in flight, run() returns at once instead of waiting out the resync', { timeout: 10_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-stop-'));
    const ctl = new WebhookCertController({
      client,
      registrations: regs,
      features,
      clientMode: urlMode,
      certDir: dir,
      secret: { namespace: 'kruise-system', name: 'stop-certs' },
      mutatingName: 'stop-m',
      validatingName: 'stop-v',
      logger: silent,
      resyncMs: 3_600_000,
    });
    const ac = new AbortController();
    // Abort when the sync writes its first configuration, i.e. before the sync has returned.
    const stopMidSync = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (api.requests.some((r) => r.method === 'POST' && /mutatingwebhookconfigurations$/.test(r.path))) {
          clearInterval(timer);
          ac.abort();
          resolve();
        }
      }, 1);
    });
    const running = ctl.run(ac.signal);
    await stopMidSync;
    const stopped = Date.now();
    await running;
    assert.ok(Date.now() - stopped < 2_000, `run() returned ${Date.now() - stopped} ms after the abort`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('with watch on, drift in a webhook configuration or a CRD is corrected at once, not at the resync', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-watch-'));
    const ctl = new WebhookCertController({
      client,
      registrations: regs,
      features,
      clientMode: urlMode,
      certDir: dir,
      secret: { namespace: 'kruise-system', name: 'watch-certs' },
      mutatingName: 'watch-m',
      validatingName: 'watch-v',
      logger: silent,
      resyncMs: 3_600_000,
      watch: true,
    });
    const ac = new AbortController();
    const running = ctl.run(ac.signal);
    await ctl.ready;
    const want = api.getObject(VWC, 'watch-v')!.webhooks[0].clientConfig.url;
    const until = async (what: string, ok: () => boolean) => {
      for (const deadline = Date.now() + 5_000; !ok(); await new Promise((r) => setTimeout(r, 20))) {
        assert.ok(Date.now() < deadline, `${what} not corrected within 5 s`);
      }
    };
    const vwc = api.getObject(VWC, 'watch-v')!;
    api.put(VWC, {
      ...vwc,
      webhooks: vwc.webhooks.map((w: any) => ({ ...w, clientConfig: { ...w.clientConfig, url: 'https://127.0.0.1:1/x' } })),
    });
    await until('the validating configuration', () => api.getObject(VWC, 'watch-v')!.webhooks[0].clientConfig.url === want);
    const crd = api.getObject(CRDS, 'clonesets.apps.kruise.io')!;
    const drifted = structuredClone(crd);
    drifted.spec.conversion.webhook.clientConfig = { url: 'https://127.0.0.1:1/convert' };
    api.put(CRDS, drifted);
    await until(
      'the CRD conversion',
      () => api.getObject(CRDS, 'clonesets.apps.kruise.io')!.spec.conversion.webhook.clientConfig.url === 'https://127.0.0.1:9876/convert',
    );
    ac.abort();
    await running;
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('lease fencing', () => {
  let client: KubeClient;
  let api: FakeApiServer;
  useFakeApiServer((s, c) => {
    api = s;
    client = c;
  });
  const lease = { namespace: 'kruise-system', name: 'kruise-manager' };
  const put = (holderIdentity: string, renewedAgoMs: number) =>
    api.put('coordination.k8s.io/v1/leases', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...lease },
      spec: { holderIdentity, leaseDurationSeconds: 15, renewTime: new Date(Date.now() - renewedAgoMs).toISOString() },
    });

  it('holds only as the holder with a renewal younger than the lease duration (minus a margin)', async () => {
    assert.equal(await leaseHeld(client, lease, 'a'), false, 'no lease');
    put('a', 1_000);
    assert.equal(await leaseHeld(client, lease, 'a'), true);
    assert.equal(await leaseHeld(client, lease, 'b'), false, 'another holder');
    put('a', 14_000);
    assert.equal(await leaseHeld(client, lease, 'a'), false, 'within the margin of expiry');
    put('a', 25_000);
    assert.equal(await leaseHeld(client, lease, 'a'), false, 'a frozen leader’s lease has expired');
    await assert.rejects(leaseFence(client, lease, 'a')(), /lease kruise-system\/kruise-manager is no longer held by a/);
    put('a', 0);
    await leaseFence(client, lease, 'a')();
  });
});
