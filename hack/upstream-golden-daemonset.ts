// Regenerates test/fixtures/upstream-v1.8.2/daemonset-golden.json: Advanced DaemonSets with varied
// pod templates created through upstream OpenKruise v1.8.2 (its webhooks and controller, on a local
// cluster of its own), and what upstream stored and named for them — the defaulted spec, every
// ControllerRevision (name, labels, data) and status.daemonSetHash, before and after a template
// change. v1.8.2 names a revision `<ds>-<ComputeHash(template, collisionCount)>`: FNV-32a over
// spew's `%#v` print of the Go PodTemplateSpec. test/unit/daemonset-golden.test.ts checks Kruise TS
// against it. Test tooling only.
//
//   KRUISE_TS_TEST_CLUSTER=<name> node_modules/.bin/node --import tsx hack/upstream-golden-daemonset.ts
//
// (The peer runs on the cluster <name>-upstream, created when missing and removed afterwards
// unless KRUISE_TS_KEEP_CLUSTER=1.)
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { kubectl } from '../src/cluster/local-cluster.ts';
import { startUpstreamPeer } from '../test/harness/upstream-peer.ts';

const NAMESPACE = 'golden-ads';
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/upstream-v1.8.2/daemonset-golden.json');
const IMAGE = 'registry.example/agent:v1';

type Obj = {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: Array<{ name: string }> };
  spec?: Record<string, unknown>;
  status?: { daemonSetHash?: string; observedGeneration?: number; collisionCount?: number };
  data?: unknown;
  revision?: number;
};

const ads = (name: string, template: { metadata?: Record<string, unknown>; spec: Record<string, unknown> }) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'DaemonSet',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { ...template, metadata: { ...template.metadata, labels: { app: name, ...(template.metadata?.labels ?? {}) } } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
  },
});

/** Templates as users write them: each exercises a part of the Go PodTemplateSpec print. */
const DAEMONSETS = [
  ads('ads-min', { spec: { containers: [{ name: 'agent', image: IMAGE }] } }),
  ads('ads-quantities', {
    spec: {
      containers: [
        {
          name: 'a',
          image: IMAGE,
          resources: { limits: { cpu: '0.5', memory: '1024Mi', 'ephemeral-storage': '2Gi' }, requests: { cpu: '250m', memory: '512Mi' } },
        },
        { name: 'b', image: IMAGE, resources: { limits: { cpu: '2', memory: '1536Mi' }, requests: { cpu: '1500m', memory: '100M' } } },
        { name: 'c', image: IMAGE, resources: { limits: { cpu: 1, memory: 1073741824 }, requests: { cpu: '0.25', memory: '129e6' } } },
        { name: 'd', image: IMAGE, resources: { limits: { memory: '1.5Gi', cpu: '1e3' }, requests: { memory: '123Mi', cpu: '0' } } },
        { name: 'e', image: IMAGE, resources: { limits: { memory: '1G', cpu: '100m' }, requests: { memory: '128974848', cpu: '0.1' } } },
        { name: 'f', image: IMAGE, resources: { limits: { memory: '64Mi', cpu: '1k' }, requests: { memory: '10Ki', cpu: '999m' } } },
      ],
    },
  }),
  ads('ads-probes', {
    spec: {
      containers: [
        {
          name: 'web',
          image: IMAGE,
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'dns', containerPort: 53, protocol: 'UDP', hostPort: 5353 },
          ],
          livenessProbe: {
            httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: 'live' }] },
            initialDelaySeconds: 5,
            periodSeconds: 10,
            failureThreshold: 3,
          },
          readinessProbe: { tcpSocket: { port: 'http' }, timeoutSeconds: 2, successThreshold: 1 },
          startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, terminationGracePeriodSeconds: 15 },
        },
        { name: 'grpc', image: IMAGE, livenessProbe: { grpc: { port: 9090, service: 'health' } } },
      ],
    },
  }),
  ads('ads-security', {
    spec: {
      securityContext: {
        runAsUser: 1000,
        runAsGroup: 3000,
        fsGroup: 2000,
        supplementalGroups: [4000, 5000],
        sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }],
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'guard',
          image: IMAGE,
          securityContext: {
            capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
            privileged: false,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            runAsNonRoot: true,
            seLinuxOptions: { level: 's0:c123,c456', type: 'spc_t' },
          },
        },
      ],
    },
  }),
  ads('ads-env', {
    spec: {
      containers: [
        {
          name: 'app',
          image: IMAGE,
          command: ['/bin/agent', ''],
          args: ['--flag=a b', 'ünïcode', 'line\nbreak', 'quote"s'],
          workingDir: '/work',
          env: [
            { name: 'PLAIN', value: 'v' },
            { name: 'EMPTY', value: '' },
            { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'NODE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
            { name: 'MEM', valueFrom: { resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } } },
            { name: 'CM', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k', optional: true } } },
            { name: 'SEC', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
          ],
          envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'cfg' } }, { secretRef: { name: 'sec', optional: false } }],
          resources: { limits: { memory: '256Mi' } },
        },
      ],
    },
  }),
  ads('ads-volumes', {
    spec: {
      containers: [
        {
          name: 'app',
          image: IMAGE,
          volumeMounts: [
            { name: 'scratch', mountPath: '/scratch' },
            { name: 'host', mountPath: '/host', readOnly: true, mountPropagation: 'HostToContainer' },
            { name: 'cfg', mountPath: '/etc/cfg', subPath: 'app.conf' },
            { name: 'sec', mountPath: '/etc/sec' },
            { name: 'proj', mountPath: '/var/run/proj' },
          ],
        },
      ],
      volumes: [
        { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
        { name: 'plain', emptyDir: {} },
        { name: 'host', hostPath: { path: '/var/log', type: 'DirectoryOrCreate' } },
        { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'app.conf', path: 'app.conf', mode: 256 }], defaultMode: 420 } },
        { name: 'sec', secret: { secretName: 'sec', optional: true } },
        {
          name: 'proj',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: 3600, audience: 'api' } },
              { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
              { configMap: { name: 'cfg' } },
            ],
            defaultMode: 292,
          },
        },
        { name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
      ],
    },
  }),
  ads('ads-scheduling', {
    spec: {
      nodeSelector: { 'kubernetes.io/os': 'linux', 'node-role.example/agent': 'true', zone: 'z1' },
      tolerations: [
        { operator: 'Exists' },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'dedicated', operator: 'Equal', value: 'agents', effect: 'NoSchedule' },
      ],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'type', operator: 'NotIn', values: ['virtual-kubelet', 'edge'] }] }],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
          ],
        },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: { labelSelector: { matchLabels: { app: 'other' } }, topologyKey: 'kubernetes.io/hostname' },
            },
          ],
        },
      },
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'ads-scheduling' } } },
      ],
      priorityClassName: 'system-node-critical',
      schedulerName: 'default-scheduler',
      containers: [{ name: 'agent', image: IMAGE }],
    },
  }),
  ads('ads-init-lifecycle', {
    spec: {
      initContainers: [
        { name: 'setup', image: IMAGE, command: ['sh', '-c', 'true'] },
        { name: 'proxy', image: IMAGE, restartPolicy: 'Always', ports: [{ containerPort: 15001 }] },
      ],
      containers: [
        {
          name: 'agent',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          lifecycle: {
            postStart: { exec: { command: ['sh', '-c', 'echo started'] } },
            preStop: { httpGet: { path: '/stop', port: 'admin', host: '127.0.0.1' } },
          },
          ports: [{ name: 'admin', containerPort: 9000, protocol: 'TCP' }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'FallbackToLogsOnError',
          stdin: true,
          tty: true,
        },
      ],
      terminationGracePeriodSeconds: 0,
      restartPolicy: 'Always',
    },
  }),
  ads('ads-podspec', {
    metadata: {
      labels: { tier: 'node', 'example.com/team': 'infra', Zeta: 'upper' },
      annotations: { 'example.com/note': 'spaces and ünïcode', 'a.example/empty': '', 'b.example/json': '{"k":[1,2]}' },
    },
    spec: {
      hostNetwork: true,
      dnsPolicy: 'ClusterFirstWithHostNet',
      dnsConfig: {
        nameservers: ['10.0.0.10'],
        searches: ['svc.cluster.local'],
        options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
      },
      hostAliases: [{ ip: '127.0.0.1', hostnames: ['foo.local', 'bar.local'] }],
      imagePullSecrets: [{ name: 'registry' }],
      serviceAccountName: 'agent',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      readinessGates: [{ conditionType: 'example.com/ready' }],
      os: { name: 'linux' },
      shareProcessNamespace: true,
      containers: [{ name: 'agent', image: IMAGE, ports: [{ containerPort: 9100, hostPort: 9100 }] }],
    },
  }),
  ads('ads-empty-lists', {
    spec: { containers: [{ name: 'agent', image: IMAGE, args: [], env: [] }], nodeSelector: {}, tolerations: [] },
  }),
];

/** Template changes made after the first revision: a second revision each. */
const CHANGES: Array<{ name: string; patch: unknown[] }> = [
  { name: 'ads-min', patch: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'registry.example/agent:v2' }] },
  {
    name: 'ads-quantities',
    patch: [{ op: 'replace', path: '/spec/template/spec/containers/0/resources/limits/memory', value: '2048Mi' }],
  },
];

const peer = await startUpstreamPeer();
const run = (args: string[], input?: string) => kubectl(peer.cluster, args, input);
const getJson = async <T = Obj>(args: string[]): Promise<T> => JSON.parse(await run([...args, '-o', 'json'])) as T;
const revisionsOf = async (name: string) =>
  (await getJson<{ items: Obj[] }>(['-n', NAMESPACE, 'get', 'controllerrevisions'])).items
    .filter((r) => r.metadata.ownerReferences?.some((o) => o.name === name))
    .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
/** Once upstream has observed the spec and named its revision. */
const settled = async (name: string, revisions: number) => {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ds = await getJson<Obj & { metadata: { generation: number } }>(['-n', NAMESPACE, 'get', 'daemonsets.apps.kruise.io', name]);
    const revs = await revisionsOf(name);
    if (ds.status?.observedGeneration === ds.metadata.generation && ds.status.daemonSetHash && revs.length === revisions) return ds;
    if (Date.now() > deadline) throw new Error(`${name} did not settle under upstream: ${JSON.stringify(ds.status)}`);
    await sleep(1000);
  }
};
const snapshot = async (name: string, ds: Obj) => ({
  spec: ds.spec,
  status: { daemonSetHash: ds.status?.daemonSetHash, collisionCount: ds.status?.collisionCount },
  revisions: (await revisionsOf(name)).map((r) => ({
    name: r.metadata.name,
    labels: r.metadata.labels,
    revision: r.revision,
    data: r.data,
  })),
});
try {
  await run(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true']);
  await run(['create', 'namespace', NAMESPACE]);
  // ads-podspec's pods need it (a failed pod creation holds upstream's status update).
  await run(['-n', NAMESPACE, 'create', 'serviceaccount', 'agent']);
  for (const d of DAEMONSETS) await run(['-n', NAMESPACE, 'create', '-f', '-'], JSON.stringify(d));
  const created: Array<Awaited<ReturnType<typeof snapshot>>> = [];
  for (const d of DAEMONSETS) created.push(await snapshot(d.metadata.name, await settled(d.metadata.name, 1)));
  const changed: Array<(typeof CHANGES)[number] & Awaited<ReturnType<typeof snapshot>>> = [];
  for (const c of CHANGES) {
    await run(['-n', NAMESPACE, 'patch', 'daemonsets.apps.kruise.io', c.name, '--type=json', '-p', JSON.stringify(c.patch)]);
    changed.push({ ...c, ...(await snapshot(c.name, await settled(c.name, 2))) });
  }
  const golden = {
    peer: peer.version,
    regenerate: 'KRUISE_TS_TEST_CLUSTER=<name> node_modules/.bin/node --import tsx hack/upstream-golden-daemonset.ts',
    daemonSets: DAEMONSETS.map((input, i) => ({ input, ...created[i] })),
    changes: changed,
  };
  writeFileSync(out, await format(JSON.stringify(golden), { ...(await resolveConfig(out)), parser: 'json', filepath: out }));
  process.stdout.write(`wrote ${out}\n`);
} finally {
  await peer.stop();
}
