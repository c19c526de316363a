// The standard 5-field cron grammar robfig/cron's ParseStandard accepts (optional TZ=/CRON_TZ=
// prefix, @descriptors, lists, ranges, steps, month and weekday names), reporting its messages.

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

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

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

function parseRange(expr: string, b: (typeof BOUNDS)[number]): void {
  const [rangeAndStep, ...rest] = expr.split('/');
  if (rest.length > 1) throw new Error(`too many slashes: ${expr}`);
  const lowAndHigh = rangeAndStep!.split('-');
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = b.min;
    end = b.max;
  } else {
    start = value(lowAndHigh[0]!, b.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = value(lowAndHigh[1]!, b.names);
    else throw new Error(`too many hyphens: ${expr}`);
  }
  if (lowAndHigh.length === 1 && rest.length === 1 && lowAndHigh[0] !== '*' && lowAndHigh[0] !== '?') end = b.max;
  if (rest.length === 1) {
    const step = parseInt(rest[0]!);
    if (step === 0) throw new Error(`step of range should be a positive number: ${expr}`);
  }
  if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
}

/** Throws with robfig/cron's message when `spec` is not a valid standard schedule. */
export function parseStandardCron(spec: string): void {
  if (spec.length === 0) throw new Error('empty spec string');
  let rest = spec;
  if (rest.startsWith('TZ=') || rest.startsWith('CRON_TZ=')) {
    const i = rest.indexOf(' ');
    const zone = rest.slice(rest.indexOf('=') + 1, i < 0 ? undefined : i);
    if (!isValidTimeZone(zone)) throw new Error(`provided bad location ${zone}: unknown time zone ${zone}`);
    rest = i < 0 ? '' : rest.slice(i).trim();
  }
  if (rest.startsWith('@')) {
    if (DESCRIPTORS.has(rest)) return;
    if (rest.startsWith('@every ')) {
      if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(rest.slice(7).trim())) {
        throw new Error(`failed to parse duration ${rest}: time: invalid duration "${rest.slice(7).trim()}"`);
      }
      return;
    }
    throw new Error(`unrecognized descriptor: ${rest}`);
  }
  const fields = rest.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  fields.forEach((field, i) => {
    for (const part of field.split(',')) parseRange(part, BOUNDS[i]!);
  });
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
