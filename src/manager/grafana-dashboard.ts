// The Grafana dashboard the chart ships (charts/kruise-ts/files/grafana-dashboard.json, a generated
// chart file): one row per Kruise kind over the per-workload series of
// src/controllers/workload-metrics.ts, and one for the manager itself (reconciles, workqueues,
// webhooks, leader election). Built from the same table as the series, so a renamed series cannot
// leave a panel querying nothing; test/unit/manager/monitoring.test.ts checks every name a query
// uses is one the manager registers, and the monitoring integration test runs every query against a
// real Prometheus.
import { WORKLOAD_METRICS, identityLabels, seriesName, type KindMetrics } from '../controllers/workload-metrics.ts';

interface Target {
  expr: string;
  legendFormat?: string;
  /** An instant query shown as a table row per series. */
  table?: boolean;
}

interface Panel {
  type: 'timeseries' | 'stat' | 'table' | 'row';
  title: string;
  description?: string;
  unit?: string;
  targets: Target[];
}

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
/** The series whose namespaces the namespace variable offers: every namespaced kind has one. */
const NAMESPACE_SOURCE = '{__name__=~"kruise_.+_metadata_generation"}';

/** The kind's series selector: the dashboard's namespace variable where the kind is namespaced. */
const filter = (kind: KindMetrics) => (kind.resource.namespaced ? '{namespace=~"$namespace"}' : '');
const legend = (kind: KindMetrics) =>
  identityLabels(kind)
    .map((l) => `{{${l}}}`)
    .join('/');
const has = (kind: KindMetrics, suffix: string) => kind.series.some((s) => s.suffix === suffix);
const m = (kind: KindMetrics, suffix: string) => {
  if (!has(kind, suffix) && !(kind.rollout && suffix.startsWith('rollout_'))) throw new Error(`${kind.label} has no ${suffix}`);
  return `${seriesName(kind, suffix)}${filter(kind)}`;
};

/** Which series of a rolling kind count desired, updated and updated-and-ready pods. */
const ROLLOUT_COUNTS: Record<string, { desired: string; updated: string; ready: string }> = {
  cloneset: { desired: 'spec_replicas', updated: 'status_replicas_updated', ready: 'status_replicas_updated_ready' },
  statefulset: { desired: 'spec_replicas', updated: 'status_replicas_updated', ready: 'status_replicas_updated_ready' },
  daemonset: { desired: 'status_desired_number_scheduled', updated: 'status_updated_number_scheduled', ready: 'status_number_ready' },
  sidecarset: { desired: 'status_matched_pods', updated: 'status_updated_pods', ready: 'status_updated_ready_pods' },
  uniteddeployment: { desired: 'spec_replicas', updated: 'status_replicas_updated', ready: 'status_replicas_updated_ready' },
};

function rolloutPanels(kind: KindMetrics): Panel[] {
  const counts = ROLLOUT_COUNTS[kind.label];
  if (!counts) throw new Error(`no rollout counts for ${kind.label}`);
  const lg = legend(kind);
  const panels: Panel[] = [
    {
      type: 'timeseries',
      title: 'Rollout progress',
      description: 'Share of the desired pods on the update revision.',
      unit: 'percentunit',
      targets: [{ expr: `${m(kind, counts.updated)} / ${m(kind, counts.desired)}`, legendFormat: lg }],
    },
    {
      type: 'timeseries',
      title: 'Pods: desired, updated, updated and ready',
      targets: [
        { expr: m(kind, counts.desired), legendFormat: `${lg} desired` },
        { expr: m(kind, counts.updated), legendFormat: `${lg} updated` },
        { expr: m(kind, counts.ready), legendFormat: `${lg} ${counts.ready === 'status_number_ready' ? 'ready' : 'updated ready'}` },
      ],
    },
    {
      type: 'table',
      title: 'Rollout phase',
      description: 'Progressing, Paused, Partitioned, Completed or DeadlineExceeded, with the update revision.',
      targets: [{ expr: `${m(kind, 'rollout_phase')} == 1`, table: true }],
    },
    {
      type: 'stat',
      title: 'Rollout duration over the time range',
      description: 'From the first status naming a new update revision to every desired pod updated and ready.',
      unit: 's',
      targets: [
        {
          expr: `histogram_quantile(0.5, sum by (le) (increase(${seriesName(kind, 'rollout_duration_seconds_bucket')}${filter(kind)}[$__range])))`,
          legendFormat: 'p50',
        },
        {
          expr: `histogram_quantile(0.9, sum by (le) (increase(${seriesName(kind, 'rollout_duration_seconds_bucket')}${filter(kind)}[$__range])))`,
          legendFormat: 'p90',
        },
      ],
    },
    {
      type: 'timeseries',
      title: 'Partition, paused, generation lag',
      description: 'Pods the partition keeps on old revisions; 1 while paused; spec generations the controller has not acted on yet.',
      targets: [
        { expr: m(kind, 'spec_partition'), legendFormat: `${lg} partition` },
        ...(has(kind, 'spec_paused') ? [{ expr: m(kind, 'spec_paused'), legendFormat: `${lg} paused` }] : []),
        { expr: `${m(kind, 'metadata_generation')} - ${m(kind, 'status_observed_generation')}`, legendFormat: `${lg} generation lag` },
      ],
    },
  ];
  return panels;
}

function jobPanels(kind: KindMetrics): Panel[] {
  const lg = legend(kind);
  switch (kind.label) {
    case 'broadcastjob':
    case 'imagepulljob':
      return [
        {
          type: 'timeseries',
          title: 'Progress',
          description: kind.label === 'imagepulljob' ? 'Share of the nodes that pulled the image.' : 'Share of the pods that succeeded.',
          unit: 'percentunit',
          targets: [{ expr: `${m(kind, 'status_succeeded')} / ${m(kind, 'status_desired')}`, legendFormat: lg }],
        },
        {
          type: 'timeseries',
          title: 'Active, succeeded, failed',
          targets: ['active', 'succeeded', 'failed'].map((s) => ({ expr: m(kind, `status_${s}`), legendFormat: `${lg} ${s}` })),
        },
        ...(has(kind, 'status_phase')
          ? [{ type: 'table' as const, title: 'Phase', targets: [{ expr: `${m(kind, 'status_phase')} == 1`, table: true }] }]
          : []),
      ];
    case 'advancedcronjob':
      return [
        { type: 'timeseries', title: 'Active jobs', targets: [{ expr: m(kind, 'status_active'), legendFormat: lg }] },
        {
          type: 'timeseries',
          title: 'Since the last schedule',
          unit: 's',
          targets: [{ expr: `time() - ${m(kind, 'status_last_schedule_time')}`, legendFormat: lg }],
        },
      ];
    case 'podunavailablebudget':
      return [
        {
          type: 'timeseries',
          title: 'Disruptions allowed',
          description: '0: the budget is exhausted and the webhook refuses further evictions, deletions and in-place updates.',
          targets: [{ expr: m(kind, 'status_unavailable_allowed'), legendFormat: lg }],
        },
        {
          type: 'timeseries',
          title: 'Available: current and desired',
          targets: [
            { expr: m(kind, 'status_current_available'), legendFormat: `${lg} current` },
            { expr: m(kind, 'status_desired_available'), legendFormat: `${lg} desired` },
          ],
        },
        {
          type: 'timeseries',
          title: 'Current disruptions',
          description: 'Pods being deleted or evicted, and pods being updated, under the budget.',
          targets: [
            { expr: m(kind, 'status_disrupted_pods'), legendFormat: `${lg} disrupted` },
            { expr: m(kind, 'status_unavailable_pods'), legendFormat: `${lg} updating` },
          ],
        },
      ];
    case 'workloadspread':
      return [
        {
          type: 'timeseries',
          title: 'Pods per subset',
          targets: [{ expr: m(kind, 'status_subset_replicas'), legendFormat: `${lg}/{{subset}}` }],
        },
        {
          type: 'timeseries',
          title: 'Room left per subset',
          description: '-1: the subset has no maxReplicas.',
          targets: [{ expr: m(kind, 'status_subset_missing_replicas'), legendFormat: `${lg}/{{subset}}` }],
        },
      ];
    default:
      throw new Error(`no panels for ${kind.label}`);
  }
}

const KIND_TITLES: Record<string, string> = {
  cloneset: 'CloneSet',
  statefulset: 'Advanced StatefulSet',
  daemonset: 'Advanced DaemonSet',
  sidecarset: 'SidecarSet',
  uniteddeployment: 'UnitedDeployment',
  broadcastjob: 'BroadcastJob',
  advancedcronjob: 'AdvancedCronJob',
  imagepulljob: 'ImagePullJob',
  podunavailablebudget: 'PodUnavailableBudget',
  workloadspread: 'WorkloadSpread',
};

const MANAGER_PANELS: Panel[] = [
  {
    type: 'timeseries',
    title: 'Reconciles per second',
    targets: [
      {
        expr: 'sum by (controller, result) (rate(controller_runtime_reconcile_total[$__rate_interval]))',
        legendFormat: '{{controller}} {{result}}',
      },
    ],
  },
  {
    type: 'timeseries',
    title: 'Reconcile errors per second',
    targets: [
      { expr: 'sum by (controller) (rate(controller_runtime_reconcile_errors_total[$__rate_interval]))', legendFormat: '{{controller}}' },
    ],
  },
  {
    type: 'timeseries',
    title: 'Workqueue depth',
    targets: [{ expr: 'sum by (name) (workqueue_depth)', legendFormat: '{{name}}' }],
  },
  {
    type: 'timeseries',
    title: 'Webhook latency p99',
    unit: 's',
    targets: [
      {
        expr: 'histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket[$__rate_interval])))',
        legendFormat: '{{webhook}}',
      },
    ],
  },
  {
    type: 'timeseries',
    title: 'Webhook requests and handler errors per second',
    targets: [
      { expr: 'sum by (webhook) (rate(controller_runtime_webhook_requests_total[$__rate_interval]))', legendFormat: '{{webhook}}' },
      { expr: 'sum(rate(controller_runtime_webhook_panics_total[$__rate_interval]))', legendFormat: 'handler errors' },
    ],
  },
  {
    type: 'timeseries',
    title: 'Leader',
    description: '1 on the replica that leads; leadership losses over the time range.',
    targets: [
      { expr: 'leader_election_master_status', legendFormat: '{{instance}} leads' },
      { expr: 'sum by (instance) (increase(kruise_manager_leadership_lost_total[$__range]))', legendFormat: '{{instance}} losses' },
    ],
  },
];

function panelJson(p: Panel, id: number, gridPos: { x: number; y: number; w: number; h: number }): Record<string, unknown> {
  return {
    id,
    type: p.type,
    title: p.title,
    ...(p.description ? { description: p.description } : {}),
    datasource: DATASOURCE,
    gridPos,
    fieldConfig: { defaults: p.unit ? { unit: p.unit } : {}, overrides: [] },
    options: p.type === 'stat' ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, textMode: 'value_and_name' } : {},
    ...(p.type === 'table'
      ? { transformations: [{ id: 'organize', options: { excludeByName: { Time: true, Value: true, __name__: true } } }] }
      : {}),
    targets: p.targets.map((t, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr: t.expr,
      ...(t.legendFormat ? { legendFormat: t.legendFormat } : {}),
      ...(t.table ? { instant: true, range: false, format: 'table' } : { range: true }),
    })),
  };
}

/** The dashboard: a row per kind (rollout panels for rolling kinds), then the manager's row. */
export function grafanaDashboard(): Record<string, unknown> {
  const rows: Array<{ title: string; panels: Panel[] }> = [
    ...WORKLOAD_METRICS.map((kind) => ({
      title: KIND_TITLES[kind.label] ?? kind.label,
      panels: kind.rollout ? rolloutPanels(kind) : jobPanels(kind),
    })),
    { title: 'Kruise manager', panels: MANAGER_PANELS },
  ];
  const panels: Array<Record<string, unknown>> = [];
  let id = 1;
  let y = 0;
  for (const row of rows) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] });
    y += 1;
    row.panels.forEach((p, i) => {
      panels.push(panelJson(p, id++, { x: (i % 3) * 8, y: y + Math.floor(i / 3) * 8, w: 8, h: 8 }));
    });
    y += Math.ceil(row.panels.length / 3) * 8;
  }
  return {
    uid: 'kruise-ts-workloads',
    title: 'Kruise TS: workloads and rollouts',
    description: 'Per-workload series of Kruise TS (docs/metrics.md) and the manager’s own.',
    tags: ['kruise', 'openkruise', 'kruise-ts'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    annotations: { list: [] },
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
        {
          name: 'namespace',
          label: 'Namespace',
          type: 'query',
          datasource: DATASOURCE,
          query: { query: `label_values(${NAMESPACE_SOURCE}, namespace)`, refId: 'namespaces' },
          definition: `label_values(${NAMESPACE_SOURCE}, namespace)`,
          refresh: 2,
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: { text: 'All', value: '$__all' },
          sort: 1,
          hide: 0,
        },
      ],
    },
    panels,
  };
}

/** Every PromQL expression of the dashboard: its panels' queries and the series its variable reads. */
export function dashboardQueries(dashboard: Record<string, unknown>): string[] {
  const panels = dashboard.panels as Array<{ targets?: Array<{ expr: string }> }>;
  return [...panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)), NAMESPACE_SOURCE];
}
