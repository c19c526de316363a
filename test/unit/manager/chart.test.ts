// charts/kruise-ts: the generated files are in step with the code (CRDs, RBAC rules), `helm lint`
// passes, and `helm template` renders what the values ask for — the default render (CRDs aside)
// against a golden file, and each value mapped as documented. Needs only the helm binary, built
// once from the Go module proxy (hack/build-binaries.sh --helm) like the other upstream tools.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureHelm, repoRoot } from '../../../src/cluster/binaries.ts';
import { CHART_DIR, chartGeneratedFiles } from '../../../src/manager/chart.ts';
import { leaderElectionAccess, managerClusterAccess } from '../../../src/manager/rbac.ts';
import { daemonAccess } from '../../../src/daemon/rbac.ts';
import { rulesFor } from '../../../src/runtime/rbac.ts';
import { kinds } from '../../../src/apis/registry.ts';

const chart = path.join(repoRoot, CHART_DIR);
const golden = path.join(repoRoot, 'test/unit/manager/testdata/chart-default.yaml');

test('the generated chart files match the code (run `npm run gen` when this fails)', () => {
  for (const [file, text] of Object.entries(chartGeneratedFiles())) {
    assert.equal(readFileSync(path.join(chart, file), 'utf8'), text, `${CHART_DIR}/${file} is stale: run \`npm run gen\``);
  }
});

test("the chart's version is the package's", () => {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const chartYaml = readFileSync(path.join(chart, 'Chart.yaml'), 'utf8');
  assert.match(chartYaml, new RegExp(`^version: ${pkg.version.replace(/\./g, '\\.')}$`, 'm'));
  assert.match(chartYaml, new RegExp(`^appVersion: "${pkg.version.replace(/\./g, '\\.')}"$`, 'm'));
});

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [k: string]: unknown;
}

describe('helm', () => {
  let helm: string;
  before(() => {
    helm = ensureHelm((l) => process.stderr.write(`${l}\n`));
  });
  const run = (args: string[]) => {
    const r = spawnSync(helm, args, { encoding: 'utf8', cwd: repoRoot });
    assert.equal(r.status, 0, `helm ${args.join(' ')} failed:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const render = (...sets: string[]): Obj[] =>
    parseAllDocuments(run(['template', 'kruise-ts', chart, ...sets.flatMap((s) => ['--set', s])]))
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => !!o);
  const find = (objs: Obj[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name);
  const managerArgs = (objs: Obj[]) =>
    (
      find(objs, 'Deployment', 'kruise-controller-manager') as unknown as {
        spec: { template: { spec: { containers: [{ args: string[] }] } } };
      }
    ).spec.template.spec.containers[0].args;

  test('helm lint passes, also with every optional part off', () => {
    assert.match(run(['lint', '--strict', chart]), /1 chart\(s\) linted, 0 chart\(s\) failed/);
    run([
      'lint',
      '--strict',
      chart,
      '--set',
      'crds.managed=false,installation.createNamespace=false,daemon.enabled=false,manager.replicas=1',
    ]);
  });

  test('the default render (CRDs aside) matches the golden file (KRUISE_TS_UPDATE_GOLDEN=1 rewrites it)', () => {
    const text = run(['template', 'kruise-ts', chart, '--set', 'crds.managed=false']);
    if (process.env.KRUISE_TS_UPDATE_GOLDEN === '1') writeFileSync(golden, text);
    assert.equal(text, readFileSync(golden, 'utf8'));
  });

  test('defaults: CRDs kept on uninstall, RBAC from the access lists, webhooks through the Service', () => {
    const objs = render();
    const crds = objs.filter((o) => o.kind === 'CustomResourceDefinition');
    assert.equal(crds.length, kinds.length);
    for (const crd of crds) assert.equal(crd.metadata.annotations?.['helm.sh/resource-policy'], 'keep', crd.metadata.name);
    assert.deepEqual(find(objs, 'ClusterRole', 'kruise-manager-role')!.rules, rulesFor(managerClusterAccess()));
    assert.deepEqual(find(objs, 'Role', 'kruise-leader-election-role')!.rules, rulesFor(leaderElectionAccess));
    assert.deepEqual(find(objs, 'ClusterRole', 'kruise-daemon-role')!.rules, rulesFor(daemonAccess));
    const service = find(objs, 'Service', 'kruise-webhook-service') as Obj & { spec: { ports: [{ port: number; targetPort: number }] } };
    assert.equal(service.metadata.namespace, 'kruise-system');
    assert.deepEqual([service.spec.ports[0].port, service.spec.ports[0].targetPort], [443, 9876]);
    const args = managerArgs(objs);
    for (const a of ['--webhook-client-mode=service', '--leader-election-namespace=kruise-system', '--webhook-timeout-seconds=30'])
      assert.ok(args.includes(a), `${a} in ${args.join(' ')}`);
    assert.ok(find(objs, 'PodDisruptionBudget', 'kruise-controller-manager'));
    assert.ok(find(objs, 'MutatingWebhookConfiguration', 'kruise-mutating-webhook-configuration'));
    assert.ok(find(objs, 'ValidatingWebhookConfiguration', 'kruise-validating-webhook-configuration'));
    assert.deepEqual(
      objs.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name),
      ['kruise-system', 'kruise-daemon-config'],
    );
  });

  test("apiVersions: OpenKruise v1.8.2's CRD versions by default, v1beta1 on request (CRDs and the manager's flag)", () => {
    type CRD = Obj & { spec: { versions: Array<{ name: string; storage: boolean }> } };
    const versionsOf = (objs: Obj[], name: string) =>
      (find(objs, 'CustomResourceDefinition', name) as CRD).spec.versions.map((v) => `${v.name}${v.storage ? '*' : ''}`);
    const byDefault = render();
    assert.deepEqual(versionsOf(byDefault, 'clonesets.apps.kruise.io'), ['v1alpha1*']);
    assert.deepEqual(versionsOf(byDefault, 'statefulsets.apps.kruise.io'), ['v1alpha1', 'v1beta1*']);
    assert.ok(managerArgs(byDefault).includes('--api-versions=openkruise-v1.8'));
    const beta = render('apiVersions=v1beta1');
    assert.deepEqual(versionsOf(beta, 'clonesets.apps.kruise.io'), ['v1alpha1', 'v1beta1*']);
    assert.ok(managerArgs(beta).includes('--api-versions=v1beta1'));
  });

  test("upstream's values keys: namespace, feature gates, replicas, image, log level, webhook port, daemon socket", () => {
    const objs = render(
      'installation.namespace=kruise-ts-x',
      'featureGates=ResourcesDeletionProtection=false',
      'manager.replicas=1',
      'manager.image.repository=registry.local/kruise-ts',
      'manager.image.tag=9.9.9',
      'manager.log.level=5',
      'manager.webhook.port=9443',
      'manager.resyncPeriod=1h',
      'webhookConfiguration.timeoutSeconds=12',
      'daemon.socketLocation=/run/k3s',
      'daemon.socketFile=containerd/containerd.sock',
    );
    // All but the daemon's pull-secret Role, in kruise-daemon-config as upstream's.
    for (const o of objs.filter((o) => o.metadata.namespace && o.metadata.namespace !== 'kruise-daemon-config'))
      assert.equal(o.metadata.namespace, 'kruise-ts-x', `${o.kind} ${o.metadata.name}`);
    const crd = find(objs, 'CustomResourceDefinition', 'statefulsets.apps.kruise.io') as Obj & {
      spec: { conversion: { webhook: { clientConfig: { service: { namespace: string } } } } };
    };
    assert.equal(crd.spec.conversion.webhook.clientConfig.service.namespace, 'kruise-ts-x');
    const args = managerArgs(objs);
    for (const a of [
      '--feature-gates=ResourcesDeletionProtection=false',
      '--leader-election-namespace=kruise-ts-x',
      '--webhook-port=9443',
      '--sync-period=1h',
      '--webhook-timeout-seconds=12',
    ])
      assert.ok(args.includes(a), `${a} in ${args.join(' ')}`);
    const text = stringify(objs);
    assert.match(text, /image: registry\.local\/kruise-ts:9\.9\.9/);
    assert.match(text, /name: KRUISE_LOG_LEVEL\n\s+value: debug/);
    assert.match(text, /--runtime-endpoint=unix:\/\/\/hostvarrun\/containerd\/containerd\.sock/);
    assert.match(text, /path: \/run\/k3s/);
    assert.equal(find(objs, 'PodDisruptionBudget', 'kruise-controller-manager'), undefined, 'no PDB for one replica');
  });

  test('Kruise TS keys: priority classes, topology spread, logging format, sharding; KruiseDaemon=false drops the daemon and its RBAC', () => {
    const objs = render(
      'manager.priorityClassName=system-cluster-critical',
      'daemon.priorityClassName=system-node-critical',
      'manager.topologySpreadConstraints[0].maxSkew=2',
      'manager.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname',
      'manager.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule',
      'manager.loggingFormat=json',
      'daemon.loggingFormat=text',
    );
    type PodOf = {
      spec: { template: { spec: { priorityClassName?: string; topologySpreadConstraints?: unknown[]; containers: [{ args: string[] }] } } };
    };
    const manager = find(objs, 'Deployment', 'kruise-controller-manager') as unknown as PodOf;
    const daemon = find(objs, 'DaemonSet', 'kruise-daemon') as unknown as PodOf;
    assert.equal(manager.spec.template.spec.priorityClassName, 'system-cluster-critical');
    assert.equal(daemon.spec.template.spec.priorityClassName, 'system-node-critical');
    assert.deepEqual(manager.spec.template.spec.topologySpreadConstraints, [
      { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' },
    ]);
    assert.ok(manager.spec.template.spec.containers[0].args.includes('--logging-format=json'));
    assert.ok(!manager.spec.template.spec.containers[0].args.some((a) => a.startsWith('--sharding')), 'no --sharding unless asked');
    const sharded = find(render('manager.sharding.enabled=true'), 'Deployment', 'kruise-controller-manager') as unknown as PodOf;
    assert.ok(sharded.spec.template.spec.containers[0].args.includes('--sharding=true'));
    assert.ok(daemon.spec.template.spec.containers[0].args.includes('--logging-format=text'));
    const off = render('featureGates=ResourcesDeletionProtection=true\\,KruiseDaemon=false');
    assert.deepEqual(
      off
        .filter((o) => o.kind === 'DaemonSet' || /^kruise-daemon(-role|-secret|$)/.test(o.metadata.name))
        .map((o) => `${o.kind}/${o.metadata.name}`),
      [],
    );
  });

  test('optional parts off: no CRDs, namespaces or daemon', () => {
    const objs = render('crds.managed=false', 'installation.createNamespace=false', 'daemon.enabled=false');
    assert.deepEqual(
      objs.filter(
        (o) => ['CustomResourceDefinition', 'Namespace', 'DaemonSet'].includes(o.kind) || o.metadata.name.startsWith('kruise-daemon'),
      ),
      [],
    );
    assert.ok(find(objs, 'Deployment', 'kruise-controller-manager'));
  });
});
