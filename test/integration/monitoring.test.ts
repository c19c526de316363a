// A real Prometheus (Debian's `prometheus`, hack/install-prometheus.sh) scrapes the suite's manager
// every second during a CloneSet rollout on the local cluster, with the chart's rule file loaded.
// Through Prometheus' HTTP API: the rollout shows as Progressing and then Completed, with the
// update revision, partial counts on the way and its duration in the histogram; every query of the
// chart's Grafana dashboard runs (the CloneSet ones return the CloneSet); every alerting rule
// evaluates without error and none fires for this healthy rollout.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { repoRoot } from '../../src/cluster/binaries.ts';
import { freePorts } from '../../src/cluster/processes.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { CloneSets } from '../../src/runtime/resources.ts';
import { CHART_DIR } from '../../src/manager/chart.ts';
import { dashboardQueries, grafanaDashboard } from '../../src/manager/grafana-dashboard.ts';
import { apply, createNamespace, deleteNamespace, suiteManagerMetricsAddr, testCluster, waitFor } from '../harness/cluster.ts';
import { cloneSetManifest, waitSettled } from './cloneset-helpers.ts';

const RULES = path.join(repoRoot, CHART_DIR, 'files/prometheus-rules.yaml');
const NAME = 'web';
const REPLICAS = 4;

let client: KubeClient;
let ns: string;
let prometheus: ChildProcess | undefined;
let dir: string;
let api: string;

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(expr: string): Promise<Sample[]> {
  const res = await fetch(`${api}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  const body = (await res.json()) as { status: string; error?: string; data: { resultType: string; result: Sample[] | [number, string] } };
  assert.equal(body.status, 'success', `${expr}: ${body.error}`);
  // A scalar result (none of ours) would be [time, value].
  return body.data.resultType === 'vector' ? (body.data.result as Sample[]) : [];
}

const value = async (expr: string) => {
  const [s] = await query(expr);
  return s === undefined ? undefined : Number(s.value[1]);
};

before(async () => {
  client = fromKubeconfigFile(testCluster().kubeconfig);
  ns = await createNamespace('mon');
  dir = mkdtempSync(path.join(os.tmpdir(), 'kruise-prometheus-'));
  const [port] = await freePorts(1);
  api = `http://127.0.0.1:${port}`;
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES],
      scrape_configs: [{ job_name: 'kruise-manager', static_configs: [{ targets: [suiteManagerMetricsAddr()] }] }],
    }),
  );
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  prometheus.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  prometheus.on('error', (err) => (log += `\n${err.message}: run hack/install-prometheus.sh (./run.sh test does)`));
  await waitFor(`Prometheus ready (log: ${log})`, async () => (await fetch(`${api}/-/ready`)).ok, 30_000, 200);
});

after(async () => {
  prometheus?.kill('SIGTERM');
  await deleteNamespace(ns);
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a CloneSet rollout, the dashboard and the alerts through a real Prometheus', { timeout: 120_000 }, async () => {
  const id = `namespace="${ns}",cloneset="${NAME}"`;
  const manifest = cloneSetManifest(NAME, { replicas: REPLICAS, maxUnavailable: 1 });
  await apply(manifest, ns);
  await waitSettled(client, ns, NAME, REPLICAS);
  await waitFor('the first revision Completed in Prometheus', () => value(`kruise_cloneset_rollout_phase{${id},phase="Completed"} == 1`));

  // Each new pod takes a second to start, so the rollout spans several scrapes.
  const began = Date.now();
  await client.patch(
    CloneSets,
    NAME,
    {
      spec: {
        template: {
          metadata: { annotations: { 'sim.kruise-ts.io/start-delay': '1s' } },
          spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] },
        },
      },
    },
    { namespace: ns, patchType: 'application/merge-patch+json' },
  );
  const cs = await waitSettled(client, ns, NAME, REPLICAS);
  const took = (Date.now() - began) / 1000;
  await waitFor('the rollout duration in Prometheus', () => value(`kruise_cloneset_rollout_duration_seconds_count{${id}} == 1`));

  assert.equal(await value(`max_over_time(kruise_cloneset_rollout_phase{${id},phase="Progressing"}[5m])`), 1, 'seen Progressing');
  assert.equal(await value(`kruise_cloneset_rollout_phase{${id},phase="Completed"}`), 1);
  assert.ok((await value(`min_over_time(kruise_cloneset_status_replicas_updated{${id}}[1m])`))! < REPLICAS, 'seen part-way');
  assert.equal(await value(`kruise_cloneset_status_replicas_updated_ready{${id}}`), REPLICAS);
  const [revision] = await query(`kruise_cloneset_status_update_revision{${id}}`);
  assert.equal(revision?.metric.revision, cs.status.updateRevision);
  const duration = (await value(`kruise_cloneset_rollout_duration_seconds_sum{${id}}`))!;
  assert.ok(duration > 0 && duration <= took + 2, `duration ${duration}s, the rollout took ${took}s`);

  // Every dashboard query, with Grafana's variables as a dashboard on this namespace sets them.
  const grafana = (expr: string) => expr.replaceAll('$namespace', ns).replaceAll('$__rate_interval', '1m').replaceAll('$__range', '5m');
  for (const expr of dashboardQueries(grafanaDashboard()).map(grafana)) {
    const result = await query(expr);
    if (expr.includes('kruise_cloneset_')) {
      const ours = result.filter((s) => s.metric.cloneset === NAME || s.metric.cloneset === undefined);
      assert.ok(ours.length > 0, `${expr} returned nothing for the CloneSet`);
    }
    if (expr.includes('metadata_generation"}'))
      assert.ok(
        result.some((s) => s.metric.namespace === ns),
        'the namespace variable offers it',
      );
  }
  assert.equal(
    (await value(
      grafana(
        `histogram_quantile(0.5, sum by (le) (increase(kruise_cloneset_rollout_duration_seconds_bucket{namespace=~"$namespace"}[$__range])))`,
      ),
    )) !== undefined,
    true,
  );

  // The rules: loaded from the chart's file, evaluated without error, none firing for a healthy rollout.
  const file = parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
  const alerts = file.groups.flatMap((g) => g.rules);
  type Rule = { name: string; health: string; lastError?: string; lastEvaluation: string };
  const evaluated = await waitFor('every rule evaluated', async () => {
    const res = (await (await fetch(`${api}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Rule[] }> } };
    const rules = res.data.groups.flatMap((g) => g.rules);
    return rules.length === alerts.length && rules.every((r) => !r.lastEvaluation.startsWith('0001')) ? rules : undefined;
  });
  for (const r of evaluated) assert.equal(r.health, 'ok', `${r.name}: ${r.lastError}`);
  for (const { expr } of alerts) await query(expr);
  const firing = (await (await fetch(`${api}/api/v1/alerts`)).json()) as { data: { alerts: Array<{ labels: Record<string, string> }> } };
  assert.deepEqual(
    firing.data.alerts.filter((a) => a.labels.namespace === ns),
    [],
  );
});
