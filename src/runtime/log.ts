// Structured JSON logging. One root logger per process; controllers and reconciles get children
// carrying {controller, object, reconcileID}, the fields controller-runtime's logr attaches.

import { pino, type Logger } from 'pino';

export type { Logger };

const levels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const requested = (process.env.KRUISE_LOG_LEVEL ?? 'info').toLowerCase();

export const logger: Logger = pino({
  // An unknown level would make pino throw at import time and take the whole process down.
  level: levels.has(requested) ? requested : 'info',
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }) },
});

if (!levels.has(requested)) logger.warn({ requested }, 'unknown KRUISE_LOG_LEVEL, using info');

export interface LogContext {
  controller?: string;
  /** The object being reconciled, as "namespace/name" (or "name" for cluster-scoped). */
  object?: string;
  reconcileID?: string;
}

export function childLogger(context: LogContext, parent: Logger = logger): Logger {
  return parent.child(context);
}
