// Pods and nodes read as protobuf from the real API server are the objects JSON gives: the same
// lists (with and without managedFields, as the informers read them), the same watch events
// (ADDED, MODIFIED, DELETED of a pod with nearly every field set), the same errors (a Status)
// — compared deep-equal and key for key (JSON.stringify). One client asks for protobuf as the
// product does; the other, over a transport that asks only for JSON, is what the client read before.
// With KRUISE_TS_UPDATE_FIXTURES=1 it also records the raw answers into test/fixtures/protobuf/
// for the unit test of the decoder (test/unit/runtime/protobuf-codec.test.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient, type WatchEvent } from '../../src/runtime/client.ts';
import { accessFromKubeconfigFile } from '../../src/runtime/kubeconfig.ts';
import { newTransport, type ApiRequest, type Transport } from '../../src/runtime/transport.ts';
import { Nodes, Pods } from '../../src/runtime/resources.ts';
import type { KubeObject, Pod } from '../../src/apis/core-objects.ts';
import { StatusError } from '../../src/runtime/errors.ts';
import { createNamespace, deleteNamespace, testCluster, waitFor } from '../harness/cluster.ts';

const access = accessFromKubeconfigFile(testCluster().kubeconfig);
const base = new URL(access.server);

/** A transport that records the Content-Type of every answer, and can force the Accept header. */
function recording(accept?: string): Transport & { contentTypes: string[] } {
  const inner = newTransport(base, access.tls);
  const contentTypes: string[] = [];
  return {
    contentTypes,
    async exchange(req: ApiRequest) {
      const res = await inner.exchange(accept ? { ...req, headers: { ...req.headers, accept } } : req);
      contentTypes.push(String(res.headers['content-type']));
      return res;
    },
    close: () => inner.close(),
  };
}

const protoTransport = recording();
const jsonTransport = recording('application/json');
const proto = new KubeClient({ ...access, qps: 0 }, protoTransport);
const json = new KubeClient({ ...access, qps: 0 }, jsonTransport);
let ns: string;

/** A pod with nearly every kind of field: quantities, int-or-strings, int64s, inline volume sources, times. */
function fullPod(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      labels: { app: 'wire', tier: 'b' },
      annotations: { 'example.com/a': 'x', 'example.com/empty': '' },
      finalizers: ['example.com/hold'],
    },
    spec: {
      terminationGracePeriodSeconds: 0,
      activeDeadlineSeconds: 86_400,
      priority: 0,
      enableServiceLinks: false,
      hostname: 'h',
      subdomain: 's',
      dnsPolicy: 'ClusterFirst',
      dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
      securityContext: {
        runAsUser: 1000,
        runAsGroup: 3000,
        fsGroup: 2000,
        runAsNonRoot: true,
        sysctls: [{ name: 'net.ipv4.ping_group_range', value: '0 1' }],
      },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'type', operator: 'In', values: ['kwok'] }] }],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'Exists' }] } },
          ],
        },
      },
      tolerations: [
        { key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
      ],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: 'wire' } },
        },
      ],
      initContainers: [{ name: 'init', image: 'busybox', command: ['true'], restartPolicy: 'Always' }],
      containers: [
        {
          name: 'main',
          image: 'nginx:1.27',
          args: ['-g', 'daemon off;'],
          ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }, { containerPort: 9090 }],
          env: [
            { name: 'PLAIN', value: 'v' },
            { name: 'EMPTY', value: '' },
            { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          ],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1.5', memory: '1Gi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5, failureThreshold: 0 },
          livenessProbe: { tcpSocket: { port: 80 }, initialDelaySeconds: 3 },
          lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } },
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
            readOnlyRootFilesystem: true,
          },
          volumeMounts: [
            { name: 'data', mountPath: '/data' },
            { name: 'cfg', mountPath: '/etc/cfg', readOnly: true, subPath: 'x' },
          ],
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      volumes: [
        { name: 'data', emptyDir: { sizeLimit: '500Mi' } },
        { name: 'cfg', configMap: { name: 'cfg', optional: true, defaultMode: 0o644, items: [{ key: 'a', path: 'a', mode: 0o400 }] } },
        {
          name: 'proj',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
              { downwardAPI: { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels' } }] } },
            ],
          },
        },
      ],
      readinessGates: [{ conditionType: 'example.com/ready' }],
    },
  } as Pod;
}

before(async () => {
  ns = await createNamespace('wire');
  for (const name of ['full-a', 'full-b']) await json.create(Pods, fullPod(name));
  // KWOK runs them: status with conditions, container statuses, IPs, start times.
  await waitFor(
    'the pods run',
    async () => {
      const pods = await json.list<Pod>(Pods, { namespace: ns });
      return pods.items.every((p) => p.status?.phase === 'Running' && p.status.containerStatuses?.length);
    },
    60_000,
  );
});

after(async () => {
  for (const name of ['full-a', 'full-b']) {
    await json
      .patch(Pods, name, { metadata: { finalizers: null } }, { namespace: ns, patchType: 'application/merge-patch+json' })
      .catch(() => undefined);
  }
  await deleteNamespace(ns);
  await proto.close();
  await json.close();
});

/** Deep-equal and written alike (key order included). */
function assertSame(got: unknown, want: unknown, what: string): void {
  assert.deepStrictEqual(got, want, what);
  assert.equal(JSON.stringify(got), JSON.stringify(want), `${what}: same keys in the same order`);
}

function lastContentType(t: { contentTypes: string[] }): string {
  return t.contentTypes.at(-1) ?? '';
}

test('pod and node lists: protobuf decodes to the objects JSON gives', async () => {
  for (const withoutManagedFields of [false, true]) {
    const want = await json.list<Pod>(Pods, { namespace: ns, withoutManagedFields });
    assert.match(lastContentType(jsonTransport), /^application\/json/);
    const got = await proto.list<Pod>(Pods, {
      namespace: ns,
      resourceVersion: want.metadata.resourceVersion,
      resourceVersionMatch: 'Exact',
      withoutManagedFields,
    });
    assert.match(lastContentType(protoTransport), /^application\/vnd\.kubernetes\.protobuf/);
    // Same snapshot: the JSON list's resourceVersion, exactly.
    assertSame(got.items, want.items, `pods (withoutManagedFields: ${withoutManagedFields})`);
    assert.equal(got.items.length, 2);
    assert.equal(
      withoutManagedFields,
      got.items.every((p) => p.metadata.managedFields === undefined),
    );
  }
  // The whole list (head included) of all pods and of nodes, as an informer's first list asks (RV 0, one response).
  for (const type of [Pods, Nodes]) {
    const want = await json.list<KubeObject>(type, { resourceVersion: '0', withoutManagedFields: true });
    const got = await proto.list<KubeObject>(type, { resourceVersion: '0', withoutManagedFields: true });
    if (got.metadata.resourceVersion !== want.metadata.resourceVersion) continue; // the cluster moved between them: compared above
    assertSame(got, want, `${type.resource} list`);
  }
});

test('a paged list: continue tokens and the head come through protobuf', async () => {
  const tokens: string[] = [];
  const first = await proto.list<Pod>(Pods, { namespace: ns, limit: 1, onContinue: (t) => tokens.push(t) });
  assert.equal(first.items.length, 1);
  assert.ok(first.metadata.continue);
  assert.deepEqual(tokens, [first.metadata.continue]);
  assert.equal(first.kind, 'PodList');
  assert.equal(first.apiVersion, 'v1');
  const second = await proto.list<Pod>(Pods, { namespace: ns, limit: 1, continue: first.metadata.continue });
  assert.equal(second.items.length, 1);
  assert.notEqual(second.items[0]!.metadata.name, first.items[0]!.metadata.name);
});

test('an error answer in protobuf is the same StatusError', async () => {
  const refused = async (c: KubeClient) => {
    try {
      await c.list(Pods, { namespace: ns, limit: 1, continue: 'not-a-token' });
    } catch (err) {
      assert.ok(err instanceof StatusError, String(err));
      return err;
    }
    assert.fail('an invalid continue token was accepted');
  };
  const [p, j] = [await refused(proto), await refused(json)];
  assert.match(lastContentType(protoTransport), /^application\/vnd\.kubernetes\.protobuf/);
  assert.equal(p.code, j.code);
  assertSame(p.status, j.status, 'the Status');
});

async function collect(c: KubeClient, resourceVersion: string, until: (ev: WatchEvent<Pod>) => boolean, signal: AbortSignal) {
  const events: WatchEvent<Pod>[] = [];
  for await (const ev of c.watch<Pod>(Pods, { namespace: ns, resourceVersion, timeoutSeconds: 60, signal })) {
    if (ev.type === 'BOOKMARK') continue;
    events.push(ev);
    if (until(ev)) break;
  }
  return events;
}

test('watch events of a pod: protobuf decodes to the events JSON gives', async () => {
  const start = (await json.list<Pod>(Pods, { namespace: ns, limit: 1 })).metadata.resourceVersion!;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 60_000);
  const done = (ev: WatchEvent<Pod>) => ev.type === 'DELETED' && ev.object.metadata.name === 'full-c';
  const watching = [collect(proto, start, done, abort.signal), collect(json, start, done, abort.signal)];
  await json.create(Pods, fullPod('full-c'));
  await json.patch(
    Pods,
    'full-c',
    { metadata: { labels: { extra: 'yes' }, finalizers: null } },
    { namespace: ns, patchType: 'application/merge-patch+json' },
  );
  await json.delete(Pods, 'full-c', { namespace: ns, gracePeriodSeconds: 0 });
  const [got, want] = await Promise.all(watching);
  clearTimeout(timer);
  assert.ok(want.length >= 3, `events: ${want.map((e) => e.type).join(',')}`);
  assert.match(
    protoTransport.contentTypes.findLast((t) => t.includes('stream=watch')) ?? '',
    /^application\/vnd\.kubernetes\.protobuf;stream=watch/,
  );
  assertSame(got, want, 'watch events');

  if (process.env.KRUISE_TS_UPDATE_FIXTURES === '1') await recordFixtures();
});

/** The raw answers the unit test decodes: a pod list as JSON and as protobuf (the same snapshot), and an error. */
async function recordFixtures(): Promise<void> {
  const dir = path.join(import.meta.dirname, '..', 'fixtures', 'protobuf');
  mkdirSync(dir, { recursive: true });
  const transport = newTransport(base, access.tls);
  const rv = (await json.list<Pod>(Pods, { namespace: ns, limit: 1 })).metadata.resourceVersion!;
  const read = async (accept: string, at = `/api/v1/namespaces/${ns}/pods?resourceVersion=${rv}&resourceVersionMatch=Exact`) => {
    const url = new URL(at, base);
    const res = await transport.exchange({ method: 'GET', url, headers: { accept }, timeoutMs: 30_000 });
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
  writeFileSync(path.join(dir, 'pod-list.json'), await read('application/json'));
  writeFileSync(path.join(dir, 'pod-list.pb'), await read('application/vnd.kubernetes.protobuf'));
  const refused = `/api/v1/namespaces/${ns}/pods?limit=1&continue=not-a-token`;
  writeFileSync(path.join(dir, 'status.json'), await read('application/json', refused));
  writeFileSync(path.join(dir, 'status.pb'), await read('application/vnd.kubernetes.protobuf', refused));
  transport.close();
}
