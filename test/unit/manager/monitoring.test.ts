// The chart's monitoring parts: the alerting rules pass `promtool check rules` and their unit tests
// (`promtool test rules`, input series → alerts), every series the dashboard and the rules query is
// one the manager registers, and `helm template` renders the dashboard ConfigMap, the ServiceMonitor
// and the PrometheusRule from the chart's files. promtool is Debian's `prometheus` package
// (hack/install-prometheus.sh; ./run.sh test installs it for this file).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { ensureHelm, repoRoot } from '../../../src/cluster/binaries.ts';
import { CHART_DIR } from '../../../src/manager/chart.ts';
import { dashboardQueries, grafanaDashboard } from '../../../src/manager/grafana-dashboard.ts';
import { registry } from '../../../src/runtime/metrics.ts';
// The metrics the manager registers as its modules load: the runtime's, the webhook server's, and
// the per-workload ones.
import '../../../src/runtime/webhook/metrics.ts';
import '../../../src/controllers/workload-metrics.ts';

const chart = path.join(repoRoot, CHART_DIR);
const rulesFile = path.join(chart, 'files/prometheus-rules.yaml');
const rulesTests = path.join(repoRoot, 'test/unit/manager/testdata/prometheus-rules.test.yaml');

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert: string; expr: string }> }>;
}
const rules = () => parse(readFileSync(rulesFile, 'utf8')) as RuleFile;

function promtool(args: string[], cwd = repoRoot): string {
  const r = spawnSync('promtool', args, { encoding: 'utf8', cwd });
  if (r.error) assert.fail(`promtool not found (${r.error.message}): run hack/install-prometheus.sh (./run.sh test does)`);
  assert.equal(r.status, 0, `promtool ${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

test('promtool check rules: the chart’s rule file is valid', () => {
  assert.match(promtool(['check', 'rules', rulesFile]), /SUCCESS: 6 rules found/);
});

test('promtool test rules: each alert fires on its input series, and only then', () => {
  // The test file names the rule file relative to itself.
  assert.match(promtool(['test', 'rules', path.basename(rulesTests)], path.dirname(rulesTests)), /SUCCESS/);
});

/** Every metric name a PromQL expression reads (the manager's prefixes only). */
const metricNames = (expr: string) =>
  [...expr.matchAll(/\b(?:kruise|controller_runtime|workqueue|leader_election)_[a-z0-9_]+\b/g)].map((m) => m[0]);

test('every series the dashboard and the rules query is one the manager registers', () => {
  const registered = new Set(registry.getMetricsAsArray().map((m) => m.name));
  const known = (name: string) => registered.has(name) || registered.has(name.replace(/_(bucket|sum|count)$/, ''));
  const exprs = [...dashboardQueries(grafanaDashboard()), ...rules().groups.flatMap((g) => g.rules.map((r) => r.expr))];
  const names = exprs.flatMap(metricNames);
  assert.ok(names.length > 50, `only ${names.length} names found`);
  assert.deepEqual([...new Set(names.filter((n) => !known(n)))], []);
});

test('docs/metrics.md explains every alert', () => {
  const doc = readFileSync(path.join(repoRoot, 'docs/metrics.md'), 'utf8');
  for (const { alert } of rules().groups.flatMap((g) => g.rules))
    assert.ok(doc.includes(`\`${alert}\``), `${alert} is not in docs/metrics.md`);
});

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

describe('helm template', () => {
  let helm: string;
  before(() => {
    helm = ensureHelm((l) => process.stderr.write(`${l}\n`));
  });
  const render = (...sets: string[]): Obj[] => {
    const args = ['template', 'kruise-ts', chart, '--set', 'crds.managed=false', ...sets.flatMap((s) => ['--set', s])];
    const r = spawnSync(helm, args, { encoding: 'utf8', cwd: repoRoot });
    assert.equal(r.status, 0, r.stderr);
    return parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => !!o);
  };
  const find = (objs: Obj[], kind: string) => objs.find((o) => o.kind === kind && /grafana|kruise-manager|kruise-ts/.test(o.metadata.name));

  test('monitoring is off by default', () => {
    const objs = render();
    for (const kind of ['ServiceMonitor', 'PrometheusRule']) assert.equal(find(objs, kind), undefined);
    assert.equal(
      objs.find((o) => o.metadata.name === 'kruise-ts-grafana-dashboard'),
      undefined,
    );
  });

  test('on: the dashboard ConfigMap with the sidecar label, a ServiceMonitor keeping the series’ labels, the rules as a PrometheusRule', () => {
    const objs = render(
      'monitoring.grafanaDashboard.enabled=true',
      'monitoring.serviceMonitor.enabled=true',
      'monitoring.serviceMonitor.labels.release=kps',
      'monitoring.prometheusRule.enabled=true',
    );
    const dashboard = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'kruise-ts-grafana-dashboard') as Obj & {
      data: Record<string, string>;
    };
    assert.equal(dashboard.metadata.labels?.grafana_dashboard, '1');
    assert.deepEqual(JSON.parse(dashboard.data['kruise-ts-workloads.json']!), grafanaDashboard());

    const service = objs.find((o) => o.kind === 'Service' && o.metadata.name === 'kruise-manager-metrics') as Obj & {
      spec: { selector: Record<string, string>; ports: Array<{ name: string; targetPort: string }> };
    };
    assert.deepEqual(service.spec.selector, { 'control-plane': 'controller-manager' });
    assert.equal(service.spec.ports[0]!.targetPort, 'metrics');
    const monitor = objs.find((o) => o.kind === 'ServiceMonitor') as Obj & {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string; honorLabels: boolean }> };
    };
    assert.equal(monitor.metadata.labels?.release, 'kps');
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) assert.equal(service.metadata.labels?.[k], v, k);
    assert.deepEqual(
      monitor.spec.endpoints.map((e) => [e.port, e.honorLabels]),
      [['metrics', true]],
    );

    const rule = objs.find((o) => o.kind === 'PrometheusRule') as Obj & { spec: RuleFile };
    assert.deepEqual(rule.spec, rules());
  });
});
