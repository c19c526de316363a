// charts/kruise-ts against OpenKruise's own chart (openkruise/charts versions/kruise/1.8.x, vendored
// in test/data/openkruise-chart-1.8): both rendered with the same OpenKruise values files, reduced
// to what the install does — the manager's and the daemon's effective settings (arguments, log
// level, ports, placement, security contexts), the webhooks' settings, and the RBAC each service
// account gets — and compared. Every difference must be one of the deliberate ones below, each
// explained in docs/install.md; a new one fails the test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ensureHelm, repoRoot } from '../../../src/cluster/binaries.ts';
import { CHART_DIR } from '../../../src/manager/chart.ts';

const ours = path.join(repoRoot, CHART_DIR);
const upstream = path.join(repoRoot, 'test/data/openkruise-chart-1.8');
const valuesDir = path.join(upstream, 'values');
/** The API server version of the local cluster (upstream's template varies with it). */
const KUBE_VERSION = '1.36.3';

/**
 * The deliberate differences: setting path → why (docs/install.md, "Differences from OpenKruise's
 * chart", says the same). A path differs under every values file unless the entry names some.
 */
const KNOWN_DIFFERENCES: Record<string, { why: string; only?: string[] }> = {
  'manager.args': { why: 'flags only one has: `start`, --webhook-client-mode, --api-versions (ours); --logtostderr (upstream)' },
  'manager.terminationGracePeriodSeconds': { why: '30 s: preStop 3 s + the 5 s webhook drain while controllers stop' },
  'manager.maxSurge': { why: 'one replica at a time (maxSurge 1, maxUnavailable 0) so the webhooks stay served' },
  'manager.resources': { why: 'a Node.js process: CPU limit 500m (upstream 200m) so start-up stays short' },
  'manager.securityContext.capabilities.add': { why: 'ours adds no NET_BIND_SERVICE: its ports are above 1024' },
  'manager.securityContext.readOnlyRootFilesystem': { why: 'ours: read-only root filesystem (the certificate goes to an emptyDir)' },
  'manager.securityContext.runAsUser': { why: "the image's user 65532 (upstream's chart sets 65534)" },
  'daemon.args': { why: 'flags only one has: --enable-pprof / --pprof-addr (upstream: no pprof here)' },
  'daemon.logLevel': { why: "upstream's daemon always runs --v=4; ours takes daemon.log.level", only: ['gates-off'] },
  'daemon.resources': { why: 'a Node.js process: limits 200m / 256Mi (upstream 50m / 128Mi)' },
  'daemon.securityContext.readOnlyRootFilesystem': { why: 'ours: read-only root filesystem (/tmp is an emptyDir)' },
  'daemon.securityContext.runAsUser': { why: "root said explicitly (the image's user is 65532; upstream's image runs as root)" },
  'objects.ClusterRole/kruise-certs-role': { why: 'folded into kruise-manager-role', only: ['defaults', 'gates-off', 'daemon-off', 'ha'] },
  'objects.ClusterRoleBinding/kruise-certs-rolebinding': {
    why: 'folded into kruise-manager-role',
    only: ['defaults', 'gates-off', 'daemon-off', 'ha'],
  },
  'objects.Role/kruise-webhook-role': { why: 'folded into kruise-manager-role' },
  'objects.RoleBinding/kruise-webhook-rolebinding': { why: 'folded into kruise-manager-role' },
  'objects.ClusterRole/kruise-metrics-reader': { why: 'ours: for scrapers of --metrics-secure' },
  'objects.PodDisruptionBudget/kruise-controller-manager': { why: 'ours: keeps a replica up through voluntary disruptions' },
  'objects.Secret/kruise-webhook-certs': {
    why: 'the manager creates the Secret itself (upstream: an empty one from the chart)',
    only: ['defaults', 'gates-off', 'daemon-off', 'ha'],
  },
  'objects.ServiceAccount/kruise-daemon': { why: 'no daemon, no daemon account', only: ['daemon-off'] },
  'objects.ClusterRole/kruise-daemon-role': { why: 'no daemon, no daemon role', only: ['daemon-off'] },
  'objects.ClusterRoleBinding/kruise-daemon-rolebinding': { why: 'no daemon, no daemon role', only: ['daemon-off'] },
  'objects.Role/kruise-daemon-secret-role': { why: 'no daemon, no daemon role', only: ['daemon-off'] },
  'objects.RoleBinding/kruise-daemon-secret-rolebinding': { why: 'no daemon, no daemon role', only: ['daemon-off'] },
  'objects.ClusterRole/kruise-helm-hook-role': { why: 'no pre-delete hook' },
  'objects.ClusterRoleBinding/kruise-helm-hook-rolebinding': { why: 'no pre-delete hook' },
  'objects.ServiceAccount/kruise-helm-hook': { why: 'no pre-delete hook' },
  'objects.Job/kruise-finalizer': { why: 'no pre-delete hook' },
  'rbac.kruise-manager': { why: 'least privilege: generated from the access lists (docs/operations.md#rbac)' },
  'rbac.kruise-daemon': { why: 'least privilege: generated from the access lists (docs/operations.md#rbac)' },
  'rbac.kruise-manager + * /namespaces create': { why: 'kruise-system and kruise-daemon-config are created when missing' },
  'rbac.kruise-manager + * /secrets patch': { why: 'the ImagePullJob controller patches its pull-secret copies' },
  'rbac.kruise-manager + * admissionregistration.k8s.io/mutatingwebhookconfigurations create': {
    why: 'url mode (outside a cluster) creates them',
  },
  'rbac.kruise-manager + * admissionregistration.k8s.io/validatingwebhookconfigurations create': {
    why: 'url mode (outside a cluster) creates them',
  },
  'rbac.kruise-manager + * admissionregistration.k8s.io/mutatingwebhookconfigurations update': {
    why: 'with external certs ours still writes the webhooks (the configurations start empty)',
    only: ['external-certs'],
  },
  'rbac.kruise-manager + * admissionregistration.k8s.io/mutatingwebhookconfigurations patch': {
    why: 'with external certs ours still writes the webhooks (the configurations start empty)',
    only: ['external-certs'],
  },
  'rbac.kruise-manager + * admissionregistration.k8s.io/validatingwebhookconfigurations update': {
    why: 'with external certs ours still writes the webhooks (the configurations start empty)',
    only: ['external-certs'],
  },
  'rbac.kruise-manager + * admissionregistration.k8s.io/validatingwebhookconfigurations patch': {
    why: 'with external certs ours still writes the webhooks (the configurations start empty)',
    only: ['external-certs'],
  },
  'rbac.kruise-manager + * apiextensions.k8s.io/customresourcedefinitions update': {
    why: "with external certs ours still points the CRDs' conversion at the Service",
    only: ['external-certs'],
  },
  'rbac.kruise-manager + * apps/daemonsets get': { why: "admission handlers' lookups" },
  'rbac.kruise-manager + * storage.k8s.io/storageclasses get': { why: "admission handlers' lookups" },
  'rbac.kruise-manager + * authentication.k8s.io/tokenreviews create': { why: '--metrics-secure' },
  'rbac.kruise-manager + * authorization.k8s.io/subjectaccessreviews create': { why: '--metrics-secure' },
  'rbac.kruise-manager + * events.k8s.io/events create': { why: 'events.k8s.io Events (upstream: core Events)' },
  'rbac.kruise-manager + * events.k8s.io/events patch': { why: 'events.k8s.io Events (upstream: core Events)' },
  'rbac.kruise-daemon + * /nodes get': { why: 'its Node (the node scope)' },
  'rbac.kruise-daemon + * /nodes list': { why: 'its Node (the node scope)' },
  'rbac.kruise-daemon + * /nodes watch': { why: 'its Node (the node scope)' },
  'rbac.kruise-daemon + * /configmaps get': { why: "the simulated daemon's launch barrier (local cluster)" },
  'rbac.kruise-daemon + * authentication.k8s.io/tokenreviews create': { why: '--metrics-secure' },
  'rbac.kruise-daemon + * authorization.k8s.io/subjectaccessreviews create': { why: '--metrics-secure' },
  'rbac.kruise-daemon + * events.k8s.io/events create': { why: 'events.k8s.io Events (upstream: core Events)' },
  'rbac.kruise-daemon + * events.k8s.io/events patch': { why: 'events.k8s.io Events (upstream: core Events)' },
};

type Obj = { kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; [k: string]: unknown };
type Json = Record<string, unknown>;

const VALUES_FILES = readdirSync(valuesDir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

/** klog verbosity → the level the process logs at (ours: KRUISE_LOG_LEVEL from the same mapping). */
const levelOfVerbosity = (v: string) => (Number(v) >= 6 ? 'trace' : Number(v) === 5 ? 'debug' : 'info');

/** `--a=b` / `--a` (true) → {a: b}; positional words under `_`. */
function flags(args: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const positional: string[] = [];
  for (const a of args) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (m) out[m[1]!] = m[2] ?? 'true';
    else positional.push(a);
  }
  if (positional.length) out._ = positional;
  return out;
}

const take = (f: Record<string, string | string[]>, name: string) => {
  const v = f[name];
  delete f[name];
  return v as string | undefined;
};

interface Container {
  args?: string[];
  command?: string[];
  env?: Array<{ name: string; value?: string }>;
  securityContext?: Json & { capabilities?: { add?: string[]; drop?: string[] } };
  resources?: unknown;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface PodSpec {
  containers: Container[];
  securityContext?: Json;
  volumes?: Array<{ name: string; hostPath?: { path: string }; configMap?: { name: string } }>;
  [k: string]: unknown;
}

/** The security context a container runs with (pod-level fields folded in, capability names upper-cased). */
function effectiveSecurity(pod: PodSpec, c: Container): Json {
  const sc: Json = { ...(pod.securityContext ?? {}), ...(c.securityContext ?? {}) };
  const caps = c.securityContext?.capabilities;
  delete sc.capabilities;
  for (const [k, v] of Object.entries({
    'capabilities.add': caps?.add?.map((x) => x.toUpperCase()).sort(),
    'capabilities.drop': caps?.drop?.map((x) => x.toUpperCase()).sort(),
  }))
    if (v) sc[k] = v;
  return { privileged: false, ...sc };
}

function managerSettings(objs: Obj[], flavour: 'ours' | 'upstream'): Json {
  const d = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager') as unknown as {
    spec: { replicas: number; strategy: { rollingUpdate: { maxSurge: unknown } }; template: { spec: PodSpec } };
  };
  const pod = d.spec.template.spec;
  const c = pod.containers[0]!;
  const f = flags(c.args ?? []);
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
  const leaderElection = take(f, 'enable-leader-election');
  const syncPeriod = take(f, 'sync-period') ?? '0';
  const settings: Json = {
    replicas: d.spec.replicas,
    maxSurge: d.spec.strategy.rollingUpdate.maxSurge,
    featureGates: take(f, 'feature-gates'),
    leaderElection: leaderElection === 'true',
    leaderElectionNamespace: take(f, 'leader-election-namespace'),
    metricsAddr: take(f, 'metrics-addr'),
    healthProbeAddr: take(f, 'health-probe-addr'),
    syncPeriod: syncPeriod === '0' ? 'default' : syncPeriod,
    loggingFormat: take(f, 'logging-format') ?? 'default',
    logLevel: flavour === 'upstream' ? levelOfVerbosity(take(f, 'v')!) : env.KRUISE_LOG_LEVEL,
    webhookPort: flavour === 'upstream' ? env.WEBHOOK_PORT : take(f, 'webhook-port'),
    hostNetwork: pod.hostNetwork,
    nodeSelector: pod.nodeSelector,
    tolerations: pod.tolerations,
    nodeAffinity: (pod.affinity as Json | undefined)?.nodeAffinity,
    topologySpreadConstraints: pod.topologySpreadConstraints,
    imagePullSecrets: pod.imagePullSecrets,
    priorityClassName: pod.priorityClassName,
    serviceAccountName: pod.serviceAccountName,
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds,
    resources: c.resources,
    securityContext: effectiveSecurity(pod, c),
  };
  // Ours: the webhooks' timeout is the manager's flag (it writes the webhooks); upstream's is on each webhook.
  if (flavour === 'ours') settings.webhookTimeoutSeconds = Number(take(f, 'webhook-timeout-seconds'));
  take(f, 'logtostderr');
  settings.args = f;
  return settings;
}

function daemonSettings(objs: Obj[], flavour: 'ours' | 'upstream'): Json | undefined {
  const ds = objs.find((o) => o.kind === 'DaemonSet' && o.metadata.name === 'kruise-daemon') as unknown as
    { spec: { minReadySeconds?: number; updateStrategy: unknown; template: { spec: PodSpec } } } | undefined;
  if (!ds) return undefined;
  const pod = ds.spec.template.spec;
  const c = pod.containers[0]!;
  const f = flags(c.args ?? []);
  const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
  const socketVolume = pod.volumes!.find((v) => v.name === 'runtime-socket')!;
  const socketMount = c.volumeMounts!.find((m) => m.name === 'runtime-socket')!;
  // Upstream: --socket-file=<name> under the mount ("" probes); ours: --runtime-endpoint=unix://<mount>/<name>.
  const socketFile =
    flavour === 'upstream'
      ? take(f, 'socket-file') || 'probe'
      : (take(f, 'runtime-endpoint')?.replace(`unix://${socketMount.mountPath}/`, '') ?? 'probe');
  const mounted = (name: string) => {
    const m = c.volumeMounts!.find((v) => v.name === name);
    const v = pod.volumes!.find((x) => x.name === name);
    return m && { mountPath: m.mountPath, readOnly: m.readOnly ?? false, from: v?.hostPath?.path ?? v?.configMap?.name };
  };
  const extraEnv = (c.env ?? []).filter((e) => !['NODE_NAME', 'KRUISE_LOG_LEVEL', 'KUBE_CACHE_MUTATION_DETECTOR'].includes(e.name));
  const settings: Json = {
    featureGates: take(f, 'feature-gates'),
    addr: take(f, 'addr'),
    logLevel: flavour === 'upstream' ? levelOfVerbosity(take(f, 'v')!) : env.KRUISE_LOG_LEVEL,
    pluginConfigFile: take(f, 'plugin-config-file'),
    pluginBinDir: take(f, 'plugin-bin-dir'),
    socketHostPath: socketVolume.hostPath!.path,
    socketFile,
    runtimeSocketMountPath: socketMount.mountPath,
    runtimeSocketReadOnly: socketMount.readOnly ?? false,
    credentialProviderConfig: mounted('credential-provider-plugin-config'),
    credentialProviderPlugins: mounted('credential-provider-plugin'),
    awsCredentials: mounted('aws-credentials-dir'),
    extraEnv: extraEnv.length ? extraEnv : undefined,
    hostNetwork: pod.hostNetwork,
    dnsPolicy: pod.dnsPolicy,
    nodeSelector: pod.nodeSelector,
    affinity: pod.affinity,
    tolerations: pod.tolerations,
    imagePullSecrets: pod.imagePullSecrets,
    serviceAccountName: pod.serviceAccountName,
    minReadySeconds: ds.spec.minReadySeconds,
    updateStrategy: ds.spec.updateStrategy,
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds,
    resources: c.resources,
    securityContext: effectiveSecurity(pod, c),
  };
  take(f, 'logtostderr');
  settings.args = f;
  if (flavour === 'ours') delete (settings.args as Json)._; // the `daemon` subcommand
  return settings;
}

/** The webhook configurations' metadata and the settings upstream's chart puts on every webhook. */
function webhookSettings(objs: Obj[]): Json {
  const out: Json = {};
  for (const [key, kind] of [
    ['mutating', 'MutatingWebhookConfiguration'],
    ['validating', 'ValidatingWebhookConfiguration'],
  ] as const) {
    const cfg = objs.find((o) => o.kind === kind)!;
    // Upstream's manager keeps its webhook template in the annotation `template` (ours builds the
    // webhooks from its registrations): not a setting.
    const { template: _, ...annotations } = cfg.metadata.annotations ?? {};
    out[key] = { name: cfg.metadata.name, annotations };
  }
  return out;
}

/** Upstream's webhooks: one timeout for all, the Service they call. */
function upstreamWebhookTimeout(objs: Obj[]): number {
  const timeouts = new Set(
    objs
      .filter((o) => o.kind.endsWith('WebhookConfiguration'))
      .flatMap((o) => ((o.webhooks as Array<{ timeoutSeconds: number }> | undefined) ?? []).map((w) => w.timeoutSeconds)),
  );
  assert.equal(timeouts.size, 1, `one timeout for every upstream webhook: ${[...timeouts].join(', ')}`);
  return [...timeouts][0]!;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

/** What a service account may do: "<namespace or *> <group>/<resource> <verb>" for each grant. */
function grants(objs: Obj[], sa: string, namespace: string): Set<string> {
  const out = new Set<string>();
  for (const b of objs.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
    const binding = b as unknown as {
      roleRef: { kind: string; name: string };
      subjects: Array<{ kind: string; name: string; namespace?: string }>;
    };
    if (!binding.subjects.some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === namespace)) continue;
    const role = objs.find((o) => o.kind === binding.roleRef.kind && o.metadata.name === binding.roleRef.name) as unknown as
      { rules: Rule[] } | undefined;
    const scope = b.kind === 'RoleBinding' ? b.metadata.namespace! : '*';
    for (const r of role?.rules ?? [])
      for (const g of r.apiGroups ?? []) for (const res of r.resources ?? []) for (const v of r.verbs) out.add(`${scope} ${g}/${res} ${v}`);
  }
  return out;
}

/** A grant covered by another set of grants (a cluster-wide grant covers every namespace; `*` verbs or resources cover all). */
function covered(grant: string, by: Set<string>): boolean {
  const [scope, gr, verb] = grant.split(' ') as [string, string, string];
  const [group, resource] = [gr.slice(0, gr.indexOf('/')), gr.slice(gr.indexOf('/') + 1)];
  for (const s of [scope, '*'])
    for (const g of [group, '*'])
      for (const r of [resource, '*']) for (const v of [verb, '*']) if (by.has(`${s} ${g}/${r} ${v}`)) return true;
  return false;
}

/** Nested settings as path → JSON of the value. */
function flatten(value: unknown, prefix: string, out: Map<string, string>): Map<string, string> {
  if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length && !prefix.endsWith('args'))
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  else out.set(prefix, JSON.stringify(value && typeof value === 'object' && !Object.keys(value).length ? null : (value ?? null)));
  return out;
}

describe("charts/kruise-ts against OpenKruise's chart, with the same values files", () => {
  let helm: string;
  before(() => {
    helm = ensureHelm((l) => process.stderr.write(`${l}\n`));
  });
  const render = (chart: string, values: string): Obj[] => {
    const r = spawnSync(
      helm,
      [
        'template',
        'kruise',
        chart,
        '--kube-version',
        KUBE_VERSION,
        '--set',
        'crds.managed=false',
        '-f',
        path.join(valuesDir, `${values}.yaml`),
      ],
      { encoding: 'utf8', cwd: repoRoot },
    );
    assert.equal(r.status, 0, `helm template ${chart} -f ${values}.yaml failed:\n${r.stderr}`);
    return parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => !!o);
  };

  const cache = new Map<string, ReturnType<typeof install>>();
  const installed = (values: string) => {
    if (!cache.has(values)) cache.set(values, install(values));
    return cache.get(values)!;
  };
  const install = (values: string) => {
    const [o, u] = [render(ours, values), render(upstream, values)];
    const namespace = o.find((x) => x.kind === 'Deployment')!.metadata.namespace!;
    const settings = (objs: Obj[], flavour: 'ours' | 'upstream') => {
      const manager = managerSettings(objs, flavour);
      if (flavour === 'upstream') manager.webhookTimeoutSeconds = upstreamWebhookTimeout(objs);
      return { manager, daemon: daemonSettings(objs, flavour), webhooks: webhookSettings(objs) };
    };
    return { ours: o, upstream: u, namespace, settings: { ours: settings(o, 'ours'), upstream: settings(u, 'upstream') } };
  };

  const differences = (values: string) => {
    const { ours: o, upstream: u, namespace, settings } = installed(values);
    const [a, b] = [flatten(settings.ours, '', new Map()), flatten(settings.upstream, '', new Map())];
    const diff = new Map<string, string>();
    for (const key of new Set([...a.keys(), ...b.keys()]))
      if (a.get(key) !== b.get(key)) diff.set(key, `ours ${a.get(key) ?? '(none)'} / upstream ${b.get(key) ?? '(none)'}`);
    // The objects each installs (CRDs aside: rendered from the same definitions, compared elsewhere).
    const names = (objs: Obj[]) =>
      new Set(objs.filter((x) => x.kind !== 'CustomResourceDefinition').map((x) => `${x.kind}/${x.metadata.name}`));
    const [on, un] = [names(o), names(u)];
    for (const n of new Set([...on, ...un]))
      if (on.has(n) !== un.has(n)) diff.set(`objects.${n}`, on.has(n) ? 'only ours' : 'only upstream');
    // RBAC: ours grants less (least privilege); each grant upstream's lacks is a listed difference.
    for (const sa of ['kruise-manager', 'kruise-daemon']) {
      const [og, ug] = [grants(o, sa, namespace), grants(u, sa, namespace)];
      for (const g of og) if (!covered(g, ug)) diff.set(`rbac.${sa} + ${g}`, "beyond upstream's");
      if (og.size !== ug.size || [...ug].some((g) => !og.has(g))) diff.set(`rbac.${sa}`, 'narrower');
    }
    return diff;
  };

  for (const values of VALUES_FILES) {
    test(`${values}.yaml: the same effective install but for the deliberate differences`, () => {
      const diff = differences(values);
      const expected = Object.entries(KNOWN_DIFFERENCES)
        .filter(([, d]) => !d.only || d.only.includes(values))
        .map(([k]) => k);
      // A known difference may be absent where a values file makes both the same (e.g. no daemon).
      const unexpected = [...diff].filter(([k]) => !expected.some((e) => k === e || k.startsWith(`${e}.`)));
      assert.deepEqual(unexpected, [], `${values}.yaml: differences not listed in KNOWN_DIFFERENCES (docs/install.md)`);
    });
  }

  test('every known difference shows up under some values file, and docs/install.md explains each', () => {
    const seen = VALUES_FILES.flatMap((v) => [...differences(v).keys()]);
    assert.deepEqual(
      Object.keys(KNOWN_DIFFERENCES).filter((k) => !seen.some((d) => d === k || d.startsWith(`${k}.`))),
      [],
      'listed differences that no longer exist: drop them here and in docs/install.md',
    );
    const doc = readFileSync(path.join(repoRoot, 'docs/install.md'), 'utf8');
    for (const key of Object.keys(KNOWN_DIFFERENCES)) assert.ok(doc.includes(`\`${key}\``), `docs/install.md explains \`${key}\``);
  });

  test('the settings the issue names are equal: gates, external certs, daemon off, least-privilege daemon, webhook timeouts, zones', () => {
    const at = (values: string) => installed(values).settings;
    const d = at('defaults');
    assert.equal(d.ours.manager.featureGates, 'ImagePullJobGate=true');
    assert.deepEqual(d.ours.manager.topologySpreadConstraints, d.upstream.manager.topologySpreadConstraints);
    assert.deepEqual(d.ours.daemon!.securityContext, {
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsUser: 0,
      'capabilities.add': ['NET_BIND_SERVICE'],
      'capabilities.drop': ['ALL'],
    });
    assert.equal(d.ours.daemon!.runtimeSocketReadOnly, true);
    assert.equal(at('daemon-off').ours.daemon, undefined);
    assert.equal(at('daemon-off').upstream.daemon, undefined);
    const injected = { 'cert-manager.io/inject-ca-from': 'kruise-system/kruise-webhook-certs' };
    assert.deepEqual(at('external-certs').ours.webhooks, {
      mutating: { name: 'kruise-mutating-webhook-configuration', annotations: injected },
      validating: { name: 'kruise-validating-webhook-configuration', annotations: injected },
    });
    assert.equal(at('gates-off').ours.manager.webhookTimeoutSeconds, 15);
    const ha = at('ha');
    assert.equal(ha.ours.daemon!.pluginConfigFile, '/credential-provider-config/CredentialProviderPlugin.yaml');
    assert.deepEqual(ha.ours.daemon!.credentialProviderPlugins, ha.upstream.daemon!.credentialProviderPlugins);
  });
});
