// Cron schedules as robfig/cron v3's ParseStandard reads them (the parser upstream's AdvancedCronJob
// webhook and controller both use): an optional TZ=/CRON_TZ= prefix, @descriptors and @every, and
// five fields with lists, ranges, steps and month/weekday names, reporting robfig's messages. A
// parsed schedule gives the next activation after an instant, computed on the wall clock of its
// time zone (IANA zones from the platform's Intl, not a bundled table) as SpecSchedule.Next does,
// DST gaps and repeats included.

import { parseDuration } from './duration.ts';

const BOUNDS = [
  { name: 'minute', min: 0, max: 59, names: {} as Record<string, number> },
  { name: 'hour', min: 0, max: 23, names: {} },
  { name: 'dom', min: 1, max: 31, names: {} },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
  },
  { name: 'dow', min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } },
];

/** A field written `*` or `?` (without a step above 1): day-of-month and day-of-week then combine with AND. */
const STAR = 1n << 63n;

function parseInt(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr)) throw new Error(`failed to parse int from ${expr}: strconv.Atoi: parsing "${expr}": invalid syntax`);
  const n = Number(expr);
  if (n < 0) throw new Error(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function value(expr: string, names: Record<string, number>): number {
  const named = names[expr.toLowerCase()];
  return named ?? parseInt(expr);
}

/** The bits one range of a field sets (robfig getRange). */
function parseRange(expr: string, b: (typeof BOUNDS)[number]): bigint {
  const [rangeAndStep, ...rest] = expr.split('/');
  if (rest.length > 1) throw new Error(`too many slashes: ${expr}`);
  const lowAndHigh = rangeAndStep!.split('-');
  let start: number;
  let end: number;
  let extra = 0n;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = b.min;
    end = b.max;
    extra = STAR;
  } else {
    start = value(lowAndHigh[0]!, b.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = value(lowAndHigh[1]!, b.names);
    else throw new Error(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rest.length === 1) {
    step = parseInt(rest[0]!);
    // "N/step" means "N-max/step".
    if (lowAndHigh.length === 1 && lowAndHigh[0] !== '*' && lowAndHigh[0] !== '?') end = b.max;
    if (step > 1) extra = 0n;
  }
  if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new Error(`step of range should be a positive number: ${expr}`);
  let bits = extra;
  for (let i = start; i <= end; i += step) bits |= 1n << BigInt(i);
  return bits;
}

const all = (b: (typeof BOUNDS)[number]) => parseRange('*', b);
const [, HOUR, DOM, MONTH, DOW] = BOUNDS as [unknown, ...Array<(typeof BOUNDS)[number]>];

interface Fields {
  minute: bigint;
  hour: bigint;
  dom: bigint;
  month: bigint;
  dow: bigint;
}

const DESCRIPTORS: Record<string, () => Fields> = {
  '@yearly': () => ({ minute: 1n, hour: 1n, dom: 1n << 1n, month: 1n << 1n, dow: all(DOW) }),
  '@annually': () => DESCRIPTORS['@yearly']!(),
  '@monthly': () => ({ minute: 1n, hour: 1n, dom: 1n << 1n, month: all(MONTH), dow: all(DOW) }),
  '@weekly': () => ({ minute: 1n, hour: 1n, dom: all(DOM), month: all(MONTH), dow: 1n }),
  '@daily': () => ({ minute: 1n, hour: 1n, dom: all(DOM), month: all(MONTH), dow: all(DOW) }),
  '@midnight': () => DESCRIPTORS['@daily']!(),
  '@hourly': () => ({ minute: 1n, hour: all(HOUR), dom: all(DOM), month: all(MONTH), dow: all(DOW) }),
};

/** Go's time.ParseDuration of @every's argument, in ms, with robfig/cron's message. */
function everyDuration(text: string, spec: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new Error(`failed to parse duration ${spec}: ${(err as Error).message}`, { cause: err });
  }
}

/** A parsed schedule: `next(ms)` is the first activation strictly after `ms`, undefined when none within five years. */
export interface CronSchedule {
  /** The IANA zone the schedule's wall clock runs in. */
  readonly timeZone: string;
  next(ms: number): number | undefined;
}

/** The zone Go's time.Local stands for here: the process's own. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Throws with robfig/cron's message when `spec` is not a valid standard schedule; else the schedule. */
export function parseStandardCron(spec: string): CronSchedule {
  if (spec.length === 0) throw new Error('empty spec string');
  let rest = spec;
  let zone = localTimeZone();
  if (rest.startsWith('TZ=') || rest.startsWith('CRON_TZ=')) {
    const i = rest.indexOf(' ');
    const named = rest.slice(rest.indexOf('=') + 1, i < 0 ? undefined : i);
    if (!isValidTimeZone(named)) throw new Error(`provided bad location ${named}: unknown time zone ${named}`);
    if (named !== 'Local') zone = named === '' ? 'UTC' : named;
    rest = i < 0 ? '' : rest.slice(i).trim();
  }
  if (rest.startsWith('@')) {
    const descriptor = DESCRIPTORS[rest];
    if (descriptor) return new SpecSchedule(descriptor(), zone);
    if (rest.startsWith('@every ')) {
      // robfig Every: at least one second, whole seconds.
      const delay = Math.max(1000, Math.floor(everyDuration(rest.slice(7).trim(), rest) / 1000) * 1000);
      return { timeZone: zone, next: (ms) => Math.floor(ms / 1000) * 1000 + delay };
    }
    throw new Error(`unrecognized descriptor: ${rest}`);
  }
  const fields = rest.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minute, hour, dom, month, dow] = fields.map((field, i) =>
    field.split(',').reduce((bits, part) => bits | parseRange(part, BOUNDS[i]!), 0n),
  ) as [bigint, bigint, bigint, bigint, bigint];
  return new SpecSchedule({ minute, hour, dom, month, dow }, zone);
}

/** Go's time.LoadLocation acceptance, approximated with the IANA database Node ships. */
export function isValidTimeZone(zone: string): boolean {
  if (zone === '' || zone === 'UTC' || zone === 'Local') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Wall-clock arithmetic in a zone, as Go's time.Date / AddDate / Add do it.

interface Wall {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 = Sunday
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall clock of `ms` (whole seconds) in `zone`. */
function wallOf(ms: number, zone: string): Wall {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(ms)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  return { year, month, day, hour, minute, second, weekday: new Date(Date.UTC(year, month - 1, day)).getUTCDay() };
}

/** The zone's offset from UTC at `ms`, in ms. */
function offsetAt(ms: number, zone: string): number {
  const w = wallOf(ms, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
}

/** time.Date(y, mo, d, h, mi, s, 0, zone): fields normalised, a wall time in a gap or repeat resolved as Go does. */
function dateIn(zone: string, year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  const guess = offsetAt(wall, zone);
  return wall - offsetAt(wall - guess, zone);
}

/** robfig SpecSchedule (seconds fixed at 0, as the standard parser sets them). */
class SpecSchedule implements CronSchedule {
  constructor(
    private readonly f: Fields,
    readonly timeZone: string,
  ) {}

  private dayMatches(w: Wall): boolean {
    const domMatch = (this.f.dom & (1n << BigInt(w.day))) !== 0n;
    const dowMatch = (this.f.dow & (1n << BigInt(w.weekday))) !== 0n;
    if ((this.f.dom & STAR) !== 0n || (this.f.dow & STAR) !== 0n) return domMatch && dowMatch;
    return domMatch || dowMatch;
  }

  next(ms: number): number | undefined {
    const zone = this.timeZone;
    // Start at the next whole second.
    let t = Math.floor(ms / 1000) * 1000 + 1000;
    let added = false;
    const yearLimit = wallOf(t, zone).year + 5;
    const has = (bits: bigint, n: number) => (bits & (1n << BigInt(n))) !== 0n;
    wrap: for (;;) {
      let w = wallOf(t, zone);
      if (w.year > yearLimit) return undefined;
      while (!has(this.f.month, w.month)) {
        if (!added) {
          added = true;
          t = dateIn(zone, w.year, w.month, 1, 0, 0, 0);
          w = wallOf(t, zone);
        }
        t = dateIn(zone, w.year, w.month + 1, w.day, w.hour, w.minute, w.second);
        w = wallOf(t, zone);
        if (w.month === 1) continue wrap;
      }
      while (!this.dayMatches(w)) {
        if (!added) {
          added = true;
          t = dateIn(zone, w.year, w.month, w.day, 0, 0, 0);
          w = wallOf(t, zone);
        }
        t = dateIn(zone, w.year, w.month, w.day + 1, w.hour, w.minute, w.second);
        w = wallOf(t, zone);
        // A DST change moved midnight: back to midnight (an hour on at 23:00, back at 01:00).
        if (w.hour !== 0) {
          t += (w.hour > 12 ? 24 - w.hour : -w.hour) * 3_600_000;
          w = wallOf(t, zone);
        }
        if (w.day === 1) continue wrap;
      }
      while (!has(this.f.hour, w.hour)) {
        if (!added) {
          added = true;
          t = dateIn(zone, w.year, w.month, w.day, w.hour, 0, 0);
        }
        t += 3_600_000;
        w = wallOf(t, zone);
        if (w.hour === 0) continue wrap;
      }
      while (!has(this.f.minute, w.minute)) {
        if (!added) {
          added = true;
          t = Math.floor(t / 60_000) * 60_000;
        }
        t += 60_000;
        w = wallOf(t, zone);
        if (w.minute === 0) continue wrap;
      }
      while (w.second !== 0) {
        if (!added) {
          added = true;
          t = Math.floor(t / 1000) * 1000;
        }
        t += 1000;
        w = wallOf(t, zone);
        if (w.second === 0) continue wrap;
      }
      return t;
    }
  }
}

/** RFC 3339 of `ms` on the zone's wall clock with its offset, as Go formats a time in that location. */
export function formatInZone(ms: number, zone: string): string {
  const w = wallOf(ms, zone);
  const offsetMin = Math.round(offsetAt(ms, zone) / 60_000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const date = `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
  if (offsetMin === 0) return `${date}Z`;
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  return `${date}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
