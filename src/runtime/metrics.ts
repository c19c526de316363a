// The process-wide Prometheus registry and every metric the generic runtime emits. Names and labels
// follow controller-runtime and client-go so existing dashboards and alerts keep working.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

// ---- controller-runtime pkg/internal/controller/metrics ----

export const reconcileTotal = new Counter({
  name: 'controller_runtime_reconcile_total',
  help: 'Total number of reconciliations per controller',
  labelNames: ['controller', 'result'] as const,
  registers: [registry],
});

export const reconcileErrors = new Counter({
  name: 'controller_runtime_reconcile_errors_total',
  help: 'Total number of reconciliation errors per controller',
  labelNames: ['controller'] as const,
  registers: [registry],
});

export const terminalReconcileErrors = new Counter({
  name: 'controller_runtime_terminal_reconcile_errors_total',
  help: 'Total number of terminal reconciliation errors per controller',
  labelNames: ['controller'] as const,
  registers: [registry],
});

export const reconcilePanics = new Counter({
  name: 'controller_runtime_reconcile_panics_total',
  help: 'Total number of reconciliation panics per controller',
  labelNames: ['controller'] as const,
  registers: [registry],
});

export const reconcileTime = new Histogram({
  name: 'controller_runtime_reconcile_time_seconds',
  help: 'Length of time per reconciliation per controller',
  labelNames: ['controller'] as const,
  buckets: [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5,
    4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
  ],
  registers: [registry],
});

export const maxConcurrentReconciles = new Gauge({
  name: 'controller_runtime_max_concurrent_reconciles',
  help: 'Maximum number of concurrent reconciles per controller',
  labelNames: ['controller'] as const,
  registers: [registry],
});

export const activeWorkers = new Gauge({
  name: 'controller_runtime_active_workers',
  help: 'Number of currently used workers per controller',
  labelNames: ['controller'] as const,
  registers: [registry],
});

// ---- workqueue (controller-runtime pkg/metrics/workqueue.go), label `name` ----

// client-go's ExponentialBuckets(10e-9, 10, 12): 10ns .. 1000s.
const queueBuckets = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

const workqueueDepth = new Gauge({
  name: 'workqueue_depth',
  help: 'Current depth of workqueue',
  labelNames: ['name'] as const,
  registers: [registry],
});

const workqueueAdds = new Counter({
  name: 'workqueue_adds_total',
  help: 'Total number of adds handled by workqueue',
  labelNames: ['name'] as const,
  registers: [registry],
});

const workqueueQueueDuration = new Histogram({
  name: 'workqueue_queue_duration_seconds',
  help: 'How long in seconds an item stays in workqueue before being requested',
  labelNames: ['name'] as const,
  buckets: queueBuckets,
  registers: [registry],
});

const workqueueWorkDuration = new Histogram({
  name: 'workqueue_work_duration_seconds',
  help: 'How long in seconds processing an item from workqueue takes',
  labelNames: ['name'] as const,
  buckets: queueBuckets,
  registers: [registry],
});

const workqueueRetries = new Counter({
  name: 'workqueue_retries_total',
  help: 'Total number of retries handled by workqueue',
  labelNames: ['name'] as const,
  registers: [registry],
});

/** What a live queue exposes so in-flight work can be measured at scrape time. */
export interface InFlightSource {
  readonly name: string;
  /** Start times (ms) of the items currently being processed. */
  processingStarts(): Iterable<number>;
  now(): number;
}

const inFlightSources = new Set<InFlightSource>();

// client-go refreshes these every 500 ms from a goroutine; computing them on scrape is equivalent
// and needs no timer.
function inFlightByName(): Map<string, { total: number; longest: number }> {
  const byName = new Map<string, { total: number; longest: number }>();
  for (const src of inFlightSources) {
    const agg = byName.get(src.name) ?? { total: 0, longest: 0 };
    const now = src.now();
    for (const start of src.processingStarts()) {
      const secs = Math.max(0, now - start) / 1000;
      agg.total += secs;
      agg.longest = Math.max(agg.longest, secs);
    }
    byName.set(src.name, agg);
  }
  return byName;
}

new Gauge({
  name: 'workqueue_unfinished_work_seconds',
  help:
    "How many seconds of work has been done that is in progress and hasn't been observed by " +
    'work_duration. Large values indicate stuck threads.',
  labelNames: ['name'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [name, agg] of inFlightByName()) this.set({ name }, agg.total);
  },
});

new Gauge({
  name: 'workqueue_longest_running_processor_seconds',
  help: 'How many seconds has the longest running processor for workqueue been running.',
  labelNames: ['name'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [name, agg] of inFlightByName()) this.set({ name }, agg.longest);
  },
});

/** Per-queue metric hooks; a queue without a name gets no metrics (as in client-go). */
export interface WorkqueueMetrics {
  added(): void;
  depth(n: number): void;
  /** An item left the queue for a worker after waiting `queuedMs`. */
  started(queuedMs: number): void;
  /** A worker finished an item after `workMs`. */
  finished(workMs: number): void;
  retried(): void;
  /** Stops reporting in-flight work (on shutdown). */
  close(): void;
}

export function workqueueMetrics(source: InFlightSource): WorkqueueMetrics {
  const labels = { name: source.name };
  inFlightSources.add(source);
  return {
    added: () => workqueueAdds.inc(labels),
    depth: (n) => workqueueDepth.set(labels, n),
    started: (ms) => workqueueQueueDuration.observe(labels, ms / 1000),
    finished: (ms) => workqueueWorkDuration.observe(labels, ms / 1000),
    retried: () => workqueueRetries.inc(labels),
    close: () => inFlightSources.delete(source),
  };
}

export const noWorkqueueMetrics: WorkqueueMetrics = {
  added() {},
  depth() {},
  started() {},
  finished() {},
  retried() {},
  close() {},
};

// ---- leader election (client-go tools/leaderelection/metrics.go), label `name` ----

export const leaderElectionMasterStatus = new Gauge({
  name: 'leader_election_master_status',
  help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
  labelNames: ['name'] as const,
  registers: [registry],
});

export const leaderElectionSlowpath = new Counter({
  name: 'leader_election_slowpath_total',
  help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
  labelNames: ['name'] as const,
  registers: [registry],
});

/** Kruise TS's own: how often this replica lost the lease and went back to campaigning. */
export const leadershipLost = new Counter({
  name: 'kruise_manager_leadership_lost_total',
  help: "Times this replica lost the leader lease, stopped its controllers, dropped their caches and re-entered the election. 'name' is the lease.",
  labelNames: ['name'] as const,
  registers: [registry],
});
