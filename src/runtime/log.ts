// Logging. One root logger per process; controllers and reconciles get children carrying
// {controller, object, reconcileID}, the fields controller-runtime's logr attaches.
//
// Two output formats, upstream's `--logging-format`: `json` (one JSON object a line, for log
// collectors) and `text` (klog's structured text: `I1206 13:45:01.123456   12345] "message" key="value"`).
// Until a command picks one, a terminal gets text and anything else JSON.
//
// No line carries a key twice: pino appends a child's bindings to its parent's and a call's fields
// to both, so a child re-binding a key (a `component` on a logger that has one) or a call naming a
// bound key would print it twice, which JSON readers resolve differently. onChild replaces a
// repeated binding in place, and the logMethod hook moves a call's clashing fields into a child.

import { Option } from 'commander';
import { pino, type Logger, type LogFn } from 'pino';

export type { Logger };

export const LOGGING_FORMATS = ['text', 'json'] as const;
export type LoggingFormat = (typeof LOGGING_FORMATS)[number];

const levels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const requested = (process.env.KRUISE_LOG_LEVEL ?? 'info').toLowerCase();

/** The serialized bindings pino keeps on a logger: `,"k":v,...` (empty for none). */
const CHINDINGS = pino.symbols.chindingsSym;
type WithChindings = Logger & { [CHINDINGS]?: string };

const parseChindings = (s: string | undefined): Record<string, unknown> =>
  s ? (JSON.parse(`{${s.slice(1)}}`) as Record<string, unknown>) : {};

const boundKeysCache = new WeakMap<Logger, Set<string>>();
function boundKeys(log: Logger): Set<string> {
  let keys = boundKeysCache.get(log);
  if (!keys) boundKeysCache.set(log, (keys = new Set(Object.keys(parseChindings((log as WithChindings)[CHINDINGS])))));
  return keys;
}

/** A child's bindings follow its parent's: a key bound again takes the new value in place. */
function dedupeBindings(child: Logger): void {
  const chindings = (child as WithChindings)[CHINDINGS];
  if (!chindings) return;
  // Parsing keeps each key once, at its first place, with its last value.
  const bindings = parseChindings(chindings);
  boundKeysCache.set(child, new Set(Object.keys(bindings)));
  (child as WithChindings)[CHINDINGS] = `,${JSON.stringify(bindings).slice(1, -1)}`;
}

const klogLevel: Record<string, string> = { fatal: 'F', error: 'E', warn: 'W', info: 'I', debug: 'I', trace: 'I' };
const omittedInText = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

const textValue = (v: unknown): string => {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  // A serialized error: klog prints its message.
  if (v && typeof v === 'object' && 'message' in v && 'stack' in v) return JSON.stringify((v as { message: string }).message);
  return JSON.stringify(v) ?? 'undefined';
};

/** One JSON log line as klog's structured text line (`klog.InfoS` / `ErrorS`). */
export function formatTextLine(json: string): string {
  const rec = JSON.parse(json) as Record<string, unknown>;
  const t = new Date(typeof rec.time === 'string' ? rec.time : Date.now());
  const two = (n: number) => String(n).padStart(2, '0');
  const stamp =
    `${two(t.getUTCMonth() + 1)}${two(t.getUTCDate())} ${two(t.getUTCHours())}:${two(t.getUTCMinutes())}:${two(t.getUTCSeconds())}` +
    `.${String(t.getUTCMilliseconds()).padStart(3, '0')}000`;
  const fields = Object.entries(rec)
    .filter(([k]) => !omittedInText.has(k))
    .map(([k, v]) => ` ${k}=${textValue(v)}`)
    .join('');
  const pid = String(rec.pid ?? process.pid).padStart(7);
  return `${klogLevel[String(rec.level)] ?? 'I'}${stamp} ${pid}] ${JSON.stringify(String(rec.msg ?? ''))}${fields}\n`;
}

let format: LoggingFormat = process.stdout.isTTY ? 'text' : 'json';

/** Switches the root logger's (and every child's) output format; `--logging-format`. */
export function setLoggingFormat(f: LoggingFormat): void {
  format = f;
}

export function loggingFormat(): LoggingFormat {
  return format;
}

/** Upstream's `--logging-format` flag (component-base logs), for the manager and the daemon. */
export function loggingFormatOption(): Option {
  return new Option('--logging-format <format>', 'log format: text (klog-like) or json (default: text on a terminal, else json)').choices(
    LOGGING_FORMATS,
  );
}

const destination = {
  write(line: string): void {
    process.stdout.write(format === 'json' ? line : formatTextLine(line));
  },
};

export const logger: Logger = pino(
  {
    // An unknown level would make pino throw at import time and take the whole process down.
    level: levels.has(requested) ? requested : 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    onChild: dedupeBindings,
    formatters: { level: (label) => ({ level: label }) },
    hooks: {
      logMethod(this: Logger, args: Parameters<LogFn>, method: LogFn) {
        const [fields] = args;
        if (fields && typeof fields === 'object' && !(fields instanceof Error)) {
          const bound = boundKeys(this);
          const clashing = Object.keys(fields).filter((k) => bound.has(k));
          if (clashing.length) {
            const rest: Record<string, unknown> = { ...(fields as Record<string, unknown>) };
            const override: Record<string, unknown> = {};
            for (const k of clashing) {
              override[k] = rest[k];
              delete rest[k];
            }
            return method.apply(this.child(override), [rest, ...(args.slice(1) as [string])]);
          }
        }
        return method.apply(this, args);
      },
    },
  },
  destination,
);

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
