// The webhook server's metrics, named as controller-runtime's (pkg/webhook/internal/metrics).

import { Counter, Gauge, Histogram } from 'prom-client';
import { registry } from '../metrics.ts';

export const requestLatency = new Histogram({
  name: 'controller_runtime_webhook_latency_seconds',
  help: 'Histogram of the latency of processing admission requests',
  labelNames: ['webhook'] as const,
  registers: [registry],
});

export const requestTotal = new Counter({
  name: 'controller_runtime_webhook_requests_total',
  help: 'Total number of admission requests by HTTP status code.',
  labelNames: ['webhook', 'code'] as const,
  registers: [registry],
});

// A handler that threw: the JS counterpart of a recovered panic in a Go webhook.
export const webhookPanics = new Counter({
  name: 'controller_runtime_webhook_panics_total',
  help: 'Total number of webhook panics',
  registers: [registry],
});

export const requestInFlight = new Gauge({
  name: 'controller_runtime_webhook_requests_in_flight',
  help: 'Current number of admission requests being served.',
  labelNames: ['webhook'] as const,
  registers: [registry],
});
